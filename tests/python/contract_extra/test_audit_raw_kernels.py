"""Audit: raw kernels as an outsider writes them (DESIGN.md, "Raw kernels" and the exceptions).

A CUDA kernel copied unchanged from a ``.cu`` file (device helper, ``#define``, ``__shared__``,
``__syncthreads``, a warp shuffle, ``atomicAdd``, a grid-stride loop) must run whether or not it is
declared ``extern "C"``; OpenCL C and CPU C++ raw kernels beside it. One test body per accelerator:
each backend gets the source written for it.
"""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

# As it would appear in a .cu file: no extern "C", a macro, a __device__ helper, launch bounds.
CU_FILE = r"""
#define TILE 128

__device__ __forceinline__ float warp_reduce(float v) {
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffff, v, off);
    return v;
}

// a "block_sum(" in a comment must not confuse anything
__global__ void __launch_bounds__(TILE) block_sum(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[TILE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float s = 0.0f;
    if (i < n) s = in[i];
    if (i + blockDim.x < n) s += in[i + blockDim.x];
    tile[tid] = s;
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 32; k >>= 1) {
        if (tid < k) tile[tid] += tile[tid + k];
        __syncthreads();
    }
    if (tid < 32) {
        float v = warp_reduce(tile[tid] + tile[tid + 32]);
        if (tid == 0) atomicAdd(out, v);
    }
}

__global__ void saxpy_gs(int n, float a, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
"""

CL_SAXPY = """
__kernel void saxpy_gs(int n, float a, __global const float* x, __global float* y) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        y[i] = a * x[i] + y[i];
}
"""

CPU_SAXPY = r"""
#include <stdint.h>
#include "dotcompute/cpu_kernel_abi.h"
extern "C" void saxpy_gs(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  const int n = *(const int*)launch->args[0];
  const float a = *(const float*)launch->args[1];
  const float* x = *(const float* const*)launch->args[2];
  float* y = *(float* const*)launch->args[3];
  const uint64_t local = launch->local_size[0], total = launch->global_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g)  // a grid-stride loop like the CUDA one
    for (uint64_t t = g * local; t < (g + 1) * local && t < total; ++t)
      for (uint64_t i = t; i < (uint64_t)n; i += total) y[i] = a * x[i] + y[i];
}
"""


def _saxpy_source(backend: str) -> str:
    return {"cuda": CU_FILE, "opencl": CL_SAXPY, "cpu": CPU_SAXPY}.get(backend, "")


@pytest.mark.parametrize("extern_c", [False, True], ids=["cxx-linkage", "extern-c"])
def test_raw_saxpy_from_source_file(accelerator, extern_c):
    src = _saxpy_source(accelerator.backend)
    if not src:
        pytest.skip(f"no raw source written for {accelerator.backend}")
    if extern_c and accelerator.backend != "cuda":
        pytest.skip("only CUDA C++ has the extern \"C\" question")
    if extern_c:
        src = src.replace("__global__ void", 'extern "C" __global__ void')
    n = 10_000
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    k = dc.RawKernel(src, "saxpy_gs", backend=accelerator.backend)
    # numpy arrays in, results back (grid smaller than n: the grid-stride loop covers the rest)
    dc.launch(k, 64 * 32, np.int32(n), np.float32(2.0), x, y, local_size=32, accelerator=accelerator)
    np.testing.assert_allclose(y, 2 * x + 1, rtol=1e-6)
    # device buffers, asynchronous
    dx, dy = accelerator.asarray(x), accelerator.asarray(np.zeros(n, np.float32))
    accelerator.launch(k, 4096, np.int32(n), np.float32(-1.0), dx, dy, local_size=64)
    accelerator.synchronize()
    np.testing.assert_allclose(dy.numpy(), -x, rtol=1e-6)


@pytest.mark.parametrize("extern_c", [False, True], ids=["cxx-linkage", "extern-c"])
def test_raw_cuda_block_reduction_with_shared_memory_and_shuffles(accelerator, extern_c):
    if accelerator.backend != "cuda":
        pytest.skip("a CUDA C++ kernel")
    src = CU_FILE.replace("__global__ void", 'extern "C" __global__ void') if extern_c else CU_FILE
    n = 50_000
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    out = np.zeros(1, np.float32)
    k = dc.RawKernel(src, "block_sum", backend="cuda")
    blocks = (n + 255) // 256  # each block of 128 threads sums 256 elements
    dc.launch(k, blocks * 128, x, out, np.int32(n), local_size=128, accelerator=accelerator)
    assert out[0] == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-4)


def test_raw_cuda_wrong_name_and_compile_error(accelerator):
    if accelerator.backend != "cuda":
        pytest.skip("a CUDA C++ kernel")
    k = dc.RawKernel(CU_FILE, "no_such_kernel", backend="cuda")
    with pytest.raises(dc.DotComputeError, match="no_such_kernel"):
        dc.launch(k, 1, np.zeros(1, np.float32), accelerator=accelerator)
    bad = dc.RawKernel("__global__ void broken(float* a) { a[0] = undeclared_thing; }", "broken", backend="cuda")
    with pytest.raises(dc.CompilationError) as info:
        dc.launch(bad, 1, np.zeros(1, np.float32), accelerator=accelerator)
    assert "undeclared_thing" in info.value.log
    assert "undeclared_thing" in info.value.source
    assert info.value.transient is False
    assert isinstance(info.value, dc.DotComputeError)


def test_raw_kernel_on_the_wrong_backend_is_refused(accelerator):
    other = "opencl" if accelerator.backend != "opencl" else "cuda"
    k = dc.RawKernel(_saxpy_source(other) or CL_SAXPY, "saxpy_gs", backend=other)
    with pytest.raises(dc.LaunchError):
        dc.launch(k, 8, np.int32(8), np.float32(1.0), np.zeros(8, np.float32), np.zeros(8, np.float32),
                  accelerator=accelerator)
