"""Throughput of the CUDA simulator (DOTCOMPUTE_CUDA_SIM=1): the CUDA backend's kernels run on the CPU.

Not a performance target: the simulator exists to run and debug CUDA code without a GPU. Run by
bench/run.py in a subprocess (the simulator is chosen when the runtime starts); prints one JSON line.
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

import dotcompute as dc


@dc.kernel
def vadd(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


TILED = r"""
#define T 16
extern "C" __global__ void mm(const float* A, const float* B, float* C, int n) {
  __shared__ float As[T][T], Bs[T][T];
  int j = blockIdx.x * T + threadIdx.x, i = blockIdx.y * T + threadIdx.y;
  float acc = 0.0f;
  for (int t = 0; t < n / T; ++t) {
    As[threadIdx.y][threadIdx.x] = A[i * n + t * T + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * T + threadIdx.y) * n + j];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[i * n + j] = acc;
}
"""


def best(fn, sync, repeat: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    assert os.environ.get("DOTCOMPUTE_CUDA_SIM") == "1"
    acc = dc.accelerator("cuda:0")
    assert acc.info.get("simulated") is True
    out = {}
    n = 1 << 22
    a, b, c = acc.asarray(np.ones(n, np.float32)), acc.asarray(np.ones(n, np.float32)), acc.empty((n,), np.float32)
    s = best(lambda: acc.launch(vadd, n, a, b, c), acc.synchronize, 5)
    out["vadd 4M GB/s"] = 3 * 4 * n / s / 1e9
    m = 256
    k = dc.RawKernel(TILED, "mm", backend="cuda")
    A, B, C = acc.asarray(np.ones((m, m), np.float32)), acc.asarray(np.ones((m, m), np.float32)), acc.empty((m, m))
    s = best(lambda: acc.launch(k, (m, m), A, B, C, np.int32(m), local_size=(16, 16)), acc.synchronize, 3)
    out["tiled matmul 256 (barriers) GFLOP/s"] = 2 * m**3 / s / 1e9
    print(json.dumps(out))


if __name__ == "__main__":
    main()
