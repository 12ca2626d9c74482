"""Views alias their buffer in launches (docs/views.md): ``b[k:]``, ``b[i:j]`` and row blocks of a
2-d buffer reach @dc.kernel and dc.RawKernel launches as a region of the same allocation (a pointer
offset on cpu and cuda, an OpenCL sub-buffer, a Metal buffer offset), so writes land in ``b``;
strided views the kernel may write, and OpenCL views misaligned for sub-buffers, are refused with
an error naming the parameter, and nothing is written. ``b.reshape`` of a contiguous buffer is the
same memory too."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

# dst[i] = 2 * src[i] + 1 for i < n, by hand in each backend's language
_RAW = {
    "cpu": r"""
#include <stdint.h>
#include "dotcompute/cpu_kernel_abi.h"
extern "C" void twice_plus_one(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  const float* src = *(const float* const*)launch->args[0];
  float* dst = *(float* const*)launch->args[1];
  const uint64_t n = (uint64_t)*(const int32_t*)launch->args[2];
  const uint64_t local = launch->local_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g)
    for (uint64_t i = g * local; i < (g + 1) * local && i < n; ++i) dst[i] = 2.0f * src[i] + 1.0f;
}
""",
    "cuda": r"""
extern "C" __global__ void twice_plus_one(const float* src, float* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = 2.0f * src[i] + 1.0f;
}
""",
    "opencl": r"""
__kernel void twice_plus_one(__global const float* src, __global float* dst, int n) {
  int i = get_global_id(0);
  if (i < n) dst[i] = 2.0f * src[i] + 1.0f;
}
""",
    "metal": r"""
#include <metal_stdlib>
using namespace metal;
kernel void twice_plus_one(device const float* src [[buffer(0)]], device float* dst [[buffer(1)]],
                           constant int& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if ((int)i < n) dst[i] = 2.0f * src[i] + 1.0f;
}
""",
}
_raw_kernels: dict[tuple[str, bool], dc.RawKernel] = {}


def _raw(acc: dc.Accelerator, read_only_src: bool = False) -> dc.RawKernel:
    if acc.backend not in _RAW:
        pytest.skip(f"no hand-written kernel for the {acc.backend} backend here")
    key = (acc.backend, read_only_src)
    if key not in _raw_kernels:
        _raw_kernels[key] = dc.RawKernel(_RAW[acc.backend], "twice_plus_one", backend=acc.backend,
                                         read_only=(0,) if read_only_src else ())
    return _raw_kernels[key]


@dc.kernel
def _twice(src: dc.Buffer[dc.float32], dst: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < dst.shape[0]:
        dst[i] = 2.0 * src[i] + 1.0


@dc.kernel
def _rows_plus(m: dc.Buffer[dc.float32, 2], v: dc.float32):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < m.shape[0] and j < m.shape[1]:
        m[i, j] = m[i, j] + v


def _aligned(acc: dc.Accelerator, itemsize: int = 4) -> int:
    """An element offset every backend can pass as a view (OpenCL: CL_DEVICE_MEM_BASE_ADDR_ALIGN)."""
    align = int(acc.info.get("mem_base_addr_align_bytes", 0) or 0) if acc.backend == "opencl" else 0
    return max(align // itemsize, 32)


def test_raw_kernel_writes_through_a_tail_view(accelerator: dc.Accelerator) -> None:
    k = _aligned(accelerator)
    n = 3 * k
    src = accelerator.asarray(np.arange(n, dtype=np.float32))
    b = accelerator.zeros((n,), np.float32)
    b.numpy()  # a host copy exists now: the launch's writes must make it stale
    dc.launch(_raw(accelerator), n - k, src[k:], b[k:], np.int32(n - k), accelerator=accelerator)
    want = np.zeros(n, np.float32)
    want[k:] = 2 * np.arange(k, n, dtype=np.float32) + 1
    np.testing.assert_array_equal(b.numpy(), want)


def test_raw_kernel_with_two_regions_of_one_buffer(accelerator: dc.Accelerator) -> None:
    k = _aligned(accelerator)
    host = np.arange(3 * k, dtype=np.float32)
    b = accelerator.asarray(host)
    dc.launch(_raw(accelerator), k, b[:k], b[2 * k:], np.int32(k), accelerator=accelerator)
    want = host.copy()
    want[2 * k:] = 2 * host[:k] + 1
    np.testing.assert_array_equal(b.numpy(), want)


def test_kernel_writes_through_a_bounded_view(accelerator: dc.Accelerator) -> None:
    k = _aligned(accelerator)
    src = accelerator.asarray(np.full(k, 3.0, np.float32))
    b = accelerator.zeros((3 * k,), np.float32)
    dc.launch(_twice, k, src, b[k:2 * k], accelerator=accelerator)
    want = np.zeros(3 * k, np.float32)
    want[k:2 * k] = 7.0
    np.testing.assert_array_equal(b.numpy(), want)


def test_kernel_writes_through_a_block_of_rows(accelerator: dc.Accelerator) -> None:
    cols = _aligned(accelerator)  # each row starts on an aligned byte offset
    m = accelerator.zeros((4, cols), np.float32)
    dc.launch(_rows_plus, (2, cols), m[1:3], 5.0, accelerator=accelerator)
    want = np.zeros((4, cols), np.float32)
    want[1:3] = 5.0
    np.testing.assert_array_equal(m.numpy(), want)


def test_strided_view_is_refused_where_it_would_be_written(accelerator: dc.Accelerator) -> None:
    host = np.arange(16, dtype=np.float32)
    b = accelerator.asarray(host)
    src = accelerator.asarray(np.ones(8, np.float32))
    with pytest.raises(ValueError, match="'dst' may be written.*strided view"):
        dc.launch(_twice, 8, src, b[::2], accelerator=accelerator)
    with pytest.raises(ValueError, match="argument 1 may be written.*strided view"):
        dc.launch(_raw(accelerator), 8, src, b[::2], np.int32(8), accelerator=accelerator)
    np.testing.assert_array_equal(b.numpy(), host)  # nothing ran


def test_strided_view_that_is_only_read_passes_its_elements(accelerator: dc.Accelerator) -> None:
    host = np.arange(16, dtype=np.float32)
    b = accelerator.asarray(host)
    out = accelerator.zeros((8,), np.float32)
    dc.launch(_twice, 8, b[1::2], out, accelerator=accelerator)
    np.testing.assert_array_equal(out.numpy(), 2 * host[1::2] + 1)
    out2 = accelerator.zeros((8,), np.float32)
    dc.launch(_raw(accelerator, read_only_src=True), 8, b[::2], out2, np.int32(8), accelerator=accelerator)
    np.testing.assert_array_equal(out2.numpy(), 2 * host[::2] + 1)


def test_transpose_view(accelerator: dc.Accelerator) -> None:
    k = _aligned(accelerator)
    host = np.arange(3 * k, dtype=np.float32).reshape(3, k)
    m = accelerator.asarray(host)
    with pytest.raises(ValueError, match="'m' may be written.*strided view"):
        dc.launch(_rows_plus, (k, 3), m.T, 1.0, accelerator=accelerator)
    np.testing.assert_array_equal(m.numpy(), host)
    np.testing.assert_array_equal(m.T.numpy(), host.T)
    np.testing.assert_array_equal((m.T * 2.0).numpy(), host.T * 2.0)
    # the transpose of one row (extents k and 1) is one contiguous run again: it aliases
    dc.launch(_rows_plus, (k, 1), m[1:2].T, 10.0, accelerator=accelerator)
    want = host.copy()
    want[1] += 10.0
    np.testing.assert_array_equal(m.numpy(), want)


def test_operations_on_views(accelerator: dc.Accelerator) -> None:
    k = _aligned(accelerator)
    host = np.arange(2 * k, dtype=np.float32)[::-1].copy()
    b = accelerator.asarray(host)
    np.testing.assert_array_equal(dc.sort(b[k:]).numpy(), np.sort(host[k:]))
    np.testing.assert_array_equal((b[k:] * 2.0 + 1.0).numpy(), host[k:] * 2 + 1)
    assert float(dc.sum(b[::2])) == pytest.approx(float(host[::2].sum()))
    b[k:] += 1.0  # written through the view
    want = host.copy()
    want[k:] += 1
    np.testing.assert_array_equal(b.numpy(), want)


def test_contiguous_view_is_the_base_memory_outside_launches(accelerator: dc.Accelerator) -> None:
    host = np.arange(64, dtype=np.float32)
    b = accelerator.asarray(host)
    v = b[8:24]
    if accelerator.backend == "opencl":  # CLBlast/clFFT take whole cl_mem handles: a copy (docs/views.md)
        assert not v._native.is_view
    else:
        assert v._native.is_view and v._native.byte_offset == 32
    if accelerator.host_visible_memory:  # numpy reads the base's memory in place
        assert np.shares_memory(np.asarray(v), np.asarray(b))
    np.testing.assert_array_equal(v.numpy(), host[8:24])
    assert not b[::2]._native.is_view  # strided: its elements, copied
    if accelerator.backend == "cpu":  # DLPack shares the view's memory, so writes reach b
        shared = np.from_dlpack(v)
        shared[0] = 99.0
        assert b.numpy()[8] == 99.0 and b.numpy()[7] == 7.0


def test_reshape_is_the_same_memory(accelerator: dc.Accelerator) -> None:
    k = _aligned(accelerator)
    host = np.arange(3 * k, dtype=np.float32)
    b = accelerator.asarray(host)
    r = b.reshape(3, k)
    assert r._native.is_view and r.shape == (3, k)
    dc.launch(_rows_plus, (1, k), r[1:2], 5.0, accelerator=accelerator)  # a kernel writes the alias
    r[2] = -1.0  # so does an assignment
    want = host.copy()
    want[k:2 * k] += 5
    want[2 * k:] = -1
    np.testing.assert_array_equal(b.numpy(), want)
    # pending expressions that read one of the two run before the other is written
    before = b * 2.0
    r[0, 0] = 42.0
    np.testing.assert_array_equal(before.numpy(), want * 2)
    want[0] = 42.0
    later = r + 1.0
    b[...] = 0.0
    np.testing.assert_array_equal(later.numpy(), want.reshape(3, k) + 1)
    # a strided view cannot be reshaped in place: a copy, as in numpy
    m = accelerator.asarray(host.reshape(3, k))
    t = m.T.reshape(3 * k)
    assert not t._native.is_view
    np.testing.assert_array_equal(t.numpy(), host.reshape(3, k).T.reshape(-1))
    # a view at an offset: the same memory where handles allow it (on OpenCL a copy, docs/views.md)
    tail = m[1:].reshape(2 * k)
    if accelerator.backend == "opencl":
        assert not tail._native.is_view
    else:
        tail[...] = 7.0
        np.testing.assert_array_equal(m.numpy()[1:], np.full((2, k), 7.0, np.float32))


def test_misaligned_opencl_view_is_refused(accelerator: dc.Accelerator) -> None:
    if accelerator.backend != "opencl":
        pytest.skip("sub-buffer alignment is OpenCL's rule")
    align = int(accelerator.info["mem_base_addr_align_bytes"])
    if align <= 4:
        pytest.skip(f"{accelerator.id} aligns sub-buffers to {align} bytes: every float32 view fits")
    host = np.zeros(64, np.float32)
    b = accelerator.asarray(host)
    src = accelerator.asarray(np.ones(4, np.float32))
    with pytest.raises(dc.LaunchError, match=r"'dst' is a view starting 4 bytes.*CL_DEVICE_MEM_BASE_ADDR_ALIGN"):
        dc.launch(_twice, 4, src, b[1:5], accelerator=accelerator)
    with pytest.raises(dc.LaunchError, match=r"argument 1 is a view starting 4 bytes"):
        dc.launch(_raw(accelerator), 4, src, b[1:5], np.int32(4), accelerator=accelerator)
    np.testing.assert_array_equal(b.numpy(), host)
    # a kernel that only reads the misaligned view gets its elements (nothing written can be lost)
    b[1:5] = np.arange(4, dtype=np.float32)
    out = accelerator.zeros((4,), np.float32)
    dc.launch(_twice, 4, b[1:5], out, accelerator=accelerator)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(4) + 1)


def test_native_views_check_their_region(accelerator: dc.Accelerator) -> None:
    b = accelerator.asarray(np.arange(64, dtype=np.float32))
    v = b._native.view(64, (32,))  # elements 16..47
    assert v.is_view and v.byte_offset == 64 and v.shape == (32,)
    w = v.view(64, (4,))  # a view of a view is a view of the root: elements 32..35
    assert w.byte_offset == 128
    out = np.empty(4, np.float32)
    w.copy_to_host(out)
    np.testing.assert_array_equal(out, [32, 33, 34, 35])
    w.copy_from_host(np.full(4, -1.0, np.float32))
    assert b.numpy()[32:36].tolist() == [-1.0] * 4 and b.numpy()[31] == 31 and b.numpy()[36] == 36
    with pytest.raises(dc.KernelTypeError, match="does not fit"):
        b._native.view(128, (64,))
    with pytest.raises(dc.KernelTypeError, match="does not fit in its buffer of 128 bytes"):
        v.view(96, (16,))  # inside the root, not inside the view
    with pytest.raises(dc.KernelTypeError, match="start on an element"):
        b._native.view(2, (4,))
