"""Kernels whose GPU-model counters are known by construction, run on the simulated cuda:0 with
counters on (test_gpu_counters.py starts this file with DOTCOMPUTE_CUDA_SIM=1 and
DOTCOMPUTE_CUDA_SIM_COUNTERS=1, which are read when the runtime starts). Prints one JSON object:
each case's counters as ``KernelCounters.as_dict()`` beside the raw counts."""

from __future__ import annotations

import json
import sys

import numpy as np

import dotcompute as dc

RAW = r"""
extern "C" __global__ void copy_strided(const float* a, float* b, int stride, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i * stride];
}

// every thread writes then reads word t * (32 + pad): pad 0 puts all 32 lanes of a warp in bank 0
extern "C" __global__ void shared_stride(float* out, int pad) {
  __shared__ float s[32 * 33];
  int t = threadIdx.x;
  s[t * (32 + pad)] = (float)t;
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[t * (32 + pad)];
}

// a shuffle reduction by `active` lanes of each 32-thread block (the others skip it), then one
// __syncthreads that the threads at or past `waiting` never reach (they have returned)
extern "C" __global__ void shuffle_then_barrier(float* out, int active, int waiting) {
  int t = threadIdx.x;
  float v = (float)t;
  if (t < active) {
    unsigned mask = active == 32 ? 0xffffffffu : ((1u << active) - 1u);
    for (int d = 1; d < active; d *= 2) v += __shfl_xor_sync(mask, v, d);
  }
  if (t >= waiting) return;
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = v;
}

extern "C" __global__ void odd_lanes(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (i % 2) == 1) out[i] = 1.0f;
}
"""


@dc.kernel
def lang_copy(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i]


@dc.kernel
def lang_odd(out: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    if i < out.shape[0] and i % 2 == 1:
        out[i] = 2.0


def main() -> None:
    acc = dc.accelerator("cuda:0")
    if not acc.info.get("simulated"):
        print(json.dumps({"skip": "cuda:0 is not the CUDA simulator"}))
        return
    n = 1024
    a = acc.asarray(np.arange(n * 32, dtype=np.float32))
    b = acc.zeros((n,), np.float32)
    out = acc.zeros((64,), np.float32)
    cases: dict[str, object] = {}

    def run(name: str, launch) -> None:
        with dc.profile() as prof:
            launch()
        found = prof.gpu_counters
        cases[name] = [dict(k.as_dict(), raw=k.raw) for k in found]

    copy = dc.RawKernel(RAW, "copy_strided", backend="cuda")
    shared = dc.RawKernel(RAW, "shared_stride", backend="cuda")
    odd = dc.RawKernel(RAW, "odd_lanes", backend="cuda")
    collective = dc.RawKernel(RAW, "shuffle_then_barrier", backend="cuda")
    run("coalesced", lambda: acc.launch(copy, n, a, b, np.int32(1), np.int32(n), local_size=128))
    run("stride32", lambda: acc.launch(copy, n, a, b, np.int32(32), np.int32(n), local_size=128))
    run("bank32", lambda: acc.launch(shared, 64, out, np.int32(0), local_size=32))
    run("padded", lambda: acc.launch(shared, 64, out, np.int32(1), local_size=32))
    run("divergent", lambda: acc.launch(odd, 64, out, np.int32(64), local_size=32))
    run("shuffle_full", lambda: acc.launch(collective, 64, out, np.int32(32), np.int32(32), local_size=32))
    run("shuffle_half", lambda: acc.launch(collective, 64, out, np.int32(16), np.int32(24), local_size=32))
    run("lang_copy", lambda: acc.launch(lang_copy, n, a, b, local_size=128))
    run("lang_divergent", lambda: acc.launch(lang_odd, 64, out, local_size=32))
    assert np.array_equal(b.numpy(), np.arange(n, dtype=np.float32))  # the counted kernels still compute
    json.dump(cases, sys.stdout)


if __name__ == "__main__":
    main()
