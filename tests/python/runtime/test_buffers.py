"""Buffers on every device: creation, the transfer paths, host views and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

ALL_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
              np.float16, np.float32, np.float64]


def test_empty_describes_itself(accelerator):
    b = accelerator.empty((3, 4), dc.float32)
    assert b.shape == (3, 4) and b.ndim == 2 and b.size == 12 and b.nbytes == 48 and len(b) == 3
    assert b.dtype == np.dtype(np.float32) and isinstance(b.dtype, np.dtype)
    assert b.accelerator is accelerator
    assert "(3, 4)" in repr(b) and accelerator.id in repr(b)
    assert accelerator.empty(7, np.int32).shape == (7,)


def test_zeros_are_zero(accelerator):
    z = accelerator.zeros((5, 3), np.int64)
    np.testing.assert_array_equal(z.numpy(), np.zeros((5, 3), np.int64))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda t: np.dtype(t).name)
def test_asarray_round_trips_every_dtype(accelerator, dtype):
    x = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    b = accelerator.asarray(x)
    assert b.dtype == x.dtype and b.shape == x.shape
    np.testing.assert_array_equal(b.numpy(), x)
    np.testing.assert_array_equal(np.asarray(b), x)


def test_asarray_converts_and_accepts_lists_and_views(accelerator):
    b = accelerator.asarray([[1, 2], [3, 4]], dtype=np.float32)
    assert b.dtype == np.float32
    np.testing.assert_array_equal(b.numpy(), [[1, 2], [3, 4]])
    strided = np.arange(20, dtype=np.float64)[::2]
    np.testing.assert_array_equal(accelerator.asarray(strided).numpy(), strided)
    same = accelerator.asarray(b)
    assert same is b


def test_numpy_is_a_copy(accelerator):
    b = accelerator.asarray(np.arange(4, dtype=np.float32))
    host = b.numpy()
    host[:] = 99
    np.testing.assert_array_equal(b.numpy(), [0, 1, 2, 3])


def test_array_protocol_and_copies(accelerator):
    b = accelerator.asarray(np.arange(6, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(b, dtype=np.float64), np.arange(6.0))
    assert np.asarray(b, dtype=np.float64).dtype == np.float64
    forced = np.array(b, copy=True)
    forced[0] = 7
    assert b.numpy()[0] == 0
    if b.host_visible:
        # numpy sees the device memory itself (the CPU, Metal's shared storage): two views share
        # it, and writes land in the buffer
        v1, v2 = np.asarray(b), np.asarray(b)
        assert np.shares_memory(v1, v2)
        v1[1] = 42
        assert b.numpy()[1] == 42
        assert np.asarray(b, copy=False) is not None
    else:
        with pytest.raises(ValueError):
            np.asarray(b, copy=False)


def test_zero_copy_view_on_host_visible_memory(accelerator):
    b = accelerator.zeros((1000,), np.float64)
    if not b.host_visible:
        pytest.skip(f"{accelerator.id}'s buffers are not host-visible (unified or shared) memory")
    with b.host() as h1:
        pass
    with b.host() as h2:
        assert np.shares_memory(h1, h2)  # the same memory every time: nothing was copied
    assert h1.ctypes.data == np.asarray(b).ctypes.data


def test_host_context_writes_land_in_the_buffer(accelerator):
    b = accelerator.zeros((3, 4), np.float32)
    with b.host() as h:
        assert h.shape == (3, 4) and h.dtype == np.float32 and h.flags.writeable
        h[1, :] = 5.0
        h[0, 0] = -1.0
    expected = np.zeros((3, 4), np.float32)
    expected[1, :] = 5.0
    expected[0, 0] = -1.0
    np.testing.assert_array_equal(b.numpy(), expected)
    out = np.empty((3, 4), np.float32)
    b.copy_to(out)
    np.testing.assert_array_equal(out, expected)


def test_host_context_marks_dirty_even_on_error(accelerator):
    b = accelerator.zeros((4,), np.int32)
    with pytest.raises(RuntimeError):
        with b.host() as h:
            h[0] = 3
            raise RuntimeError("boom")
    assert b.numpy()[0] == 3


def test_copy_from_and_to(accelerator):
    b = accelerator.empty((2, 5), np.float64)
    src = np.arange(10, dtype=np.float64).reshape(2, 5)
    b.copy_from(src)
    np.testing.assert_array_equal(b.numpy(), src)
    b.copy_from(src.T.copy().T)  # a non-contiguous source is fine
    out = np.zeros((2, 5), np.float64)
    assert b.copy_to(out) is out
    np.testing.assert_array_equal(out, src)
    other = accelerator.asarray(src * 2)
    b.copy_from(other)
    np.testing.assert_array_equal(b.numpy(), src * 2)


def test_copy_errors_are_clear(accelerator):
    b = accelerator.empty((2, 5), np.float32)
    with pytest.raises(ValueError, match=r"shape \(5, 2\).*\(2, 5\)"):
        b.copy_from(np.zeros((5, 2), np.float32))
    with pytest.raises(TypeError, match="float64.*float32"):
        b.copy_from(np.zeros((2, 5), np.float64))
    with pytest.raises(ValueError, match="shape"):
        b.copy_to(np.zeros(10, np.float32))
    with pytest.raises(TypeError, match="dtype"):
        b.copy_to(np.zeros((2, 5), np.int32))
    with pytest.raises(ValueError, match="C-contiguous"):
        b.copy_to(np.zeros((5, 2), np.float32).T)
    ro = np.zeros((2, 5), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        b.copy_to(ro)
    with pytest.raises(TypeError, match="numpy array"):
        b.copy_to([0] * 10)  # type: ignore[arg-type]


def test_bad_shapes_and_dtypes(accelerator):
    with pytest.raises(ValueError, match="negative"):
        accelerator.empty((2, -1), np.float32)
    with pytest.raises(TypeError):
        accelerator.empty("big", np.float32)  # type: ignore[arg-type]
    with pytest.raises(dc.DotComputeError, match="datetime64"):
        accelerator.empty(4, np.dtype("datetime64[s]"))
    assert accelerator.empty(4, np.complex64).dtype == np.complex64  # complex is storage (the FFTs)


def test_empty_buffers(accelerator):
    b = accelerator.empty((0,), np.float32)
    assert b.size == 0 and b.nbytes == 0 and len(b) == 0
    assert b.numpy().shape == (0,)


def test_buffers_are_not_constructed_directly():
    with pytest.raises(TypeError, match="acc.empty"):
        dc.Buffer()


def test_buffer_annotations_delegate_to_the_language():
    from dotcompute.lang.types import buffer_annotation

    assert dc.Buffer[dc.float32] == buffer_annotation(dc.float32)
    assert dc.Buffer[dc.float32, 2] == buffer_annotation(dc.float32, 2)
    with pytest.raises(TypeError):
        dc.Buffer[dc.float32, 2, 3]
