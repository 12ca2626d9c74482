// The CUDA simulator's stream, event and graph entry points (cuStream*, cuEvent*, cuGraph*): work is
// queued on a stream's worker thread (streams.cpp) with the legacy default stream's ordering, which
// driver_entry.cpp's enqueue() adds; a capture collects the tasks into a graph instead.
#include <chrono>
#include <memory>
#include <mutex>

#include "sim.hpp"
#include "sim_api.h"

using namespace dcsim_lib;

// ---- streams and events ----

DCSIM_EXPORT CUresult cuStreamCreate(CUstream* out, unsigned int flags) {
  NEED_INIT;
  Context* c = current();
  if (!c) return fail(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  if (!out || (flags & ~CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  auto* s = new Stream(c->device, flags);
  {
    std::lock_guard<std::mutex> lock(sim()->mutex);
    sim()->streams.insert(s);
  }
  *out = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuStreamDestroy_v2(CUstream h) {
  NEED_INIT;
  Stream* s = reinterpret_cast<Stream*>(h);
  {
    std::lock_guard<std::mutex> lock(sim()->mutex);
    if (!h || !sim()->streams.count(s) || s == sim()->devices[static_cast<size_t>(s->device)]->null_stream.get())
      return fail(CUDA_ERROR_INVALID_HANDLE, "not a stream that cuStreamCreate made");
    sim()->streams.erase(s);
  }
  delete s;  // finishes the queued work first, as the real driver does before releasing it
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuStreamSynchronize(CUstream h) {
  NEED_INIT;
  Stream* s = nullptr;
  if (CUresult r = stream_of(h, s); r != CUDA_SUCCESS) return r;
  if (s->capture) return fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "cuStreamSynchronize while capturing");
  return s->synchronize();
}

DCSIM_EXPORT CUresult cuEventCreate(CUevent* out, unsigned int flags) {
  NEED_INIT;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  auto e = std::make_shared<Event>();
  e->flags = flags;
  std::lock_guard<std::mutex> lock(sim()->mutex);
  sim()->events[e.get()] = e;
  *out = reinterpret_cast<CUevent>(e.get());
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuEventDestroy_v2(CUevent h) {
  NEED_INIT;
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  // Records and waits still queued hold their own reference; the event goes with the last of them.
  std::lock_guard<std::mutex> lock(sim()->mutex);
  if (!sim()->events.erase(reinterpret_cast<Event*>(h))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuEventRecord(CUevent h, CUstream hs) {
  NEED_INIT;
  std::shared_ptr<Event> e = event_ref(h);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s = nullptr;
  if (CUresult r = stream_of(hs, s); r != CUDA_SUCCESS) return r;
  if (s->capture) {
    // In a graph the record happens at each replay.
    s->enqueue([e](Stream&) {
      std::lock_guard<std::mutex> lock(e->mutex);
      e->when = std::chrono::steady_clock::now();
      e->completed = ++e->recorded;
      e->cv.notify_all();
    });
    return CUDA_SUCCESS;
  }
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    gen = ++e->recorded;
  }
  enqueue(s, [e, gen](Stream&) {
    std::lock_guard<std::mutex> lock(e->mutex);
    e->when = std::chrono::steady_clock::now();
    if (e->completed < gen) e->completed = gen;
    e->cv.notify_all();
  });
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuEventQuery(CUevent h) {
  NEED_INIT;
  std::shared_ptr<Event> e = event_ref(h);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(e->mutex);
  return e->completed >= e->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

DCSIM_EXPORT CUresult cuEventSynchronize(CUevent h) {
  NEED_INIT;
  std::shared_ptr<Event> e = event_ref(h);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  std::unique_lock<std::mutex> lock(e->mutex);
  const uint64_t target = e->recorded;
  e->cv.wait(lock, [&] { return e->completed >= target; });
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuEventElapsedTime(float* ms, CUevent hstart, CUevent hend) {
  NEED_INIT;
  if (!ms) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<Event> ea = event_ref(hstart), eb = event_ref(hend);
  if (!ea || !eb) return CUDA_ERROR_INVALID_HANDLE;
  Event* a = ea.get();
  Event* b = eb.get();
  if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
    return fail(CUDA_ERROR_INVALID_HANDLE, "an event was created with CU_EVENT_DISABLE_TIMING");
  std::chrono::steady_clock::time_point when[2];
  Event* both[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    Event* e = both[i];
    std::lock_guard<std::mutex> lock(e->mutex);
    if (e->recorded == 0) return fail(CUDA_ERROR_INVALID_HANDLE, "an event was never recorded");
    if (e->completed < e->recorded) return CUDA_ERROR_NOT_READY;
    when[i] = e->when;
  }
  const auto ta = when[0], tb = when[1];
  *ms = std::chrono::duration<float, std::milli>(tb - ta).count();
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuStreamWaitEvent(CUstream hs, CUevent h, unsigned int flags) {
  NEED_INIT;
  std::shared_ptr<Event> e = event_ref(h);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Stream* s = nullptr;
  if (CUresult r = stream_of(hs, s); r != CUDA_SUCCESS) return r;
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    target = e->recorded;  // the most recent record, as the driver defines it
  }
  if (target == 0) return CUDA_SUCCESS;
  enqueue(s, [e, target](Stream&) {
    std::unique_lock<std::mutex> lock(e->mutex);
    e->cv.wait(lock, [&] { return e->completed >= target; });
  });
  return CUDA_SUCCESS;
}

// ---- graphs: a captured stream's work, replayed in order ----

DCSIM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hs, int mode) {
  NEED_INIT;
  (void)mode;
  if (!hs) return fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the legacy default stream cannot be captured");
  Stream* s = nullptr;
  if (CUresult r = stream_of(hs, s); r != CUDA_SUCCESS) return r;
  if (s->capture) return fail(CUDA_ERROR_ILLEGAL_STATE, "the stream is already capturing");
  // Work enqueued before the capture stays outside the graph: let it finish first so the
  // graph's nodes never race it.
  s->wait_for(s->ticket());
  s->capture = std::make_unique<Graph>();
  s->capture->device = s->device;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuStreamEndCapture(CUstream hs, CUgraph* out) {
  NEED_INIT;
  Stream* s = nullptr;
  if (CUresult r = stream_of(hs, s); r != CUDA_SUCCESS) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (!s->capture) return fail(kErrorStreamCaptureUnmatched, "the stream is not capturing");
  *out = reinterpret_cast<CUgraph>(s->capture.release());
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* out, CUgraph g, unsigned long long) {
  NEED_INIT;
  if (!out || !g) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUgraphExec>(new Graph(*reinterpret_cast<Graph*>(g)));
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuGraphLaunch(CUgraphExec h, CUstream hs) {
  NEED_INIT;
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s = nullptr;
  if (CUresult r = stream_of(hs, s); r != CUDA_SUCCESS) return r;
  auto nodes = std::make_shared<std::vector<Task>>(reinterpret_cast<Graph*>(h)->nodes);
  enqueue(s, [nodes](Stream& st) {
    for (auto& n : *nodes) n(st);
  });
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuGraphExecDestroy(CUgraphExec h) {
  delete reinterpret_cast<Graph*>(h);
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuGraphDestroy(CUgraph h) {
  delete reinterpret_cast<Graph*>(h);
  return CUDA_SUCCESS;
}
