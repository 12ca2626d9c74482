// One device of one backend ("cpu:0", "cuda:1", "opencl:0", "metal:0").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "dotcompute/backend_abi.h"
#include "dotcompute/buffer.hpp"
#include "dotcompute/dtype.hpp"
#include "dotcompute/export.hpp"
#include "dotcompute/memory_pool.hpp"

namespace dotcompute {

class BackendPlugin;
class Event;
class Kernel;
class KernelCache;
class Module;
class Stream;

// Capabilities of a device (dc_device_info in C++ form).
struct DeviceInfo {
  std::string name;
  std::string vendor;
  std::string arch;  // the exact code target, part of every cache key
  std::string type;  // "cpu", "gpu" or "accelerator"
  uint64_t global_memory_bytes = 0;
  uint64_t local_memory_bytes = 0;
  uint32_t compute_units = 0;
  uint32_t max_work_group_size = 0;
  std::array<uint32_t, 3> max_work_item_sizes{{0, 0, 0}};
  uint32_t simd_width = 0;
  uint64_t features = 0;  // DC_FEATURE_*
  std::string extra_json = "{}";

  bool has(uint64_t feature) const noexcept { return (features & feature) != 0; }
};

class DOTCOMPUTE_API Accelerator : public std::enable_shared_from_this<Accelerator> {
 public:
  // Made by Runtime; use Runtime::accelerator() or Runtime::devices().
  static std::shared_ptr<Accelerator> create(std::shared_ptr<BackendPlugin> plugin, int32_t index,
                                             std::shared_ptr<KernelCache> cache);
  ~Accelerator();
  Accelerator(const Accelerator&) = delete;
  Accelerator& operator=(const Accelerator&) = delete;

  const std::string& backend() const noexcept { return backend_; }
  int32_t index() const noexcept { return index_; }
  // "cpu:0"
  const std::string& id() const noexcept { return id_; }
  // The device's own name ("AMD EPYC 7B13", "NVIDIA H100").
  const std::string& name() const noexcept { return info_.name; }
  const std::string& type() const noexcept { return info_.type; }
  const DeviceInfo& info() const noexcept { return info_; }
  bool unified_memory() const noexcept { return info_.has(DC_FEATURE_UNIFIED_MEMORY); }
  // Device allocations can be host-addressable (DC_FEATURE_HOST_VISIBLE_MEMORY, and the plugin
  // has mem_host_pointer); which ones are, host_pointer() says.
  bool host_visible_memory() const noexcept;
  // Where the host sees the allocation `ptr` (from this accelerator's pool): `ptr` itself on
  // unified memory, the plugin's answer on host-visible memory, else nullptr (copies needed).
  void* host_pointer(dc_devptr ptr) const;
  const std::string& compiler_identity() const noexcept { return compiler_identity_; }
  // The backend's own object behind a dotcompute one (DC_NATIVE_STREAM: a dc_stream; DC_NATIVE_BUFFER:
  // a dc_devptr; DC_NATIVE_CONTEXT: this device), for vendor libraries working on the same queue and
  // memory. Throws Error ("not supported by this backend") when the plugin has none: no native_handle
  // entry, or it refuses (a simulated device). The handle is borrowed: valid while the object lives.
  uint64_t native_handle(uint32_t kind, uint64_t object) const;

  MemoryPool& memory() noexcept { return *pool_; }
  Stream& default_stream() noexcept { return *default_stream_; }
  // The default stream as a shared_ptr (it shares the accelerator's lifetime).
  std::shared_ptr<Stream> default_stream_ptr();
  std::shared_ptr<Stream> create_stream();
  std::shared_ptr<Event> create_event();

  // A new C-contiguous buffer; contents undefined. Throws InvalidArgumentError
  // for a negative extent, OutOfMemoryError.
  std::shared_ptr<Buffer> allocate(const Shape& shape, DType dtype);

  // Compiles `source` through the kernel cache and returns its `entry`.
  // Throws CompilationError (with the compiler's log and the source).
  std::shared_ptr<Kernel> compile(const std::string& source, const std::string& entry,
                                  const std::string& options = "");

  // Waits for all work on the default stream and every stream made here.
  void synchronize();

  // The plugin's function table (for the core's own objects).
  const dc_backend* api() const noexcept { return api_; }
  const std::shared_ptr<BackendPlugin>& plugin() const noexcept { return plugin_; }

 private:
  Accelerator(std::shared_ptr<BackendPlugin> plugin, int32_t index, std::shared_ptr<KernelCache> cache);
  void init();

  std::shared_ptr<BackendPlugin> plugin_;
  const dc_backend* api_;
  int32_t index_;
  std::string backend_;
  std::string id_;
  DeviceInfo info_;
  std::string compiler_identity_;
  std::shared_ptr<KernelCache> cache_;
  std::unique_ptr<MemoryPool> pool_;
  std::unique_ptr<Stream> default_stream_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<Module>> modules_;  // cache key -> loaded module
  std::vector<std::weak_ptr<Stream>> streams_;
};

}  // namespace dotcompute
