"""Audit: DESIGN.md "Array expressions (fusion)" on every accelerator, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def scale(a: dc.float32, x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i]


@dc.fuse
def hyp_or_max(x, y):
    return dc.sqrt(x * x + y * y) + dc.where(x > y, x, y)


def test_arithmetic_broadcasting_and_reduction(accelerator):
    xn = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    yn = np.arange(1, 5, dtype=np.float32)
    x, y = accelerator.asarray(xn), accelerator.asarray(yn)
    e = 2.0 * x + y * y - 3.0
    np.testing.assert_allclose(e.numpy(), 2 * xn + yn * yn - 3, rtol=1e-6)
    assert float(dc.sum(e)) == pytest.approx(float((2 * xn + yn * yn - 3).sum()), rel=1e-5)
    ops = [lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a ** 2, lambda a, b: -a, lambda a, b: abs(a),
           lambda a, b: a / b, lambda a, b: a - b]
    for op in ops:
        np.testing.assert_allclose(np.asarray(op(x, y)), op(xn, yn), rtol=1e-5, atol=1e-6)
    for cmp in [lambda a, b: a < b, lambda a, b: a >= b, lambda a, b: a == b]:
        got = np.asarray(cmp(x, y))
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, cmp(xn, yn))
    np.testing.assert_allclose(dc.where(x > 0, x, 0.0).numpy(), np.where(xn > 0, xn, 0))
    np.testing.assert_allclose(dc.minimum(x, y).numpy(), np.minimum(xn, yn))
    np.testing.assert_allclose(dc.maximum(x, 1.0).numpy(), np.maximum(xn, 1))
    np.testing.assert_allclose(dc.exp(x).numpy(), np.exp(xn), rtol=1e-5)
    with pytest.raises(ValueError):
        (x + accelerator.asarray(np.zeros(3, np.float32))).numpy()


def test_promotion_follows_numpy(accelerator):
    i32 = accelerator.asarray(np.arange(3, dtype=np.int32))
    f32 = accelerator.asarray(np.arange(3, dtype=np.float32))
    assert (f32 + 1).dtype == np.float32  # NEP 50: a Python int does not widen
    assert (f32 + 1.5).dtype == np.float32
    assert (i32 + accelerator.asarray(np.arange(3, dtype=np.int64))).dtype == np.int64
    assert (i32 + f32).dtype == (np.arange(3, dtype=np.int32) + np.arange(3, dtype=np.float32)).dtype


def test_fuse_and_lazy_arguments(accelerator):
    xn = np.linspace(-1, 1, 64, dtype=np.float32)
    yn = np.cos(xn)
    x, y = accelerator.asarray(xn), accelerator.asarray(yn)
    want = np.sqrt(xn * xn + yn * yn) + np.where(xn > yn, xn, yn)
    np.testing.assert_allclose(np.asarray(hyp_or_max(x, y)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(hyp_or_max(xn, yn)), want, rtol=1e-6)
    out = accelerator.zeros(64, np.float32)
    dc.launch(scale, 64, 2.0, x * 3.0, out, accelerator=accelerator)  # an expression as a kernel argument
    np.testing.assert_allclose(out.numpy(), 6 * xn, rtol=1e-6)


def test_indexing_views_and_writes(accelerator):
    b = accelerator.asarray(np.arange(8, dtype=np.float32))
    assert float(b[2]) == 2.0 and float(b[-1]) == 7.0
    with pytest.raises(IndexError):
        b[8]
    np.testing.assert_array_equal(b[2:5].numpy(), [2, 3, 4])
    b[1:3] = 9.0
    np.testing.assert_array_equal(b.numpy(), [0, 9, 9, 3, 4, 5, 6, 7])
    b[...] = b * 2 + 1
    np.testing.assert_array_equal(b.numpy(), [1, 19, 19, 7, 9, 11, 13, 15])
    b[0:2] = np.array([5, 6], np.float32)
    np.testing.assert_array_equal(b.numpy()[:3], [5, 6, 19])
    # a view as a read-only kernel argument reads the right elements
    out = accelerator.zeros(3, np.float32)
    dc.launch(scale, 3, 1.0, b[1:4], out, accelerator=accelerator)
    np.testing.assert_array_equal(out.numpy(), [6, 19, 7])
