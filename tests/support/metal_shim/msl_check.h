// The kernel checks' core for kernels run on the CPU by a simulator (memcheck, racecheck, initcheck;
// synccheck is the scheduler's, which alone sees who waits where). Nothing here knows Metal: the
// driver (msl_glue.inc) registers memory regions, says which work-item runs and when it passes a
// barrier, and forwards every load and store that clang's SanitizerCoverage reports
// (-fsanitize-coverage=trace-loads,trace-stores calls __sanitizer_cov_load4(addr) before a 4-byte
// load, ...) with the code address of the access. Findings go to a DcMslFinding array, one record
// per distinct (check, variant, memory, code address, other code address); repeats only count.
//
// Shadow memory: per granule of a region (its element size up to 4 bytes; 1 byte for threadgroup
// memory) a dcsim_check.h cell (the last writer, two readers), whether the last write was atomic and
// whether it was written. An access is a dccheck::Who (thread, group, barrier count,
// simdgroup_barrier count and SIMD-group as the "warp", code offset as the site); two accesses race
// when dccheck::ordered() does not order them (different threadgroups; one threadgroup, the same
// barrier interval and, within one SIMD-group, the same simdgroup_barrier count), at least one
// writes and not both are atomic. Added here: atomics, a write-write pair that stores the value
// already there (no hazard), threadgroup memory that is fresh for each group, memory windows.
#ifndef DOTCOMPUTE_METAL_SHIM_MSL_CHECK_H
#define DOTCOMPUTE_METAL_SHIM_MSL_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The hazard rules (who is ordered with whom, per barrier interval and SIMD-group barrier count) and
// the race step per shadow cell are the CUDA simulator's checks engine, shared with it.
#include "dcsim_check.h"
#include "msl_launch.h"

// the checker's own loads and stores must not call back into it
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

namespace dc_check {

enum { kMemcheck = 1, kRacecheck = 2, kSynccheck = 4, kInitcheck = 8 };
enum { kRead = 0, kWrite = 1, kAtomic = 2 };

struct Granule {
  dccheck::Cell c;  // the last writer and two readers (dcsim_check.h's race_step keeps them)
  uint32_t init;    // written: 1 (group-less memory) or the writing group + 1 (threadgroup memory)
  uint8_t atomic;   // the last write was an atomic update: only plain accesses race with it
};

struct Window {  // the part of a region a kernel may touch (a buffer's data, one threadgroup variable)
  char* base;
  size_t bytes;
  size_t elem;
  int space, id;
};

struct Region {  // memory the checks own: windows inside, everything else out of bounds
  char* lo;
  char* hi;
  char* sbase;        // the shadow covers [sbase, sbase + granules * gran)
  size_t gran, granules;
  Granule* shadow;
  bool per_group;     // threadgroup memory: fresh for every group (older records are stale)
  bool track_init;    // initcheck applies
  Window* windows;
  int nwindows, capwindows;
};

struct Pending {  // a write-write conflict decided after the store: the same value is no hazard
  bool on;
  char* addr;
  size_t size;
  unsigned char old[16];
  DcMslFinding f;
};

struct State {
  int mask = 0;
  DcMslFinding* out = nullptr;
  int* stored = nullptr;
  int capacity = 0;
  long long* dropped = nullptr;
  size_t shadow_left = 0;
  bool shadow_short = false;  // a region got no shadow: the run says so
  Region regions[40];
  int nregions = 0;
  // the running thread
  uint32_t tid = 0, grp = 0, lin = 0;
  uint32_t* bar = nullptr;   // per index in the threadgroup
  uint32_t* sbar = nullptr;
  uint32_t items = 0;
  // a thread's linear id in the grid from its group and index in the group (the driver knows the shapes)
  uint32_t (*global_tid)(uint32_t group, uint32_t thread) = nullptr;
  Pending pend{};
  // the last access, for a fault that follows it
  char* last_addr = nullptr;
  uint32_t last_pc = 0;
  int last_kind = 0;
};

inline void record(State& s, DcMslFinding f) {
  for (int k = 0; k < *s.stored; ++k) {
    DcMslFinding& r = s.out[k];
    if (r.kind == f.kind && r.sub == f.sub && r.space == f.space && r.region == f.region && r.pc == f.pc &&
        r.opc == f.opc) {
      ++r.count;
      return;
    }
  }
  if (*s.stored >= s.capacity) {
    ++*s.dropped;
    return;
  }
  f.count = 1;
  s.out[(*s.stored)++] = f;
}

inline DcMslFinding finding(int kind, int sub, const Window* w, long long index, uint32_t pc) {
  DcMslFinding f;
  memset(&f, 0, sizeof f);
  f.kind = kind;
  f.sub = sub;
  f.space = w ? w->space : -1;
  f.region = w ? w->id : -1;
  f.index = index;
  f.pc = pc;
  return f;
}

inline void begin(State& s, DcMslCheck* c, uint32_t max_items) {
  s.mask = c->mask;
  s.out = c->findings;
  s.stored = &c->stored;
  s.capacity = c->capacity;
  s.dropped = &c->dropped;
  s.shadow_left = c->max_shadow;
  s.items = max_items;
  s.bar = static_cast<uint32_t*>(calloc(max_items + 1, sizeof(uint32_t)));
  s.sbar = static_cast<uint32_t*>(calloc(max_items + 1, sizeof(uint32_t)));
}

inline void end(State& s) {
  for (int i = 0; i < s.nregions; ++i) {
    free(s.regions[i].shadow);
    free(s.regions[i].windows);
  }
  free(s.bar);
  free(s.sbar);
  s = State();
}

// A region [lo, hi) with shadow over [sbase, sbase + sbytes) in granules of `gran` bytes.
inline Region* add_region(State& s, char* lo, char* hi, char* sbase, size_t sbytes, size_t gran, bool per_group,
                          bool track_init) {
  if (s.nregions == int(sizeof s.regions / sizeof s.regions[0])) return nullptr;
  Region& r = s.regions[s.nregions++];
  memset(&r, 0, sizeof r);
  r.lo = lo;
  r.hi = hi;
  r.sbase = sbase;
  r.gran = gran ? gran : 1;
  r.granules = (sbytes + r.gran - 1) / r.gran;
  r.per_group = per_group;
  r.track_init = track_init;
  const size_t need = r.granules * sizeof(Granule);
  if ((s.mask & (kRacecheck | kInitcheck)) && r.granules) {
    if (need <= s.shadow_left) {
      r.shadow = static_cast<Granule*>(calloc(r.granules, sizeof(Granule)));
      if (r.shadow) s.shadow_left -= need;
    }
    if (!r.shadow) s.shadow_short = true;
  }
  return &r;
}

inline void add_window(Region* r, char* base, size_t bytes, size_t elem, int space, int id) {
  if (r == nullptr) return;
  for (int i = 0; i < r->nwindows; ++i)
    if (r->windows[i].space == space && r->windows[i].id == id) {  // moved (a new group's layout)
      r->windows[i] = Window{base, bytes, elem ? elem : 1, space, id};
      return;
    }
  if (r->nwindows == r->capwindows) {
    r->capwindows = r->capwindows ? 2 * r->capwindows : 8;
    r->windows = static_cast<Window*>(realloc(r->windows, size_t(r->capwindows) * sizeof(Window)));
  }
  r->windows[r->nwindows++] = Window{base, bytes, elem ? elem : 1, space, id};
}

inline void flush(State& s) {
  if (!s.pend.on) return;
  s.pend.on = false;
  if (memcmp(s.pend.addr, s.pend.old, s.pend.size) != 0) record(s, s.pend.f);
}

// The running thread (and a new group when `group_start`: barrier counts start again).
inline void set_thread(State& s, uint32_t tid, uint32_t grp, uint32_t lin, bool group_start) {
  flush(s);
  if (group_start)
    for (uint32_t i = 0; i <= s.items; ++i) s.bar[i] = s.sbar[i] = 0;
  s.tid = tid;
  s.grp = grp;
  s.lin = lin < s.items ? lin : s.items;
}

inline void barrier(State& s) {
  flush(s);
  ++s.bar[s.lin];
}
inline void simd_barrier(State& s) {
  flush(s);
  ++s.sbar[s.lin];
}

inline dccheck::Who who(const State& s, uint32_t pc) {
  return dccheck::Who{s.lin, s.grp, s.bar[s.lin], s.sbar[s.lin], s.lin / 32u, pc};
}

inline DcMslFinding race(const State& s, int sub, const Window* w, long long index, uint32_t pc,
                         const dccheck::Who& other, bool other_atomic) {
  DcMslFinding f = finding(2, sub, w, index, pc);
  f.tid = s.tid;
  f.otid = s.global_tid ? s.global_tid(other.group, other.thread) : other.thread;
  f.opc = other.site;
  f.other_atomic = other_atomic;
  return f;
}

inline void access(State& s, void* addr, size_t size, int kind, uint32_t pc) {
  flush(s);
  char* a = static_cast<char*>(addr);
  s.last_addr = a;
  s.last_pc = pc;
  s.last_kind = kind;
  for (int i = 0; i < s.nregions; ++i) {
    Region& r = s.regions[i];
    if (a < r.lo || a >= r.hi) continue;
    const Window* in = nullptr;
    const Window* near = nullptr;
    for (int k = 0; k < r.nwindows; ++k) {
      const Window& w = r.windows[k];
      if (a >= w.base && a + size <= w.base + w.bytes) {
        in = &w;
        break;
      }
      // the nearest window: the closest one starting at or before `a`, else the first after it
      if (near == nullptr) near = &w;
      const bool before = w.base <= a, nb = near->base <= a;
      if (before && (!nb || w.base > near->base)) near = &w;
      if (!before && !nb && w.base < near->base) near = &w;
    }
    if (in == nullptr) {
      if (s.mask & kMemcheck) {
        long long idx = 0;
        if (near) {
          const long long d = static_cast<long long>(a - near->base), e = static_cast<long long>(near->elem);
          idx = d >= 0 ? d / e : -((-d + e - 1) / e);
        }
        DcMslFinding f = finding(1, kind, near, idx, pc);
        f.tid = s.tid;
        record(s, f);
      }
      return;
    }
    if (r.shadow == nullptr || a < r.sbase) return;
    const long long index = static_cast<long long>((a - in->base) / static_cast<long long>(in->elem));
    const size_t g0 = size_t(a - r.sbase) / r.gran, g1 = size_t(a + size - 1 - r.sbase) / r.gran;
    const dccheck::Who now = who(s, pc);
    const uint32_t written = r.per_group ? s.grp + 1 : 1;
    const bool race_on = (s.mask & kRacecheck) != 0;
    bool reported = false;  // one finding per access, whatever number of granules it covers
    for (size_t g = g0; g <= g1 && g < r.granules; ++g) {
      Granule& sh = r.shadow[g];
      dccheck::Cell& c = sh.c;
      if (r.per_group && ((c.has_writer && c.writer.group != s.grp) || (c.nreaders && c.readers[0].group != s.grp))) {
        c = dccheck::Cell{};  // threadgroup memory of an earlier group: fresh now
        sh.atomic = 0;
      }
      if (kind == kRead) {
        if ((s.mask & kInitcheck) && r.track_init && sh.init != written && !reported) {
          DcMslFinding f = finding(4, 0, in, index, pc);
          f.tid = s.tid;
          record(s, f);
          reported = true;
        }
        const bool was_atomic = sh.atomic;
        dccheck::Who other{};
        if (dccheck::race_step(c, now, false, &other) != dccheck::kNoHazard && race_on && !reported) {
          record(s, race(s, 2, in, index, pc, other, was_atomic));
          reported = true;
        }
        continue;
      }
      if (kind == kWrite) {
        const bool was_atomic = sh.atomic;
        const bool writer_races = c.has_writer && !dccheck::ordered(c.writer, now);
        dccheck::Who other{};
        const int32_t h = dccheck::race_step(c, now, true, &other);
        if (h != dccheck::kNoHazard && race_on && !reported) {
          const bool ww = writer_races && h == dccheck::kWriteWrite;
          if (ww && !was_atomic && size <= sizeof s.pend.old && !s.pend.on) {
            s.pend.on = true;  // decided by flush(), after the store: the same value is no hazard
            s.pend.addr = a;
            s.pend.size = size;
            memcpy(s.pend.old, a, size);
            s.pend.f = race(s, 1, in, index, pc, other, false);
          } else {
            record(s, race(s, ww ? 1 : 3, in, index, pc, other, ww && was_atomic));
          }
          reported = true;
        }
        sh.atomic = 0;
        sh.init = written;
        continue;
      }
      // an atomic update: ordered with other atomics, not with plain accesses
      const bool plain_writer = c.has_writer && !sh.atomic && !dccheck::ordered(c.writer, now);
      if (race_on && !reported) {
        if (plain_writer) {
          record(s, race(s, 1, in, index, pc, c.writer, false));
          reported = true;
        } else {
          for (unsigned k = 0; k < c.nreaders && !reported; ++k)
            if (!dccheck::ordered(c.readers[k], now)) {
              record(s, race(s, 3, in, index, pc, c.readers[k], false));
              reported = true;
            }
        }
      }
      if (!plain_writer) {  // a racing plain write stays the writer: later plain accesses race with it too
        c.writer = now;
        c.has_writer = 1;
        sh.atomic = 1;
      }
      c.nreaders = 0;
      sh.init = written;
    }
    return;
  }
}

// After a fault: the last access, if it was into a region (its guard pages), as a memcheck finding
// (the callback recorded it already when the region saw it; this covers faults the shadow missed).
inline bool fault_was_checked(const State& s) {
  for (int i = 0; i < s.nregions; ++i)
    if (s.last_addr >= s.regions[i].lo && s.last_addr < s.regions[i].hi) return true;
  return false;
}

}  // namespace dc_check

#pragma clang attribute pop

#endif
