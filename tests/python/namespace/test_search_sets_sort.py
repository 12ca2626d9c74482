"""take, searching, set and sorting functions against numpy, on every device."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.namespace import indexing, searching, sets, sorting

RNG = np.random.default_rng(3)
F = RNG.integers(-4, 5, (5, 6)).astype(np.float32)
F[1, 2] = F[3, 4] = np.nan
I = RNG.integers(-4, 5, (5, 6)).astype(np.int32)  # noqa: E741


def _check(got, want, acc):
    assert isinstance(got, dc.Buffer) and got.accelerator is acc
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("data", [F, I], ids=["float32", "int32"])
def test_take(accelerator, data):
    x = accelerator.asarray(data)
    idx = accelerator.asarray(np.array([4, 0, -1, 2, 2], np.int64))
    _check(indexing.take(x, idx, axis=0), np.take(data, [4, 0, -1, 2, 2], axis=0), accelerator)
    _check(indexing.take(x, accelerator.asarray(np.array([5, 1], np.int32)), axis=1), data[:, [5, 1]], accelerator)
    along = np.argsort(data, axis=1, kind="stable")
    _check(indexing.take_along_axis(x, accelerator.asarray(along), axis=1), np.take_along_axis(data, along, 1),
           accelerator)
    with pytest.raises(IndexError, match="out of bounds"):
        indexing.take(x, accelerator.asarray(np.array([9], np.int64)), axis=1)


@pytest.mark.parametrize("data", [F, I], ids=["float32", "int32"])
def test_searching(accelerator, data):
    x = accelerator.asarray(data)
    _check(searching.argmax(x, axis=1), np.argmax(data, axis=1), accelerator)
    _check(searching.argmin(x, axis=0, keepdims=True), np.argmin(data, axis=0, keepdims=True), accelerator)
    _check(searching.count_nonzero(x, axis=(0, 1)), np.asarray(np.count_nonzero(data), np.int64), accelerator)
    _check(searching.count_nonzero(x, axis=1, keepdims=True), np.count_nonzero(data, axis=1, keepdims=True),
           accelerator)
    for got, want in zip(searching.nonzero(x), np.nonzero(data), strict=True):
        _check(got, want.astype(np.int64), accelerator)
    srt = np.sort(data.reshape(-1))
    for side in ("left", "right"):
        _check(searching.searchsorted(accelerator.asarray(srt), x, side=side), np.searchsorted(srt, data, side=side),
               accelerator)


def test_nonzero_of_nothing_and_0d_error(accelerator):
    x = accelerator.asarray(np.zeros((3, 2), np.float32))
    assert [c.shape for c in searching.nonzero(x)] == [(0,), (0,)]
    with pytest.raises(ValueError, match="zero-dimensional"):
        searching.nonzero(dc.sum(x))


@pytest.mark.parametrize("data", [np.nan_to_num(F, nan=7.0), I], ids=["float32", "int32"])
def test_sets(accelerator, data):
    # the standard leaves the order of the values open (numpy 2.3+ gives integers unsorted)
    x = accelerator.asarray(data)
    flat = data.reshape(-1)
    values = np.asarray(sets.unique_values(x))
    np.testing.assert_array_equal(np.sort(values), np.unique(data))
    r = sets.unique_all(x)
    for b in r:
        assert isinstance(b, dc.Buffer) and b.accelerator is accelerator
    v, idx, inv, cnt = (np.asarray(b) for b in r)
    assert idx.dtype == inv.dtype == cnt.dtype == np.int64 and inv.shape == data.shape
    np.testing.assert_array_equal(v[inv], data)
    np.testing.assert_array_equal(idx, [np.flatnonzero(flat == e)[0] for e in v])  # first occurrences
    np.testing.assert_array_equal(cnt, [(flat == e).sum() for e in v])
    c = sets.unique_counts(x)
    np.testing.assert_array_equal(np.asarray(c.counts), [(flat == e).sum() for e in np.asarray(c.values)])
    u = sets.unique_inverse(x)
    np.testing.assert_array_equal(np.asarray(u.values)[np.asarray(u.inverse_indices)], data)


@pytest.mark.parametrize("data", [F, I], ids=["float32", "int32"])
@pytest.mark.parametrize("axis", [0, -1])
def test_sorting(accelerator, data, axis):
    x = accelerator.asarray(data)
    _check(sorting.sort(x, axis=axis), np.sort(data, axis=axis), accelerator)
    _check(sorting.argsort(x, axis=axis), np.argsort(data, axis=axis, kind="stable"), accelerator)
    _check(sorting.sort(x, axis=axis, descending=True), np.flip(np.sort(data, axis=axis), axis=axis), accelerator)
    # stable descending: ties keep their original order
    want = np.flip(data.shape[axis] - 1 - np.argsort(np.flip(data, axis=axis), axis=axis, kind="stable"), axis=axis)
    got = sorting.argsort(x, axis=axis, descending=True)
    _check(got, want, accelerator)


def test_unique_keeps_every_nan(accelerator):
    # numpy 2: NaN != NaN, so each NaN is a distinct value (which NaN maps where is not specified)
    x = accelerator.asarray(F)
    r = sets.unique_all(x)
    values = np.asarray(r.values)
    np.testing.assert_array_equal(np.sort(values), np.sort(np.unique_values(F)))
    assert np.isnan(values).sum() == 2
    np.testing.assert_array_equal(values[np.asarray(r.inverse_indices)], F)
    np.testing.assert_array_equal(F.reshape(-1)[np.asarray(r.indices)], values)
    assert np.asarray(r.counts).sum() == F.size
