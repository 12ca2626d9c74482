// The Metal plugin's entry point: lifecycle, errors, devices and the compiler identity.
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "state.h"

#ifndef DC_METAL_PLUGIN_VERSION
#define DC_METAL_PLUGIN_VERSION "0.1.0"
#endif

namespace dcmtl {

namespace {

thread_local std::string t_error;

using DeviceList = std::vector<std::unique_ptr<Device>>;
std::mutex g_lifecycle;
// Published once initialize() succeeds; left alive at exit when shutdown() is never called.
std::atomic<DeviceList*> g_devices{nullptr};
// The kernel-cache folder from the core (set_cache_dir); binary archives live there.
std::mutex g_cache_dir_mutex;
std::string g_cache_dir;

void copy_text(char* dst, size_t cap, const std::string& text) {
  size_t n = text.size() < cap - 1 ? text.size() : cap - 1;
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

std::string ns(NSString* s) { return s ? std::string([s UTF8String]) : std::string(); }

// The highest Apple/Mac family the device reports, for acc.info and the cache key.
std::string family_of(id<MTLDevice> d) {
  static const struct {
    MTLGPUFamily family;
    const char* name;
  } kFamilies[] = {
      {MTLGPUFamilyApple9, "apple9"}, {MTLGPUFamilyApple8, "apple8"}, {MTLGPUFamilyApple7, "apple7"},
      {MTLGPUFamilyApple6, "apple6"}, {MTLGPUFamilyApple5, "apple5"}, {MTLGPUFamilyApple4, "apple4"},
      {MTLGPUFamilyMac2, "mac2"},     {MTLGPUFamilyApple3, "apple3"}, {MTLGPUFamilyApple2, "apple2"},
      {MTLGPUFamilyApple1, "apple1"}, {MTLGPUFamilyCommon3, "common3"},
  };
  for (const auto& f : kFamilies)
    if ([d supportsFamily:f.family]) return f.name;
  return "common1";
}

bool supports_nonuniform(id<MTLDevice> d) {
  return [d supportsFamily:MTLGPUFamilyApple4] || [d supportsFamily:MTLGPUFamilyMac2];
}

dc_status initialize() {
  return guarded([] {
    std::lock_guard<std::mutex> lock(g_lifecycle);
    if (g_devices.load() != nullptr) return DC_OK;
    auto devices = std::make_unique<DeviceList>();
    // MTLCopyAllDevices follows the Create rule: the array is ours to release.
    Owned<NSArray*> all = Owned<NSArray*>::adopt(MTLCopyAllDevices());
    for (id<MTLDevice> d in all.get()) {
      auto dev = std::make_unique<Device>();
      dev->index = static_cast<int32_t>(devices->size());
      dev->device = Owned<id<MTLDevice>>(d);
      dev->nonuniform = supports_nonuniform(d);
      dev->family = family_of(d);
      dev->unified = [d hasUnifiedMemory];
      dev->archive_note = "no kernel-cache folder from the core: pipelines are not archived";
      MTLSize m = [d maxThreadsPerThreadgroup];
      dev->max_threads = static_cast<uint32_t>(m.width);
      devices->push_back(std::move(dev));
    }
    if (devices->empty()) return fail(DC_ERROR_UNAVAILABLE, "Metal reports no GPU on this machine");
    // Initialised again after a shutdown: the folder given before still holds the archives.
    bool have_dir = false;
    {
      std::lock_guard<std::mutex> dir_lock(g_cache_dir_mutex);
      have_dir = !g_cache_dir.empty();
    }
    if (have_dir) {
      for (auto& dev : *devices) open_archive(dev.get());
    }
    g_devices.store(devices.release());
    return DC_OK;
  });
}

void shutdown() {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  @autoreleasepool {
    delete g_devices.exchange(nullptr);
  }
}

const char* last_error_fn() { return last_error(); }

// The core's kernel-cache folder: each device's binary archive is opened there now, so that
// acc.info (read when an accelerator is created) already names it.
dc_status set_cache_dir(const char* dir) {
  return guarded([&] {
    std::lock_guard<std::mutex> lifecycle(g_lifecycle);
    {
      std::lock_guard<std::mutex> lock(g_cache_dir_mutex);
      g_cache_dir = dir != nullptr ? dir : "";
    }
    if (DeviceList* devices = g_devices.load()) {
      for (auto& dev : *devices) open_archive(dev.get());
    }
    return DC_OK;
  });
}

// `text` as a JSON string literal.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

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
    // The struct_size rule: the caller's struct_size says how many bytes it has room for.
    const uint32_t min_size = static_cast<uint32_t>(offsetof(dc_device_info, extra_json));
    if (info->struct_size < min_size) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "device_info: struct_size " + std::to_string(info->struct_size) +
                                                 " is smaller than the " + std::to_string(min_size) + " bytes every core has");
    }
    dc_device_info full_info;
    std::memset(&full_info, 0, sizeof full_info);
    dc_device_info* out_info = info;
    info = &full_info;
    id<MTLDevice> d = dev->device.get();
    copy_text(info->name, sizeof info->name, ns([d name]));
    copy_text(info->vendor, sizeof info->vendor, "Apple");
    // the exact code target: the family, the OS build (Metal's compiler ships with the OS)
    copy_text(info->arch, sizeof info->arch, "metal " + dev->family);
    copy_text(info->type, sizeof info->type, "gpu");
    info->global_memory_bytes = [d recommendedMaxWorkingSetSize];
    info->local_memory_bytes = [d maxThreadgroupMemoryLength];
    info->compute_units = 1;  // Metal does not report GPU core counts
    MTLSize m = [d maxThreadsPerThreadgroup];
    info->max_work_group_size = dev->max_threads;
    info->max_work_item_sizes[0] = static_cast<uint32_t>(m.width);
    info->max_work_item_sizes[1] = static_cast<uint32_t>(m.height);
    info->max_work_item_sizes[2] = static_cast<uint32_t>(m.depth);
    info->simd_width = 32;
    // No FP64 in Metal. DC_FEATURE_UNIFIED_MEMORY is not claimed even on Apple silicon: to the
    // core it means "any host pointer is a device pointer" (numpy arrays are passed straight
    // to launches), and Metal can only bind memory it allocated (or page-aligned wraps).
    // What Metal does have: shared-storage buffers the host addresses directly (memory.mm).
    // extra_json's "unified_memory" says what the hardware has.
    info->features = DC_FEATURE_FP16 | DC_FEATURE_HOST_VISIBLE_MEMORY;
#ifdef DC_METAL_TEST_DOUBLE
    const bool test_double = true;
#else
    const bool test_double = false;
#endif
    uint64_t hits = 0, misses = 0, private_buffers = 0, archive_hits = 0, archive_misses = 0;
    std::string archive = "null", archive_note;
    {
      std::lock_guard<std::mutex> lock(dev->pipelines_mutex);
      hits = dev->pipeline_hits;
      misses = dev->pipeline_misses;
    }
    {
      std::lock_guard<std::mutex> lock(dev->buffers_mutex);
      private_buffers = dev->private_buffers;
    }
    {
      std::lock_guard<std::mutex> lock(dev->archive_mutex);
      if (dev->archive) archive = json_string(dev->archive_path);
      archive_note = dev->archive_note;
      archive_hits = dev->archive_hits;
      archive_misses = dev->archive_misses;
    }
    std::string extra = "{\"gpu_family\": \"" + dev->family + "\", \"unified_memory\": " +
                        ([d hasUnifiedMemory] ? "true" : "false") + ", \"nonuniform_threadgroups\": " +
                        (dev->nonuniform ? "true" : "false") +
                        ", \"max_threadgroup_memory\": " + std::to_string([d maxThreadgroupMemoryLength]) +
                        ", \"recommended_working_set\": " + std::to_string([d recommendedMaxWorkingSetSize]) +
                        ", \"max_buffer_length\": " + std::to_string([d maxBufferLength]) +
                        ", \"registry_id\": " + std::to_string([d registryID]) +
                        ", \"pipeline_cache_hits\": " + std::to_string(hits) +
                        ", \"pipeline_cache_misses\": " + std::to_string(misses) +
                        ", \"private_storage_min_bytes\": " +
                        (dev->unified ? std::string("null") : std::to_string(kPrivateStorageMinBytes)) +
                        ", \"private_buffers\": " + std::to_string(private_buffers) +
                        ", \"binary_archive\": " + archive +
                        (archive_note.empty() ? "" : ", \"binary_archive_note\": " + json_string(archive_note)) +
                        ", \"binary_archive_hits\": " + std::to_string(archive_hits) +
                        ", \"binary_archive_misses\": " + std::to_string(archive_misses) +
                        (test_double ? ", \"simulated\": true, \"test_double\": true" : "") + "}";
    copy_text(info->extra_json, sizeof info->extra_json, extra);
    size_t n = out_info->struct_size < sizeof full_info ? out_info->struct_size : sizeof full_info;
    full_info.struct_size = static_cast<uint32_t>(n);
    std::memcpy(out_info, &full_info, n);
    return DC_OK;
  });
}

dc_status compiler_identity(int32_t index, char* buf, size_t cap) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(index, &dev); st != DC_OK) return st;
    // Metal's compiler is part of the OS: its version is the OS build. "blob2": the blob now
    // records the math mode (the options, which are also in the cache key, choose it).
    std::string id = "metal msl3.0 blob2 " + ns([[NSProcessInfo processInfo] operatingSystemVersionString]) +
                     " " + ns([dev->device.get() name]);
#ifdef DC_METAL_TEST_DOUBLE
    id += " (test double)";
#endif
    if (buf == nullptr || cap < id.size() + 1) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "compiler_identity: buffer of " + std::to_string(cap) + " bytes, " +
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
  t.name = "metal";
  t.version = DC_METAL_PLUGIN_VERSION;
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
  t.mem_host_pointer = mem_host_pointer;
  t.set_cache_dir = set_cache_dir;
  t.native_handle = native_handle;
  return t;
}

}  // namespace

dc_status fail(dc_status st, const std::string& message) {
  t_error = message;
  return st;
}

const char* last_error() { return t_error.c_str(); }

void clear_error() { t_error.clear(); }

std::string describe(NSError* error) {
  if (error == nil) return "unknown error";
  return ns([error localizedDescription]) + " (" + ns([error domain]) + " " + std::to_string([error code]) + ")";
}

std::string cache_dir() {
  std::lock_guard<std::mutex> lock(g_cache_dir_mutex);
  return g_cache_dir;
}

dc_status get_device(int32_t index, Device** out) {
  DeviceList* devices = g_devices.load();
  if (devices == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "the Metal plugin is not initialized");
  if (index < 0 || static_cast<size_t>(index) >= devices->size()) {
    return fail(DC_ERROR_INVALID_ARGUMENT, "Metal device index " + std::to_string(index) + " out of range (" +
                                               std::to_string(devices->size()) + " devices)");
  }
  *out = (*devices)[static_cast<size_t>(index)].get();
  return DC_OK;
}

}  // namespace dcmtl

extern "C" __attribute__((visibility("default"))) const dc_backend* dotcompute_backend_entry(void) {
  static const dc_backend table = dcmtl::make_table();
  return &table;
}
