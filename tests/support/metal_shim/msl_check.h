// The kernel checks' core for kernels run on the CPU by a simulator (memcheck, racecheck, initcheck;
// synccheck is the scheduler's, which alone sees who waits where). Nothing here knows Metal: the
// driver (msl_glue.inc) registers memory regions, says which work-item runs and when it passes a
// barrier, and forwards every load and store that clang's SanitizerCoverage reports
// (-fsanitize-coverage=trace-loads,trace-stores calls __sanitizer_cov_load4(addr) before a 4-byte
// load, ...) with the code address of the access. Findings go to a DcMslFinding array, one record
// per distinct (check, variant, memory, code address, other code address); repeats only count.
//
// Shadow memory: per granule of a region (its element size up to 4 bytes; 1 byte for threadgroup
// memory) the last writer, two readers of the current barrier interval and whether it was written.
// An access records (thread, group, barrier count, SIMD-barrier count); two accesses by different
// threads race when at least one writes, not both are atomic, and nothing orders them: different
// threadgroups, or one threadgroup with the same barrier count (and, within one SIMD-group, the same
// simdgroup_barrier count).
#ifndef DOTCOMPUTE_METAL_SHIM_MSL_CHECK_H
#define DOTCOMPUTE_METAL_SHIM_MSL_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msl_launch.h"

// the checker's own loads and stores must not call back into it
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

namespace dc_check {

enum { kMemcheck = 1, kRacecheck = 2, kSynccheck = 4, kInitcheck = 8 };
enum { kRead = 0, kWrite = 1, kAtomic = 2 };

struct Cell {  // one access: who, when (in barrier terms), where in the code
  uint32_t tid1;  // linear thread id + 1 (0: no access)
  uint32_t pc;
  uint32_t grp;
  uint32_t bar;
  uint32_t sbar;
  uint16_t lin;   // index in the threadgroup (its SIMD-group is lin / 32)
  uint8_t atomic;
  uint8_t pad;
};
struct Granule {
  Cell w, r1, r2;
  uint32_t init;  // written: 1 (group-less memory) or the writing group + 1 (threadgroup memory)
  uint32_t pad;
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

// Whether the recorded access `c` and the running thread's access may happen at the same time.
inline bool concurrent(const State& s, const Cell& c) {
  if (c.grp != s.grp) return true;  // nothing orders threadgroups
  if (c.bar != s.bar[s.lin]) return false;
  return c.lin / 32u != s.lin / 32u || c.sbar == s.sbar[s.lin];
}

inline DcMslFinding race(const State& s, int sub, const Window* w, long long index, uint32_t pc, const Cell& other) {
  DcMslFinding f = finding(2, sub, w, index, pc);
  f.tid = s.tid;
  f.otid = other.tid1 - 1;
  f.opc = other.pc;
  f.other_atomic = other.atomic;
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
      // the nearest window: the closest one ending at or before `a`, else the first after it
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
    const Cell me{s.tid + 1, pc, s.grp, s.bar[s.lin], s.sbar[s.lin], uint16_t(s.lin), uint8_t(kind == kAtomic), 0};
    const uint32_t written = r.per_group ? s.grp + 1 : 1;
    bool reported = false;  // one finding per access, whatever number of granules it covers
    for (size_t g = g0; g <= g1 && g < r.granules; ++g) {
      Granule& sh = r.shadow[g];
      if (r.per_group) {  // threadgroup memory of an earlier group: fresh now
        if (sh.w.tid1 && sh.w.grp != s.grp) sh.w = Cell{};
        if (sh.r1.tid1 && sh.r1.grp != s.grp) sh.r1 = Cell{};
        if (sh.r2.tid1 && sh.r2.grp != s.grp) sh.r2 = Cell{};
      }
      const bool wrote = sh.w.tid1 && sh.w.tid1 != me.tid1 && concurrent(s, sh.w);
      if (kind == kRead) {
        if ((s.mask & kInitcheck) && r.track_init && sh.init != written && !reported) {
          DcMslFinding f = finding(4, 0, in, index, pc);
          f.tid = s.tid;
          record(s, f);
          reported = true;
        }
        if ((s.mask & kRacecheck) && wrote && !reported) {
          record(s, race(s, 2, in, index, pc, sh.w));
          reported = true;
        }
        // readers of this interval: the first, and a second one by another thread
        if (!sh.r1.tid1 || !concurrent(s, sh.r1)) {
          sh.r1 = me;
          sh.r2 = Cell{};
        } else if (sh.r1.tid1 != me.tid1 && !sh.r2.tid1) {
          sh.r2 = me;
        }
        continue;
      }
      // a write or an atomic update
      if ((s.mask & kRacecheck) && !reported) {
        if (wrote && !(sh.w.atomic && kind == kAtomic)) {
          if (kind == kWrite && !sh.w.atomic && size <= sizeof s.pend.old && !s.pend.on) {
            s.pend.on = true;  // decided by flush(), after the store
            s.pend.addr = a;
            s.pend.size = size;
            memcpy(s.pend.old, a, size);
            s.pend.f = race(s, 1, in, index, pc, sh.w);
          } else {
            record(s, race(s, 1, in, index, pc, sh.w));
          }
          reported = true;
        } else {
          const Cell* rd = nullptr;
          if (sh.r1.tid1 && concurrent(s, sh.r1)) rd = sh.r1.tid1 != me.tid1 ? &sh.r1 : (sh.r2.tid1 ? &sh.r2 : nullptr);
          if (rd != nullptr) {
            record(s, race(s, 3, in, index, pc, *rd));
            reported = true;
          }
        }
      }
      if (kind == kAtomic && sh.w.tid1 && !sh.w.atomic && concurrent(s, sh.w)) {
        // keep the plain write: a later plain access still races with it
      } else {
        sh.w = me;
      }
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
