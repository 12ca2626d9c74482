#include "plugin_fixture.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

namespace dctest {

namespace {

void* open_or_die(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) throw std::runtime_error(std::string("cannot load ") + path + ": " + dlerror());
  return h;
}

template <typename Fn>
void bind(void* lib, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn) throw std::runtime_error(std::string("the driver double lacks ") + name);
}

}  // namespace

const dc_backend& backend() {
  static const dc_backend* table = [] {
    void* lib = open_or_die(DC_CUDA_PLUGIN_PATH);
    auto entry = reinterpret_cast<dc_backend_entry_fn>(dlsym(lib, DC_BACKEND_ENTRY_SYMBOL));
    if (!entry) throw std::runtime_error("the plugin does not export " DC_BACKEND_ENTRY_SYMBOL);
    return entry();
  }();
  return *table;
}

const dc_cuda_ext& extension() {
  static const dc_cuda_ext* table = [] {
    void* lib = open_or_die(DC_CUDA_PLUGIN_PATH);  // the already-loaded plugin
    auto entry = reinterpret_cast<dc_cuda_ext_entry_fn>(dlsym(lib, DC_CUDA_EXT_SYMBOL));
    if (!entry) throw std::runtime_error("the plugin does not export " DC_CUDA_EXT_SYMBOL);
    return entry();
  }();
  return *table;
}

DoubleControls& controls() {
  static DoubleControls c = [] {
    // The same path the plugin opens: the dynamic loader hands both one shared object.
    void* lib = open_or_die(DC_CUDA_DOUBLE_PATH);
    DoubleControls k{};
    bind(lib, k.reset, "double_reset");
    bind(lib, k.set_device_count, "double_set_device_count");
    bind(lib, k.set_driver_version, "double_set_driver_version");
    bind(lib, k.fail_next, "double_fail_next");
    bind(lib, k.set_param_sizes, "double_set_param_sizes");
    bind(lib, k.set_occupancy_block, "double_set_occupancy_block");
    bind(lib, k.launch_log, "double_launch_log");
    bind(lib, k.op_log, "double_op_log");
    bind(lib, k.live_allocations, "double_live_allocations");
    bind(lib, k.last_image_kind, "double_last_image_kind");
    bind(lib, k.retained_contexts, "double_retained_contexts");
    bind(lib, k.stream_id, "double_stream_id");
    return k;
  }();
  return c;
}

std::string nvrtc_path() {
  // Read once: tests change DOTCOMPUTE_NVRTC themselves.
  static const std::string path = [] {
    for (const char* var : {"DOTCOMPUTE_NVRTC", "DOTCOMPUTE_TEST_NVRTC"}) {
      const char* v = std::getenv(var);
      if (v && *v) return std::string(v);
    }
    return std::string();
  }();
  return path;
}

void CudaPlugin::SetUp() {
  setenv("DOTCOMPUTE_CUDA_DRIVER", DC_CUDA_DOUBLE_PATH, 1);
  const std::string nvrtc = nvrtc_path();
  if (!nvrtc.empty()) setenv("DOTCOMPUTE_NVRTC", nvrtc.c_str(), 1);
  b.shutdown();
  dbl.reset();
  ASSERT_EQ(b.initialize(), DC_OK) << error();
}

void CudaPlugin::TearDown() { b.shutdown(); }

void CudaPlugin::restart() {
  b.shutdown();
  ASSERT_EQ(b.initialize(), DC_OK) << error();
}

std::string fake_ptx(const std::string& entry) {
  return "//\n.version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry " + entry +
         "(\n)\n{\n\tret;\n}\n";
}

}  // namespace dctest
