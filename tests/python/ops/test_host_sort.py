"""The packed stable argsort of the host path (ops/host_sort.py) against numpy's stable argsort:
every dtype it packs, numpy's awkward float values, every axis."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import host_sort

RNG = np.random.default_rng(5)


def _keys(dtype: np.dtype, n: int) -> np.ndarray:
    d = np.dtype(dtype)
    if d == np.bool_:
        return RNG.random(n) < 0.5
    if d.kind == "f":
        a = RNG.standard_normal(n).astype(d)
        a[::7] = 0.0
        a[::11] = -0.0  # equal to 0.0: ties, kept in position order
        a[::13] = np.nan
        a[::17] = -np.nan  # a NaN with the sign bit: still last
        a[::19] = np.inf
        a[::23] = -np.inf
        a[5::29] = 1.5
        return a
    info = np.iinfo(d)
    return RNG.integers(info.min, info.max, n, endpoint=True, dtype=d)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint16, np.bool_, np.float32, np.int64,
                                   np.float64])
@pytest.mark.parametrize("n", [1, 4095, host_sort.MIN_SIZE, 100_001])
def test_matches_numpy_stable(dtype, n):
    a = _keys(dtype, n)
    np.testing.assert_array_equal(host_sort.stable_argsort(a), np.argsort(a, kind="stable"))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint32])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_axes(dtype, axis):
    a = _keys(dtype, 8 * 5000).reshape(8, 5000)
    a[:, 100:200] = a[:, :100]  # many ties along every row
    got = host_sort.stable_argsort(a, axis)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argsort(a, axis=axis, kind="stable"))


def test_packable():
    assert host_sort.packable(np.int32, 10) and host_sort.packable(np.float32, 10)
    assert not host_sort.packable(np.float64, 10) and not host_sort.packable(np.int64, 10)
    assert not host_sort.packable(np.int32, 1 << 32)


def test_dc_argsort_and_sort_by_key_on_cpu_buffers():
    acc = dc.accelerator("cpu:0")
    k = RNG.integers(0, 50, 20_000).astype(np.int32)  # many equal keys: stability shows
    v = np.arange(k.size, dtype=np.float32)
    np.testing.assert_array_equal(dc.argsort(acc.asarray(k)).numpy(), np.argsort(k, kind="stable"))
    sk, sv = dc.sort_by_key(acc.asarray(k), acc.asarray(v))
    order = np.argsort(k, kind="stable")
    np.testing.assert_array_equal(sk.numpy(), k[order])
    np.testing.assert_array_equal(sv.numpy(), v[order])
