"""Scans against numpy on every accelerator, default dispatch and portable kernels forced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dotcompute as dc

RNG = np.random.default_rng(11)


@dc.func
def add(a, b):
    return a + b


@dc.func
def first_nonzero(a, b):
    # associative but not commutative: the order of the combination shows
    return a if a != 0 else b


@dc.func
def bigger(a, b):
    return max(a, b)


@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 257, 4099, 100_003, 1_000_003])
def test_cumsum_sizes(accelerator, path, n):
    x = RNG.integers(-50, 50, n).astype(np.int32)
    got = dc.cumsum(accelerator.asarray(x))
    assert got.dtype == np.int64 and got.shape == (n,)
    np.testing.assert_array_equal(got.numpy(), np.cumsum(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint32, np.bool_, np.int16])
def test_cumsum_dtypes(accelerator, path, dtype):
    x = (RNG.random(5003) * 10).astype(dtype)
    got = dc.cumsum(accelerator.asarray(x))
    want = np.cumsum(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("shape", [(5, 7), (3, 2000), (2000, 3), (4, 5, 600)])
def test_cumsum_axes(accelerator, path, shape):
    x = RNG.standard_normal(shape)
    b = accelerator.asarray(x)
    for axis in [*range(len(shape)), -1, None]:
        got = dc.cumsum(b, axis=axis)
        np.testing.assert_allclose(got.numpy(), np.cumsum(x, axis=axis), rtol=1e-10, atol=1e-10)


def test_scan_custom_operators(accelerator):
    x = RNG.integers(0, 2, 3001).astype(np.int64)
    got = dc.scan(add, accelerator.asarray(x), exclusive=True, initial=10).numpy()
    np.testing.assert_array_equal(got, 10 + np.concatenate([[0], np.cumsum(x)[:-1]]))
    y = RNG.standard_normal(10_001).astype(np.float32)
    np.testing.assert_array_equal(dc.scan(bigger, y, accelerator=accelerator), np.maximum.accumulate(y))
    z = np.zeros(5000, np.int64)
    z[[1200, 1300, 4000]] = [7, 8, 9]
    want = np.where(np.arange(5000) >= 1200, 7, 0)
    np.testing.assert_array_equal(dc.scan(first_nonzero, z, accelerator=accelerator), want)


def test_scan_errors(accelerator):
    b = accelerator.asarray(np.ones(5, np.float32))
    with pytest.raises(ValueError, match="initial"):
        dc.scan(add, b, exclusive=True)
    with pytest.raises(dc.KernelTypeError):
        dc.scan(np.add, b)
    with pytest.raises(np.exceptions.AxisError):
        dc.cumsum(b, axis=1)


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.int32, st.integers(1, 3000), elements=st.integers(-1000, 1000)))
def test_scan_last_equals_reduction(x):
    for acc in dc.devices():
        with dc.ops.prefer("portable"):
            s = dc.cumsum(acc.asarray(x))
            assert int(s.numpy()[-1]) == int(dc.sum(acc.asarray(x)))
