"""Statistics, utility and main-namespace linear algebra against numpy, on every device."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.namespace import linear, statistics, utility

RNG = np.random.default_rng(11)
F = RNG.standard_normal((4, 5, 6)).astype(np.float32)
I = RNG.integers(-3, 4, (4, 5, 6)).astype(np.int32)  # noqa: E741


def _close(got, want, acc, rtol=1e-5):
    assert isinstance(got, dc.Buffer) and got.accelerator is acc
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(accelerator, name, axis, keepdims):
    data = F if name in ("mean", "prod") else I
    got = getattr(statistics, name)(accelerator.asarray(data), axis=axis, keepdims=keepdims)
    _close(got, getattr(np, name)(data, axis=axis, keepdims=keepdims), accelerator, rtol=1e-4)


@pytest.mark.parametrize("name", ["std", "var"])
@pytest.mark.parametrize("axis", [None, 2, (0, 1)])
@pytest.mark.parametrize("correction", [0.0, 1.0])
def test_moments(accelerator, name, axis, correction):
    got = getattr(statistics, name)(accelerator.asarray(F), axis=axis, correction=correction, keepdims=axis == 2)
    want = getattr(np, name)(F, axis=axis, ddof=correction, keepdims=axis == 2)
    _close(got, want, accelerator, rtol=1e-4)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative(accelerator, name, include_initial):
    data = I[:, :3, 0]
    got = getattr(statistics, name)(accelerator.asarray(data), axis=1, include_initial=include_initial)
    _close(got, getattr(np, name)(data, axis=1, include_initial=include_initial), accelerator)
    one = getattr(statistics, name)(accelerator.asarray(F[0, 0]), dtype=np.float64)
    _close(one, getattr(np, name)(F[0, 0], dtype=np.float64), accelerator)


def test_sum_keeps_older_forms(accelerator):
    assert isinstance(dc.sum(np.ones(4)), np.ndarray | np.generic)  # numpy in, numpy out
    x = accelerator.asarray(I)
    assert dc.sum(x).shape == () and int(dc.sum(x)) == int(I.sum())
    _close(dc.sum(x, 0), I.sum(0), accelerator)  # axis positional
    _close(dc.sum(x, axis=(), dtype=np.int64), I.astype(np.int64), accelerator)


@pytest.mark.parametrize("axis", [None, 0, (1, 2)])
def test_all_any(accelerator, axis):
    data = I[:3] != 0
    x = accelerator.asarray(I[:3])
    _close(utility.all(x, axis=axis), np.all(data, axis=axis), accelerator)
    _close(utility.any(x, axis=axis, keepdims=True), np.any(data, axis=axis, keepdims=True), accelerator)


@pytest.mark.parametrize("n", [1, 2])
def test_diff(accelerator, n):
    x = accelerator.asarray(F)
    _close(utility.diff(x, axis=1, n=n), np.diff(F, axis=1, n=n), accelerator)
    pre = accelerator.asarray(F[:, :, :1])
    _close(utility.diff(x, n=n, prepend=pre), np.diff(F, n=n, prepend=F[:, :, :1]), accelerator)
    b = accelerator.asarray(I[0] > 0)
    _close(utility.diff(b, axis=0), np.diff(I[0] > 0, axis=0), accelerator)


def test_linear(accelerator):
    a, b = accelerator.asarray(F), accelerator.asarray(F[0].T.copy())
    _close(linear.matmul(a, b), F @ F[0].T, accelerator, rtol=1e-4)
    _close(linear.matrix_transpose(a), np.matrix_transpose(F), accelerator)
    _close(linear.tensordot(a, accelerator.asarray(F[0]), axes=([1, 2], [0, 1])),
           np.tensordot(F, F[0], axes=([1, 2], [0, 1])), accelerator, rtol=1e-4)
    _close(linear.vecdot(a, accelerator.asarray(F[0, 0]), axis=-1), np.vecdot(F, F[0, 0]), accelerator, rtol=1e-4)
    with pytest.raises(ValueError, match="align"):
        linear.matmul(a, a)


def test_beyond_three_dimensions_on_host():
    cpu = dc.accelerator("cpu:0")
    data = RNG.standard_normal((2, 3, 2, 2, 3)).astype(np.float32)
    x = cpu.asarray(data)
    _close(statistics.sum(x, axis=(1, 3)), data.sum(axis=(1, 3)), cpu, rtol=1e-5)
    _close(statistics.var(x, axis=4), data.var(axis=4), cpu, rtol=1e-4)
    _close(linear.matmul(x, cpu.asarray(data[0, 0, 0].T.copy())), data @ data[0, 0, 0].T, cpu, rtol=1e-4)


def test_min_max_show_the_reduction_signature():
    import inspect

    for fn in (dc.min, dc.max):
        params = inspect.signature(fn).parameters
        assert list(params)[:3] == ["x", "axis", "keepdims"]
        assert fn(1.0, 2.0) in (1.0, 2.0)  # still the two-value math function
