#include "test_support.h"

#include <cstdlib>
#include <mutex>

#include "kernels.h"

namespace dctest {
namespace {

const dc_backend* load_plugin() {
  void* handle = dlopen(DC_OPENCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    ADD_FAILURE() << "dlopen " << DC_OPENCL_PLUGIN << ": " << dlerror();
    return nullptr;
  }
  auto entry = reinterpret_cast<dc_backend_entry_fn>(dlsym(handle, DC_BACKEND_ENTRY_SYMBOL));
  if (entry == nullptr) {
    ADD_FAILURE() << DC_OPENCL_PLUGIN << " does not export " << DC_BACKEND_ENTRY_SYMBOL;
    return nullptr;
  }
  const dc_backend* b = entry();
  dc_status st = b->initialize();
  if (st != DC_OK) {
    ADD_FAILURE() << "initialize: " << b->last_error();
    return nullptr;
  }
  return b;
}

}  // namespace

const dc_backend* plugin() {
  static const dc_backend* b = load_plugin();
  if (b == nullptr) std::abort();  // every test needs it; the failure above says why
  return b;
}

std::string describe(dc_status st) {
  if (st == DC_OK) return "DC_OK";
  return "status " + std::to_string(st) + ": " + plugin()->last_error();
}

Stream::Stream(int32_t device) {
  dc_status st = plugin()->stream_create(device, &s_);
  EXPECT_EQ(st, DC_OK) << describe(st);
}

Stream::~Stream() {
  if (s_ != nullptr) plugin()->stream_destroy(s_);
}

void Stream::sync() const {
  dc_status st = plugin()->stream_synchronize(s_);
  EXPECT_EQ(st, DC_OK) << describe(st);
}

DeviceBuffer::DeviceBuffer(uint64_t bytes, int32_t device) : device_(device) {
  dc_status st = plugin()->mem_alloc(device, bytes, &p_);
  EXPECT_EQ(st, DC_OK) << describe(st);
}

DeviceBuffer::~DeviceBuffer() {
  if (p_ != 0) plugin()->mem_free(device_, p_);
}

Module::~Module() {
  if (m_ != nullptr) plugin()->module_unload(m_);
}

dc_kernel Module::kernel(const char* name) const {
  dc_kernel k = nullptr;
  dc_status st = plugin()->kernel_get(m_, name, &k);
  EXPECT_EQ(st, DC_OK) << describe(st);
  return k;
}

std::vector<uint8_t> compile(const std::string& source, const char* options, dc_status* status) {
  void* binary = nullptr;
  uint64_t size = 0;
  *status = plugin()->compile(0, source.c_str(), options, &binary, &size);
  if (*status != DC_OK) return {};
  const auto* bytes = static_cast<const uint8_t*>(binary);
  std::vector<uint8_t> blob(bytes, bytes + size);
  plugin()->free_binary(binary);
  return blob;
}

const std::vector<uint8_t>& test_program_blob() {
  static const std::vector<uint8_t> blob = [] {
    dc_status st = DC_OK;
    std::vector<uint8_t> b = compile(kTestKernels, "", &st);
    if (st != DC_OK) {
      ADD_FAILURE() << "compiling the test kernels: " << describe(st);
      std::abort();
    }
    return b;
  }();
  return blob;
}

const Module& test_module() {
  static const Module* module = [] {
    const std::vector<uint8_t>& blob = test_program_blob();
    dc_module m = nullptr;
    dc_status st = plugin()->module_load(0, blob.data(), blob.size(), &m);
    if (st != DC_OK) {
      ADD_FAILURE() << "loading the test kernels: " << describe(st);
      std::abort();
    }
    return new Module(m);  // lives until exit, like the plugin
  }();
  return *module;
}

dc_launch_config launch_config(std::vector<uint64_t> global, std::vector<uint32_t> local) {
  dc_launch_config c{};
  c.struct_size = sizeof(c);
  c.dims = static_cast<uint32_t>(global.size());
  for (int d = 0; d < 3; ++d) {
    c.global_size[d] = d < static_cast<int>(global.size()) ? global[d] : 1;
    c.local_size[d] = d < static_cast<int>(local.size()) ? local[d] : 0;
  }
  return c;
}

}  // namespace dctest
