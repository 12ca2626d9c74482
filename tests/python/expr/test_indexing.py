"""Indexing, views, writes, in-place operators, astype/reshape/T."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def test_element_reads(accelerator: dc.Accelerator) -> None:
    h = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = accelerator.asarray(h)
    assert b[1, 2] == 6 and b[-1, -1] == 11
    assert isinstance(b[0, 0], np.int32)
    v = accelerator.asarray(np.array([1.5, 2.5], np.float32))
    assert v[1] == np.float32(2.5) and v[-2] == np.float32(1.5)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        b[3, 0]
    with pytest.raises(IndexError, match="too many indices"):
        b[0, 0, 0]
    # integer-array indexing: numpy on host memory, a gather kernel elsewhere (docs/array-api.md)
    np.testing.assert_array_equal(b[[0, 2]].numpy(), h[[0, 2]])


def test_slices_are_views(accelerator: dc.Accelerator) -> None:
    h = np.arange(10.0)
    b = accelerator.asarray(h)
    v = b[2:7]
    assert v.shape == (5,)
    np.testing.assert_array_equal(v.numpy(), h[2:7])
    b[3] = 100.0  # the view sees later writes, as a numpy view does
    h[3] = 100.0
    np.testing.assert_array_equal(v.numpy(), h[2:7])
    np.testing.assert_array_equal(b[::-3].numpy(), h[::-3])
    np.testing.assert_array_equal(b[8:2:-2].numpy(), h[8:2:-2])
    np.testing.assert_array_equal(b[5:2].numpy(), h[5:2])  # empty
    np.testing.assert_array_equal((b[1:4] * b[6:9]).numpy(), h[1:4] * h[6:9])  # views fuse


def test_2d_views_columns_and_transpose(accelerator: dc.Accelerator) -> None:
    h = np.arange(20, dtype=np.float32).reshape(4, 5)
    b = accelerator.asarray(h)
    np.testing.assert_array_equal(b[:, 1].numpy(), h[:, 1])
    np.testing.assert_array_equal(b[1].numpy(), h[1])
    np.testing.assert_array_equal(b[1:3, ::2].numpy(), h[1:3, ::2])
    np.testing.assert_array_equal(b[..., 2].numpy(), h[..., 2])
    np.testing.assert_array_equal(b.T.numpy(), h.T)
    np.testing.assert_array_equal((b.T[1:3] + 1).numpy(), h.T[1:3] + 1)
    np.testing.assert_array_equal(b[1:3][:, 2:4].numpy(), h[1:3][:, 2:4])  # a view of a view
    np.testing.assert_array_equal(b.reshape(2, 10).numpy(), h.reshape(2, 10))
    np.testing.assert_array_equal(b.reshape(-1).numpy(), h.reshape(-1))
    with pytest.raises(ValueError, match="reshape"):
        b.reshape(3, 7)
    h3 = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    b3 = accelerator.asarray(h3)
    for shape in [(24,), (4, 6), (3, 2, 4), (6, -1)]:
        np.testing.assert_array_equal(b3.reshape(shape).numpy(), h3.reshape(shape))
    np.testing.assert_array_equal((b3[:, 1] * 2).reshape(-1).numpy(), (h3[:, 1] * 2).reshape(-1))


def test_writes(accelerator: dc.Accelerator) -> None:
    h = np.zeros((3, 4), np.float32)
    b = accelerator.asarray(h)
    b[...] = 1.0
    h[...] = 1.0
    b[1] = np.arange(4, dtype=np.float32)
    h[1] = np.arange(4)
    b[:, 2] = 9
    h[:, 2] = 9
    b[0, 0] = -5
    h[0, 0] = -5
    b[2, 1:3] = accelerator.asarray(np.array([7.0, 8.0], np.float32))
    h[2, 1:3] = [7, 8]
    b[0] = b[1] * 2  # an expression as the value
    h[0] = h[1] * 2
    np.testing.assert_array_equal(b.numpy(), h)
    with pytest.raises(ValueError, match="broadcast"):
        b[0] = np.ones(3, np.float32)


def test_overlapping_writes_read_the_old_values(accelerator: dc.Accelerator) -> None:
    h = np.arange(8.0)
    b = accelerator.asarray(h)
    b[1:] = b[:-1]  # numpy semantics: the right-hand side as it was before the write
    h[1:] = h[:-1].copy()
    np.testing.assert_array_equal(b.numpy(), h)
    b[::-1] = b  # reversal in place
    h[::-1] = h.copy()
    np.testing.assert_array_equal(b.numpy(), h)


def test_inplace_operators(accelerator: dc.Accelerator) -> None:
    h = np.arange(6, dtype=np.int32)
    b = accelerator.asarray(h)
    same = b
    b += 3
    b *= accelerator.asarray(np.full(6, 2, np.int32))
    b //= 3
    b -= np.int32(1)
    h = ((h + 3) * 2) // 3 - 1
    assert b is same  # written into the same buffer
    np.testing.assert_array_equal(b.numpy(), h)
    with pytest.raises(TypeError, match="same_kind"):
        b += 1.5
    f = accelerator.asarray(np.ones((2, 3), np.float32))
    f += accelerator.asarray(np.array([1.0, 2.0, 3.0], np.float32))  # broadcast right-hand side
    np.testing.assert_array_equal(f.numpy(), [[2, 3, 4], [2, 3, 4]])
    with pytest.raises(ValueError):
        f += accelerator.asarray(np.ones((4, 2, 3), np.float32))


def test_inplace_on_views_writes_through(accelerator: dc.Accelerator) -> None:
    h = np.arange(10.0)
    b = accelerator.asarray(h)
    b[2:5] += 10
    h[2:5] += 10
    v = b[::2]
    v *= -1
    h[::2] *= -1
    np.testing.assert_array_equal(b.numpy(), h)


def test_astype(accelerator: dc.Accelerator) -> None:
    h = np.array([-1.7, 0.2, 2.9, 300.0], np.float64)
    b = accelerator.asarray(h)
    for dt in (np.int32, np.float32, np.bool_, np.int64):
        got = b.astype(dt).numpy()
        assert got.dtype == dt
        np.testing.assert_array_equal(got, h.astype(dt))
    np.testing.assert_array_equal((b.astype(np.int32) // 2).numpy(), h.astype(np.int32) // 2)


@dc.kernel
def _fill(out: dc.Buffer[dc.float64], x: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] + 1.0


def test_views_in_kernel_launches(accelerator: dc.Accelerator) -> None:
    h = np.arange(10.0)
    b = accelerator.asarray(h)
    out = accelerator.zeros(3, np.float64)
    dc.launch(_fill, 3, out, b[4:7])  # read: the kernel receives the view's elements
    np.testing.assert_array_equal(out.numpy(), h[4:7] + 1)
    # a contiguous view is the base's memory (docs/views.md): the kernel's writes land in b, or the
    # launch is refused (an OpenCL sub-buffer must start on CL_DEVICE_MEM_BASE_ADDR_ALIGN)
    if accelerator.backend == "opencl" and 32 % int(accelerator.info["mem_base_addr_align_bytes"]):
        with pytest.raises(dc.LaunchError, match="'out' is a view starting 32 bytes"):
            dc.launch(_fill, 3, b[4:7], out)
        np.testing.assert_array_equal(b.numpy(), h)
    else:
        dc.launch(_fill, 3, b[4:7], out)
        want = h.copy()
        want[4:7] = h[4:7] + 2
        np.testing.assert_array_equal(b.numpy(), want)
    with pytest.raises(ValueError, match="'out' may be written, but its argument is a strided view"):
        dc.launch(_fill, 3, b[::4], out)
