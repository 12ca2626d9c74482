"""The C++ half of the checker: helpers the instrumented CPU source calls (see layout.py).

Kept as text here (not in the ABI header) so a checked kernel is one self-contained source, and the
ordinary kernels' sources and cache keys do not change at all.
"""

from __future__ import annotations

from .layout import (
    CAPACITY,
    F_COUNT,
    F_I0,
    F_ID,
    F_KIND,
    F_LINE,
    F_NDIM,
    F_OLINE,
    F_OTID,
    F_SUB,
    F_TID,
    FINDINGS,
    H_BAR,
    H_DROPPED,
    H_GROUP,
    H_GS,
    H_LI,
    H_LOCK,
    H_MASK,
    H_NSLOTS,
    H_PEND,
    H_RET_LINE,
    H_RET_TID,
    H_STORED,
    H_TID,
    REC,
    SHADOW,
    SLOT_WORDS,
    SLOTS,
)

assert CAPACITY > 0

CORE = f"""\
#include <sched.h>
// ---- dotcompute kernel checks (lang/check): the context layout is lang/check/layout.py's
struct dc_ck_guard {{
  // the checked entry runs one call at a time: the shadow state below is not thread-safe
  int64_t* c;
  explicit dc_ck_guard(int64_t* c_) : c(c_) {{
    while (__atomic_exchange_n(&c[{H_LOCK}], (int64_t)1, __ATOMIC_ACQUIRE)) sched_yield();
  }}
  ~dc_ck_guard() {{ __atomic_store_n(&c[{H_LOCK}], (int64_t)0, __ATOMIC_RELEASE); }}
}};
static void dc_ck_find(int64_t* c, int64_t kind, int64_t sub, int64_t id, int64_t line, int64_t tid,
                       int64_t otid, int64_t oline, int64_t i0, int64_t i1, int64_t i2, int64_t nd) {{
  // one record per distinct (check, variant, array, line, other line); repeats only count
  const int64_t n = c[{H_STORED}];
  for (int64_t k = 0; k < n; ++k) {{
    int64_t* r = c + {FINDINGS} + {REC} * k;
    if (r[{F_KIND}] == kind && r[{F_SUB}] == sub && r[{F_ID}] == id && r[{F_LINE}] == line &&
        r[{F_OLINE}] == oline) {{ ++r[{F_COUNT}]; return; }}
  }}
  if (n >= c[2]) {{ ++c[{H_DROPPED}]; return; }}
  int64_t* r = c + {FINDINGS} + {REC} * n;
  r[{F_KIND}] = kind; r[{F_SUB}] = sub; r[{F_ID}] = id; r[{F_LINE}] = line; r[{F_TID}] = tid;
  r[{F_OTID}] = otid; r[{F_OLINE}] = oline; r[{F_I0}] = i0; r[{F_I0} + 1] = i1; r[{F_I0} + 2] = i2;
  r[{F_NDIM}] = nd; r[{F_COUNT}] = 1;
  c[{H_STORED}] = n + 1;
}}
static inline void dc_ck_item(int64_t* c, int64_t g0, int64_t g1, int64_t g2, int64_t li) {{
  c[{H_TID}] = g0 + c[{H_GS}] * (g1 + c[{H_GS} + 1] * g2);
  c[{H_LI}] = li;
}}
static inline void dc_ck_group(int64_t* c, int64_t g, int64_t nitems) {{
  c[{H_GROUP}] = g;
  c[{H_RET_LINE}] = 0;
  c[{H_RET_TID}] = -1;
  for (int64_t i = 0; i < nitems; ++i) c[c[{H_BAR}] + i] = 0;
}}
static inline void dc_ck_bar(int64_t* c) {{ ++c[c[{H_BAR}] + c[{H_LI}]]; }}
static inline void dc_ck_ret(int64_t* c, int64_t line) {{
  if (c[{H_RET_TID}] < 0) {{ c[{H_RET_LINE}] = line; c[{H_RET_TID}] = c[{H_TID}]; }}
}}
static inline void dc_ck_bar_live(int64_t* c, int64_t nlive, int64_t total, int64_t line) {{
  // past a barrier while items of the group have returned: they never reach it (a GPU may hang,
  // or run on with them missing)
  ++c[c[{H_BAR}] + c[{H_LI}]];
  if (nlive < total && c[{H_RET_TID}] >= 0 && (c[{H_MASK}] & 4))
    dc_ck_find(c, 3, 6, -1, c[{H_RET_LINE}], c[{H_TID}], c[{H_RET_TID}], line, 0, 0, 0, 0);
}}
static inline void dc_ck_base(int64_t* c, int64_t slot, const void* p, int reset) {{
  int64_t* d = c + {SLOTS} + {SLOT_WORDS} * slot;
  d[2] = (int64_t)(intptr_t)p;
  if (reset) {{
    int64_t* w = c + d[0];
    for (int64_t e = 0; e < {SHADOW} * d[1]; ++e) w[e] = 0;
  }}
}}
static inline void dc_ck_sync(int64_t* c, int64_t sub, int64_t line, int64_t t0, int64_t t1, int64_t bline) {{
  if (c[{H_MASK}] & 4) dc_ck_find(c, 3, sub, -1, line, t0, t1, bline, 0, 0, 0, 0);
}}
static void dc_ck_shadow(int64_t* c, const void* addr, int64_t id, int64_t line, int64_t kind) {{
  const int64_t ns = c[{H_NSLOTS}];
  const char* a = (const char*)addr;
  for (int64_t s = 0; s < ns; ++s) {{
    const int64_t* d = c + {SLOTS} + {SLOT_WORDS} * s;
    const char* b = (const char*)(intptr_t)d[2];
    if (b == nullptr || a < b || a >= b + d[1] * d[3]) continue;
    const int64_t e = (a - b) / d[3];
    int64_t* w = c + d[0] + {SHADOW} * e;
    const int64_t me = c[{H_TID}] + 1, grp = c[{H_GROUP}];
    const int64_t sync = (grp << 32) | c[c[{H_BAR}] + c[{H_LI}]];
    const int64_t tag = me | (line << 32);
    const int64_t mask = c[{H_MASK}];
    // two accesses may race when they come from different groups, or from one group with no
    // barrier between them (the same barrier count)
#define DC_CK_CONC(x) (((x) >> 32) != grp || (x) == sync)
#define DC_CK_TID(x) (((x) & 0xffffffffLL) - 1)
    // w[5]: 1 written, | 2 when the last write was an atomic update
    if (kind == 2) {{
      // atomics are ordered among themselves, not with plain accesses of other items
      if (mask & 2) {{
        if (w[0] && (w[0] & 0xffffffffLL) != me && !(w[5] & 2) && DC_CK_CONC(w[1]))
          dc_ck_find(c, 2, 1, id, line, me - 1, DC_CK_TID(w[0]), w[0] >> 32, e, 0, 0, 1);
        else if (w[2] && DC_CK_CONC(w[3]) && ((w[2] & 0xffffffffLL) != me || w[4]))
          dc_ck_find(c, 2, 3, id, line, me - 1, DC_CK_TID((w[2] & 0xffffffffLL) != me ? w[2] : w[4]),
                     ((w[2] & 0xffffffffLL) != me ? w[2] : w[4]) >> 32, e, 0, 0, 1);
      }}
      if (!(w[0] && !(w[5] & 2) && DC_CK_CONC(w[1]))) {{ w[0] = tag; w[1] = sync; }}  // a plain write stays
      w[5] |= w[0] == tag ? 3 : 1;
      return;
    }}
    if (kind == 0) {{
      if ((mask & 8) && !w[5]) dc_ck_find(c, 4, 0, id, line, me - 1, -1, 0, e, 0, 0, 1);
      if ((mask & 2) && w[0] && (w[0] & 0xffffffffLL) != me && DC_CK_CONC(w[1]))
        dc_ck_find(c, 2, 2, id, line, me - 1, DC_CK_TID(w[0]), w[0] >> 32, e, 0, 0, 1);
      if (!w[2] || !DC_CK_CONC(w[3])) {{ w[2] = tag; w[3] = sync; w[4] = 0; }}
      else if ((w[2] & 0xffffffffLL) != me && !w[4]) w[4] = tag;
      return;
    }}
    if (mask & 2) {{
      if (w[0] && (w[0] & 0xffffffffLL) != me && DC_CK_CONC(w[1])) {{
        if (d[3] <= 16 && !(w[5] & 2)) {{  // decided after the store (dc_ck_post): equal values are no hazard
          int64_t* q = c + {H_PEND};
          q[0] = 1; q[1] = (int64_t)(intptr_t)a; q[2] = d[3];
          q[3] = 0; q[4] = 0;
          __builtin_memcpy(&q[3], a, (size_t)d[3]);
          q[5] = id; q[6] = line; q[7] = me - 1; q[8] = DC_CK_TID(w[0]); q[9] = w[0] >> 32; q[10] = e;
        }} else {{
          dc_ck_find(c, 2, 1, id, line, me - 1, DC_CK_TID(w[0]), w[0] >> 32, e, 0, 0, 1);
        }}
      }}
      if (w[2] && DC_CK_CONC(w[3])) {{
        if ((w[2] & 0xffffffffLL) != me)
          dc_ck_find(c, 2, 3, id, line, me - 1, DC_CK_TID(w[2]), w[2] >> 32, e, 0, 0, 1);
        else if (w[4])
          dc_ck_find(c, 2, 3, id, line, me - 1, DC_CK_TID(w[4]), w[4] >> 32, e, 0, 0, 1);
      }}
    }}
#undef DC_CK_CONC
#undef DC_CK_TID
    w[0] = tag; w[1] = sync; w[5] = 1;  // a plain write: no longer an atomic's
    return;
  }}
}}
static inline void dc_ck_post(int64_t* c) {{
  int64_t* q = c + {H_PEND};
  if (!q[0]) return;
  q[0] = 0;
  if (__builtin_memcmp((const void*)(intptr_t)q[1], &q[3], (size_t)q[2]) != 0)
    dc_ck_find(c, 2, 1, q[5], q[6], q[7], q[8], q[9], q[10], 0, 0, 1);
}}
static inline int64_t dc_ck_oob(int64_t* c, int64_t id, int64_t line, int64_t kind, int64_t i0, int64_t i1,
                                int64_t i2, int64_t nd) {{
  if (c[{H_MASK}] & 1) dc_ck_find(c, 1, kind, id, line, c[{H_TID}], -1, 0, i0, i1, i2, nd);
  return -1;
}}
"""


def access_helper(ndim: int, zero: bool) -> tuple[str, str]:
    """``dc_ckN[z](c, base, esz, id, line, kind, i0, n0, ...)``: bounds, then the shadow; the flat
    index, or -1 (0 for ``zero``: a dc.shared load has no skip helper) when out of bounds."""
    name = f"dc_ck{ndim}" + ("z" if zero else "")
    params = ", ".join(f"int64_t i{d}, int64_t n{d}" for d in range(ndim))
    ok = " && ".join(f"(uint64_t)i{d} < (uint64_t)n{d}" for d in range(ndim))
    flat = "i0"
    for d in range(1, ndim):
        flat = f"({flat}) * n{d} + i{d}"
    idx = ", ".join(([f"i{d}" for d in range(ndim)] + ["0"] * 3)[:3])
    text = (f"static inline int64_t {name}(int64_t* c, const void* base, int64_t esz, int64_t id, int64_t line, "
            f"int64_t kind, {params}) {{\n"
            f"  if (!({ok})) {{ dc_ck_oob(c, id, line, kind, {idx}, {min(ndim, 3)}); return {0 if zero else -1}; }}\n"
            f"  const int64_t k = {flat};\n"
            f"  dc_ck_shadow(c, (const char*)base + k * esz, id, line, kind);\n"
            f"  return k;\n}}")
    return name, text
