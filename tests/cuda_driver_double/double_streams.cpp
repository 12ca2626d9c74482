// The driver double's streams, events and graphs. Work runs when it is issued (the double has no
// queue), except while a stream is captured: then issue() keeps it for the graph, which replays it
// at each cuGraphLaunch, as the driver does.
#include <memory>
#include <string>

#include "double_state.hpp"

using namespace cudadouble;

EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  ENTER("cuStreamCreate");
  NEED_CONTEXT();
  auto s = std::make_unique<Stream>();
  s->id = d.next_id++;
  s->flags = flags;
  *stream = reinterpret_cast<CUstream>(s.get());
  d.streams[s.get()] = std::move(s);
  op(d, "create stream=" + std::to_string(stream_id(*stream)) + " flags=" + std::to_string(flags));
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  ENTER("cuStreamDestroy");
  if (!stream || !d.streams.erase(reinterpret_cast<Stream*>(stream))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream s) {
  ENTER("cuStreamSynchronize");
  NEED_CONTEXT();
  if (!valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (capturing(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  op(d, "sync stream=" + std::to_string(stream_id(s)));
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  ENTER("cuStreamWaitEvent");
  NEED_CONTEXT();
  auto it = d.events.find(reinterpret_cast<Event*>(e));
  if (!valid_stream(d, s) || it == d.events.end() || flags != 0) return CUDA_ERROR_INVALID_HANDLE;
  op(d, "wait stream=" + std::to_string(stream_id(s)) + " event=" + std::to_string(it->second->id));
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  ENTER("cuEventCreate");
  NEED_CONTEXT();
  auto e = std::make_unique<Event>(Event{d.next_id++, flags});
  *event = reinterpret_cast<CUevent>(e.get());
  d.events[e.get()] = std::move(e);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  ENTER("cuEventDestroy");
  if (!d.events.erase(reinterpret_cast<Event*>(event))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent event, CUstream s) {
  ENTER("cuEventRecord");
  NEED_CONTEXT();
  auto it = d.events.find(reinterpret_cast<Event*>(event));
  if (it == d.events.end() || !valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (capturing(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // event nodes are not modelled
  tick(d, 0);
  it->second->recorded = true;
  it->second->time_ns = d.clock_ns;
  op(d, "record event=" + std::to_string(it->second->id) + " stream=" + std::to_string(stream_id(s)) +
            " t=" + std::to_string(d.clock_ns));
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent event) {
  ENTER("cuEventSynchronize");
  if (!d.events.count(reinterpret_cast<Event*>(event))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

// Work runs when issued here, so a recorded event has always completed.
EXPORT CUresult cuEventQuery(CUevent event) {
  ENTER("cuEventQuery");
  if (!d.events.count(reinterpret_cast<Event*>(event))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  ENTER("cuEventElapsedTime");
  auto a = d.events.find(reinterpret_cast<Event*>(start));
  auto b = d.events.find(reinterpret_cast<Event*>(end));
  if (a == d.events.end() || b == d.events.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (!a->second->recorded || !b->second->recorded) return CUDA_ERROR_INVALID_HANDLE;
  if ((a->second->flags | b->second->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  *ms = static_cast<float>((static_cast<double>(b->second->time_ns) - static_cast<double>(a->second->time_ns)) / 1e6);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, int mode) {
  ENTER("cuStreamBeginCapture");
  NEED_CONTEXT();
  if (!s || !valid_stream(d, s) || mode < 0 || mode > 2) return CUDA_ERROR_INVALID_VALUE;
  Stream* st = reinterpret_cast<Stream*>(s);
  if (st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = true;
  st->captured.clear();
  op(d, "begin capture stream=" + std::to_string(st->id));
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph* graph) {
  ENTER("cuStreamEndCapture");
  if (!s || !valid_stream(d, s) || !graph) return CUDA_ERROR_INVALID_VALUE;
  Stream* st = reinterpret_cast<Stream*>(s);
  if (!st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = false;
  auto gr = std::make_unique<Graph>();
  gr->ops = std::move(st->captured);
  st->captured.clear();
  op(d, "end capture stream=" + std::to_string(st->id) + " ops=" + std::to_string(gr->ops.size()));
  *graph = reinterpret_cast<CUgraph>(gr.get());
  d.graphs[gr.get()] = std::move(gr);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  ENTER("cuGraphInstantiateWithFlags");
  auto it = d.graphs.find(reinterpret_cast<Graph*>(graph));
  if (!exec || it == d.graphs.end() || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  auto e = std::make_unique<Graph>(*it->second);
  *exec = reinterpret_cast<CUgraphExec>(e.get());
  d.execs[e.get()] = std::move(e);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) {
  ENTER("cuGraphLaunch");
  NEED_CONTEXT();
  auto it = d.execs.find(reinterpret_cast<Graph*>(exec));
  if (it == d.execs.end() || !valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  op(d, "graph launch stream=" + std::to_string(stream_id(s)) + " ops=" + std::to_string(it->second->ops.size()));
  for (auto& work : it->second->ops)
    if (CUresult r = work(); r != CUDA_SUCCESS) return r;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  ENTER("cuGraphExecDestroy");
  return d.execs.erase(reinterpret_cast<Graph*>(exec)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  ENTER("cuGraphDestroy");
  return d.graphs.erase(reinterpret_cast<Graph*>(graph)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
