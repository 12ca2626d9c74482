// Streams (one MTLCommandQueue each) and events (an MTLSharedEvent for cross-stream waits, a
// completed handler for completion and time). Handlers only touch C++ state under a mutex:
// they never call into Python, so they never need the GIL.
#include <algorithm>
#include <ctime>

#include "state.h"

namespace dcmtl {

namespace {

Stream* as_stream(dc_stream s) { return reinterpret_cast<Stream*>(s); }
Event* as_event(dc_event e) { return reinterpret_cast<Event*>(e); }

double host_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The time of a completed record. A signalled one whose handler is still to run (it runs right
// after the signal, on the queue's thread) is waited for: its time is moments away.
bool completed_time(Event* ev, double* t) {
  std::shared_ptr<EventState> state = ev->state;
  std::unique_lock<std::mutex> lock(state->m);
  if (!state->recorded) return false;
  if (!state->done) {
    if ([ev->shared.get() signaledValue] < state->value) return false;
    state->cv.wait(lock, [&] { return state->done; });
  }
  *t = state->gpu_time;
  return true;
}

}  // namespace

void commit(Stream* s, id<MTLCommandBuffer> cb) {
  {
    std::lock_guard<std::mutex> lock(s->m);
    ++s->committed;
  }
  // The stream outlives its command buffers: stream_destroy waits for them first.
  [cb addCompletedHandler:^(id<MTLCommandBuffer> done) {
    std::string why;
    dc_status code = DC_OK;
    if ([done status] == MTLCommandBufferStatusError) {
      NSError* e = [done error];
      code = e != nil && [[e domain] isEqualToString:MTLCommandBufferErrorDomain] &&
                     [e code] == MTLCommandBufferErrorOutOfMemory
                 ? DC_ERROR_OUT_OF_MEMORY
                 : DC_ERROR_LAUNCH;
      why = "Metal command buffer failed: " + describe(e);
    } else if ([done error] != nil) {
      code = DC_ERROR_LAUNCH;
      why = "Metal command buffer failed: " + describe([done error]);
    }
    // Notified under the lock: once `completed` catches up, stream_destroy may delete the
    // stream, so nothing of it may be touched after the unlock.
    std::lock_guard<std::mutex> lock(s->m);
    if (!why.empty() && s->error.empty()) {
      s->error = why;
      s->error_status = code;
    }
    ++s->completed;
    s->cv.notify_all();
  }];
  [cb commit];
}

dc_status wait_stream(Stream* s) {
  std::unique_lock<std::mutex> lock(s->m);
  uint64_t target = s->committed;
  s->cv.wait(lock, [&] { return s->completed >= target; });
  if (!s->error.empty()) {
    std::string why;
    std::swap(why, s->error);
    dc_status code = s->error_status;
    s->error_status = DC_OK;
    return fail(code, why);
  }
  return DC_OK;
}

dc_status stream_create(int32_t device, dc_stream* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_create: out is null");
    auto s = std::make_unique<Stream>();
    s->device = dev;
    s->queue = Owned<id<MTLCommandQueue>>::adopt([dev->device.get() newCommandQueue]);
    if (!s->queue) return fail(DC_ERROR_OUT_OF_MEMORY, "Metal: newCommandQueue failed");
    *out = reinterpret_cast<dc_stream>(s.release());
    return DC_OK;
  });
}

dc_status stream_destroy(dc_stream s) {
  return guarded([&] {
    Stream* st = as_stream(s);
    if (st == nullptr) return DC_OK;
    // handlers refer to the stream: let them all run before it goes
    std::unique_lock<std::mutex> lock(st->m);
    st->cv.wait(lock, [&] { return st->completed >= st->committed; });
    lock.unlock();
    delete st;
    return DC_OK;
  });
}

dc_status stream_synchronize(dc_stream s) {
  return guarded([&] {
    Stream* st = as_stream(s);
    if (st == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_synchronize: null stream");
    return wait_stream(st);
  });
}

dc_status stream_wait_event(dc_stream s, dc_event e) {
  return guarded([&] {
    Stream* st = as_stream(s);
    Event* ev = as_event(e);
    if (st == nullptr || ev == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_wait_event: null handle");
    if (ev->value == 0) return DC_OK;  // never recorded: nothing to wait for
    id<MTLCommandBuffer> cb = [st->queue.get() commandBuffer];
    [cb encodeWaitForEvent:ev->shared.get() value:ev->value];
    commit(st, cb);
    return DC_OK;
  });
}

dc_status event_create(int32_t device, dc_event* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_create: out is null");
    auto ev = std::make_unique<Event>();
    ev->device = dev;
    ev->shared = Owned<id<MTLSharedEvent>>::adopt([dev->device.get() newSharedEvent]);
    if (!ev->shared) return fail(DC_ERROR_OUT_OF_MEMORY, "Metal: newSharedEvent failed");
    ev->state = std::make_shared<EventState>();
    *out = reinterpret_cast<dc_event>(ev.release());
    return DC_OK;
  });
}

dc_status event_destroy(dc_event e) {
  return guarded([&] {
    // a pending handler keeps the EventState alive through its shared_ptr
    delete as_event(e);
    return DC_OK;
  });
}

dc_status event_record(dc_event e, dc_stream s) {
  return guarded([&] {
    Stream* st = as_stream(s);
    Event* ev = as_event(e);
    if (st == nullptr || ev == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_record: null handle");
    // A fresh state per record: a wait on an earlier record is not moved by a later one.
    auto state = std::make_shared<EventState>();
    state->recorded = true;
    ev->value += 1;
    state->value = ev->value;
    ev->state = state;
    id<MTLCommandBuffer> cb = [st->queue.get() commandBuffer];
    [cb encodeSignalEvent:ev->shared.get() value:ev->value];
    // The marker's time: when this (empty) command buffer completed, i.e. after all work
    // queued before it. GPUEndTime where the device reports one, else the host clock.
    std::shared_ptr<EventState>* held = new std::shared_ptr<EventState>(state);
    [cb addCompletedHandler:^(id<MTLCommandBuffer> done) {
      double t = [done GPUEndTime];
      {
        std::lock_guard<std::mutex> lock((*held)->m);
        (*held)->gpu_time = t > 0 ? t : host_seconds();
        (*held)->done = true;
      }
      (*held)->cv.notify_all();
      delete held;
    }];
    commit(st, cb);
    return DC_OK;
  });
}

dc_status event_synchronize(dc_event e) {
  return guarded([&] {
    Event* ev = as_event(e);
    if (ev == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_synchronize: null event");
    std::shared_ptr<EventState> state = ev->state;
    std::unique_lock<std::mutex> lock(state->m);
    state->cv.wait(lock, [&] { return !state->recorded || state->done; });
    return DC_OK;
  });
}

dc_status event_query(dc_event e, int32_t* done) {
  return guarded([&] {
    Event* ev = as_event(e);
    if (ev == nullptr || done == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_query: null handle");
    std::shared_ptr<EventState> state = ev->state;
    std::lock_guard<std::mutex> lock(state->m);
    // The signal is visible to other queues before this command buffer's completed handler
    // runs: a stream that waited on it may already be past it, so the signal counts too.
    *done = (!state->recorded || state->done || [ev->shared.get() signaledValue] >= state->value) ? 1 : 0;
    return DC_OK;
  });
}

dc_status event_elapsed_ms(dc_event start, dc_event end, double* ms) {
  return guarded([&] {
    Event* a = as_event(start);
    Event* b = as_event(end);
    if (a == nullptr || b == nullptr || ms == nullptr) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: null handle");
    }
    double ta = 0, tb = 0;
    if (!completed_time(a, &ta)) return fail(DC_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: start not complete");
    if (!completed_time(b, &tb)) return fail(DC_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: end not complete");
    *ms = std::max(0.0, (tb - ta) * 1000.0);
    return DC_OK;
  });
}

}  // namespace dcmtl
