// GPU-model counters (DOTCOMPUTE_CUDA_SIM_COUNTERS=1): an observer of the trace build
// (dcsim_trace.h), which the builder compiles in counters mode with -DDCSIM_COUNTERS and includes
// after dcsim_cuda.h. The trace build hands it every load and store of device memory and of the
// block's shared windows, with the instruction (its return address), the thread, its warp and lane.
//
// The simulator runs a warp's lanes one after another (or as fibers switched at barriers), never
// in lockstep, so warp-level events are rebuilt: the k-th execution of an instruction by each lane
// of a warp is one warp-level execution of it, and the lanes that took part are its active lanes
// (divergence). A global load or store becomes one request whose distinct 32-byte sectors are
// counted (coalescing); a shared one becomes bank passes ("wavefronts": 32 banks of 4 bytes, wide
// accesses in 2 or 4 phases, lanes reading one word share it). Warp collectives (__syncwarp,
// shuffles, votes) and __syncthreads are released by the block scheduler once per warp, which
// reports the lanes that took part (dcsim_fibers.h). A request completes when every lane of the warp
// made its k-th access, else when the block ends (the lanes that never got there were inactive).
#pragma once
#if defined(DCSIM_COUNTERS) && defined(DCSIM_TRACE)

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "dcsim_counters_abi.h"

namespace dcsim {
namespace counters {
DCSIM_LOCAL_BEGIN

enum Kind : uint8_t { kGlobalLoad, kGlobalStore, kSharedLoad, kSharedStore };

struct Key {
  uint64_t pc;  // the instruction (or the basic block's guard)
  uint32_t warp;
  uint32_t k;  // which execution of it, counted per lane
  uint8_t kind;
  bool operator==(const Key& o) const { return pc == o.pc && warp == o.warp && k == o.k && kind == o.kind; }
};
struct KeyHash {
  size_t operator()(const Key& a) const {
    uint64_t h = a.pc * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(a.warp) << 32 | a.k) * 0xBF58476D1CE4E5B9ull;
    return static_cast<size_t>(h ^ (h >> 29) ^ a.kind);
  }
};

struct Lane {
  uintptr_t addr;
  uint32_t size;
  uint32_t lane;
};

struct Request {
  uint32_t mask = 0;
  uint32_t n = 0;
  Lane lanes[32];
};

struct State {
  unsigned threads = 0;  // of the current block
  std::unordered_map<Key, Request, KeyHash> pending;
  std::unordered_map<uint64_t, uint32_t> executions;  // (thread, pc) -> executions so far
  std::vector<uint8_t> ran;                           // threads of the block that made an access
  dcsim_counters totals{};
};

inline dcsim_counters_sink_fn g_sink = nullptr;
inline thread_local State* t_state = nullptr;

inline unsigned popcount(uint32_t m) { return static_cast<unsigned>(__builtin_popcount(m)); }

inline void finish_global(State& s, int store, const Request& r) {
  uintptr_t sectors[64];
  unsigned ns = 0;
  for (uint32_t i = 0; i < r.n; ++i)
    for (uintptr_t x = r.lanes[i].addr >> 5; x <= (r.lanes[i].addr + r.lanes[i].size - 1) >> 5 && ns < 64; ++x)
      sectors[ns++] = x;
  std::sort(sectors, sectors + ns);
  const unsigned distinct = static_cast<unsigned>(std::unique(sectors, sectors + ns) - sectors);
  // bytes asked for: lanes reading the same element ask for it once
  Lane sorted[32];
  std::copy(r.lanes, r.lanes + r.n, sorted);
  std::sort(sorted, sorted + r.n, [](const Lane& a, const Lane& b) { return a.addr < b.addr; });
  uint64_t bytes = 0;
  uintptr_t covered = 0;
  for (uint32_t i = 0; i < r.n; ++i) {
    const uintptr_t lo = std::max(sorted[i].addr, covered), hi = sorted[i].addr + sorted[i].size;
    if (hi > lo) bytes += hi - lo;
    covered = std::max(covered, hi);
  }
  s.totals.global_requests[store] += 1;
  s.totals.global_sectors[store] += distinct;
  s.totals.global_bytes[store] += bytes;
}

// Bank passes of one shared-memory request: a 4-byte (or narrower) access is served in one phase
// of 32 lanes, an 8-byte one in two of 16, a 16-byte one in four of 8; within a phase each bank
// serves one 4-byte word per pass (lanes reading the same word share it).
inline void finish_shared(State& s, int store, const Request& r) {
  uint32_t width = 1;
  for (uint32_t i = 0; i < r.n; ++i) width = std::max(width, r.lanes[i].size);
  const unsigned phases = width <= 4 ? 1u : (width <= 8 ? 2u : 4u);
  const unsigned per_phase = 32u / phases;
  unsigned passes = 0, ideal = 0;
  for (unsigned p = 0; p < phases; ++p) {
    uintptr_t words[32][32];  // a phase holds at most 32 words (32 lanes of 4, 16 of 8, 8 of 16 bytes)
    unsigned count[32] = {};
    unsigned worst = 0;
    bool any = false;
    for (uint32_t i = 0; i < r.n; ++i) {
      if (r.lanes[i].lane / per_phase != p) continue;
      any = true;
      for (uintptr_t w = r.lanes[i].addr >> 2; w <= (r.lanes[i].addr + r.lanes[i].size - 1) >> 2; ++w) {
        const unsigned bank = static_cast<unsigned>(w & 31u);
        bool seen = false;
        for (unsigned j = 0; j < count[bank]; ++j) seen = seen || words[bank][j] == w;
        if (seen || count[bank] == 32) continue;
        words[bank][count[bank]] = w;
        worst = std::max(worst, ++count[bank]);
      }
    }
    if (!any) continue;
    passes += std::max(worst, 1u);
    ++ideal;
  }
  s.totals.shared_requests[store] += 1;
  s.totals.shared_wavefronts[store] += passes;
  s.totals.shared_ideal[store] += ideal;
}

inline void finish(State& s, const Key& key, const Request& r) {
  const unsigned active = popcount(r.mask);
  s.totals.mem_instructions += 1;
  s.totals.mem_active_lanes += active;
  if (key.kind == kGlobalLoad || key.kind == kGlobalStore)
    finish_global(s, key.kind == kGlobalStore, r);
  else
    finish_shared(s, key.kind == kSharedStore, r);
}

// The block ended: every request still open is complete with the lanes it has.
inline void finish_block(State& s) {
  for (const auto& e : s.pending) finish(s, e.first, e.second);
  s.pending.clear();
  s.executions.clear();
  uint64_t ran = 0;
  for (uint8_t r : s.ran) ran += r;
  s.totals.threads += ran;
  s.threads = 0;
  s.ran.clear();
}

// One lane's k-th execution of `pc` joins its warp's request; a request all the warp's lanes
// joined is complete at once (so straight-line code keeps few requests open).
inline void record(State& s, unsigned tid, unsigned warp, unsigned lane, uint64_t pc, Kind kind, uintptr_t addr,
                   uint32_t size) {
  if (tid >= s.threads || lane >= 32) return;
  s.ran[tid] = 1;
  const uint32_t k = s.executions[(static_cast<uint64_t>(tid) << 48) ^ pc]++;
  const Key key{pc, warp, k, kind};
  Request& r = s.pending[key];
  if (r.mask & (1u << lane)) return;  // cannot happen: k counts this lane's executions
  r.mask |= 1u << lane;
  r.lanes[r.n++] = Lane{addr, size, lane};
  const unsigned in_warp = std::min(32u, s.threads - warp * 32u);
  const uint32_t full = in_warp >= 32 ? 0xffffffffu : ((1u << in_warp) - 1u);
  if (r.mask == full) {
    finish(s, key, r);
    s.pending.erase(key);
  }
}

// The observer: one State per worker thread, its totals handed to the library at each run's end.
struct Counters : ::dcsim::trace::Observer {
  static State& state() {
    if (!t_state) t_state = new State();
    return *t_state;
  }
  void block_begin(unsigned long long, unsigned threads) override {
    State& s = state();
    finish_block(s);
    s.threads = threads;
    s.ran.assign(threads, 0);
    s.totals.blocks += 1;
  }
  void access(const ::dcsim::trace::Access& a) override {
    using ::dcsim::trace::kGlobal;
    if (!a.region.inside) return;  // out of bounds: the checks' business, not a request to model
    const bool global = a.region.space == kGlobal;
    const Kind kind = global ? (a.store ? kGlobalStore : kGlobalLoad) : (a.store ? kSharedStore : kSharedLoad);
    record(state(), a.tid, a.warp, a.lane, a.pc, kind, reinterpret_cast<uintptr_t>(a.addr), a.bytes);
  }
  // Warp collectives and barriers are released by the scheduler once per warp, with their lanes
  // counted there: no per-lane request to rebuild.
  void warp_collective(unsigned, unsigned lanes) override {
    State& s = state();
    s.totals.warp_collectives += 1;
    s.totals.warp_collective_lanes += lanes;
  }
  void barrier_warp(unsigned, unsigned lanes) override {
    State& s = state();
    s.totals.barrier_warps += 1;
    s.totals.barrier_lanes += lanes;
  }
  void block_end() override { finish_block(state()); }
  void run_end(const dcsim_launch& L) override {
    State* s = t_state;
    if (!s) return;
    finish_block(*s);
    if (g_sink) g_sink(&L, &s->totals);
    delete s;
    t_state = nullptr;
  }
};

inline Counters g_counters;
inline const bool g_counters_registered = (::dcsim::trace::register_observer(&g_counters), true);

DCSIM_LOCAL_END
}  // namespace counters
}  // namespace dcsim

// The library binds its sink when it loads a counters-mode object (module.cpp).
extern "C" __attribute__((visibility("default"), no_sanitize("coverage"))) void dcsim_counters_bind(
    dcsim_counters_sink_fn sink) {
  ::dcsim::counters::g_sink = sink;
}

#endif  // DCSIM_COUNTERS && DCSIM_TRACE
