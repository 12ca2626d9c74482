"""Debug-mode bounds checks on the bugs people actually write: a histogram bin past the end,
a stencil reading a[-1], swapped row/column extents, and an out-of-range access after a barrier."""

import numpy as np
import pytest
from realworld_helpers import line_of

import dotcompute as dc


@dc.kernel(debug=True)
def hist_off_by_one(x: dc.Buffer[dc.float32], hist: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        b = dc.int64(x[i] * hist.shape[0])      # x == 1.0 lands one past the last bin
        dc.atomic_add(hist, b, 1)  # DBG-HIST


def test_histogram_bin_past_the_end(accelerator):
    x = np.array([0.0, 0.5, 0.99, 1.0], np.float32)
    hist = np.zeros(4, np.int32)
    with pytest.raises(dc.KernelIndexError) as ei:
        dc.launch(hist_off_by_one, 4, x, hist, accelerator=accelerator)
    assert ei.value.lineno == line_of(__file__, "# DBG-HIST")
    assert "hist" in ei.value.buffer and ei.value.index == 4


@dc.kernel(debug=True)
def left_diff(a: dc.Buffer[dc.float32], d: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        d[i] = a[i] - a[i - 1]  # DBG-NEG


def test_runtime_negative_index_is_not_wrapped(accelerator):
    a = np.arange(5, dtype=np.float32)
    d = np.zeros(5, np.float32)
    with pytest.raises(dc.KernelIndexError) as ei:
        dc.launch(left_diff, 5, a, d, accelerator=accelerator)
    assert ei.value.lineno == line_of(__file__, "# DBG-NEG")
    assert "a" in ei.value.buffer and ei.value.index == -1


@dc.kernel(debug=True)
def swapped_extents(m: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < m.shape[1] and j < m.shape[0]:     # bug: the extents are swapped
        out[i, j] = m[i, j]  # DBG-SWAP


def test_per_axis_check_catches_swapped_extents(accelerator):
    m = np.ones((2, 6), np.float32)   # m[i, j] for i < 6 reads rows 2..5 that do not exist
    out = np.zeros((6, 2), np.float32)
    with pytest.raises(dc.KernelIndexError) as ei:
        dc.launch(swapped_extents, (6, 2), m, out, accelerator=accelerator)
    assert ei.value.lineno == line_of(__file__, "# DBG-SWAP")
    assert "m" in ei.value.buffer


@dc.kernel(debug=True)
def reverse_blocks(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    t = dc.shared((16,), dc.float32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    t[l] = x[g]
    dc.barrier()
    out[g + 16] = t[15 - l]  # DBG-BARRIER


def test_out_of_bounds_after_a_barrier(accelerator):
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    with pytest.raises(dc.KernelIndexError) as ei:
        dc.launch(reverse_blocks, 32, x, out, local_size=16, accelerator=accelerator)
    assert ei.value.lineno == line_of(__file__, "# DBG-BARRIER")
    assert "out" in ei.value.buffer and 32 <= ei.value.index < 48
    # the in-range half was still written, the out-of-range stores were skipped
    np.testing.assert_array_equal(out[16:], x[:16][::-1])


@dc.kernel(debug=True)
def clean_stencil(a: dc.Buffer[dc.float32], d: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    n = a.shape[0]
    if 0 < i < n - 1:
        d[i] = a[i + 1] - a[i - 1]


def test_debug_kernel_without_errors_on_buffers_and_stream(accelerator):
    a = accelerator.asarray(np.arange(10, dtype=np.float32) ** 2)
    d = accelerator.zeros((10,), np.float32)
    s = accelerator.stream()
    dc.launch(clean_stencil, 10, a, d, stream=s)
    s.synchronize()
    ref = np.zeros(10, np.float32)
    x = np.arange(10, dtype=np.float32) ** 2
    ref[1:-1] = x[2:] - x[:-2]
    np.testing.assert_array_equal(d.numpy(), ref)


def test_debug_error_on_a_stream_launch(accelerator):
    a = accelerator.asarray(np.arange(5, dtype=np.float32))
    d = accelerator.zeros((5,), np.float32)
    s = accelerator.stream()
    with pytest.raises(dc.KernelIndexError):
        dc.launch(left_diff, 5, a, d, stream=s)   # debug launches are synchronous
        s.synchronize()


RAW_OPENCL = """
__kernel void raw_saxpy(float a, __global const float* x, __global float* y, long n) {
    long i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def test_raw_opencl_kernel(accelerator):
    if accelerator.backend != "opencl":
        pytest.skip("an OpenCL C kernel")
    raw = dc.RawKernel(RAW_OPENCL, "raw_saxpy", backend="opencl")
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    bx, by = accelerator.asarray(x), accelerator.asarray(y)
    dc.launch(raw, 100, np.float32(2.0), bx, by, 100, accelerator=accelerator)  # Python int -> int64 (long)
    accelerator.synchronize()
    np.testing.assert_array_equal(by.numpy(), 2 * x + 1)


@dc.kernel(debug=True)
def row_sums_dbg(m: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32]):
    r = dc.global_id(0)
    if r < m.shape[0]:
        s: dc.float32 = 0.0
        for c in range(m.shape[1]):
            s += m[r, c]
        out[r] = s


@dc.kernel(debug=True)
def scale_dbg(src: dc.Buffer[dc.float32], dst: dc.Buffer[dc.float32], s: dc.float32):
    i = dc.global_id(0)
    if i < dst.shape[0]:
        dst[i] = src[i] * s


def test_debug_kernel_noncontiguous_input_works_or_raises_clearly(accelerator):
    # the same argument handling as without debug mode: correct, or a documented error naming 'm'
    view = np.arange(60, dtype=np.float32).reshape(6, 10).T
    out = np.zeros(10, np.float32)
    try:
        dc.launch(row_sums_dbg, 10, view, out, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert "m" in str(e) or "contiguous" in str(e), str(e)
    else:
        np.testing.assert_array_equal(out, view.sum(1))


def test_debug_kernel_strided_output_works_or_raises_clearly(accelerator):
    big = np.zeros(16, np.float32)
    try:
        dc.launch(scale_dbg, 8, np.arange(8, dtype=np.float32), big[::2], 1.0, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert "dst" in str(e) or "contiguous" in str(e), str(e)
    else:
        np.testing.assert_array_equal(big[::2], np.arange(8))
        assert (big[1::2] == 0).all()


def test_debug_kernel_big_endian_input_names_parameter(accelerator):
    be = np.arange(10, dtype=">f4")
    out = np.zeros(10, np.float32)
    try:
        dc.launch(scale_dbg, 10, be, out, 2.0, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert "src" in str(e), str(e)
    else:
        np.testing.assert_array_equal(out, np.arange(10) * 2.0)
