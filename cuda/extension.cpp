// The CUDA extension table (cuda_ext.h): pinned and managed memory, peer
// access and copies, graph capture and replay, native stream handles.
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda_ext.h"
#include "entry.hpp"

namespace dotcompute::cuda {

namespace {

// The driver entry point `fn` exists, else DC_ERROR_UNSUPPORTED naming it.
template <typename Fn>
dc_status need_entry(Fn fn, const char* name) {
  if (fn) return DC_OK;
  return fail(DC_ERROR_UNSUPPORTED, std::string("the NVIDIA driver lacks ") + name + " (update the driver)");
}

dc_status ext_host_alloc(uint64_t bytes, void** out) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(0, s, dev));
  DC_TRY(need_entry(drv().cuMemHostAlloc, "cuMemHostAlloc"));
  if (!out) return fail(DC_ERROR_INVALID_ARGUMENT, "host_alloc: out is null");
  const CUresult r = drv().cuMemHostAlloc(out, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return fail(DC_ERROR_OUT_OF_MEMORY, "out of pinned host memory allocating " + std::to_string(bytes) + " bytes");
  return check(drv(), r, "cuMemHostAlloc");
}

dc_status ext_host_free(void* ptr) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(0, s, dev));
  DC_TRY(need_entry(drv().cuMemFreeHost, "cuMemFreeHost"));
  return check(drv(), drv().cuMemFreeHost(ptr), "cuMemFreeHost");
}

dc_status ext_mem_alloc_managed(int32_t device, uint64_t bytes, dc_devptr* out) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  DC_TRY(need_entry(drv().cuMemAllocManaged, "cuMemAllocManaged"));
  if (!out) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_alloc_managed: out is null");
  if (!(dev->info().features & DC_FEATURE_MANAGED_MEMORY))
    return fail(DC_ERROR_UNSUPPORTED, "cuda:" + std::to_string(device) + " has no managed memory");
  CUdeviceptr p = 0;
  const CUresult r = drv().cuMemAllocManaged(&p, bytes ? bytes : 1, CU_MEM_ATTACH_GLOBAL);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return fail(DC_ERROR_OUT_OF_MEMORY, "cuda:" + std::to_string(device) + ": out of memory allocating " +
                                            std::to_string(bytes) + " managed bytes");
  DC_TRY(check(drv(), r, "cuMemAllocManaged"));
  *out = p;
  return DC_OK;
}

dc_status ext_enable_peer_access(int32_t device, int32_t peer, int32_t* enabled) {
  State* s = nullptr;
  Device* dev = nullptr;
  Device* other = nullptr;
  if (!enabled) return fail(DC_ERROR_INVALID_ARGUMENT, "enable_peer_access: enabled is null");
  *enabled = 0;
  DC_TRY(need_device(peer, s, other));
  DC_TRY(need_device(device, s, dev));  // current: the device that gains access
  if (device == peer) {
    *enabled = 1;
    return DC_OK;
  }
  int can = 0;
  DC_TRY(check(drv(), drv().cuDeviceCanAccessPeer(&can, dev->handle(), other->handle()), "cuDeviceCanAccessPeer"));
  if (!can || !drv().cuCtxEnablePeerAccess) return DC_OK;
  const CUresult r = drv().cuCtxEnablePeerAccess(other->context(), 0);
  if (r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) DC_TRY(check(drv(), r, "cuCtxEnablePeerAccess"));
  std::lock_guard<std::mutex> lock(s->peer_mutex);
  s->peers_enabled.emplace(device, peer);
  *enabled = 1;
  return DC_OK;
}

// Without peer access: device -> pinned host -> device, chunk by chunk, on each
// device's default stream, after the work already queued on `st` has finished.
dc_status staged_copy(State* s, dc_stream st, Device* dst_dev, CUdeviceptr dst, Device* src_dev, CUdeviceptr src,
                      uint64_t bytes) {
  CUstream cu = nullptr;
  DC_TRY(enter_stream(st, s, cu));
  DC_TRY(check(drv(), drv().cuStreamSynchronize(cu), "cuStreamSynchronize"));
  const uint64_t chunk = bytes < (uint64_t{64} << 20) ? bytes : (uint64_t{64} << 20);
  void* pinned = nullptr;
  const bool have_pinned = drv().cuMemHostAlloc && drv().cuMemHostAlloc(&pinned, chunk, 0) == CUDA_SUCCESS;
  std::vector<unsigned char> pageable;
  if (!have_pinned) {
    pageable.resize(chunk);
    pinned = pageable.data();
  }
  struct Release {
    const Driver& d;
    void* p;
    bool pinned;
    ~Release() {
      if (pinned) d.cuMemFreeHost(p);
    }
  } release{drv(), pinned, have_pinned};
  for (uint64_t done = 0; done < bytes; done += chunk) {
    const uint64_t n = bytes - done < chunk ? bytes - done : chunk;
    DC_TRY(src_dev->make_current());
    DC_TRY(check(drv(), drv().cuMemcpyDtoHAsync(pinned, src + done, n, nullptr), "cuMemcpyDtoHAsync (staged)"));
    DC_TRY(check(drv(), drv().cuStreamSynchronize(nullptr), "cuStreamSynchronize"));
    DC_TRY(dst_dev->make_current());
    DC_TRY(check(drv(), drv().cuMemcpyHtoDAsync(dst + done, pinned, n, nullptr), "cuMemcpyHtoDAsync (staged)"));
    DC_TRY(check(drv(), drv().cuStreamSynchronize(nullptr), "cuStreamSynchronize"));
  }
  return DC_OK;
}

dc_status ext_memcpy_peer(dc_stream st, int32_t dst_device, dc_devptr dst, uint64_t dst_offset, int32_t src_device,
                          dc_devptr src, uint64_t src_offset, uint64_t bytes) {
  State* s = nullptr;
  Device* dst_dev = nullptr;
  Device* src_dev = nullptr;
  DC_TRY(need_device(src_device, s, src_dev));
  DC_TRY(need_device(dst_device, s, dst_dev));
  if (bytes == 0) return DC_OK;
  CUstream cu = nullptr;
  DC_TRY(enter_stream(st, s, cu));
  if (dst_device == src_device)
    return check(drv(), drv().cuMemcpyDtoDAsync(dst + dst_offset, src + src_offset, bytes, cu), "cuMemcpyDtoDAsync");
  bool peer = false;
  {
    std::lock_guard<std::mutex> lock(s->peer_mutex);
    peer = s->peers_enabled.count({dst_device, src_device}) || s->peers_enabled.count({src_device, dst_device});
  }
  if (peer && drv().cuMemcpyPeerAsync)
    return check(drv(),
                 drv().cuMemcpyPeerAsync(dst + dst_offset, dst_dev->context(), src + src_offset, src_dev->context(),
                                         bytes, cu),
                 "cuMemcpyPeerAsync");
  return staged_copy(s, st, dst_dev, dst + dst_offset, src_dev, src + src_offset, bytes);
}

dc_status ext_graph_begin(dc_stream st) {
  State* s = nullptr;
  CUstream cu = nullptr;
  if (!st) return fail(DC_ERROR_INVALID_ARGUMENT, "graph_begin: the default stream cannot be captured");
  DC_TRY(enter_stream(st, s, cu));
  DC_TRY(need_entry(drv().cuStreamBeginCapture, "cuStreamBeginCapture"));
  return check(drv(), drv().cuStreamBeginCapture(cu, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
}

dc_status ext_graph_end(dc_stream st, dc_cuda_graph* out) {
  State* s = nullptr;
  CUstream cu = nullptr;
  if (!st || !out) return fail(DC_ERROR_INVALID_ARGUMENT, "graph_end: null stream or out");
  DC_TRY(enter_stream(st, s, cu));
  DC_TRY(need_entry(drv().cuStreamEndCapture, "cuStreamEndCapture"));
  DC_TRY(need_entry(drv().cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"));
  CUgraph graph = nullptr;
  DC_TRY(check(drv(), drv().cuStreamEndCapture(cu, &graph), "cuStreamEndCapture"));
  CUgraphExec exec = nullptr;
  const CUresult r = drv().cuGraphInstantiateWithFlags(&exec, graph, 0);
  if (r != CUDA_SUCCESS) {
    drv().cuGraphDestroy(graph);
    return check(drv(), r, "cuGraphInstantiateWithFlags");
  }
  *out = new dc_cuda_graph_s{st->device, graph, exec};
  return DC_OK;
}

dc_status ext_graph_launch(dc_cuda_graph g, dc_stream st) {
  State* s = nullptr;
  CUstream cu = nullptr;
  if (!g) return fail(DC_ERROR_INVALID_ARGUMENT, "graph_launch: graph is null");
  if ((st ? st->device : 0) != g->device)
    return fail(DC_ERROR_INVALID_ARGUMENT, "graph_launch: the graph was captured on cuda:" +
                                               std::to_string(g->device) + ", not on the stream's device");
  DC_TRY(enter_stream(st, s, cu));
  return check(drv(), drv().cuGraphLaunch(g->exec, cu), "cuGraphLaunch");
}

dc_status ext_graph_destroy(dc_cuda_graph g) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!g) return fail(DC_ERROR_INVALID_ARGUMENT, "graph_destroy: graph is null");
  std::unique_ptr<dc_cuda_graph_s> owned(g);
  DC_TRY(need_device(g->device, s, dev));
  DC_TRY(check(drv(), drv().cuGraphExecDestroy(g->exec), "cuGraphExecDestroy"));
  return check(drv(), drv().cuGraphDestroy(g->graph), "cuGraphDestroy");
}

dc_status ext_stream_native(dc_stream st, uint64_t* handle) {
  State* s = nullptr;
  DC_TRY(need_state(s));
  if (!handle) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_native: handle is null");
  *handle = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(st ? st->stream : nullptr));
  return DC_OK;
}

dc_status ext_module_global(dc_module m, const char* name, dc_devptr* ptr, uint64_t* bytes) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!m || !name || !ptr || !bytes) return fail(DC_ERROR_INVALID_ARGUMENT, "module_global: null argument");
  DC_TRY(need_device(m->device, s, dev));
  DC_TRY(need_entry(drv().cuModuleGetGlobal, "cuModuleGetGlobal_v2"));
  CUdeviceptr p = 0;
  size_t n = 0;
  const CUresult r = drv().cuModuleGetGlobal(&p, &n, m->module, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    return fail(DC_ERROR_INVALID_ARGUMENT, std::string("no __device__ or __constant__ variable named '") + name +
                                               "' in the module");
  DC_TRY(check(drv(), r, "cuModuleGetGlobal"));
  *ptr = p;
  *bytes = n;
  return DC_OK;
}

const dc_cuda_ext kExtension = {
    sizeof(dc_cuda_ext),
    DC_CUDA_EXT_VERSION,
    Guard<ext_host_alloc>::call,
    Guard<ext_host_free>::call,
    Guard<ext_mem_alloc_managed>::call,
    Guard<ext_enable_peer_access>::call,
    Guard<ext_memcpy_peer>::call,
    Guard<ext_graph_begin>::call,
    Guard<ext_graph_end>::call,
    Guard<ext_graph_launch>::call,
    Guard<ext_graph_destroy>::call,
    Guard<ext_stream_native>::call,
    Guard<ext_module_global>::call,
};

}  // namespace

}  // namespace dotcompute::cuda

extern "C" __attribute__((visibility("default"))) const dc_cuda_ext* dotcompute_cuda_ext_entry(void) {
  return &dotcompute::cuda::kExtension;
}
