#include "event.h"

namespace dccpu {

uint64_t EventState::begin_record() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++recorded_;
}

void EventState::complete(uint64_t seq) {
  const auto now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (seq <= completed_) return;
    completed_ = seq;
    stamp_ = now;
  }
  cv_.notify_all();
}

uint64_t EventState::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

bool EventState::reached(uint64_t seq) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ >= seq;
}

void EventState::wait(uint64_t seq) const {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return completed_ >= seq; });
}

bool EventState::wait_latest(Clock::time_point* stamp) const {
  std::unique_lock<std::mutex> lock(mutex_);
  if (recorded_ == 0) return false;
  const uint64_t target = recorded_;
  cv_.wait(lock, [&] { return completed_ >= target; });
  if (stamp != nullptr) *stamp = stamp_;
  return true;
}

}  // namespace dccpu
