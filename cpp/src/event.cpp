#include "dotcompute/event.hpp"

#include "backend_plugin.hpp"
#include "dotcompute/accelerator.hpp"
#include "dotcompute/errors.hpp"

namespace dotcompute {

Event::Event(std::shared_ptr<Accelerator> accelerator, dc_event handle)
    : accelerator_(std::move(accelerator)), api_(accelerator_->api()), handle_(handle) {}

Event::~Event() { api_->event_destroy(handle_); }

void Event::synchronize() {
  dc_status st = api_->event_synchronize(handle_);
  if (st != DC_OK) throw_status(st, "waiting for an event on " + accelerator_->id() + " failed", plugin_error(api_));
}

bool Event::query() {
  int32_t done = 0;
  dc_status st = api_->event_query(handle_, &done);
  if (st != DC_OK) throw_status(st, "querying an event on " + accelerator_->id() + " failed", plugin_error(api_));
  return done != 0;
}

double Event::elapsed_ms(Event& end) {
  if (end.api_ != api_) throw InvalidArgumentError("events of different backends cannot be timed together", "end");
  synchronize();
  end.synchronize();
  double ms = 0;
  dc_status st = api_->event_elapsed_ms(handle_, end.handle_, &ms);
  if (st != DC_OK) throw_status(st, "event_elapsed_ms on " + accelerator_->id() + " failed", plugin_error(api_));
  return ms;
}

}  // namespace dotcompute
