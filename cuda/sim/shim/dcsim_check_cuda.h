// The kernel checks (memcheck, racecheck, synccheck, initcheck) of a raw CUDA kernel on the
// simulator: an Observer of the trace build (dcsim_trace.h) that feeds the generic engine
// (dcsim_check.h) and publishes its findings in an exported variable the host reads after the
// launch (python/dotcompute/runtime/raw_check.py, through cuModuleGetGlobal like any __device__
// variable). Included by dcsim_trace.h in trace builds only.
//
// Protocol: before a checked launch the host writes dcsim_check_control = {epoch, checks}; the
// first block run of a new epoch clears the shadow memory and the findings; every dcsim_run call
// (a range of blocks on one worker) republishes all findings so far in dcsim_check_report, with
// the epoch it belongs to. Code addresses are published as offsets in the module object, whose
// path (/proc/self/fd/N: the simulator keeps the memory file open) is in the report, for the host
// to resolve them to source lines with the DWARF that -g put there.
#pragma once

#include <dlfcn.h>

#include "dcsim_check.h"

struct dcsim_check_report_t {
  uint32_t magic;  // 'DCCK' once written
  uint32_t epoch;
  uint32_t nrecords;
  uint32_t dropped;        // findings beyond the first kMax distinct ones
  uint32_t record_bytes;   // sizeof(dccheck::Finding), for the reader to verify
  uint32_t block[3];       // the launch's blockDim and gridDim (the host turns indices into global ids)
  uint32_t grid[3];
  uint32_t shadow_full;    // 1: some bytes went untracked (the shadow's cap, dcsim_check.h)
  char module[64];
  dccheck::Finding records[dccheck::Findings::kMax];
};

extern "C" {
__attribute__((visibility("default"))) uint32_t dcsim_check_control[2] = {0, 0};
// The buffers, written with the control: {device address, bytes, poison, poison bytes} per buffer (a 0
// address ends the list). The runtime may allocate more than a buffer holds: an access past the
// buffer's bytes is out of bounds. A buffer with poison bytes (1..8) holds acc.empty memory marked
// with that pattern per element (python/dotcompute/runtime/uninit.py): an element that still holds
// it has never been written, and reading it is an initcheck finding.
__attribute__((visibility("default"))) uint64_t dcsim_check_extents[128] = {};
__attribute__((visibility("default"))) dcsim_check_report_t dcsim_check_report = {};
}

namespace dcsim {
DCSIM_LOCAL_BEGIN
namespace check {

struct State {
  std::mutex mutex;      // the epoch, the report
  std::mutex global_mutex;
  uint32_t epoch = ~0u;
  uint32_t checks = 0;
  uintptr_t base = 0;    // where the module object is loaded
  dccheck::Shadow global;
  dccheck::Findings findings;
  uint64_t extents[128] = {};
  bool shadow_full = false;  // a shadow reached its cap in this epoch
};
inline State g_state;
inline thread_local dccheck::Shadow t_shared_shadow;  // the block's shared memory (one block per worker at a time)
inline thread_local uint32_t t_checks;

DCSIM_NO_TRACE inline void coords(unsigned linear, unsigned dx, unsigned dy, uint32_t out[3]) {
  out[0] = linear % dx;
  out[1] = (linear / dx) % dy;
  out[2] = linear / (dx * dy);
}

// The party `w` of a finding, as thread and block coordinates, and its call site.
DCSIM_NO_TRACE inline void party(dccheck::Finding& f, int i, const dccheck::Who& w) {
  coords(w.thread, t_block_dim.x, t_block_dim.y, f.thread[i]);
  coords(w.group, t_grid_dim.x, t_grid_dim.y, f.group[i]);
  f.site[i] = w.site;
}

DCSIM_NO_TRACE inline void region_of(dccheck::Finding& f, const trace::Access& a) {
  f.space = a.region.space;
  f.region = a.region.device;
  f.region_bytes = a.region.bytes;
  f.offset = a.region.base ? static_cast<int64_t>(a.addr - a.region.base) : 0;
  f.bytes = a.bytes;
  snprintf(f.name, sizeof f.name, "%s", a.region.name ? a.region.name : "");
}

struct Checker : trace::Observer {
  DCSIM_NO_TRACE void run_begin(const dcsim_launch&) override {
    State& g = g_state;
    std::lock_guard<std::mutex> lock(g.mutex);
    const uint32_t epoch = __atomic_load_n(&dcsim_check_control[0], __ATOMIC_ACQUIRE);
    if (epoch != g.epoch) {
      g.epoch = epoch;
      g.checks = __atomic_load_n(&dcsim_check_control[1], __ATOMIC_ACQUIRE);
      memcpy(g.extents, dcsim_check_extents, sizeof g.extents);
      std::lock_guard<std::mutex> shadow(g.global_mutex);
      g.global.clear();
      g.findings.clear();
      g.shadow_full = false;
    }
    t_checks = g.checks;
    if (!g.base) {
      Dl_info info{};
      if (dladdr(reinterpret_cast<void*>(&dcsim_check_report), &info) && info.dli_fname) {
        g.base = reinterpret_cast<uintptr_t>(info.dli_fbase);
        snprintf(dcsim_check_report.module, sizeof dcsim_check_report.module, "%s", info.dli_fname);
      }
    }
  }

  DCSIM_NO_TRACE void block_begin(unsigned long long, unsigned) override { t_shared_shadow.clear(); }

  // An allocation the host gave a smaller size for: the access measured against that size; *entry:
  // the host's entry for the buffer (-1: none).
  DCSIM_NO_TRACE static trace::Access bounded(const trace::Access& in, int* entry) {
    trace::Access a = in;
    *entry = -1;
    if (a.region.space != trace::kGlobal || !a.region.device) return a;
    for (unsigned i = 0; i + 3 < 128 && g_state.extents[i]; i += 4)
      if (g_state.extents[i] == a.region.device) {
        *entry = static_cast<int>(i);
        if (g_state.extents[i + 1] < a.region.bytes) {
          a.region.bytes = g_state.extents[i + 1];
          a.region.inside = a.region.inside && a.addr + a.bytes <= a.region.base + a.region.bytes;
        }
      }
    return a;
  }

  // Whether a load of tracked acc.empty memory reads an element that still holds its poison.
  DCSIM_NO_TRACE static bool poisoned(const trace::Access& a, int entry) {
    const uint64_t size = entry >= 0 ? g_state.extents[entry + 3] : 0;
    if (size == 0 || size > 8 || a.store) return false;
    const uint64_t pattern = g_state.extents[entry + 2];
    const uint64_t first = static_cast<uint64_t>(a.addr - a.region.base) / size * size;
    for (uint64_t e = first; e < static_cast<uint64_t>(a.addr - a.region.base) + a.bytes; e += size)
      if (e + size <= a.region.bytes && memcmp(a.region.base + e, &pattern, size) == 0) return true;
    return false;
  }

  DCSIM_NO_TRACE void access(const trace::Access& in) override {
    const uint32_t checks = t_checks;
    int entry = -1;
    const trace::Access a = bounded(in, &entry);
    const dccheck::Who who{a.tid, static_cast<uint32_t>(a.bid), static_cast<uint32_t>(a.interval),
                           static_cast<uint32_t>(a.warp_syncs), a.warp,
                           static_cast<uint32_t>(a.pc - g_state.base)};
    if (!a.region.inside) {
      if (!(checks & dccheck::kMemcheck)) return;
      dccheck::Finding f{};
      f.check = dccheck::kMemcheck;
      region_of(f, a);
      party(f, 0, who);
      f.stores = a.store ? 1u : 0u;
      g_state.findings.add(f);
      // The access would land in a red zone, a guard page or another variable: the thread stops
      // here (as compute-sanitizer stops a kernel at its first invalid access).
      if (t_launch && t_launch->error_code == 0) {
        snprintf(t_launch->error, sizeof t_launch->error,
                 "memcheck: out-of-bounds access stopped the checked launch (the findings say where)");
        t_launch->error_code = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS
      }
      throw Trap{700};
    }
    const bool race = checks & dccheck::kRacecheck;
    const bool init = (checks & dccheck::kInitcheck) && a.region.space != trace::kGlobal;
    const bool global = a.region.space == trace::kGlobal;
    if ((checks & dccheck::kInitcheck) && global && poisoned(a, entry)) {
      dccheck::Finding f{};
      f.check = dccheck::kInitcheck;
      region_of(f, a);
      party(f, 0, who);
      g_state.findings.add(f);
    }
    if (!race && !init) return;
    std::unique_lock<std::mutex> lock(g_state.global_mutex, std::defer_lock);
    if (global) lock.lock();
    dccheck::Shadow& shadow = global ? g_state.global : t_shared_shadow;
    bool uninit = false;
    int32_t hazard = dccheck::kNoHazard;
    dccheck::Who other{};
    const uintptr_t p = reinterpret_cast<uintptr_t>(a.addr);
    for (uint32_t i = 0; i < a.bytes; ++i) {
      dccheck::Cell* cell = shadow.at(p + i);
      if (!cell) {
        __atomic_store_n(&g_state.shadow_full, true, __ATOMIC_RELAXED);  // from any worker
        continue;
      }
      dccheck::Cell& c = *cell;
      if (init && !a.store && !c.written) uninit = true;
      if (a.store) c.written = 1;
      if (race) {
        dccheck::Who o{};
        const int32_t h = dccheck::race_step(c, who, a.store, &o);
        if (h && !hazard) {
          hazard = h;
          other = o;
        }
      }
    }
    if (lock.owns_lock()) lock.unlock();
    if (uninit) {
      dccheck::Finding f{};
      f.check = dccheck::kInitcheck;
      region_of(f, a);
      party(f, 0, who);
      g_state.findings.add(f);
    }
    if (hazard) {
      dccheck::Finding f{};
      f.check = dccheck::kRacecheck;
      f.hazard = hazard;
      region_of(f, a);
      party(f, 0, other);
      party(f, 1, who);
      // a write-write pair, or a read-write one where `now` read: the earlier access was the store
      f.stores = (a.store ? 2u : 0u) | (hazard == dccheck::kWriteWrite || !a.store ? 1u : 0u);
      g_state.findings.add(f);
    }
  }

  DCSIM_NO_TRACE void sync_event(const trace::SyncEvent& e) override {
    if (!(t_checks & dccheck::kSynccheck)) return;
    dccheck::Finding f{};
    f.check = dccheck::kSynccheck;
    f.sync_kind = e.kind;
    f.mask = e.mask;
    f.lanes = e.lanes;
    const unsigned long long bid =
        t_block_idx.x + static_cast<unsigned long long>(t_grid_dim.x) * (t_block_idx.y + t_grid_dim.y * t_block_idx.z);
    for (int i = 0; i < 2; ++i) {
      f.thread[i][0] = e.thread[i].x;
      f.thread[i][1] = e.thread[i].y;
      f.thread[i][2] = e.thread[i].z;
      coords(static_cast<unsigned>(bid), t_grid_dim.x, t_grid_dim.y, f.group[i]);
      f.line[i] = e.line[i];
    }
    f.site[0] = e.pc ? e.pc - g_state.base : 0;
    g_state.findings.add(f);
  }

  DCSIM_NO_TRACE void run_end(const dcsim_launch&) override {
    State& g = g_state;
    std::lock_guard<std::mutex> lock(g.mutex);
    uint32_t dropped = 0;
    const std::vector<dccheck::Finding> list = g.findings.snapshot(&dropped);
    dcsim_check_report_t& r = dcsim_check_report;
    const size_t n = list.size() < dccheck::Findings::kMax ? list.size() : dccheck::Findings::kMax;
    for (size_t i = 0; i < n; ++i) r.records[i] = list[i];
    r.nrecords = static_cast<uint32_t>(n);
    r.dropped = dropped;
    r.shadow_full = __atomic_load_n(&g.shadow_full, __ATOMIC_RELAXED) ? 1u : 0u;
    r.record_bytes = sizeof(dccheck::Finding);
    r.epoch = g.epoch;
    const uint32_t dims[6] = {t_block_dim.x, t_block_dim.y, t_block_dim.z, t_grid_dim.x, t_grid_dim.y, t_grid_dim.z};
    memcpy(r.block, dims, sizeof r.block);
    memcpy(r.grid, dims + 3, sizeof r.grid);
    __atomic_store_n(&r.magic, 0x4B434344u, __ATOMIC_RELEASE);
  }
};

inline Checker g_checker;
struct Registration {
  Registration() { trace::register_observer(&g_checker); }
};
inline Registration g_registration;

}  // namespace check
DCSIM_LOCAL_END
}  // namespace dcsim
