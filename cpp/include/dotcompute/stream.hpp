// An in-order queue of work on one accelerator. Copies and launches enqueued
// on a stream run asynchronously (on the CPU backend too, on a worker queue).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "dotcompute/export.hpp"

namespace dotcompute {

class Accelerator;
class Event;

class DOTCOMPUTE_API Stream : public std::enable_shared_from_this<Stream> {
 public:
  // `owner` keeps the accelerator alive; it is empty for the accelerator's own
  // default stream (which the accelerator owns, so it cannot own it back).
  Stream(Accelerator* accelerator, std::shared_ptr<Accelerator> owner, dc_stream handle);
  ~Stream();  // waits for queued work, then destroys the queue
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Blocks until everything enqueued so far has finished.
  void synchronize();
  // An event marking the current end of the queue.
  std::shared_ptr<Event> record();
  // Work enqueued after this call starts only after `event` has completed.
  void wait(const Event& event);

  // A shared_ptr to this stream (for the default stream: one that keeps its
  // accelerator alive).
  std::shared_ptr<Stream> shared();

  // Keeps `object` alive until `event` (recorded on this stream) has completed: host memory that
  // an enqueued, non-blocking transfer still reads outlives its owner without a blocking wait.
  // Finished entries are dropped on later calls, on synchronize() and when the stream is destroyed.
  void keep_alive(std::shared_ptr<Event> event, std::shared_ptr<void> object);
  dc_stream handle() const noexcept { return handle_; }
  Accelerator& accelerator() const noexcept { return *accelerator_; }
  bool is_default() const noexcept { return owner_ == nullptr; }

 private:
  Accelerator* accelerator_;
  std::shared_ptr<Accelerator> owner_;
  const dc_backend* api_;
  dc_stream handle_;
  void sweep_kept(bool all);
  std::mutex kept_mutex_;
  std::vector<std::pair<std::shared_ptr<Event>, std::shared_ptr<void>>> kept_;
};

}  // namespace dotcompute
