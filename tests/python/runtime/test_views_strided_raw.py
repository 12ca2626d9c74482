"""``dc.RawKernel(..., strided=)``: a raw kernel that steps through a strided view itself gets the
base's memory from the view's first element, so its writes land in the base (docs/views.md, "Strided
views in raw kernels"); checked against numpy on every backend. Views that step backwards, and
undeclared strided views the kernel may write, are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

# y[i * sy] = 2 * x[i * sx] + 1 for i < n: strides in elements, given by the caller
_RAW = {
    "cpu": r"""
#include <stdint.h>
#include "dotcompute/cpu_kernel_abi.h"
extern "C" void strided_axpy(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  const float* x = *(const float* const*)launch->args[0];
  const int64_t sx = *(const int32_t*)launch->args[1];
  float* y = *(float* const*)launch->args[2];
  const int64_t sy = *(const int32_t*)launch->args[3];
  const uint64_t n = (uint64_t)*(const int32_t*)launch->args[4];
  const uint64_t local = launch->local_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g)
    for (uint64_t i = g * local; i < (g + 1) * local && i < n; ++i) y[i * sy] = 2.0f * x[i * sx] + 1.0f;
}
""",
    "cuda": r"""
extern "C" __global__ void strided_axpy(const float* x, int sx, float* y, int sy, int n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i * sy] = 2.0f * x[i * sx] + 1.0f;
}
""",
    "opencl": r"""
__kernel void strided_axpy(__global const float* x, int sx, __global float* y, int sy, int n) {
  long i = get_global_id(0);
  if (i < n) y[i * sy] = 2.0f * x[i * sx] + 1.0f;
}
""",
    "metal": r"""
#include <metal_stdlib>
using namespace metal;
kernel void strided_axpy(device const float* x [[buffer(0)]], constant int& sx [[buffer(1)]],
                         device float* y [[buffer(2)]], constant int& sy [[buffer(3)]],
                         constant int& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if ((int)i < n) y[i * sy] = 2.0f * x[i * sx] + 1.0f;
}
""",
}


def _kernel(acc: dc.Accelerator, strided: tuple[int, ...] = (0, 2)) -> dc.RawKernel:
    if acc.backend not in _RAW:
        pytest.skip(f"no hand-written kernel for the {acc.backend} backend here")
    return dc.RawKernel(_RAW[acc.backend], "strided_axpy", backend=acc.backend, read_only=(0,), strided=strided)


def test_strided_views_are_the_base_memory(accelerator: dc.Accelerator) -> None:
    k = _kernel(accelerator)
    a = np.arange(30, dtype=np.float32)
    b0 = np.full(20, -1.0, np.float32)
    xa, yb = accelerator.asarray(a), accelerator.asarray(b0)
    # x = a[::3] (10 elements), y = b[::2]: both start at element 0 of their base
    accelerator.launch(k, 10, xa[::3], np.int32(3), yb[::2], np.int32(2), np.int32(10), local_size=10)
    want = b0.copy()
    want[::2] = 2 * a[::3] + 1
    np.testing.assert_array_equal(yb.numpy(), want)


def test_a_column_of_a_matrix(accelerator: dc.Accelerator) -> None:
    k = _kernel(accelerator)
    m0 = np.arange(24, dtype=np.float32).reshape(4, 6)
    m = accelerator.asarray(m0)
    col = np.int32(6)  # one row apart, in elements
    accelerator.launch(k, 4, m[:, 0], col, m[:, 0], col, np.int32(4), local_size=4)  # in place
    want = m0.copy()
    want[:, 0] = 2 * m0[:, 0] + 1
    np.testing.assert_array_equal(m.numpy(), want)


def test_a_view_off_the_start(accelerator: dc.Accelerator) -> None:
    if accelerator.backend == "opencl":
        pytest.skip("an OpenCL sub-buffer must start at CL_DEVICE_MEM_BASE_ADDR_ALIGN (test_views_alias.py)")
    k = _kernel(accelerator)
    b0 = np.zeros(31, np.float32)
    b = accelerator.asarray(b0)
    x = accelerator.asarray(np.arange(10, dtype=np.float32))
    accelerator.launch(k, 10, x, np.int32(1), b[1::3], np.int32(3), np.int32(10), local_size=10)
    want = b0.copy()
    want[1::3] = 2 * np.arange(10, dtype=np.float32) + 1
    np.testing.assert_array_equal(b.numpy(), want)


def test_refusals_name_the_argument(accelerator: dc.Accelerator) -> None:
    b = accelerator.asarray(np.zeros(8, np.float32))
    x = accelerator.asarray(np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"argument 2 is declared strided, but its view steps backwards"):
        accelerator.launch(_kernel(accelerator), 4, x, np.int32(1), b[::-2], np.int32(2), np.int32(4), local_size=4)
    with pytest.raises(ValueError, match=r"argument 2 may be written.*strided view.*strided= if the kernel steps"):
        accelerator.launch(_kernel(accelerator, strided=(0,)), 4, x, np.int32(1), b[::2], np.int32(2), np.int32(4),
                           local_size=4)
    np.testing.assert_array_equal(b.numpy(), np.zeros(8, np.float32))  # nothing ran
