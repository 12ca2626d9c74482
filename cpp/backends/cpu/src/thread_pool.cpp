#include "thread_pool.h"

#include <algorithm>
#include <system_error>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

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
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus_.push_back(c);
#endif
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
#if defined(__linux__)
  // Named for top -H, py-spy and the tests that look for the helpers (15 characters at most).
  (void)pthread_setname_np(pthread_self(), "dc-cpu-pool");
#endif
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
  place_helpers();
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

// Why helpers are bound to CPUs. On a virtual machine an idle vCPU is halted, and Linux's wake-up
// placement treats a halted vCPU as busy (vcpu_is_preempted): a helper woken for a job is put on the
// submitter's own CPU, where it takes turns with the submitter while the other CPU stays idle until
// the next load balance -- a launch of a millisecond then runs at one thread's speed (n-body at 1,024
// bodies on a 2-vCPU KVM guest: 1.06 ms on two threads, 1.10 on one). A helper allowed on one CPU
// only is woken there. The submitter is the user's thread (or a stream's worker), which the pool
// leaves unbound, so each helper gets its own CPU other than the submitter's current one; they are
// placed again only when the submitter is found on another CPU (sched_getcpu is a vDSO read).
void ThreadPool::place_helpers() {
#if defined(__linux__)
  // More helpers than the other CPUs (DOTCOMPUTE_CPU_THREADS above the CPU count): binding would
  // stack them on fixed CPUs; the scheduler spreads an oversubscribed pool better.
  if (cpus_.size() < 2 || helpers_.empty() || helpers_.size() > cpus_.size() - 1) return;
  const int here = sched_getcpu();
  if (here < 0 || here == placed_for_) return;
  placed_for_ = here;
  size_t next = 0;
  for (auto& h : helpers_) {
    if (cpus_[next] == here) ++next;  // at most one CPU is skipped: helpers <= CPUs - 1 fit
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus_[next], &one);
    ++next;
    // A refusal (the CPU left this process's cpuset since) leaves that helper where it was: a
    // placement, not a requirement.
    (void)pthread_setaffinity_np(h->thread.native_handle(), sizeof(one), &one);
  }
#endif
}

}  // namespace dccpu
