// A stream: an in-order queue drained by its own worker thread. Work may also
// run inline on the submitting thread when the stream is idle (or on a thread
// that synchronizes before the worker started it), which keeps
// small launches free of any thread hand-off while preserving order.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "dotcompute/backend_abi.h"
#include "scratch.h"
#include "task.h"

namespace dccpu {

class Stream {
 public:
  explicit Stream(uint32_t spin_us) : spin_us_(spin_us) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  // Finishes the queued work, then stops the worker.
  ~Stream();

  // Takes the stream's execution token when nothing is queued or running.
  // The holder runs work inline and must call end_inline().
  bool try_begin_inline();
  void end_inline();

  void enqueue(std::unique_ptr<Task> task);
  // Waits until everything queued so far ran; queued work that no thread has
  // started yet runs on the calling thread. Returns false (with the
  // message) when queued work failed since the last synchronize.
  // `status` (optional) receives the failure's dc_status.
  bool synchronize(std::string* error, dc_status* status = nullptr);

  // Scratch for whoever holds the execution token (inline caller or worker).
  Scratch& scratch() { return scratch_; }

 private:
  void worker_loop();
  // Pops and runs the front task with `lock` held on entry and exit (released
  // while the task runs); records a failure for synchronize.
  void run_front(std::unique_lock<std::mutex>& lock);
  bool idle_locked() const { return queue_.empty() && !running_; }

  const uint32_t spin_us_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::unique_ptr<Task>> queue_;
  std::atomic<uint64_t> queued_{0};  // mirrors queue_.size() for lock-free spinning
  bool running_ = false;             // a task (queued or inline) is executing
  bool sleeping_ = false;            // the worker waits on work_cv_
  bool stop_ = false;
  std::string deferred_error_;  // failure of queued work, reported by synchronize
  dc_status deferred_status_ = DC_OK;
  std::thread worker_;
  Scratch scratch_;
};

// Executes one task; the caller holds the stream's execution token.
void run_task(Task& task, Stream& stream);

// RAII holder of a stream's inline execution token.
class InlineToken {
 public:
  explicit InlineToken(Stream& s) : stream_(s), held_(s.try_begin_inline()) {}
  InlineToken(const InlineToken&) = delete;
  InlineToken& operator=(const InlineToken&) = delete;
  ~InlineToken() {
    if (held_) stream_.end_inline();
  }
  explicit operator bool() const { return held_; }

 private:
  Stream& stream_;
  bool held_;
};

}  // namespace dccpu
