#include "cpu_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#ifndef DOTCOMPUTE_CPU_PLUGIN_FILE
#error "DOTCOMPUTE_CPU_PLUGIN_FILE must name the built plugin"
#endif
#ifndef DOTCOMPUTE_CPU_TEST_KERNELS
#error "DOTCOMPUTE_CPU_TEST_KERNELS must name tests/cpp/cpu/kernels"
#endif

namespace cputest {

namespace {

const dc_backend* g_api = nullptr;
void* g_library = nullptr;
dc_module g_module = nullptr;

// Loads and initialises the plugin before any test and shuts it down after.
class PluginEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    // Enough participants that the atomics and chunking tests really run on
    // several threads, even on a two-core machine.
    setenv("DOTCOMPUTE_CPU_THREADS", "4", /*overwrite=*/0);
    const char* override_path = std::getenv("DOTCOMPUTE_CPU_PLUGIN");
    const char* path = override_path != nullptr ? override_path : DOTCOMPUTE_CPU_PLUGIN_FILE;
    g_library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(g_library, nullptr) << "cannot load " << path << ": " << dlerror();
    auto entry = reinterpret_cast<dc_backend_entry_fn>(dlsym(g_library, DC_BACKEND_ENTRY_SYMBOL));
    ASSERT_NE(entry, nullptr) << path << " does not export " << DC_BACKEND_ENTRY_SYMBOL;
    g_api = entry();
    ASSERT_NE(g_api, nullptr);
    ASSERT_EQ(g_api->abi_version, DC_BACKEND_ABI_VERSION);
    ASSERT_GE(g_api->struct_size, sizeof(dc_backend));
    ASSERT_EQ(g_api->initialize(), DC_OK) << g_api->last_error();
  }
  void TearDown() override {
    if (g_api == nullptr) return;
    if (g_module != nullptr) g_api->module_unload(g_module);
    g_module = nullptr;
    g_api->shutdown();
    g_api = nullptr;
    // The library stays mapped: kernel modules loaded by it may pin it anyway.
  }
};

const auto* const g_env = ::testing::AddGlobalTestEnvironment(new PluginEnvironment);

}  // namespace

const dc_backend& api() {
  if (g_api == nullptr) {
    ADD_FAILURE() << "the CPU plugin is not loaded";
    std::abort();
  }
  return *g_api;
}

std::string last_error() { return g_api != nullptr ? g_api->last_error() : "plugin not loaded"; }

std::string read_kernel_file(const std::string& name) {
  const std::string path = std::string(DOTCOMPUTE_CPU_TEST_KERNELS) + "/" + name;
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

dc_module test_module() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string source = read_kernel_file("tiled_matmul.cpp") + "\n" + read_kernel_file("test_kernels.cpp");
    void* binary = nullptr;
    uint64_t size = 0;
    const dc_status s = api().compile(0, source.c_str(), "", &binary, &size);
    if (s != DC_OK) {
      ADD_FAILURE() << "compiling the test kernels failed: " << last_error();
      return;
    }
    const dc_status l = api().module_load(0, binary, size, &g_module);
    api().free_binary(binary);
    if (l != DC_OK) ADD_FAILURE() << "loading the test kernels failed: " << last_error();
  });
  return g_module;
}

dc_kernel kernel(const char* name) {
  dc_module m = test_module();
  if (m == nullptr) return nullptr;
  dc_kernel k = nullptr;
  if (api().kernel_get(m, name, &k) != DC_OK) ADD_FAILURE() << "kernel_get(" << name << "): " << last_error();
  return k;
}

DeviceBuffer::DeviceBuffer(uint64_t bytes) {
  if (api().mem_alloc(0, bytes, &ptr_) != DC_OK) ADD_FAILURE() << "mem_alloc(" << bytes << "): " << last_error();
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) api().mem_free(0, ptr_);
}

Stream::Stream() {
  if (api().stream_create(0, &s_) != DC_OK) ADD_FAILURE() << "stream_create: " << last_error();
}

Stream::~Stream() {
  if (s_ != nullptr) api().stream_destroy(s_);
}

void Stream::sync() const { EXPECT_EQ(api().stream_synchronize(s_), DC_OK) << last_error(); }

Event::Event() {
  if (api().event_create(0, &e_) != DC_OK) ADD_FAILURE() << "event_create: " << last_error();
}

Event::~Event() {
  if (e_ != nullptr) api().event_destroy(e_);
}

dc_status launch(dc_stream s, dc_kernel k, const Dims& d, const Args& args, uint32_t shared_bytes) {
  dc_launch_config c{};
  c.struct_size = sizeof(c);
  c.dims = d.dims;
  for (int i = 0; i < 3; ++i) {
    c.global_size[i] = d.global[i];
    c.local_size[i] = d.local[i];
  }
  c.dynamic_shared_bytes = shared_bytes;
  return api().launch(s, k, &c, args.data(), args.size());
}

}  // namespace cputest
