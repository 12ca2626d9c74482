#include "thread_pool.h"

#include <algorithm>
#include <system_error>

#include "spin.h"

namespace dccpu {

struct ThreadPool::Job {
  Body body;
  void* ctx;
  uint64_t total;
  uint64_t grain;
  uint64_t scratch_bytes;
  std::atomic<uint64_t> next{0};
  std::atomic<uint32_t> active{0};  // helpers currently inside this job
};

ThreadPool::ThreadPool(uint32_t participants, uint32_t spin_us) : spin_us_(spin_us) {
  const uint32_t helpers = participants > 1 ? participants - 1 : 0;
  helpers_.reserve(helpers);
  try {
    for (uint32_t i = 0; i < helpers; ++i) {
      helpers_.push_back(std::make_unique<Helper>());
      Helper& h = *helpers_.back();
      try {
        h.thread = std::thread([this, &h] { helper_loop(h); });
      } catch (const std::system_error&) {
        // No thread to be had (RLIMIT_NPROC, an address-space cap too tight for a stack): the pool
        // runs with the helpers it has -- the submitting thread at least -- instead of failing every
        // launch with EAGAIN. participants() counts only the helpers that run.
        helpers_.pop_back();
        break;
      }
    }
  } catch (...) {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(mutex_);
    }
    wake_.notify_all();
    for (auto& h : helpers_)
      if (h->thread.joinable()) h->thread.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& h : helpers_)
    if (h->thread.joinable()) h->thread.join();
}

void ThreadPool::run_chunks(Job& job, void* scratch) {
  for (;;) {
    const uint64_t begin = job.next.fetch_add(job.grain, std::memory_order_relaxed);
    if (begin >= job.total) return;
    job.body(job.ctx, begin, std::min(begin + job.grain, job.total), scratch);
  }
}

void ThreadPool::helper_loop(Helper& self) {
  uint64_t seen = 0;
  for (;;) {
    spin_until([&] { return generation_.load(std::memory_order_acquire) != seen || stop_.load(); }, spin_us_);
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
    if (stop_.load()) return;
    seen = generation_.load();
    Job* job = job_;
    if (job == nullptr) continue;  // that job already finished without us
    job->active.fetch_add(1);
    lock.unlock();
    void* scratch = nullptr;
    try {
      scratch = self.scratch.get(job->scratch_bytes);
    } catch (...) {
      // Without scratch this helper cannot run groups; the others (and the
      // submitter, whose scratch is already allocated) finish the job.
      scratch = nullptr;
    }
    if (scratch != nullptr || job->scratch_bytes == 0) run_chunks(*job, scratch);
    if (job->active.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> relock(mutex_);
      done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(uint64_t total, uint64_t grain, Body body, void* ctx, uint64_t scratch_bytes,
                              void* caller_scratch) {
  if (total == 0) return;
  grain = std::max<uint64_t>(grain, 1);
  if (helpers_.empty() || total <= grain) {
    body(ctx, 0, total, caller_scratch);
    return;
  }
  std::lock_guard<std::mutex> submit(submit_);
  Job job;
  job.body = body;
  job.ctx = ctx;
  job.total = total;
  job.grain = grain;
  job.scratch_bytes = scratch_bytes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks(job, caller_scratch);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = nullptr;  // no helper may join from here on
  }
  if (!spin_until([&] { return job.active.load() == 0; }, spin_us_)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return job.active.load() == 0; });
  }
}

}  // namespace dccpu
