// The process-wide pool that runs the work-groups of one launch in parallel.
// The thread that submits a job (a stream worker) takes part in it, so a pool
// of N participants owns N-1 helper threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "scratch.h"

namespace dccpu {

class ThreadPool {
 public:
  // Work on the half-open range [begin, end); `scratch` is the participant's
  // own block of at least the job's scratch_bytes.
  using Body = void (*)(void* ctx, uint64_t begin, uint64_t end, void* scratch);

  ThreadPool(uint32_t participants, uint32_t spin_us);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  uint32_t participants() const { return static_cast<uint32_t>(helpers_.size()) + 1; }

  // Runs body over [0, total) in contiguous chunks of `grain`, on the helpers
  // and the calling thread; returns when every chunk is done. One job runs at
  // a time; concurrent callers queue on the submit lock.
  void parallel_for(uint64_t total, uint64_t grain, Body body, void* ctx, uint64_t scratch_bytes,
                    void* caller_scratch);

 private:
  struct Job;
  struct Helper {
    std::thread thread;
    Scratch scratch;
  };
  void helper_loop(Helper& self);
  static void run_chunks(Job& job, void* scratch);
  // Binds each helper to its own CPU other than the submitting thread's (when that CPU changed since
  // the last job); see the note in thread_pool.cpp.
  void place_helpers();

  const uint32_t spin_us_;
  std::mutex submit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job* job_ = nullptr;  // guarded by mutex_
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::unique_ptr<Helper>> helpers_;
  std::vector<int> cpus_;   // the CPUs this process may run on, when the pool was made
  int placed_for_ = -1;     // the submitter's CPU the helpers were last placed around (guarded by submit_)
};

}  // namespace dccpu
