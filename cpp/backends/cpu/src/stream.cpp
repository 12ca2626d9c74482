#include "stream.h"

#include <exception>

#if defined(__linux__)
#include <pthread.h>
#endif

#include "spin.h"

namespace dccpu {

Stream::~Stream() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_cv_.wait(lock, [&] { return idle_locked(); });
  stop_ = true;
  work_cv_.notify_all();
  lock.unlock();
  if (worker_.joinable()) worker_.join();
}

bool Stream::try_begin_inline() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!idle_locked()) return false;
  running_ = true;
  return true;
}

void Stream::end_inline() {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  if (queue_.empty()) {
    idle_cv_.notify_all();
  } else if (sleeping_) {
    work_cv_.notify_one();
  }
}

void Stream::enqueue(std::unique_ptr<Task> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!worker_.joinable()) worker_ = std::thread([this] { worker_loop(); });
  queue_.push_back(std::move(task));
  queued_.fetch_add(1, std::memory_order_release);
  if (sleeping_) work_cv_.notify_one();
}

bool Stream::synchronize(std::string* error, dc_status* status) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Work queued but not yet started (typically a launch made just before this wait, which a
  // sleeping worker takes tens of microseconds to wake for) runs on the waiting thread: it would
  // only sleep otherwise, and a launch's pool then has the cores without a third thread handing
  // off to the worker and back. Order holds: only one thread runs the stream's tasks at a time.
  while (!queue_.empty() && !running_) run_front(lock);
  if (!idle_locked()) {
    lock.unlock();
    // Short waits are common (a launch just enqueued); spinning avoids a futex sleep.
    spin_until([&] { return queued_.load(std::memory_order_acquire) == 0; }, spin_us_);
    lock.lock();
    idle_cv_.wait(lock, [&] { return idle_locked(); });
  }
  if (deferred_error_.empty()) return true;
  if (error != nullptr) *error = std::move(deferred_error_);
  if (status != nullptr) *status = deferred_status_;
  deferred_error_.clear();
  deferred_status_ = DC_OK;
  return false;
}

void Stream::run_front(std::unique_lock<std::mutex>& lock) {
  std::unique_ptr<Task> task = std::move(queue_.front());
  queue_.pop_front();
  running_ = true;
  lock.unlock();
  std::string failure;
  dc_status failure_status = DC_ERROR_LAUNCH;
  try {
    run_task(*task, *this);
  } catch (const KernelFailureError& e) {
    failure = e.message;
    failure_status = e.status;
  } catch (const std::exception& e) {
    failure = std::string("cpu: queued work failed: ") + e.what();
  }
  task.reset();
  lock.lock();
  if (!failure.empty() && deferred_error_.empty()) {
    deferred_error_ = std::move(failure);
    deferred_status_ = failure_status;
  }
  running_ = false;
  queued_.fetch_sub(1, std::memory_order_release);
  if (queue_.empty()) {
    idle_cv_.notify_all();
  } else if (sleeping_) {
    work_cv_.notify_one();  // a waiting thread that ran this task may leave the rest to the worker
  }
}

void Stream::worker_loop() {
#if defined(__linux__)
  (void)pthread_setname_np(pthread_self(), "dc-cpu-stream");  // for top -H and py-spy
#endif
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queue_.empty() || running_) {
      if (stop_ && queue_.empty()) return;
      lock.unlock();
      spin_until([&] { return queued_.load(std::memory_order_acquire) != 0; }, spin_us_);
      lock.lock();
      if ((queue_.empty() || running_) && !stop_) {
        sleeping_ = true;
        work_cv_.wait(lock, [&] { return (!queue_.empty() && !running_) || stop_; });
        sleeping_ = false;
      }
      continue;
    }
    run_front(lock);
  }
}

}  // namespace dccpu
