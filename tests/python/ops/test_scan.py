"""Scans against numpy on every accelerator, default dispatch and portable kernels forced."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dotcompute as dc
from dotcompute.ops import dispatch

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


def test_long_integer_cumsums_of_cpu_buffers_take_the_portable_scan(monkeypatch):
    """From SCAN_MIN elements along the axis the portable scan runs instead of numpy's cumsum
    (integers only: exact in any order); the choice shows in the profile notes, and is numpy's
    result to the bit."""
    scan_mod = importlib.import_module("dotcompute.ops.scan")
    monkeypatch.setattr(scan_mod, "SCAN_MIN", 4096)  # the real size would cost seconds under pytest
    acc = dc.accelerator("cpu:0")
    short = RNG.integers(-50, 50, 4095).astype(np.int32)
    long = RNG.integers(-2**31, 2**31 - 1, 5000, dtype=np.int64).astype(np.int32)
    rows = RNG.integers(-50, 50, (3, 5000)).astype(np.int32)
    floats = RNG.standard_normal(5000).astype(np.float32)
    seen: list[str] = []
    dispatch.listeners.append(lambda op, acc_id, path: seen.append(path))
    try:
        with dc.profile() as prof:
            got_short = dc.cumsum(acc.asarray(short))
            got_long = dc.cumsum(acc.asarray(long))
            got_rows = dc.cumsum(acc.asarray(rows), axis=1)
            got_cols = dc.cumsum(acc.asarray(rows), axis=0)  # 3 long: numpy
            dc.cumsum(acc.asarray(floats))  # floats keep numpy's sequential rounding
            dc.cumsum(long, accelerator=acc)  # numpy in: no device copy (acc: the simulator makes cuda:0 the default)
            with dispatch.prefer("vendor"):
                dc.cumsum(acc.asarray(long))
    finally:
        dispatch.listeners.pop()
    want = ["vendor", "portable", "portable", "vendor", "vendor", "vendor", "vendor"]
    assert seen == want
    assert [n.attrs["path"] for n in prof.notes if n.kind == "operation"] == want
    np.testing.assert_array_equal(got_short.numpy(), np.cumsum(short))
    np.testing.assert_array_equal(got_long.numpy(), np.cumsum(long))
    np.testing.assert_array_equal(got_rows.numpy(), np.cumsum(rows, axis=1))
    np.testing.assert_array_equal(got_cols.numpy(), np.cumsum(rows, axis=0))
