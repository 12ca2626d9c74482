#include "dotcompute/stream.hpp"

#include "dotcompute/blocking.hpp"

#include <algorithm>
#include <iterator>

#include "backend_plugin.hpp"
#include "dotcompute/accelerator.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/event.hpp"

namespace dotcompute {

Stream::Stream(Accelerator* accelerator, std::shared_ptr<Accelerator> owner, dc_stream handle)
    : accelerator_(accelerator), owner_(std::move(owner)), api_(accelerator->api()), handle_(handle) {}

Stream::~Stream() {
  {
    BlockingScope unblock;  // the last owner may be a Python object: let other threads run meanwhile
    api_->stream_synchronize(handle_);
  }
  sweep_kept(true);
  // Its queue is drained: blocks freed on it are now free for every stream.
  accelerator_->memory().release_stream(this);
  api_->stream_destroy(handle_);
}

std::shared_ptr<Stream> Stream::shared() {
  if (owner_ == nullptr) return accelerator_->default_stream_ptr();
  return shared_from_this();
}

void Stream::synchronize() {
  dc_status st = api_->stream_synchronize(handle_);
  if (st != DC_OK) {
    throw_status(st, "synchronizing a stream on " + accelerator_->id() + " failed", plugin_error(api_));
  }
  sweep_kept(true);
}

void Stream::keep_alive(std::shared_ptr<Event> event, std::shared_ptr<void> object) {
  sweep_kept(false);
  std::lock_guard<std::mutex> lock(kept_mutex_);
  kept_.emplace_back(std::move(event), std::move(object));
}

void Stream::sweep_kept(bool all) {
  // Objects are released outside the lock (their destructors may be arbitrary).
  std::vector<std::pair<std::shared_ptr<Event>, std::shared_ptr<void>>> done;
  {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    if (kept_.empty()) return;
    auto finished = [all](const std::pair<std::shared_ptr<Event>, std::shared_ptr<void>>& e) {
      if (all) return true;
      try {
        return e.first->query();
      } catch (...) {
        return false;  // a failing device: keep it until the stream is synchronized or destroyed
      }
    };
    auto keep = std::stable_partition(kept_.begin(), kept_.end(), [&](const auto& e) { return !finished(e); });
    done.assign(std::make_move_iterator(keep), std::make_move_iterator(kept_.end()));
    kept_.erase(keep, kept_.end());
  }
}

std::shared_ptr<Event> Stream::record() {
  dc_event e = nullptr;
  dc_status st = api_->event_create(accelerator_->index(), &e);
  if (st != DC_OK) throw_status(st, "event_create on " + accelerator_->id() + " failed", plugin_error(api_));
  // The Event owns the handle from here on, also if recording fails.
  auto event = std::make_shared<Event>(accelerator_->shared_from_this(), e);
  st = api_->event_record(e, handle_);
  if (st != DC_OK) throw_status(st, "event_record on " + accelerator_->id() + " failed", plugin_error(api_));
  return event;
}

void Stream::wait(const Event& event) {
  if (event.accelerator().api() != api_) {
    throw InvalidArgumentError("a stream of " + accelerator_->id() + " cannot wait for an event of " +
                                   event.accelerator().id(),
                               "event");
  }
  dc_status st = api_->stream_wait_event(handle_, event.handle());
  if (st != DC_OK) throw_status(st, "stream_wait_event on " + accelerator_->id() + " failed", plugin_error(api_));
}

}  // namespace dotcompute
