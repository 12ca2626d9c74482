// Typed, n-dimensional, C-contiguous memory on one accelerator.
//
// Device memory comes from the accelerator's MemoryPool. A host mirror is
// made on demand. The transfer state says which copy is newer so that copies
// happen lazily and at most once:
//
//   DeviceOnly    only the device block holds data (no host mirror)
//   Synchronized  both hold the same data
//   HostDirty     the host mirror is newer (uploaded on the next device_ptr())
//   DeviceDirty   the device block is newer (downloaded on the next host_data())
//
// Where the device block is host-addressable (unified memory: the CPU backend;
// host-visible memory: Metal's shared storage) the block *is* the host data:
// host_data() returns it, copies to and from host memory are memcpy after
// waiting for the queued work, nothing is staged, and there is no mirror.
//
// All methods are safe to call from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "dotcompute/dtype.hpp"
#include "dotcompute/export.hpp"
#include "dotcompute/memory_pool.hpp"

namespace dotcompute {

class Accelerator;
class Event;
class Stream;

// (Every buffer has its device block from the start, so there is no host-only state.)
enum class TransferState : uint8_t { DeviceOnly, Synchronized, HostDirty, DeviceDirty };
DOTCOMPUTE_API const char* transfer_state_name(TransferState s) noexcept;

using Shape = std::vector<int64_t>;

class DOTCOMPUTE_API Buffer {
 public:
  // Use Accelerator::allocate(). Allocates the device block at once.
  Buffer(std::shared_ptr<Accelerator> accelerator, Shape shape, DType dtype);
  // A view: `shape` (C-contiguous) elements of `parent`'s memory from `byte_offset` on, no copy.
  // The view has no block, mirror or transfer state of its own: each call goes to the parent
  // (a view of a view is a view of the root). Throws InvalidArgumentError when the region does
  // not fit in the parent or the offset is not a multiple of the element size.
  static std::shared_ptr<Buffer> view(const std::shared_ptr<Buffer>& parent, uint64_t byte_offset, Shape shape);
  // A buffer over device memory it does not own (a module's __constant__/__device__ variable):
  // `ptr` is a device address of `accelerator` with at least nbytes of `shape`/`dtype` behind it,
  // and `owner` keeps that memory valid for the buffer's life. Nothing is freed on destruction.
  static std::shared_ptr<Buffer> borrow(std::shared_ptr<Accelerator> accelerator, dc_devptr ptr, Shape shape,
                                        DType dtype, std::shared_ptr<void> owner);
  ~Buffer();  // returns the block to the pool, ordered after its last stream (a view: nothing)
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const Shape& shape() const noexcept { return shape_; }
  int ndim() const noexcept { return static_cast<int>(shape_.size()); }
  DType dtype() const noexcept { return dtype_; }
  int64_t size() const noexcept { return size_; }  // elements
  uint64_t nbytes() const noexcept { return nbytes_; }
  Accelerator& accelerator() const noexcept { return *accelerator_; }
  const std::shared_ptr<Accelerator>& accelerator_ptr() const noexcept { return accelerator_; }

  TransferState state() const;
  // Views: where the view starts in its root's allocation (0 for a buffer that owns its block),
  // and the root (nullptr for an owning buffer). device_ptr() is the root's handle; a launch passes
  // the offset beside it (DC_ARG_BUFFER_REGION).
  uint64_t byte_offset() const noexcept { return offset_; }
  const std::shared_ptr<Buffer>& view_root() const noexcept { return parent_; }

  // The device handle, after uploading a newer host mirror (enqueued on the
  // last stream used, or the default stream). Use before enqueuing device work.
  dc_devptr device_ptr();
  // The device handle ready for work enqueued on `stream`: a newer host mirror
  // is uploaded on `stream`, and if another stream may still be using the
  // buffer, `stream` first waits for it.
  dc_devptr device_ptr(Stream& stream);
  // Host memory holding the current data: on host-addressable memory the
  // device block itself (after waiting for queued work); otherwise the host
  // mirror, after downloading newer device data. Valid while the buffer lives.
  void* host_data();
  // Whether the device block is host-addressable (host_data() is a view of it, no copy).
  bool host_visible() const noexcept { return host_ != nullptr; }
  // The host mirror was written through host_data(): the device copy is stale.
  void mark_host_dirty();
  // Device work wrote the buffer on `stream`: the host mirror is stale and
  // host_data() must first wait for `stream`. LaunchPlan calls this.
  void mark_device_dirty(Stream& stream);
  // The buffer is used by work enqueued on `stream` (read-only use).
  void mark_used(Stream& stream);

  // Copies `bytes` (must equal nbytes()) from host memory; synchronous.
  void copy_from_host(const void* src, uint64_t bytes);
  // Copies the current data to host memory; synchronous.
  void copy_to_host(void* dst, uint64_t bytes);
  // Sets every byte to `value` (0 for zeros()); enqueued on the default stream.
  void fill_bytes(uint8_t value);

  // The stream that last used the buffer, or nullptr.
  std::shared_ptr<Stream> last_stream() const;

  // Another Buffer may now reach this memory (a DLPack export, an import): its work is queued on
  // streams this buffer never sees, so host access from now on waits for all of the device's work.
  void mark_aliased();
  bool aliased() const;

 private:
  Buffer(std::shared_ptr<Buffer> root, uint64_t offset, Shape shape, int view_tag);  // view()
  Buffer(std::shared_ptr<Accelerator> accelerator, dc_devptr ptr, Shape shape, DType dtype,
         std::shared_ptr<void> owner);  // borrow()
  void prepare_locked(Stream& stream);
  void download_locked();
  void wait_locked();
  Stream& stream_locked();
  void ensure_mirror_locked();

  std::shared_ptr<Accelerator> accelerator_;
  const dc_backend* api_;
  Shape shape_;
  DType dtype_;
  int64_t size_;
  uint64_t nbytes_;
  void* host_ = nullptr;  // the device block's host address, or null (Accelerator::host_pointer)
  mutable std::mutex mutex_;
  Allocation block_;
  std::vector<unsigned char> mirror_;  // empty on host-addressable memory
  TransferState state_;
  std::shared_ptr<Stream> last_stream_;
  bool pending_ = false;  // device work on last_stream_ may still run
  // The last non-blocking upload from mirror_: until it completes the mirror must outlive us.
  std::shared_ptr<Event> upload_event_;
  std::shared_ptr<Stream> upload_stream_;
  std::shared_ptr<Buffer> parent_;  // views only: the owning buffer
  uint64_t offset_ = 0;             // views only: bytes into parent_'s block
  std::shared_ptr<void> owner_;     // borrowed memory only: what keeps block_ valid (block_ is not freed)
  bool aliased_ = false;            // borrowed or exported: see mark_aliased()
};

}  // namespace dotcompute
