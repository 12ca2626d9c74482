// Streams are in-order, profiling-enabled command queues; events are markers
// enqueued in them, timed with the profiling counters.
#include <mutex>

#include "objects.h"
#include "ops.h"
#include "status.h"

namespace dcl {
namespace {

dc_status wait_marker(cl_event ev, const char* what) {
  cl_int err = api().clWaitForEvents(1, &ev);
  if (err != CL_SUCCESS) {
    // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: a command before the marker failed.
    return fail_cl("clWaitForEvents", err, DC_ERROR_LAUNCH, what);
  }
  return DC_OK;
}

dc_status marker_end_ns(cl_event ev, cl_ulong* ns) {
  cl_int err = api().clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(*ns), ns, nullptr);
  if (err != CL_SUCCESS) return fail_cl("clGetEventProfilingInfo", err, DC_ERROR_INTERNAL, "event_elapsed_ms");
  return DC_OK;
}

}  // namespace

dc_status stream_create(int32_t device, dc_stream* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_create: out is null");
    cl_int err = CL_SUCCESS;
    Queue queue(api().clCreateCommandQueue(dev->context.get(), dev->id, CL_QUEUE_PROFILING_ENABLE, &err));
    if (err != CL_SUCCESS) return fail_cl("clCreateCommandQueue", err, DC_ERROR_INTERNAL, "stream_create");
    auto s = std::make_unique<dc_stream_s>();
    s->device = dev;
    s->queue = std::move(queue);
    *out = s.release();
    return DC_OK;
  });
}

dc_status stream_destroy(dc_stream s) {
  return guarded([&] {
    if (s == nullptr) return DC_OK;
    // Releasing a queue lets its queued commands finish; flushing makes sure they were submitted.
    api().clFlush(s->queue.get());
    delete s;
    return DC_OK;
  });
}

dc_status stream_synchronize(dc_stream s) {
  return guarded([&] {
    if (s == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_synchronize: stream is null");
    cl_int err = api().clFinish(s->queue.get());
    if (err != CL_SUCCESS) return fail_cl("clFinish", err, DC_ERROR_LAUNCH, "stream_synchronize");
    return DC_OK;
  });
}

dc_status stream_wait_event(dc_stream s, dc_event e) {
  return guarded([&] {
    if (s == nullptr || e == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_wait_event: null stream or event");
    std::lock_guard<std::mutex> lock(e->mutex);
    if (!e->marker) return DC_OK;  // never recorded: nothing to wait for
    cl_event ev = e->marker.get();
    if (e->device->context.get() != s->device->context.get()) {
      // Events cannot cross contexts (one per device): wait on the host instead.
      return wait_marker(ev, "stream_wait_event across devices");
    }
    cl_int err = api().clEnqueueBarrierWithWaitList(s->queue.get(), 1, &ev, nullptr);
    if (err != CL_SUCCESS) return fail_cl("clEnqueueBarrierWithWaitList", err, DC_ERROR_INTERNAL, "stream_wait_event");
    return DC_OK;
  });
}

dc_status event_create(int32_t device, dc_event* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_create: out is null");
    auto e = std::make_unique<dc_event_s>();
    e->device = dev;
    *out = e.release();
    return DC_OK;
  });
}

dc_status event_destroy(dc_event e) {
  return guarded([&] {
    delete e;
    return DC_OK;
  });
}

dc_status event_record(dc_event e, dc_stream s) {
  return guarded([&] {
    if (s == nullptr || e == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_record: null stream or event");
    if (e->device != s->device) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "event_record: the event belongs to " + e->device->name +
                                                 ", the stream to another OpenCL device");
    }
    cl_event ev = nullptr;
    cl_int err = api().clEnqueueMarkerWithWaitList(s->queue.get(), 0, nullptr, &ev);
    if (err != CL_SUCCESS) return fail_cl("clEnqueueMarkerWithWaitList", err, DC_ERROR_INTERNAL, "event_record");
    // Submit now, so that polling the event from another thread sees progress.
    api().clFlush(s->queue.get());
    std::lock_guard<std::mutex> lock(e->mutex);
    e->marker.reset(ev);
    return DC_OK;
  });
}

dc_status event_synchronize(dc_event e) {
  return guarded([&] {
    if (e == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_synchronize: event is null");
    std::lock_guard<std::mutex> lock(e->mutex);
    if (!e->marker) return DC_OK;
    return wait_marker(e->marker.get(), "event_synchronize");
  });
}

dc_status event_query(dc_event e, int32_t* done) {
  return guarded([&] {
    if (e == nullptr || done == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "event_query: null argument");
    std::lock_guard<std::mutex> lock(e->mutex);
    if (!e->marker) {
      *done = 1;
      return DC_OK;
    }
    cl_int status = CL_COMPLETE;
    cl_int err = api().clGetEventInfo(e->marker.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                                      nullptr);
    if (err != CL_SUCCESS) return fail_cl("clGetEventInfo", err, DC_ERROR_INTERNAL, "event_query");
    if (status < 0) {
      return fail(DC_ERROR_LAUNCH, std::string("event_query: a command before the event failed: ") +
                                       error_name(status) + " (" + std::to_string(status) + ")");
    }
    *done = status == CL_COMPLETE ? 1 : 0;
    return DC_OK;
  });
}

dc_status event_elapsed_ms(dc_event start, dc_event end, double* ms) {
  return guarded([&] {
    if (start == nullptr || end == nullptr || ms == nullptr) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: null argument");
    }
    std::unique_lock<std::mutex> lock_start(start->mutex, std::defer_lock);
    std::unique_lock<std::mutex> lock_end(end->mutex, std::defer_lock);
    if (start == end) {
      lock_start.lock();
    } else {
      std::lock(lock_start, lock_end);
    }
    if (!start->marker || !end->marker) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: both events must have been recorded");
    }
    // Profiling counters exist only once a marker completed.
    if (dc_status st = wait_marker(start->marker.get(), "event_elapsed_ms"); st != DC_OK) return st;
    if (dc_status st = wait_marker(end->marker.get(), "event_elapsed_ms"); st != DC_OK) return st;
    // A marker ends when everything enqueued before it has finished: the
    // difference of the two ends is the time of the work between them.
    cl_ulong t0 = 0;
    cl_ulong t1 = 0;
    if (dc_status st = marker_end_ns(start->marker.get(), &t0); st != DC_OK) return st;
    if (dc_status st = marker_end_ns(end->marker.get(), &t1); st != DC_OK) return st;
    *ms = (static_cast<double>(t1) - static_cast<double>(t0)) / 1.0e6;
    return DC_OK;
  });
}

}  // namespace dcl
