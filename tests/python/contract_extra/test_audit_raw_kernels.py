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


# The top of a typical .cu file: runtime and C headers NVRTC cannot open, a template helper, a struct,
# vector types, a 2-D launch.
CU_WITH_HEADERS = r"""#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#include <stdio.h>
#include <stdint.h>
#include <climits>
#include <cfloat>
#include <math.h>
#include <assert.h>

template <typename T>
__device__ T square(T v) { return v * v; }

struct Shape { int w; int h; };

__global__ void magnitude(const float4* __restrict__ in, float* __restrict__ out, float scale, int w, int h)
{
    Shape s; s.w = w; s.h = h;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= s.w || y >= s.h) return;
    float4 v = __ldg(&in[y * s.w + x]);
    out[y * s.w + x] = sqrtf(square(v.x) + square(v.y) + square(v.z)) * scale + fminf(v.w, 1.0f);
}

__global__ void constants(float* f, uint32_t* u, int64_t* i)
{
    assert(threadIdx.x < 1024);
    if (threadIdx.x == 0) {
        f[0] = (float)M_PI;
        f[1] = FLT_MAX;
        f[2] = isinf(INFINITY) ? 1.0f : 0.0f;
        u[0] = UINT32_MAX;
        i[0] = INT64_MAX;
        i[1] = INT_MIN;
    }
}
"""


def test_raw_cuda_file_with_its_includes(accelerator):
    if accelerator.backend != "cuda":
        pytest.skip("a CUDA C++ kernel")
    w, h = 37, 23
    img = np.random.default_rng(3).random((h, w, 4), dtype=np.float32)
    out = np.zeros((h, w), np.float32)
    k = dc.RawKernel(CU_WITH_HEADERS, "magnitude", backend="cuda")
    dc.launch(k, (48, 32), img, out, np.float32(2.0), np.int32(w), np.int32(h), local_size=(16, 16),
              accelerator=accelerator)  # global_size[0] is CUDA's x
    want = np.sqrt((img[..., :3] ** 2).sum(-1)) * 2.0 + np.minimum(img[..., 3], 1.0)
    np.testing.assert_allclose(out, want, rtol=1e-5)

    f, u, i = np.zeros(3, np.float32), np.zeros(1, np.uint32), np.zeros(2, np.int64)
    dc.launch(dc.RawKernel(CU_WITH_HEADERS, "constants", backend="cuda"), 32, f, u, i, accelerator=accelerator)
    assert f[0] == np.float32(np.pi) and f[1] == np.finfo(np.float32).max and f[2] == 1.0
    assert u[0] == 2**32 - 1 and i[0] == 2**63 - 1 and i[1] == -(2**31)


def test_raw_cuda_compile_errors_keep_the_users_line_numbers(accelerator):
    if accelerator.backend != "cuda":
        pytest.skip("a CUDA C++ kernel")
    lines = CU_WITH_HEADERS.splitlines()
    at = next(n for n, text in enumerate(lines) if "assert(threadIdx.x" in text)
    lines[at] += " undefined_name_here;"
    bad = dc.RawKernel("\n".join(lines), "constants", backend="cuda")
    with pytest.raises(dc.CompilationError) as info:
        dc.launch(bad, 1, np.zeros(3, np.float32), np.zeros(1, np.uint32), np.zeros(2, np.int64),
                  accelerator=accelerator)
    assert f"({at + 1}): error" in info.value.log  # the line in the user's source


def test_python_scalars_take_the_declared_parameter_types(accelerator):
    # `int n, float a` given Python 100 and 2.0 (as most users write it) instead of np.int32/np.float32
    src = _saxpy_source(accelerator.backend)
    if accelerator.backend not in ("cuda", "opencl"):
        pytest.skip("typed parameters are read from CUDA C++ / OpenCL C source")
    k = dc.RawKernel(src, "saxpy_gs", backend=accelerator.backend)
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    dc.launch(k, 256, n, 2.0, x, y, local_size=64, accelerator=accelerator)
    np.testing.assert_allclose(y, 2 * x + 1)
    with pytest.raises(dc.KernelTypeError, match="argument 0"):
        dc.launch(k, 256, 2.5, 2.0, x, y, accelerator=accelerator)  # a float for `int n`
    with pytest.raises(dc.KernelTypeError, match="argument 0"):
        dc.launch(k, 256, 2**40, 2.0, x, y, accelerator=accelerator)  # does not fit an int
    np.testing.assert_allclose(y, 2 * x + 1)  # nothing ran


def test_one_raw_kernel_from_several_threads(accelerator):
    import threading

    src = _saxpy_source(accelerator.backend)
    if not src:
        pytest.skip(f"no raw source written for {accelerator.backend}")
    k = dc.RawKernel(src, "saxpy_gs", backend=accelerator.backend)  # first compile races too
    n = 3000
    x = np.arange(n, dtype=np.float32)
    errors: list[BaseException] = []
    sums: list[float] = []

    def go():
        try:
            for _ in range(5):
                y = np.ones(n, np.float32)
                dc.launch(k, 1024, np.int32(n), np.float32(2.0), x, y, local_size=32, accelerator=accelerator)
                sums.append(float(y.sum(dtype=np.float64)))
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sums == [float((2 * x + 1).sum(dtype=np.float64))] * 20


CU_FAULTS = r"""#include <assert.h>
__global__ void asserts(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i < 3);
  if (i < n) a[i] = 1.0f;
}
__global__ void traps(float* a) { __trap(); }
__global__ void fine(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2.0f; }
"""


def _fault_then_recover(accelerator, name, *args):
    with pytest.raises(dc.LaunchError) as info:
        dc.launch(dc.RawKernel(CU_FAULTS, name, backend="cuda"), 64, *args, accelerator=accelerator)
        accelerator.synchronize()
    assert info.value.transient is False
    a = np.zeros(8, np.float32)  # the device still works afterwards
    dc.launch(dc.RawKernel(CU_FAULTS, "fine", backend="cuda"), 8, a, 8, accelerator=accelerator)
    assert (a == 2).all()


def test_a_trapping_kernel_is_a_launch_error_and_the_device_recovers(accelerator):
    if accelerator.backend != "cuda":
        pytest.skip("a CUDA C++ kernel")
    _fault_then_recover(accelerator, "traps", np.zeros(4, np.float32))


def test_a_failed_device_assert_is_a_launch_error(accelerator):
    if accelerator.backend != "cuda":
        pytest.skip("a CUDA C++ kernel")
    _fault_then_recover(accelerator, "asserts", np.zeros(64, np.float32), 64)


@pytest.mark.parametrize("src", [
    'extern "C" {\n__global__ void k(float* a) { a[threadIdx.x] = 3.0f; }\n}\n',
    "namespace mine {\n__global__ void k(float* a) { a[threadIdx.x] = 3.0f; }\n}\n",
    "__global__ void k(float* a);\n__device__ float three() { return 3.0f; }\n"
    "__global__ void k(float* a) { a[threadIdx.x] = three(); }\n",
    "void __global__ k(float* a) { a[threadIdx.x] = 3.0f; }\n",
    "__global__ void __launch_bounds__(64, 1) k(float* a) { a[threadIdx.x] = 3.0f; }\n",
], ids=["extern-c-block", "namespace", "forward-declared", "void-first", "launch-bounds"])
def test_raw_cuda_declaration_styles(accelerator, src):
    if accelerator.backend != "cuda":
        pytest.skip("a CUDA C++ kernel")
    a = np.zeros(4, np.float32)
    dc.launch(dc.RawKernel(src, "k", backend="cuda"), 4, a, accelerator=accelerator)
    assert (a == 3).all()
