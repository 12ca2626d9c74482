// A caching device-memory pool, one per accelerator.
//
// The pool sits on a RawAllocator (the plugin's mem_alloc/mem_free in
// production, a fake in tests). It rounds requests up to size classes and
// reuses whole blocks (never splits: an OpenCL cl_mem must stay a valid handle).
//
// Reuse is stream-ordered. A block freed on stream S can be reused at once by
// an allocation on S, because S runs in order. On any other stream it is
// reused only after a fence recorded on S at free time has completed.
// Blocks freed with no stream (nothing was ever enqueued on them) are free
// for everyone.
//
// On out-of-memory (from the device or from the configured limit) the pool
// releases its cached blocks and retries once before throwing
// OutOfMemoryError with the requested, in-use and reserved sizes.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "dotcompute/export.hpp"

namespace dotcompute {

// Identifies a stream to the pool; only compared, never dereferenced by it.
using StreamKey = const void*;

// Completion marker of work queued on a stream.
class DOTCOMPUTE_API Fence {
 public:
  virtual ~Fence() = default;
  virtual bool done() = 0;
  virtual void wait() = 0;
};

class DOTCOMPUTE_API RawAllocator {
 public:
  virtual ~RawAllocator() = default;
  // Returns false when the device is out of memory; other failures throw.
  virtual bool allocate(uint64_t bytes, dc_devptr* out) = 0;
  virtual void free(dc_devptr ptr) noexcept = 0;
  // A fence after everything enqueued on `stream` so far, or nullptr when the
  // allocator has no asynchronous work (then freed blocks are free at once).
  virtual std::shared_ptr<Fence> fence(StreamKey stream) = 0;
};

struct MemoryStats {
  uint64_t in_use = 0;       // bytes of blocks handed out (block sizes)
  uint64_t reserved = 0;     // bytes held from the device: in use + cached
  uint64_t peak = 0;         // highest in_use so far
  uint64_t peak_reserved = 0;
  uint64_t hits = 0;         // allocations served from the cache
  uint64_t misses = 0;       // allocations that went to the device
  uint64_t allocations = 0;  // raw device allocations made
  uint64_t frees = 0;        // raw device frees made
  uint64_t limit = 0;        // 0: none
};

// One block handed out by the pool.
struct Allocation {
  dc_devptr ptr = 0;
  uint64_t size = 0;  // the block's size (the size class), >= the request
};

class DOTCOMPUTE_API MemoryPool {
 public:
  // `name` appears in error messages ("cpu:0").
  MemoryPool(std::shared_ptr<RawAllocator> allocator, std::string name);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // The block size a request of `bytes` gets: 512 B minimum, then four
  // classes per power of two (at most 25% waste).
  static uint64_t size_class(uint64_t bytes) noexcept;

  // A block of at least `bytes` usable in order on `stream` (nullptr: no stream).
  // Throws OutOfMemoryError.
  Allocation allocate(uint64_t bytes, StreamKey stream = nullptr);
  // Returns a block; `stream` is the last stream that used it (nullptr: none).
  void deallocate(const Allocation& block, StreamKey stream = nullptr) noexcept;

  // Releases every cached block to the device (waiting for pending fences).
  void trim() noexcept;
  // Caps `reserved`; 0 removes the cap. Lowering it trims.
  void set_limit(uint64_t bytes);
  uint64_t limit() const;
  MemoryStats stats() const;
  // The stream is gone (its work is complete): its cached blocks become free for all.
  void release_stream(StreamKey stream) noexcept;

 private:
  struct Cached {
    dc_devptr ptr;
    uint64_t size;
    StreamKey stream;
    std::shared_ptr<Fence> fence;
  };
  bool take_cached_locked(uint64_t size, StreamKey stream, Allocation* out);
  // Blocking work (fence waits, the plugin's free and allocate) runs without mutex_, so other
  // threads keep allocating and freeing meanwhile: detach under the lock, release outside it.
  std::vector<Cached> detach_cached_locked() noexcept;
  void release_detached(std::vector<Cached>& blocks) noexcept;
  void note_in_use_locked(uint64_t size) noexcept;
  [[noreturn]] void throw_oom(uint64_t requested, const char* why);

  std::shared_ptr<RawAllocator> allocator_;
  std::string name_;
  mutable std::mutex mutex_;
  // Free blocks by size class; each list is short, so it is scanned linearly.
  std::unordered_map<uint64_t, std::vector<Cached>> cached_;
  MemoryStats stats_;
};

}  // namespace dotcompute
