"""Any number of dimensions and advanced indexing on every device (namespace/_layout.py, advanced.py),
compared with numpy; the results stay on the input's device."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def test_reshape_and_broadcast_past_three_dimensions(accelerator: dc.Accelerator) -> None:
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = accelerator.asarray(a)
    for shape in [(2, 3, 2, 2), (1, 1, 1, 24), (24,)]:
        got = dc.reshape(x, shape)
        assert got.device is accelerator
        np.testing.assert_array_equal(got.numpy(), a.reshape(shape))
    np.testing.assert_array_equal(dc.reshape(dc.sum(x), (1, 1, 1, 1)).numpy(), np.full((1, 1, 1, 1), a.sum()))
    for src, shape in [((3, 1), (2, 2, 3, 5)), ((), (2, 2, 2, 2)), ((2, 1, 1, 3), (2, 2, 5, 3)), ((1,), (0,)),
                       ((2, 1, 2, 1), (2, 2, 2, 2))]:
        b = (np.arange(int(np.prod(src)), dtype=np.float32).reshape(src) + 1j).astype(np.complex64)
        got = dc.broadcast_to(accelerator.asarray(b), shape)
        np.testing.assert_array_equal(got.numpy(), np.broadcast_to(b, shape))


def test_mask_and_integer_array_indexing(accelerator: dc.Accelerator) -> None:
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    x = accelerator.asarray(a)
    for m in (a > 10, np.array([[True, False, True], [False, False, True]]), np.zeros(2, bool)):
        got = x[accelerator.asarray(m)]
        assert got.device is accelerator
        np.testing.assert_array_equal(got.numpy(), a[m])
    assert x[True].shape == (1, 2, 3, 4) and x[False].shape == (0, 2, 3, 4)
    i0, i2 = np.array([1, 0, -1]), np.array([[3], [0]])
    np.testing.assert_array_equal(x[accelerator.asarray(i0), 2, accelerator.asarray(i2)].numpy(), a[i0, 2, i2])
    i4 = np.array([[[[1, 2]]], [[[0, 0]]]])  # index arrays of 4 dimensions
    np.testing.assert_array_equal(x[accelerator.asarray(i4 % 2), 1, accelerator.asarray(np.array([3]))].numpy(),
                                  a[i4 % 2, 1, np.array([3])])
    with pytest.raises(IndexError):
        x[accelerator.asarray(np.array([2])), 0, 0].numpy()
    with pytest.raises(IndexError):
        x[accelerator.asarray(np.ones(3, bool))]


def test_mask_assignment(accelerator: dc.Accelerator) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = accelerator.asarray(a)
    y[accelerator.asarray(np.array([True, False, True]))] = -1.0
    a[np.array([True, False, True])] = -1.0
    y[accelerator.asarray(a > 5)] = accelerator.asarray(np.float32(7))
    a[a > 5] = 7
    np.testing.assert_array_equal(y.numpy(), a)


def test_complex_manipulation_on_the_device(accelerator: dc.Accelerator) -> None:
    a = (np.arange(12).reshape(3, 4) + 1j).astype(np.complex64)
    x = accelerator.asarray(a)
    idx = accelerator.asarray(np.array([2, 0]))
    for got, want in [(dc.flip(x), np.flip(a)), (dc.roll(x, 1, axis=1), np.roll(a, 1, axis=1)),
                      (dc.permute_dims(x, (1, 0)), a.T), (dc.concat([x, x]), np.concatenate([a, a])),
                      (dc.stack([x, x], axis=1), np.stack([a, a], axis=1)), (dc.tile(x, (2, 1)), np.tile(a, (2, 1))),
                      (dc.unstack(x)[1], a[1]), (dc.take(x, idx, axis=0), a[[2, 0]])]:
        assert got.device is accelerator
        np.testing.assert_array_equal(np.asarray(got), want)


def test_tensordot_of_0d_and_4d_results(accelerator: dc.Accelerator) -> None:
    for a, b, axes in [((), (), 0), ((0,), (), 0), ((2, 2), (2, 2, 2), 0), ((2, 0), (0, 3), 1)]:
        x = np.arange(int(np.prod(a)), dtype=np.float32).reshape(a) + 1
        y = np.arange(int(np.prod(b)), dtype=np.float32).reshape(b) + 2
        got = dc.tensordot(accelerator.asarray(x), accelerator.asarray(y), axes=axes)
        assert got.device is accelerator and got.shape == np.tensordot(x, y, axes=axes).shape
        np.testing.assert_allclose(np.asarray(got), np.tensordot(x, y, axes=axes))
