#include "dotcompute/memory_pool.hpp"

#include <cstdio>

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

void MemoryPool::release_cached_locked() noexcept {
  for (auto& [size, list] : cached_) {
    for (auto& c : list) {
      // The device may still be using the block on its stream.
      if (c.fence) c.fence->wait();
      allocator_->free(c.ptr);
      stats_.reserved -= c.size;
      ++stats_.frees;
    }
  }
  cached_.clear();
}

void MemoryPool::throw_oom(uint64_t requested, const char* why) {
  std::string msg = "out of memory on " + name_ + ": cannot allocate " + human(requested) + " (" + why +
                    "); in use: " + human(stats_.in_use) + ", reserved: " + human(stats_.reserved);
  if (stats_.limit != 0) msg += ", pool limit: " + human(stats_.limit);
  throw OutOfMemoryError(msg, requested, stats_.in_use, stats_.reserved);
}

Allocation MemoryPool::allocate(uint64_t bytes, StreamKey stream) {
  const uint64_t size = size_class(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  Allocation out;
  if (take_cached_locked(size, stream, &out)) {
    ++stats_.hits;
    note_in_use_locked(size);
    return out;
  }
  ++stats_.misses;
  if (stats_.limit != 0 && stats_.reserved + size > stats_.limit) {
    release_cached_locked();
    if (stats_.reserved + size > stats_.limit) throw_oom(bytes, "the pool's limit would be exceeded");
  }
  dc_devptr ptr = 0;
  bool ok = allocator_->allocate(size, &ptr);
  if (!ok) {
    // Cached blocks are memory the device could use: give it back, try once more.
    release_cached_locked();
    ok = allocator_->allocate(size, &ptr);
    if (!ok) throw_oom(bytes, "the device is out of memory, even after releasing cached blocks");
  }
  ++stats_.allocations;
  stats_.reserved += size;
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
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.in_use -= block.size;
  try {
    cached_[block.size].push_back(Cached{block.ptr, block.size, stream, std::move(fence)});
  } catch (...) {
    allocator_->free(block.ptr);
    stats_.reserved -= block.size;
    ++stats_.frees;
    return;
  }
  if (stats_.limit != 0 && stats_.reserved > stats_.limit) release_cached_locked();
}

void MemoryPool::trim() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

void MemoryPool::set_limit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.limit = bytes;
  if (bytes != 0 && stats_.reserved > bytes) release_cached_locked();
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
