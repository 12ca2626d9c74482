// The plugin's entry point and its lifecycle and device functions.
#include <atomic>
#include <cstring>
#include <mutex>

#include "device.h"
#include "objects.h"
#include "ops.h"
#include "status.h"

#ifndef DC_OPENCL_PLUGIN_VERSION
#define DC_OPENCL_PLUGIN_VERSION "0.1.0"
#endif

namespace dcl {
namespace {

using DeviceList = std::vector<std::unique_ptr<Device>>;

std::mutex g_lifecycle;
// Published once initialize() succeeds. Left alive at process exit when
// shutdown() was never called: the driver may already be gone by then.
std::atomic<DeviceList*> g_devices{nullptr};

dc_status initialize() {
  return guarded([] {
    std::lock_guard<std::mutex> lock(g_lifecycle);
    if (g_devices.load() != nullptr) return DC_OK;
    std::string why;
    if (load_api(&why) == nullptr) return fail(DC_ERROR_UNAVAILABLE, why);
    auto devices = std::make_unique<DeviceList>();
    if (dc_status st = discover_devices(devices.get()); st != DC_OK) return st;
    g_devices.store(devices.release());
    return DC_OK;
  });
}

void shutdown() {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  delete g_devices.exchange(nullptr);
}

const char* last_error_fn() { return last_error(); }

dc_status device_count(int32_t* count) {
  return guarded([&] {
    if (count == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "device_count: count is null");
    DeviceList* devices = g_devices.load();
    *count = devices == nullptr ? 0 : static_cast<int32_t>(devices->size());
    return DC_OK;
  });
}

dc_status device_info(int32_t index, dc_device_info* info) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(index, &dev); st != DC_OK) return st;
    if (info == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "device_info: info is null");
    if (info->struct_size < DC_DEVICE_INFO_MIN_SIZE)
      return fail(DC_ERROR_INVALID_ARGUMENT, "device_info: info->struct_size (" + std::to_string(info->struct_size) +
                                                 ") is not set or smaller than DC_DEVICE_INFO_MIN_SIZE");
    dev->fill_info(info);
    return DC_OK;
  });
}

dc_status compiler_identity(int32_t index, char* buf, size_t cap) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(index, &dev); st != DC_OK) return st;
    std::string id = dev->compiler_identity();
    // A cut identity could make two compilers share cache entries: refuse instead.
    if (buf == nullptr || cap < id.size() + 1) {
      return fail(DC_ERROR_INVALID_ARGUMENT,
                  "compiler_identity: buffer of " + std::to_string(cap) + " bytes, " +
                      std::to_string(id.size() + 1) + " needed");
    }
    std::memcpy(buf, id.c_str(), id.size() + 1);
    return DC_OK;
  });
}

dc_backend make_table() {
  dc_backend t{};
  t.struct_size = sizeof(dc_backend);
  t.abi_version = DC_BACKEND_ABI_VERSION;
  t.name = "opencl";
  t.version = DC_OPENCL_PLUGIN_VERSION;
  t.initialize = initialize;
  t.shutdown = shutdown;
  t.last_error = last_error_fn;
  t.device_count = device_count;
  t.device_info = device_info;
  t.compiler_identity = compiler_identity;
  t.mem_alloc = mem_alloc;
  t.mem_free = mem_free;
  t.memcpy_h2d = memcpy_h2d;
  t.memcpy_d2h = memcpy_d2h;
  t.memcpy_d2d = memcpy_d2d;
  t.memset_d8 = memset_d8;
  t.stream_create = stream_create;
  t.stream_destroy = stream_destroy;
  t.stream_synchronize = stream_synchronize;
  t.stream_wait_event = stream_wait_event;
  t.event_create = event_create;
  t.event_destroy = event_destroy;
  t.event_record = event_record;
  t.event_synchronize = event_synchronize;
  t.event_query = event_query;
  t.event_elapsed_ms = event_elapsed_ms;
  t.compile = compile;
  t.free_binary = free_binary;
  t.module_load = module_load;
  t.module_unload = module_unload;
  t.kernel_get = kernel_get;
  t.launch = launch;
  t.native_handle = native_handle;
  return t;
}

}  // namespace

dc_status get_device(int32_t index, Device** out) {
  DeviceList* devices = g_devices.load();
  if (devices == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "the OpenCL plugin is not initialized");
  if (index < 0 || static_cast<size_t>(index) >= devices->size()) {
    return fail(DC_ERROR_INVALID_ARGUMENT, "OpenCL device index " + std::to_string(index) + " out of range (" +
                                               std::to_string(devices->size()) + " devices)");
  }
  *out = (*devices)[static_cast<size_t>(index)].get();
  return DC_OK;
}

}  // namespace dcl

extern "C" __attribute__((visibility("default"))) const dc_backend* dotcompute_backend_entry(void) {
  static const dc_backend table = dcl::make_table();
  return &table;
}
