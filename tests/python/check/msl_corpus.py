"""Raw MSL kernels for the kernel checks on the Metal double: seeded bugs (one each, on the line marked
``// BUG``; for a race either access, for a divergent barrier the barrier) and correct kernels.

The kernels are gathered into three MSL libraries, so a test run compiles each once for the checks
(the double's cache keys objects by source): bugs and clean kernels with barriers or SIMD-group
functions (the double runs every thread of such a library as a fiber), and bugs in a library
without them (threads run one after another)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

F32, I32, U32 = np.float32, np.int32, np.uint32

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"


@dataclass
class Case:
    id: str
    kind: str | None               # the check that must find it (None: a clean kernel)
    msl: str                       # the kernel function
    make_args: Callable[[], tuple]
    global_size: int | tuple[int, ...]
    local_size: int | tuple[int, ...] | None = None
    expect: Callable[[tuple], None] | None = None  # clean kernels: checks the results
    line: int = field(default=0)   # the # BUG line in the library (set by library())
    source: str = field(default="", repr=False)  # the library holding it (set by library())


def v(n: int = 64) -> np.ndarray:
    return np.arange(n, dtype=F32)


def z(n: int = 64, dtype: Any = F32) -> np.ndarray:
    return np.zeros(n, dtype)


BUGS: list[Case] = [
    # ------------------------------------------------------------------------------ memcheck
    Case("read_one_past_end", "memcheck", """
kernel void read_one_past_end(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                              uint i [[thread_position_in_grid]]) {
  out[i] = x[i + 1];  // BUG
}""", lambda: (v(), z()), 64, 32),
    Case("write_le_bound", "memcheck", """
kernel void write_le_bound(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
                           uint i [[thread_position_in_grid]]) {
  if (i <= n) {
    out[i] = 1.0f;  // BUG
  }
}""", lambda: (z(), U32(64)), 96, 32),
    Case("read_before_start", "memcheck", """
kernel void read_before_start(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                              uint i [[thread_position_in_grid]]) {
  int j = int(i) - 1;
  out[i] = x[j];  // BUG
}""", lambda: (v(), z()), 64, 32),
    Case("row_stride_past_end", "memcheck", """
kernel void row_stride_past_end(device float* m [[buffer(0)]], uint2 p [[thread_position_in_grid]]) {
  // an 8 x 8 matrix written with a stride of 9
  m[p.y * 9 + p.x] = 1.0f;  // BUG
}""", lambda: (z(64),), (8, 8), (8, 8)),
    Case("threadgroup_overrun", "memcheck", """
kernel void threadgroup_overrun(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup float tile[32];
  tile[l + 1] = x[i];  // BUG
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = tile[l];
}""", lambda: (v(), z()), 64, 32),
    Case("far_out_of_bounds", "memcheck", """
kernel void far_out_of_bounds(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i * 65536u] = 1.0f;  // BUG
}""", lambda: (z(),), 64, 32),
    Case("atomic_past_end", "memcheck", """
kernel void atomic_past_end(device atomic_uint* counts [[buffer(0)]], device const uint* keys [[buffer(1)]],
                            uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(&counts[keys[i]], 1u, memory_order_relaxed);  // BUG
}""", lambda: (z(8, U32), np.arange(64, dtype=U32) % 9), 64, 32),
    # ----------------------------------------------------------------------------- racecheck
    Case("tree_without_barrier", "racecheck", """
kernel void tree_without_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
                                 uint g [[threadgroup_position_in_grid]]) {
  threadgroup float s[32];
  s[l] = x[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint step = 16; step > 0; step /= 2) {
    if (l < step) {
      s[l] += s[l + step];  // BUG
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (l == 0) out[g] = s[0];
}""", lambda: (v(), z(2)), 64, 32),
    Case("neighbour_without_barrier", "racecheck", """
kernel void neighbour_without_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                      uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[32];
  s[l] = x[i];
  out[i] = s[(l + 1) % 32];  // BUG
}""", lambda: (v(), z()), 64, 32),
    Case("global_accumulate", "racecheck", """
kernel void global_accumulate(device const float* x [[buffer(0)]], device float* total [[buffer(1)]],
                              uint i [[thread_position_in_grid]]) {
  total[0] += x[i];  // BUG
}""", lambda: (v(), z(1)), 64, 32),
    Case("across_threadgroups", "racecheck", """
kernel void across_threadgroups(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]],
                                uint n [[threads_per_grid]]) {
  y[i] = float(i);
  threadgroup_barrier(mem_flags::mem_device);
  float other = y[(i + 32) % n];  // BUG
  y[i] += other;
}""", lambda: (z(),), 64, 32),
    Case("plain_read_of_atomic", "racecheck", """
kernel void plain_read_of_atomic(device const uint* keys [[buffer(0)]], device uint* out [[buffer(1)]],
                                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup uint count[1];
  if (l == 0) count[0] = 0;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (keys[i] > 10u) atomic_fetch_add_explicit((threadgroup atomic_uint*)&count[0], 1u, memory_order_relaxed);
  out[i] = count[0];  // BUG
}""", lambda: (np.arange(64, dtype=U32), z(64, U32)), 64, 32),
    Case("simd_barrier_across_simdgroups", "racecheck", """
kernel void simd_barrier_across_simdgroups(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                           uint i [[thread_position_in_grid]],
                                           uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[64];
  s[l] = x[i];
  simdgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = s[63 - l];  // BUG
}""", lambda: (v(), z()), 64, 64),
    # ----------------------------------------------------------------------------- synccheck
    Case("barrier_in_branch", "synccheck", """
kernel void barrier_in_branch(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                              uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[32];
  if (l < 16) {
    s[l] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);  // BUG
    out[i] = s[15 - l];
  }
}""", lambda: (z(),), 64, 32),
    Case("return_before_barrier", "synccheck", """
kernel void return_before_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                  constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]],
                                  uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[32];
  if (i >= n) return;
  s[l] = x[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);  // BUG
  out[i] = s[0];
}""", lambda: (v(), z(), U32(48)), 64, 32),
    Case("different_barriers", "synccheck", """
kernel void different_barriers(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                               uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[32];
  if (l % 2 == 0) {
    s[l] = float(l);
    threadgroup_barrier(mem_flags::mem_threadgroup);  // BUG
    out[i] = s[l + 1];
  } else {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s[l] = float(l);
    out[i] = s[l - 1];
  }
}""", lambda: (z(),), 64, 32),
    # ----------------------------------------------------------------------------- initcheck
    Case("threadgroup_never_written", "initcheck", """
kernel void threadgroup_never_written(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                                      uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[32];
  if (l < 16) s[l] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = s[31 - l];  // BUG
}""", lambda: (z(),), 64, 32),
    Case("threadgroup_written_after", "initcheck", """
kernel void threadgroup_written_after(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                                      uint l [[thread_position_in_threadgroup]]) {
  threadgroup float total[1];
  float t = total[0];  // BUG
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (l == 0) total[0] = 0.0f;
  out[i] = t;
}""", lambda: (z(),), 64, 32),
]


def _tree_expect(args: tuple) -> None:
    x, out = args
    np.testing.assert_allclose(out, x.reshape(-1, 32).sum(axis=1))


def _hist_expect(args: tuple) -> None:
    keys, hist = args
    np.testing.assert_array_equal(hist, np.bincount(keys, minlength=8).astype(U32))


CLEAN: list[Case] = [
    Case("saxpy_guarded", None, """
kernel void saxpy_guarded(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                          constant float& a [[buffer(2)]], constant uint& n [[buffer(3)]],
                          uint i [[thread_position_in_grid]]) {
  if (i < n) y[i] = a * x[i] + y[i];
}""", lambda: (v(100), np.ones(100, F32), F32(2.0), U32(100)), 128, 32,
         lambda a: np.testing.assert_array_equal(a[1], 2 * np.arange(100, dtype=F32) + 1)),
    Case("tree_reduce", None, """
kernel void tree_reduce(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
                        uint g [[threadgroup_position_in_grid]]) {
  threadgroup float s[32];
  s[l] = x[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint step = 16; step > 0; step /= 2) {
    if (l < step) s[l] += s[l + step];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (l == 0) out[g] = s[0];
}""", lambda: (v(), z(2)), 64, 32, _tree_expect),
    Case("transpose_tile", None, """
kernel void transpose_tile(device const float* a [[buffer(0)]], device float* t [[buffer(1)]],
                           uint2 p [[thread_position_in_grid]], uint2 l [[thread_position_in_threadgroup]],
                           uint2 g [[threadgroup_position_in_grid]]) {
  threadgroup float tile[8][9];
  tile[l.y][l.x] = a[p.y * 16 + p.x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  t[(g.x * 8 + l.y) * 16 + g.y * 8 + l.x] = tile[l.x][l.y];
}""", lambda: (np.arange(256, dtype=F32), z(256)), (16, 16), (8, 8),
         lambda a: np.testing.assert_array_equal(a[1].reshape(16, 16), a[0].reshape(16, 16).T)),
    Case("histogram_atomics", None, """
kernel void histogram_atomics(device const uint* keys [[buffer(0)]], device atomic_uint* hist [[buffer(1)]],
                              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup atomic_uint local_hist[8];
  if (l < 8) atomic_store_explicit(&local_hist[l], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(&local_hist[keys[i] % 8u], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (l < 8) {
    uint c = atomic_load_explicit(&local_hist[l], memory_order_relaxed);
    atomic_fetch_add_explicit(&hist[l], c, memory_order_relaxed);
  }
}""", lambda: (np.arange(64, dtype=U32) * 7 % 8, z(8, U32)), 64, 32, _hist_expect),
    Case("same_flag_everywhere", None, """
kernel void same_flag_everywhere(device const float* x [[buffer(0)]], device uint* flag [[buffer(1)]],
                                 uint i [[thread_position_in_grid]]) {
  if (x[i] >= 0.0f) flag[0] = 1u;
}""", lambda: (v(), z(1, U32)), 64, 32, lambda a: np.testing.assert_array_equal(a[1], [1])),
    Case("simd_sum_rows", None, """
kernel void simd_sum_rows(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                          uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
  float s = simd_sum(x[i]);
  if (lane == 0) out[g * 2 + sg] = s;
}""", lambda: (v(), z(2)), 64, 64, lambda a: np.testing.assert_allclose(a[1], a[0].reshape(2, 32).sum(axis=1))),
    Case("simd_barrier_within_simdgroup", None, """
kernel void simd_barrier_within_simdgroup(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                          uint i [[thread_position_in_grid]],
                                          uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[64];
  s[l] = x[i];
  simdgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = s[(l / 32) * 32 + 31 - l % 32];
}""", lambda: (v(), z()), 64, 64,
         lambda a: np.testing.assert_array_equal(a[1], a[0].reshape(2, 32)[:, ::-1].reshape(-1))),
    Case("double_buffered_scan", None, """
kernel void double_buffered_scan(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup float a[32];
  threadgroup float b[32];
  a[l] = x[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  bool from_a = true;
  for (uint off = 1; off < 32; off *= 2) {
    float v = from_a ? a[l] : b[l];
    if (l >= off) v += from_a ? a[l - off] : b[l - off];
    if (from_a) b[l] = v; else a[l] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    from_a = !from_a;
  }
  out[i] = from_a ? a[l] : b[l];
}""", lambda: (v(), z()), 64, 32,
         lambda a: np.testing.assert_allclose(a[1], np.cumsum(a[0].reshape(2, 32), axis=1).reshape(-1))),
    Case("device_counter_atomics", None, """
kernel void device_counter_atomics(device atomic_uint* counter [[buffer(0)]], device uint* slots [[buffer(1)]],
                                   uint i [[thread_position_in_grid]]) {
  uint k = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
  slots[k] = i;
}""", lambda: (z(1, U32), z(64, U32)), 64, 32,
         lambda a: np.testing.assert_array_equal(np.sort(a[1]), np.arange(64, dtype=U32))),
]


def library(cases: list[Case]) -> str:
    """One MSL source holding every case; sets each case's ``source`` and each bug's ``line`` (its
    ``// BUG`` line)."""
    text = HEADER
    for c in cases:
        start = text.count("\n")
        body = c.msl.strip("\n") + "\n"
        for n, ln in enumerate(body.splitlines()):
            if "// BUG" in ln:
                c.line = start + n + 2  # after the text so far and the blank line before the kernel
        text += "\n" + body
    for c in cases:
        c.source = text
    return text


def flat(of: Case, name: str) -> Case:
    """A copy of ``of`` (a case of BUGS or CLEAN) whose kernel is called ``name``, for the libraries below."""
    msl = of.msl.replace(f"kernel void {of.id}(", f"kernel void {name}(", 1)
    assert msl != of.msl, f"no kernel named {of.id} in its case"
    return dataclasses.replace(of, id=name, msl=msl, line=0, source="")


_BY_ID = {c.id: c for c in BUGS + CLEAN}

# without barriers or SIMD-group functions anywhere in the library: the double runs the threads one
# after another instead of as fibers, so the same bugs and kernels are checked on that path too
FLAT_BUGS: list[Case] = [
    flat(_BY_ID["read_one_past_end"], "flat_read_one_past_end"),
    flat(_BY_ID["neighbour_without_barrier"], "flat_neighbour_race"),
    flat(_BY_ID["global_accumulate"], "flat_global_accumulate"),
    Case("flat_threadgroup_unwritten", "initcheck", """
kernel void flat_threadgroup_unwritten(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                                       uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[32];
  out[i] = s[l];  // BUG
}""", lambda: (z(),), 64, 32),
]

FLAT_CLEAN: list[Case] = [
    flat(_BY_ID["saxpy_guarded"], "flat_saxpy"),
    Case("flat_own_threadgroup_slot", None, """
kernel void flat_own_threadgroup_slot(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                      uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[32];
  s[l] = x[i] * 2.0f;
  out[i] = s[l] + 1.0f;
}""", lambda: (v(), z()), 64, 32, lambda a: np.testing.assert_array_equal(a[1], 2 * a[0] + 1)),
    flat(_BY_ID["device_counter_atomics"], "flat_counter_atomics"),
]

BUG_LIBRARY = library(BUGS)
FLAT_LIBRARY = library(FLAT_BUGS)
CLEAN_LIBRARY = library(CLEAN)
FLAT_CLEAN_LIBRARY = library(FLAT_CLEAN)
