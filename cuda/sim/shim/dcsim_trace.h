// Per-access tracing of kernels on the CUDA simulator (the "trace build" of a module).
//
// A module built in trace mode (builder.cpp: the source carries `//!dotcompute-sim-trace`) is
// compiled by clang++ with -fsanitize-coverage=trace-loads,trace-stores: every load and store of
// the kernel's code calls __sanitizer_cov_loadN/storeN (defined below, no sanitizer runtime),
// which classify the address (a device allocation, the block's static or dynamic shared window,
// anything else is ignored: stack, host heap) and hand an Access to every registered Observer,
// together with the barrier events that delimit the intervals between accesses. Observers (the
// kernel checks, dcsim_check_cuda.h; GPU counters) include this header and register themselves
// with a static Observer; they are called from every worker thread running blocks of a launch
// at once, so whatever they share across blocks needs a lock.
//
// Without DCSIM_TRACE (every ordinary build) each hook below is an empty inline function: the
// shim calls them unconditionally and they cost nothing.
//
// Stable interface (other observers depend on it): Access, Region, SyncEvent, Observer and
// register_observer. Add fields at the end only.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "dcsim_abi.h"

namespace dcsim {
DCSIM_LOCAL_BEGIN
namespace trace {

enum Space : int {
  kGlobal = 1,         // a device allocation (cuMemAlloc), including its red zone
  kStaticShared = 2,   // a function-scope __shared__ variable of the block (its window and guard page)
  kDynamicShared = 3,  // the launch's extern __shared__ memory (its bytes and the guard page after)
};

// Where an access landed. `inside` false: outside the region's bytes but in its red zone, the gap
// after a shared variable or the guard page past a window (an out-of-bounds access of that region).
struct Region {
  int space;
  const char* base;    // host address of the allocation, the shared variable or the dynamic window
  uint64_t bytes;      // its size as requested (cuMemAlloc bytes, sizeof the variable, the launch's shared_mem)
  uint64_t device;     // kGlobal: the allocation's device address (what the host knows the buffer by)
  const char* name;    // kStaticShared: the variable's name in the source; else ""
  bool inside;
};

struct Access {
  const char* addr;
  uint32_t bytes;                // 1, 2, 4, 8 or 16
  bool store;
  uintptr_t pc;                  // the return address of the callback: just after the access' call site
  Region region;
  uint3 thread, block;           // threadIdx, blockIdx
  unsigned tid;                  // linear thread index in the block (x fastest)
  unsigned long long bid;        // linear block index in the grid
  unsigned warp, lane;
  unsigned long long interval;   // __syncthreads released in this block before this access
  unsigned long long warp_syncs; // __syncwarp this thread has passed before this access
};

enum SyncKind : int {
  kBarrierDivergence = 1,  // threads of a block wait at different __syncthreads
  kBarrierDeadlock = 2,    // some threads wait at __syncthreads, the others at a warp operation
  kWarpMaskExited = 3,     // a warp collective's mask names lanes that have exited
  kWarpMaskAbsent = 4,     // ... or lanes the block does not have
};

struct SyncEvent {
  int kind;               // SyncKind
  unsigned tid[2];        // linear thread indices in the block (tid[1]: the other thread, or a lane's thread)
  uint3 thread[2];
  const char* file[2];    // kBarrierDivergence: the two barriers' call sites
  unsigned line[2];
  uintptr_t pc;           // warp events: the call site of the collective (0: unknown)
  unsigned mask, lanes;   // warp events: the mask and the offending lanes
};

// Every callback may run on several worker threads at once (blocks run in parallel).
struct Observer {
  virtual void run_begin(const dcsim_launch&) {}                   // a dcsim_run call: some blocks of a launch
  virtual void block_begin(unsigned long long /*bid*/, unsigned /*threads*/) {}
  virtual void access(const Access&) {}
  virtual void block_barrier(unsigned long long /*interval*/) {}    // a __syncthreads released; the new interval
  virtual void warp_sync(unsigned /*tid*/, unsigned /*mask*/) {}    // thread tid passed a __syncwarp
  // A warp-level collective (__syncwarp, a shuffle, a vote, match) of warp w was released with
  // `lanes` taking part; a __syncthreads was released with `lanes` of warp w waiting at it.
  virtual void warp_collective(unsigned /*warp*/, unsigned /*lanes*/) {}
  virtual void barrier_warp(unsigned /*warp*/, unsigned /*lanes*/) {}
  virtual void sync_event(const SyncEvent&) {}
  virtual void block_end() {}
  virtual void run_end(const dcsim_launch&) {}
};

#if defined(DCSIM_TRACE)

inline Observer* g_observers[8];
inline unsigned g_nobservers;
inline void register_observer(Observer* o) {
  if (g_nobservers < 8) g_observers[g_nobservers++] = o;
}
#define DCSIM_EACH_OBSERVER(call)                                        \
  for (unsigned dcsim_i = 0; dcsim_i < ::dcsim::trace::g_nobservers; ++dcsim_i) \
    ::dcsim::trace::g_observers[dcsim_i]->call

// Per worker thread: the launch, the block's shared variables and each thread's __syncwarp count.
struct SharedVar {
  const char* p;
  uint64_t bytes;
  const char* name;
};
inline thread_local dcsim_launch* t_run;
inline thread_local int t_busy;  // >0: inside the tracer or an atomic: accesses are not traced
inline thread_local SharedVar t_vars[64];
inline thread_local unsigned t_nvars;
inline thread_local unsigned long long* t_warp_syncs;
inline thread_local unsigned t_nthreads;
inline thread_local uintptr_t t_arena_lo[16], t_arena_hi[16];
inline thread_local unsigned t_narenas;
inline thread_local uintptr_t t_alloc_lo, t_alloc_span;  // the last allocation found (a cache)
inline thread_local Region t_alloc;

// Accesses inside atomics (their compare-and-swap loops) and inside the shim's own bookkeeping.
struct Mute {
  Mute() { ++t_busy; }
  ~Mute() { --t_busy; }
};
constexpr uint64_t kSharedGap = 64;  // bytes left free between shared variables: an overrun lands there
inline uint64_t shared_gap() { return kSharedGap; }

#define DCSIM_NO_TRACE __attribute__((no_sanitize("coverage")))
}  // namespace trace
DCSIM_LOCAL_END
}  // namespace dcsim
extern "C" __attribute__((visibility("default"))) const dcsim_host_services* dcsim_host;
namespace dcsim {
DCSIM_LOCAL_BEGIN
namespace trace {

DCSIM_NO_TRACE inline unsigned current_tid() {
  if (t_fiber && t_block) return static_cast<unsigned>(t_fiber - t_block->fibers);
  return t_thread_idx.x + t_block_dim.x * (t_thread_idx.y + t_block_dim.y * t_thread_idx.z);
}

DCSIM_NO_TRACE inline void on_run_begin(dcsim_launch* L) {
  t_run = L;
  t_busy = 0;
  t_narenas = dcsim_host ? dcsim_host->arenas(t_arena_lo, t_arena_hi, 16) : 0;
  t_alloc_span = 0;
  DCSIM_EACH_OBSERVER(run_begin(*L));
}

DCSIM_NO_TRACE inline void on_run_end(dcsim_launch* L) {
  DCSIM_EACH_OBSERVER(run_end(*L));
  t_run = nullptr;
}

DCSIM_NO_TRACE inline void on_block_begin() {
  const unsigned n = t_block_dim.x * t_block_dim.y * t_block_dim.z;
  if (n > t_nthreads) {
    free(t_warp_syncs);
    t_warp_syncs = static_cast<unsigned long long*>(malloc(sizeof(unsigned long long) * n));
    t_nthreads = t_warp_syncs ? n : 0;
  }
  if (t_warp_syncs) memset(t_warp_syncs, 0, sizeof(unsigned long long) * n);
  t_nvars = 0;
  const unsigned long long bid =
      t_block_idx.x + static_cast<unsigned long long>(t_grid_dim.x) * (t_block_idx.y + t_grid_dim.y * t_block_idx.z);
  DCSIM_EACH_OBSERVER(block_begin(bid, n));
}

DCSIM_NO_TRACE inline void on_block_end() { DCSIM_EACH_OBSERVER(block_end()); }

DCSIM_NO_TRACE inline void on_shared_variable(const void* p, uint64_t bytes, const char* name) {
  if (t_nvars < 64) t_vars[t_nvars++] = SharedVar{static_cast<const char*>(p), bytes, name ? name : ""};
}

DCSIM_NO_TRACE inline void on_block_barrier(unsigned long long interval) {
  DCSIM_EACH_OBSERVER(block_barrier(interval));
}

// A __syncthreads is being released: per warp, how many lanes wait at it (lanes that have exited
// do not take part, which is the divergence a GPU model reports at barriers).
DCSIM_NO_TRACE inline void on_block_barrier_lanes(const Block* b) {
  if (g_nobservers == 0) return;
  for (unsigned w = 0; w * b->warp_size < b->n; ++w) {
    unsigned lanes = 0;
    for (unsigned l = 0; l < b->warp_size && w * b->warp_size + l < b->n; ++l)
      lanes += b->fibers[w * b->warp_size + l].state == kAtBlockBarrier;
    DCSIM_EACH_OBSERVER(barrier_warp(w, lanes));
  }
}

DCSIM_NO_TRACE inline void on_syncwarp(unsigned mask) {
  const unsigned tid = current_tid();
  if (tid < t_nthreads) ++t_warp_syncs[tid];
  DCSIM_EACH_OBSERVER(warp_sync(tid, mask));
}

// The call site of a warp collective, kept per thread for a report on its mask (never inlined:
// its return address lies in the kernel's code).
inline thread_local uintptr_t t_collective_pc;
__attribute__((noinline)) DCSIM_NO_TRACE inline void on_warp_arrive() {
  t_collective_pc = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
}
DCSIM_NO_TRACE inline uintptr_t collective_pc() { return t_collective_pc; }

// Warp w of block b is released: lanes its mask names that have exited, or that the block does
// not have, are a synccheck finding (a GPU leaves that undefined).
DCSIM_NO_TRACE inline void on_warp_release(const Block* b, unsigned w, unsigned mask, uintptr_t pc) {
  if (g_nobservers) {
    unsigned arrived = 0;
    for (unsigned l = 0; l < b->warp_size && w * b->warp_size + l < b->n; ++l)
      arrived += b->fibers[w * b->warp_size + l].state == kAtWarpBarrier;
    DCSIM_EACH_OBSERVER(warp_collective(w, arrived));
  }
  unsigned exited = 0, absent = 0;
  for (unsigned l = 0; l < 32; ++l) {
    if (!((mask >> l) & 1u)) continue;
    const unsigned t = w * b->warp_size + l;
    if (l >= b->warp_size || t >= b->n)
      absent |= 1u << l;
    else if (b->fibers[t].state == kDone)
      exited |= 1u << l;
  }
  for (int kind : {static_cast<int>(kWarpMaskExited), static_cast<int>(kWarpMaskAbsent)}) {
    const unsigned lanes = kind == kWarpMaskExited ? exited : absent;
    if (!lanes) continue;
    SyncEvent e{};
    e.kind = kind;
    e.pc = pc;
    e.mask = mask;
    e.lanes = lanes;
    unsigned first = 0;
    while (!((lanes >> first) & 1u)) ++first;
    e.tid[0] = w * b->warp_size;
    e.tid[1] = w * b->warp_size + first;
    for (unsigned l = 0; l < b->warp_size && w * b->warp_size + l < b->n; ++l)
      if (b->fibers[w * b->warp_size + l].state == kAtWarpBarrier) {
        e.tid[0] = w * b->warp_size + l;
        break;
      }
    if (e.tid[0] < b->n) e.thread[0] = b->fibers[e.tid[0]].idx;
    if (e.tid[1] < b->n) e.thread[1] = b->fibers[e.tid[1]].idx;
    DCSIM_EACH_OBSERVER(sync_event(e));
  }
}

DCSIM_NO_TRACE inline void on_barrier_divergence(const Block* b, const Fiber* x, const Fiber* y, int kind) {
  SyncEvent e{};
  e.kind = kind;
  e.tid[0] = static_cast<unsigned>(x - b->fibers);
  e.thread[0] = x->idx;
  e.file[0] = x->site_file;
  e.line[0] = x->site_line;
  if (y) {
    e.tid[1] = static_cast<unsigned>(y - b->fibers);
    e.thread[1] = y->idx;
    e.file[1] = y->site_file;
    e.line[1] = y->site_line;
  }
  DCSIM_EACH_OBSERVER(sync_event(e));
}

// ---- classification of an address ----

DCSIM_NO_TRACE inline bool classify_static(const char* a, uint32_t bytes, Region& r) {
  const char* top = t_shared.top;
  if (!top || a < t_shared.bottom || a >= top + 4096) return false;
  r = Region{kStaticShared, top, 0, 0, "", false};
  const SharedVar* below = nullptr;  // the variable ending last at or before a (an overrun of it)
  const SharedVar* above = nullptr;  // the variable starting first after a (an underrun)
  for (unsigned i = 0; i < t_nvars; ++i) {
    const SharedVar& v = t_vars[i];
    if (a >= v.p && a < v.p + v.bytes) {
      r = Region{kStaticShared, v.p, v.bytes, 0, v.name, a + bytes <= v.p + v.bytes};
      return true;
    }
    if (v.p + v.bytes <= a && (!below || v.p > below->p)) below = &v;
    if (v.p > a && (!above || v.p < above->p)) above = &v;
  }
  const SharedVar* v = below ? below : above;
  if (v) r = Region{kStaticShared, v->p, v->bytes, 0, v->name, false};
  return true;
}

DCSIM_NO_TRACE inline bool classify(const char* a, uint32_t bytes, Region& r) {
  if (classify_static(a, bytes, r)) return true;
  const char* dyn = t_dynamic_shared;
  if (dyn && t_run) {
    const uint64_t n = t_run->dynamic_shared_bytes;
    if (a >= dyn && a < dyn + ((n + 15) / 16 * 16) + 4096) {
      r = Region{kDynamicShared, dyn, n, 0, "", a + bytes <= dyn + n};
      return true;
    }
  }
  const uintptr_t p = reinterpret_cast<uintptr_t>(a);
  if (t_alloc_span && p - t_alloc_lo < t_alloc_span) {
    r = t_alloc;
    r.inside = p + bytes <= t_alloc_lo + t_alloc.bytes;
    return true;
  }
  for (unsigned i = 0; i < t_narenas; ++i) {
    if (p < t_arena_lo[i] || p >= t_arena_hi[i]) continue;
    uintptr_t host = 0;
    uint64_t n = 0, span = 0, device = 0;
    if (!dcsim_host->allocation(p, &host, &n, &span, &device)) {
      r = Region{kGlobal, nullptr, 0, 0, "", false};  // no allocation there: the access faults after this
      return true;
    }
    t_alloc = Region{kGlobal, reinterpret_cast<const char*>(host), n, device, "", true};
    t_alloc_lo = host;
    t_alloc_span = span;
    r = t_alloc;
    r.inside = p >= host && p + bytes <= host + n;
    return true;
  }
  return false;
}

DCSIM_NO_TRACE inline void dispatch(const void* addr, uint32_t bytes, bool store, void* pc) {
  if (t_busy || !t_run) return;
  Mute busy;  // an observer may end the thread (memcheck throws): the count comes back down anyway
  Access a;
  a.addr = static_cast<const char*>(addr);
  if (classify(a.addr, bytes, a.region)) {
    a.bytes = bytes;
    a.store = store;
    a.pc = reinterpret_cast<uintptr_t>(pc);
    a.thread = t_thread_idx;
    a.block = t_block_idx;
    a.tid = current_tid();
    a.bid = t_block_idx.x +
            static_cast<unsigned long long>(t_grid_dim.x) * (t_block_idx.y + t_grid_dim.y * t_block_idx.z);
    a.warp = t_fiber ? t_fiber->warp : a.tid / 32;
    a.lane = t_fiber ? t_fiber->lane : a.tid % 32;
    a.interval = t_block ? t_block->block_gen : 0;
    a.warp_syncs = a.tid < t_nthreads ? t_warp_syncs[a.tid] : 0;
    DCSIM_EACH_OBSERVER(access(a));
  }
}

#else

struct Mute {};
inline uint64_t shared_gap() { return 0; }
inline void on_run_begin(dcsim_launch*) {}
inline void on_run_end(dcsim_launch*) {}
inline void on_block_begin() {}
inline void on_block_end() {}
inline void on_shared_variable(const void*, uint64_t, const char*) {}
inline void on_block_barrier(unsigned long long) {}
inline void on_block_barrier_lanes(const Block*) {}
inline void on_syncwarp(unsigned) {}
inline void on_warp_arrive() {}
inline uintptr_t collective_pc() { return 0; }
inline void on_warp_release(const Block*, unsigned, unsigned, uintptr_t) {}
inline void on_barrier_divergence(const Block*, const Fiber*, const Fiber*, int) {}

#endif

}  // namespace trace
DCSIM_LOCAL_END
}  // namespace dcsim

#if defined(DCSIM_TRACE)
// The host services the simulator library hands to a trace build when it loads it (module.cpp sets
// this pointer): where the device allocations are.
extern "C" __attribute__((visibility("default"))) const dcsim_host_services* dcsim_host = nullptr;

// The SanitizerCoverage callbacks clang calls for every load and store (and the pc-guard pair that
// -fsanitize-coverage needs beside them). Hidden: each kernel object binds its own.
#define DCSIM_COV(N, T)                                                                                       \
  extern "C" __attribute__((visibility("hidden"), no_sanitize("coverage"))) void __sanitizer_cov_load##N(T* p) { \
    ::dcsim::trace::dispatch(p, N, false, __builtin_return_address(0));                                       \
  }                                                                                                           \
  extern "C" __attribute__((visibility("hidden"), no_sanitize("coverage"))) void __sanitizer_cov_store##N(T* p) { \
    ::dcsim::trace::dispatch(p, N, true, __builtin_return_address(0));                                        \
  }
DCSIM_COV(1, uint8_t)
DCSIM_COV(2, uint16_t)
DCSIM_COV(4, uint32_t)
DCSIM_COV(8, uint64_t)
DCSIM_COV(16, __int128)
#undef DCSIM_COV
extern "C" __attribute__((visibility("hidden"), no_sanitize("coverage"))) void __sanitizer_cov_trace_pc_guard_init(
    uint32_t*, uint32_t*) {}
extern "C" __attribute__((visibility("hidden"), no_sanitize("coverage"))) void __sanitizer_cov_trace_pc_guard(
    uint32_t*) {}

// The observers of a trace build (each registers itself at load time).
#include "dcsim_check_cuda.h"
#endif
