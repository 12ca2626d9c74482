// Events: markers recorded into a stream. Each record gets a sequence number;
// the event is complete when the stream has reached its latest record.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace dccpu {

class EventState {
 public:
  using Clock = std::chrono::steady_clock;

  // Called when the record is enqueued; returns the record's sequence number.
  uint64_t begin_record();
  // Called when the stream reaches record `seq`.
  void complete(uint64_t seq);
  // The latest record's sequence number (0: never recorded).
  uint64_t latest() const;
  bool reached(uint64_t seq) const;
  bool done() const { return reached(latest()); }
  void wait(uint64_t seq) const;
  // Waits for the latest record; returns false when the event was never recorded.
  bool wait_latest(Clock::time_point* stamp) const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  uint64_t recorded_ = 0;
  uint64_t completed_ = 0;
  Clock::time_point stamp_{};
};

}  // namespace dccpu
