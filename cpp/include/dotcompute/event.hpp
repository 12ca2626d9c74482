// A marker recorded in a stream: wait for it, poll it, time between two.
#pragma once

#include <memory>

#include "dotcompute/backend_abi.h"
#include "dotcompute/export.hpp"

namespace dotcompute {

class Accelerator;
class BackendPlugin;

class DOTCOMPUTE_API Event {
 public:
  // Created by Stream::record(); holds its accelerator (and plugin) alive.
  Event(std::shared_ptr<Accelerator> accelerator, dc_event handle);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Blocks until the work before the record point has finished.
  void synchronize();
  // True when the work before the record point has finished.
  bool query();
  // Milliseconds between this event and `end` (both must have completed;
  // waits for them if not).
  double elapsed_ms(Event& end);

  dc_event handle() const noexcept { return handle_; }
  Accelerator& accelerator() const noexcept { return *accelerator_; }

 private:
  std::shared_ptr<Accelerator> accelerator_;
  const dc_backend* api_;
  dc_event handle_;
};

}  // namespace dotcompute
