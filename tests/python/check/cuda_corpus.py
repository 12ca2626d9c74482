"""Raw CUDA kernels for the kernel checks on the CUDA simulator: seeded bugs (each on the line marked
``// BUG``: the bad access, either access of a race, or the first barrier of a divergent pair) and
correct kernels that must give no finding.

The bug kernels form one CUDA source and the correct ones another, so a test session makes one trace
build of each (and one plain build of the correct ones)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

F32, I32, U32 = np.float32, np.int32, np.uint32


@dataclass
class Case:
    id: str
    kind: str | None                # the check that must find it (None: a correct kernel)
    cuda: str                       # the __global__ function
    make_args: Callable[[], tuple]
    global_size: int | tuple[int, ...]
    local_size: int | tuple[int, ...]
    buffer: str | None = None       # the array a finding must name (memcheck, racecheck, initcheck)
    shared_mem: int = 0
    expect: Callable[[tuple], None] | None = None  # correct kernels: checks the results
    line: int = field(default=0)    # the // BUG line in the source (set by source())


def ramp(n: int = 64) -> np.ndarray:
    return np.arange(n, dtype=F32)


def zeros(n: int = 64, dtype: Any = F32) -> np.ndarray:
    return np.zeros(n, dtype)


BUGS: list[Case] = [
    # ---------------------------------------------------------------------------------- memcheck
    Case("oob_x_by_one", "memcheck", """
extern "C" __global__ void oob_x_by_one(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) {
    out[i] = x[i] * 2.0f;  // BUG
  }
}""", lambda: (ramp(), zeros(), I32(64)), 96, 32, buffer="x"),
    Case("oob_y_by_one", "memcheck", """
extern "C" __global__ void oob_y_by_one(float* m, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y <= h) {
    m[y * w + x] = 1.0f;  // BUG
  }
}""", lambda: (zeros(8 * 6), I32(8), I32(6)), (8, 8), (8, 8), buffer="m"),
    Case("oob_shared_static", "memcheck", """
extern "C" __global__ void oob_shared_static(const float* x, float* out) {
  __shared__ float tile[32];
  int t = threadIdx.x;
  tile[t + 1] = x[blockIdx.x * 32 + t];  // BUG
  __syncthreads();
  out[blockIdx.x * 32 + t] = tile[t];
}""", lambda: (ramp(), zeros()), 64, 32, buffer="tile"),
    Case("oob_shared_between_arrays", "memcheck", """
extern "C" __global__ void oob_shared_between_arrays(const float* x, float* out) {
  __shared__ float a[32];
  __shared__ float b[32];
  int t = threadIdx.x;
  a[t] = x[t];
  b[t + 1] = x[t];  // BUG
  __syncthreads();
  out[t] = a[t] + b[t];
}""", lambda: (ramp(32), zeros(32)), 32, 32, buffer="b"),
    Case("oob_dynamic_shared", "memcheck", """
extern "C" __global__ void oob_dynamic_shared(const float* x, float* out) {
  extern __shared__ float buf[];
  int t = threadIdx.x;
  buf[t + 2] = x[t];  // BUG
  __syncthreads();
  out[t] = buf[t];
}""", lambda: (ramp(64), zeros(64)), 64, 64, buffer="extern __shared__", shared_mem=64 * 4),
    # ---------------------------------------------------------------------------------- racecheck
    Case("race_shared_neighbour", "racecheck", """
extern "C" __global__ void race_shared_neighbour(const float* x, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = x[t];
  out[t] = s[(t + 1) % 64];  // BUG
}""", lambda: (ramp(), zeros()), 64, 64, buffer="s"),
    Case("race_global_across_blocks", "racecheck", """
extern "C" __global__ void race_global_across_blocks(float* total) {
  if (threadIdx.x == 0) {
    total[0] = total[0] + (float)blockIdx.x;  // BUG
  }
}""", lambda: (zeros(1),), 128, 32, buffer="total"),
    Case("missing_syncthreads_in_tree", "racecheck", """
extern "C" __global__ void missing_syncthreads_in_tree(const float* x, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * 64 + t];
  __syncthreads();
  for (int step = 32; step > 0; step >>= 1) {
    if (t < step) s[t] += s[t + step];  // BUG
  }
  if (t == 0) out[blockIdx.x] = s[0];
}""", lambda: (ramp(128), zeros(2)), 128, 64, buffer="s"),
    Case("warp_reduction_without_syncwarp", "racecheck", """
extern "C" __global__ void warp_reduction_without_syncwarp(const float* x, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  if (t < 32) {
    volatile float* v = s;
    v[t] += v[t + 32];
    v[t] += v[t + 16];  // BUG
    v[t] += v[t + 8];
  }
  if (t == 0) out[0] = s[0];
}""", lambda: (ramp(), zeros(1)), 64, 64, buffer="s"),
    Case("same_slot_from_every_thread", "racecheck", """
extern "C" __global__ void same_slot_from_every_thread(float* out) {
  __shared__ float last;
  last = (float)threadIdx.x;  // BUG
  __syncthreads();
  if (threadIdx.x == 0) out[0] = last;
}""", lambda: (zeros(1),), 32, 32, buffer="last"),
    # ---------------------------------------------------------------------------------- synccheck
    Case("divergent_barrier", "synccheck", """
extern "C" __global__ void divergent_barrier(float* out) {
  int t = threadIdx.x;
  if (t < 16) {
    __syncthreads();  // BUG
    out[t] = 1.0f;
  } else {
    __syncthreads();
    out[t] = 2.0f;
  }
}""", lambda: (zeros(32),), 32, 32),
    Case("shuffle_after_lanes_exited", "synccheck", """
extern "C" __global__ void shuffle_after_lanes_exited(const float* x, float* out) {
  int t = threadIdx.x;
  if (t >= 16) return;
  float v = __shfl_sync(0xffffffffu, x[t], 0);  // BUG
  out[t] = v;
}""", lambda: (ramp(32), zeros(32)), 32, 32),
    Case("syncwarp_names_absent_lanes", "synccheck", """
extern "C" __global__ void syncwarp_names_absent_lanes(float* out) {
  int t = threadIdx.x;
  out[t] = (float)t;
  __syncwarp(0xffffffffu);  // BUG
  out[t] += 1.0f;
}""", lambda: (zeros(16),), 16, 16),
    # ---------------------------------------------------------------------------------- initcheck
    Case("shared_read_before_write", "initcheck", """
extern "C" __global__ void shared_read_before_write(const float* x, float* out) {
  __shared__ float s[32];
  int t = threadIdx.x;
  if (t < 16) s[t] = x[t];
  __syncthreads();
  out[t] = s[t];  // BUG
}""", lambda: (ramp(32), zeros(32)), 32, 32, buffer="s"),
    Case("dynamic_shared_read_before_write", "initcheck", """
extern "C" __global__ void dynamic_shared_read_before_write(float* out) {
  extern __shared__ float acc[];
  int t = threadIdx.x;
  acc[t] += 1.0f;  // BUG
  __syncthreads();
  out[t] = acc[t];
}""", lambda: (zeros(32),), 32, 32, buffer="extern __shared__", shared_mem=32 * 4),
]


def _reduce_expect(args: tuple) -> None:
    x, out = args
    np.testing.assert_allclose(out, x.reshape(-1, 128).sum(axis=1), rtol=1e-6)


def _transpose_expect(args: tuple) -> None:
    a, out, w, h = args
    np.testing.assert_array_equal(out.reshape(int(w), int(h)), a.reshape(int(h), int(w)).T)


def _scan_expect(args: tuple) -> None:
    x, out = args
    np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-6)


def _hist_expect(args: tuple) -> None:
    keys, counts, _ = args
    np.testing.assert_array_equal(counts, np.bincount(keys, minlength=16).astype(U32))


CLEAN: list[Case] = [
    Case("block_reduce", None, """
extern "C" __global__ void block_reduce(const float* x, float* out) {
  __shared__ float s[128];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * 128 + t];
  __syncthreads();
  for (int step = 64; step > 16; step >>= 1) {
    if (t < step) s[t] += s[t + step];
    __syncthreads();
  }
  if (t < 32) {
    float v = s[t] + s[t + 16];
    for (int o = 8; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (t == 0) out[blockIdx.x] = v;
  }
}""", lambda: (np.arange(512, dtype=F32) % 7, zeros(4)), 512, 128, expect=_reduce_expect),
    Case("tiled_transpose", None, """
#define TILE 16
extern "C" __global__ void tiled_transpose(const float* a, float* out, int w, int h) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = a[y * w + x];
  __syncthreads();
  int tx = blockIdx.y * TILE + threadIdx.x;
  int ty = blockIdx.x * TILE + threadIdx.y;
  if (tx < h && ty < w) out[ty * h + tx] = tile[threadIdx.x][threadIdx.y];
}""", lambda: (np.arange(32 * 48, dtype=F32), zeros(32 * 48), I32(48), I32(32)), (48, 32), (16, 16),
        expect=_transpose_expect),
    Case("block_scan", None, """
extern "C" __global__ void block_scan(const float* x, float* out) {
  __shared__ float s[2][64];
  int t = threadIdx.x;
  int cur = 0;
  s[cur][t] = x[t];
  __syncthreads();
  for (int off = 1; off < 64; off <<= 1) {
    s[1 - cur][t] = t >= off ? s[cur][t] + s[cur][t - off] : s[cur][t];
    cur = 1 - cur;
    __syncthreads();
  }
  out[t] = s[cur][t];
}""", lambda: (np.arange(64, dtype=F32) % 5, zeros(64)), 64, 64, expect=_scan_expect),
    Case("shared_histogram", None, """
extern "C" __global__ void shared_histogram(const int* keys, unsigned* counts, int n) {
  __shared__ unsigned bins[16];
  int t = threadIdx.x;
  if (t < 16) bins[t] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + t;
  if (i < n) atomicAdd(&bins[keys[i]], 1u);
  __syncthreads();
  if (t < 16) atomicAdd(&counts[t], bins[t]);
}""", lambda: ((np.arange(200) * 7 % 16).astype(I32), zeros(16, U32), I32(200)), 256, 64,
        expect=_hist_expect),
]


def _warp_sum_expect(args: tuple) -> None:
    x, out = args
    np.testing.assert_allclose(out, x.reshape(-1, 64).sum(axis=1), rtol=1e-6)


CLEAN += [
    Case("warp_reduction_with_syncwarp", None, """
extern "C" __global__ void warp_reduction_with_syncwarp(const float* x, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * 64 + t];
  __syncthreads();
  if (t < 32) {
    float v = s[t] + s[t + 32];
    s[t] = v;
    __syncwarp();
    for (int o = 16; o > 0; o >>= 1) {
      if (t < o) v += s[t + o];
      __syncwarp();
      if (t < o) s[t] = v;
      __syncwarp();
    }
    if (t == 0) out[blockIdx.x] = s[0];
  }
}""", lambda: (np.arange(128, dtype=F32) % 9, zeros(2)), 128, 64, expect=_warp_sum_expect),
    Case("cg_tile_reduction", None, """
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cg_tile_reduction(const float* x, float* out) {
  __shared__ float partial[2];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float v = x[blockIdx.x * 64 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += warp.shfl_down(v, o);
  if (warp.thread_rank() == 0) partial[threadIdx.x / 32] = v;
  block.sync();
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0] + partial[1];
}""", lambda: (np.arange(128, dtype=F32) % 5, zeros(2)), 128, 64, expect=_warp_sum_expect),
]


def source(cases: list[Case]) -> str:
    """One CUDA source holding every case; sets each bug case's ``line`` (its ``// BUG`` line)."""
    text = ""
    for c in cases:
        body = c.cuda.strip("\n") + "\n"
        start = text.count("\n") + 1  # the blank line before the kernel
        for n, ln in enumerate(body.splitlines()):
            if "// BUG" in ln:
                c.line = start + n + 1
        text += "\n" + body
    return text


# Helpers of single tests, compiled with the correct kernels (one build): a partial fill of acc.empty
# memory, and a copy that reads every element (its read is on the line marked // READ).
HELPERS = r"""
extern "C" __global__ void fill_first_half(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) x[i] = 1.0f;
}
extern "C" __global__ void copy_all(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i];  // READ
}
"""

BUG_SOURCE = source(BUGS)
CLEAN_SOURCE = source(CLEAN) + HELPERS
READ_LINE = CLEAN_SOURCE.splitlines().index(next(ln for ln in CLEAN_SOURCE.splitlines() if "// READ" in ln)) + 1
