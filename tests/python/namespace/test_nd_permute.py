"""permute_dims, moveaxis, matrix_transpose, concat, stack and nonzero of buffers with more than
3 dimensions stay on the device (strided copy kernels) and match numpy, for whole buffers and for
views of them."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 50.5
Y = np.arange(2 * 2 * 3 * 2 * 3, dtype=np.int32).reshape(2, 2, 3, 2, 3)


@pytest.mark.parametrize("perm", [(3, 1, 0, 2), (0, 1, 3, 2), (1, 0, 2, 3)])
def test_permute_dims_4d(accelerator, perm):
    got = dc.permute_dims(accelerator.asarray(X), perm)
    assert got.accelerator is accelerator
    np.testing.assert_array_equal(got.numpy(), np.transpose(X, perm))


def test_permute_dims_of_a_4d_view(accelerator):
    view = accelerator.asarray(X)[:, 1:, ::2, ::-1]
    np.testing.assert_array_equal(dc.permute_dims(view, (2, 0, 3, 1)).numpy(),
                                  np.transpose(X[:, 1:, ::2, ::-1], (2, 0, 3, 1)))


def test_moveaxis_and_matrix_transpose_5d(accelerator):
    y = accelerator.asarray(Y)
    np.testing.assert_array_equal(dc.moveaxis(y, 0, -1).numpy(), np.moveaxis(Y, 0, -1))
    np.testing.assert_array_equal(dc.moveaxis(y, (1, 3), (4, 0)).numpy(), np.moveaxis(Y, (1, 3), (4, 0)))
    np.testing.assert_array_equal(dc.matrix_transpose(y).numpy(), np.swapaxes(Y, -1, -2))
    np.testing.assert_array_equal(y.mT.numpy(), np.swapaxes(Y, -1, -2))


def test_no_host_copy_on_devices(accelerator):
    y = accelerator.asarray(Y)
    with dc.profile() as prof:
        out = dc.permute_dims(y, (4, 3, 2, 1, 0))
        accelerator.synchronize()
    assert [t for t in prof.transfers if t.direction in ("d2h", "h2d")] == []
    np.testing.assert_array_equal(out.numpy(), np.transpose(Y))


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_concat_and_stack_past_3d(accelerator, axis):
    a, b = accelerator.asarray(X), accelerator.asarray(X * 2)
    np.testing.assert_array_equal(dc.concat([a, b], axis=axis).numpy(), np.concatenate([X, X * 2], axis=axis))
    np.testing.assert_array_equal(dc.stack([a, b, a], axis=axis).numpy(), np.stack([X, X * 2, X], axis=axis))
    three = accelerator.asarray(X[0])  # 3-d pieces into a 4-d stack
    np.testing.assert_array_equal(dc.stack([three, three], axis=1).numpy(), np.stack([X[0], X[0]], axis=1))


def test_nonzero_past_3d(accelerator):
    mask = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5) % 7 == 0
    x = accelerator.asarray(mask.astype(np.float32))
    for got, want in zip(dc.nonzero(x), np.nonzero(mask), strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    view = x[:, 1:, ::2, ::-1]  # read through a strided 4-d view
    for got, want in zip(dc.nonzero(view), np.nonzero(mask[:, 1:, ::2, ::-1]), strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(dc.nonzero(x > 0), np.nonzero(mask), strict=True):  # a 4-d expression
        np.testing.assert_array_equal(got.numpy(), want)
