// MemoryPool against an injected fake allocator: size classes, reuse,
// stream ordering, limits, the out-of-memory retry and statistics.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "dotcompute/errors.hpp"
#include "dotcompute/memory_pool.hpp"

using namespace dotcompute;

namespace {

struct FakeFence : Fence {
  std::shared_ptr<std::atomic<bool>> flag;
  std::atomic<int>* waits;
  FakeFence(std::shared_ptr<std::atomic<bool>> f, std::atomic<int>* w) : flag(std::move(f)), waits(w) {}
  bool done() override { return *flag; }
  void wait() override {
    ++*waits;
    *flag = true;  // waiting completes the work in this model
  }
};

// Hands out fake addresses from a bounded capacity; a "stream" completes its
// queued work only when the test says so.
class FakeAllocator : public RawAllocator {
 public:
  explicit FakeAllocator(uint64_t capacity) : capacity_(capacity) {}
  bool allocate(uint64_t bytes, dc_devptr* out) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++attempts;
    if (used_ + bytes > capacity_) return false;
    used_ += bytes;
    next_ += 1 << 20;
    live_[next_] = bytes;
    *out = next_;
    return true;
  }
  void free(dc_devptr ptr) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    used_ -= live_.at(ptr);
    live_.erase(ptr);
    ++frees;
  }
  std::shared_ptr<Fence> fence(StreamKey stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& flag = pending_[stream];
    if (!flag) flag = std::make_shared<std::atomic<bool>>(false);
    return std::make_shared<FakeFence>(flag, &waits);
  }
  // Everything queued on `stream` so far has finished.
  void complete(StreamKey stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = pending_.find(stream); it != pending_.end()) {
      *it->second = true;
      pending_.erase(it);
    }
  }
  uint64_t used() const { return used_; }
  size_t live() const { return live_.size(); }

  std::atomic<int> attempts{0};
  std::atomic<int> frees{0};
  std::atomic<int> waits{0};

 private:
  std::mutex mutex_;
  uint64_t capacity_;
  uint64_t used_ = 0;
  dc_devptr next_ = 0;
  std::map<dc_devptr, uint64_t> live_;
  std::map<StreamKey, std::shared_ptr<std::atomic<bool>>> pending_;
};

const int s1_tag = 1, s2_tag = 2;
const StreamKey S1 = &s1_tag;
const StreamKey S2 = &s2_tag;

}  // namespace

TEST(MemoryPool, SizeClassesBoundWaste) {
  EXPECT_EQ(MemoryPool::size_class(0), 512u);
  EXPECT_EQ(MemoryPool::size_class(1), 512u);
  EXPECT_EQ(MemoryPool::size_class(512), 512u);
  EXPECT_EQ(MemoryPool::size_class(513), 640u);
  EXPECT_EQ(MemoryPool::size_class(1024), 1024u);
  EXPECT_EQ(MemoryPool::size_class(1025), 1280u);
  EXPECT_EQ(MemoryPool::size_class((1u << 20) + 1), (1u << 20) + (1u << 18));
  uint64_t prev = 0;
  for (uint64_t b = 1; b < (1u << 22); b = b * 9 / 8 + 1) {
    uint64_t c = MemoryPool::size_class(b);
    EXPECT_GE(c, b);
    EXPECT_GE(c, prev);
    if (b > 512) {
      EXPECT_LE(c, b + b / 4) << b;
    }
    EXPECT_EQ(MemoryPool::size_class(c), c) << "a class maps to itself";
    prev = c;
  }
}

TEST(MemoryPool, ReusesFreedBlockOfTheSameClass) {
  auto fake = std::make_shared<FakeAllocator>(1 << 30);
  MemoryPool pool(fake, "fake:0");
  Allocation a = pool.allocate(1000);
  EXPECT_EQ(a.size, 1024u);
  pool.deallocate(a);
  Allocation b = pool.allocate(900);  // same class
  EXPECT_EQ(b.ptr, a.ptr);
  Allocation c = pool.allocate(3000);  // another class: a new block
  EXPECT_NE(c.ptr, a.ptr);
  MemoryStats s = pool.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.allocations, 2u);
  EXPECT_EQ(s.in_use, 1024u + MemoryPool::size_class(3000));
  EXPECT_EQ(s.reserved, s.in_use);
  pool.deallocate(b);
  pool.deallocate(c);
  s = pool.stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.reserved, 1024u + MemoryPool::size_class(3000));
  EXPECT_EQ(s.peak, s.reserved);
  pool.trim();
  s = pool.stats();
  EXPECT_EQ(s.reserved, 0u);
  EXPECT_EQ(s.frees, 2u);
  EXPECT_EQ(fake->live(), 0u);
}

TEST(MemoryPool, StreamOrderedReuse) {
  auto fake = std::make_shared<FakeAllocator>(1 << 30);
  MemoryPool pool(fake, "fake:0");
  Allocation a = pool.allocate(4096, S1);
  pool.deallocate(a, S1);  // S1 may still use it
  // The same stream runs in order: reuse at once.
  Allocation b = pool.allocate(4096, S1);
  EXPECT_EQ(b.ptr, a.ptr);
  pool.deallocate(b, S1);
  // Another stream must not get it while S1's work is pending.
  Allocation c = pool.allocate(4096, S2);
  EXPECT_NE(c.ptr, a.ptr);
  Allocation none = pool.allocate(4096, nullptr);
  EXPECT_NE(none.ptr, a.ptr);
  // Once S1's fence completes, any stream may take it.
  fake->complete(S1);
  Allocation d = pool.allocate(4096, S2);
  EXPECT_EQ(d.ptr, a.ptr);
  EXPECT_EQ(pool.stats().hits, 2u);
  pool.deallocate(c, S2);
  pool.deallocate(d, S2);
  pool.deallocate(none);
}

TEST(MemoryPool, ReleasedStreamFreesItsBlocksForAll) {
  auto fake = std::make_shared<FakeAllocator>(1 << 30);
  MemoryPool pool(fake, "fake:0");
  Allocation a = pool.allocate(2048, S1);
  pool.deallocate(a, S1);
  EXPECT_NE(pool.allocate(2048, S2).ptr, a.ptr);
  pool.release_stream(S1);
  EXPECT_EQ(pool.allocate(2048, S2).ptr, a.ptr);
}

TEST(MemoryPool, TrimWaitsForPendingWork) {
  auto fake = std::make_shared<FakeAllocator>(1 << 30);
  MemoryPool pool(fake, "fake:0");
  pool.deallocate(pool.allocate(10000, S1), S1);
  EXPECT_EQ(fake->live(), 1u);
  pool.trim();
  EXPECT_EQ(fake->waits, 1);
  EXPECT_EQ(fake->live(), 0u);
  EXPECT_EQ(pool.stats().reserved, 0u);
}

TEST(MemoryPool, LimitTrimsCacheThenRefuses) {
  auto fake = std::make_shared<FakeAllocator>(1 << 30);
  MemoryPool pool(fake, "fake:0");
  pool.set_limit(8192);
  EXPECT_EQ(pool.limit(), 8192u);
  Allocation a = pool.allocate(4096);
  pool.deallocate(a);  // cached: reserved stays 4096
  // 8192 would exceed the limit with the cached block; the pool drops it first.
  Allocation b = pool.allocate(8000);
  EXPECT_EQ(pool.stats().reserved, 8192u);
  EXPECT_EQ(fake->frees, 1);
  try {
    pool.allocate(1);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("fake:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
    EXPECT_EQ(e.requested(), 1u);
    EXPECT_EQ(e.in_use(), 8192u);
  }
  pool.deallocate(b);
  pool.set_limit(0);
  Allocation c = pool.allocate(1 << 20);
  pool.deallocate(c);
}

TEST(MemoryPool, OutOfMemoryReleasesCacheAndRetriesOnce) {
  auto fake = std::make_shared<FakeAllocator>(16384);
  MemoryPool pool(fake, "fake:0");
  Allocation a = pool.allocate(8192);
  pool.deallocate(a);  // cached, occupies the device
  int before = fake->attempts;
  Allocation b = pool.allocate(12000);  // needs the cached block's memory
  EXPECT_EQ(fake->attempts - before, 2) << "one failure, one retry";
  EXPECT_EQ(fake->frees, 1);
  pool.deallocate(b);
}

TEST(MemoryPool, OutOfMemoryErrorNamesTheSizes) {
  auto fake = std::make_shared<FakeAllocator>(16384);
  MemoryPool pool(fake, "fake:0");
  Allocation held = pool.allocate(10000);
  int before = fake->attempts;
  try {
    pool.allocate(12000);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("12000 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("in use"), std::string::npos) << msg;
    EXPECT_NE(msg.find("reserved"), std::string::npos) << msg;
    EXPECT_EQ(e.requested(), 12000u);
    EXPECT_EQ(e.in_use(), held.size);
    EXPECT_EQ(e.reserved(), held.size);
  }
  EXPECT_EQ(fake->attempts - before, 2);
  // The failure leaves the pool consistent.
  EXPECT_EQ(pool.stats().in_use, held.size);
  pool.deallocate(held);
  Allocation again = pool.allocate(12000);
  pool.deallocate(again);
}

TEST(MemoryPool, ConcurrentAllocateAndFree) {
  auto fake = std::make_shared<FakeAllocator>(1ull << 40);
  MemoryPool pool(fake, "fake:0");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t] {
      std::vector<Allocation> held;
      for (int i = 0; i < 2000; ++i) {
        held.push_back(pool.allocate(512u * (1 + (i + t) % 7)));
        if (held.size() > 8) {
          pool.deallocate(held.front());
          held.erase(held.begin());
        }
      }
      for (auto& a : held) pool.deallocate(a);
    });
  }
  for (auto& t : threads) t.join();
  MemoryStats s = pool.stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.hits + s.misses, 8000u);
  EXPECT_GT(s.hits, s.misses);
  pool.trim();
  EXPECT_EQ(fake->live(), 0u);
}
