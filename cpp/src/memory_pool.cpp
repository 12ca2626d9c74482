#include "dotcompute/memory_pool.hpp"

#include <cstdio>

#include "dotcompute/blocking.hpp"
#include "dotcompute/errors.hpp"

namespace dotcompute {

namespace {
std::string human(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s (%llu bytes)", v, units[u], static_cast<unsigned long long>(bytes));
  }
  return buf;
}
}  // namespace

MemoryPool::MemoryPool(std::shared_ptr<RawAllocator> allocator, std::string name)
    : allocator_(std::move(allocator)), name_(std::move(name)) {}

MemoryPool::~MemoryPool() { trim(); }

uint64_t MemoryPool::size_class(uint64_t bytes) noexcept {
  constexpr uint64_t kMin = 512;
  if (bytes <= kMin) return kMin;
  // bytes lies in (2^k, 2^(k+1)]; classes step by 2^(k-2) there.
  int k = 63 - __builtin_clzll(bytes - 1);
  uint64_t step = uint64_t(1) << (k - 2);
  return (bytes + step - 1) / step * step;
}

bool MemoryPool::take_cached_locked(uint64_t size, StreamKey stream, Allocation* out) {
  auto it = cached_.find(size);
  if (it == cached_.end() || it->second.empty()) return false;
  auto& list = it->second;
  size_t pick = list.size();
  // A block last used on this very stream needs no wait; prefer it.
  for (size_t i = 0; i < list.size(); ++i) {
    if (stream != nullptr && list[i].stream == stream) {
      pick = i;
      break;
    }
  }
  if (pick == list.size()) {
    for (size_t i = 0; i < list.size(); ++i) {
      const Cached& c = list[i];
      if (c.stream == nullptr || c.stream == stream || (c.fence && c.fence->done())) {
        pick = i;
        break;
      }
    }
  }
  if (pick == list.size()) return false;
  out->ptr = list[pick].ptr;
  out->size = size;
  list[pick] = std::move(list.back());
  list.pop_back();
  return true;
}

void MemoryPool::note_in_use_locked(uint64_t size) noexcept {
  stats_.in_use += size;
  if (stats_.in_use > stats_.peak) stats_.peak = stats_.in_use;
  if (stats_.reserved > stats_.peak_reserved) stats_.peak_reserved = stats_.reserved;
}

std::vector<MemoryPool::Cached> MemoryPool::detach_cached_locked() noexcept {
  std::vector<Cached> out;
  try {
    for (auto& [size, list] : cached_) {
      for (auto& c : list) out.push_back(std::move(c));
      list.clear();
    }
  } catch (...) {
    // out of host memory while collecting: what was moved is released, the rest stays cached
  }
  return out;
}

void MemoryPool::release_detached(std::vector<Cached>& blocks) noexcept {
  if (blocks.empty()) return;
  uint64_t bytes = 0;
  BlockingScope unblock;  // fence waits; reached from buffer destructors that Python runs
  for (auto& c : blocks) {
    // The device may still be using the block on its stream.
    if (c.fence) c.fence->wait();
    allocator_->free(c.ptr);
    bytes += c.size;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reserved -= bytes;
  stats_.frees += blocks.size();
  blocks.clear();
}

void MemoryPool::throw_oom(uint64_t requested, const char* why) {
  std::string msg = "out of memory on " + name_ + ": cannot allocate " + human(requested) + " (" + why +
                    "); in use: " + human(stats_.in_use) + ", reserved: " + human(stats_.reserved);
  if (stats_.limit != 0) msg += ", pool limit: " + human(stats_.limit);
  throw OutOfMemoryError(msg, requested, stats_.in_use, stats_.reserved);
}

Allocation MemoryPool::allocate(uint64_t bytes, StreamKey stream) {
  const uint64_t size = size_class(bytes);
  Allocation out;
  std::vector<Cached> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (take_cached_locked(size, stream, &out)) {
      ++stats_.hits;
      note_in_use_locked(size);
      return out;
    }
    ++stats_.misses;
    if (stats_.limit != 0 && stats_.reserved + size > stats_.limit) released = detach_cached_locked();
  }
  release_detached(released);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stats_.limit != 0 && stats_.reserved + size > stats_.limit) throw_oom(bytes, "the pool's limit would be exceeded");
    stats_.reserved += size;  // claimed now, so concurrent allocations see the limit
  }
  dc_devptr ptr = 0;
  bool ok = allocator_->allocate(size, &ptr);
  if (!ok) {
    // Cached blocks are memory the device could use: give them back, try once more.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      released = detach_cached_locked();
    }
    release_detached(released);
    ok = allocator_->allocate(size, &ptr);
    if (!ok) {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.reserved -= size;
      throw_oom(bytes, "the device is out of memory, even after releasing cached blocks");
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.allocations;
  note_in_use_locked(size);
  out.ptr = ptr;
  out.size = size;
  return out;
}

void MemoryPool::deallocate(const Allocation& block, StreamKey stream) noexcept {
  if (block.ptr == 0 && block.size == 0) return;
  std::shared_ptr<Fence> fence;
  if (stream != nullptr) {
    try {
      fence = allocator_->fence(stream);
      if (!fence) stream = nullptr;  // nothing asynchronous: free for every stream
    } catch (...) {
      // Without a fence the block stays tied to its stream until it is released.
    }
  }
  std::vector<Cached> released;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.in_use -= block.size;
    try {
      cached_[block.size].push_back(Cached{block.ptr, block.size, stream, fence});
      cached = true;
    } catch (...) {
      // out of host memory: free the block below instead of caching it
    }
    if (cached && stats_.limit != 0 && stats_.reserved > stats_.limit) released = detach_cached_locked();
  }
  if (!cached) {
    BlockingScope unblock;
    if (fence) fence->wait();
    allocator_->free(block.ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.reserved -= block.size;
    ++stats_.frees;
  }
  release_detached(released);
}

void MemoryPool::trim() noexcept {
  std::vector<Cached> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    released = detach_cached_locked();
  }
  release_detached(released);
}

void MemoryPool::set_limit(uint64_t bytes) {
  std::vector<Cached> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.limit = bytes;
    if (bytes != 0 && stats_.reserved > bytes) released = detach_cached_locked();
  }
  release_detached(released);
}

uint64_t MemoryPool::limit() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_.limit;
}

MemoryStats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void MemoryPool::release_stream(StreamKey stream) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, list] : cached_) {
    for (auto& c : list) {
      if (c.stream == stream) {
        c.stream = nullptr;
        c.fence.reset();
      }
    }
  }
}

}  // namespace dotcompute
