"""Audit: dcd.sum/min/max/mean against numpy on every integer and float dtype, 3-D arrays and every axis
spelling, NaN, empty chunks inside non-empty arrays, wholly empty arrays, and a process cluster."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest

import dotcompute.dask as dcd

OPS = ("sum", "min", "max", "mean")
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
          np.uint32, np.uint64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_and_axis_against_numpy(dtype):
    x = (np.random.default_rng(0).random((7, 6, 5)) * 100).astype(dtype)
    X = da.from_array(x, chunks=(3, 4, 2))
    for name in OPS:
        for axis in (None, 0, 2, -1, (0, 2), (-1, 0), np.int64(1)):
            got = np.asarray(getattr(dcd, name)(X, axis=axis).compute(scheduler="sync"))
            want = getattr(np, name)(x, axis=axis)
            assert got.dtype == want.dtype, (name, axis)
            # float16: numpy's mean accumulates in float32; a float16 running sum was off by 2 %
            tol = {np.float16: 4e-3, np.float32: 1e-5}.get(dtype, 1e-12)  # float16: summation order
            np.testing.assert_allclose(got, want, rtol=tol, err_msg=f"{name} axis={axis}")


@pytest.mark.parametrize("chunks", [((5, 0, 5),), ((0, 5, 5, 0),), ((5, 0, 0, 0, 5),)], ids=str)
@pytest.mark.parametrize("split_every", [None, 2])
def test_empty_chunks_inside_a_non_empty_array(chunks, split_every):
    # Dask makes empty chunks (filtering, slicing); min/max of one used to fail the whole reduction
    # with numpy's "zero-size array to reduction operation minimum"
    x = np.arange(10.0) - 3
    X = da.from_array(x, chunks=chunks)
    for name in OPS:
        got = getattr(dcd, name)(X, split_every=split_every).compute(scheduler="sync")
        assert got == getattr(np, name)(x), name


def test_empty_chunks_2d_along_and_across_the_axis():
    x = np.arange(24, dtype=np.int32).reshape(6, 4)
    X = da.from_array(x, chunks=((3, 0, 3), (2, 0, 2)))
    for name in OPS:
        for axis in (None, 0, 1):
            got = getattr(dcd, name)(X, axis=axis).compute(scheduler="sync")
            np.testing.assert_allclose(got, getattr(np, name)(x, axis=axis), err_msg=f"{name} {axis}")


def test_wholly_empty_arrays_behave_as_numpy():
    E = da.zeros((0, 3), chunks=2)
    assert dcd.sum(E).compute(scheduler="sync") == 0
    np.testing.assert_array_equal(dcd.sum(E, axis=0).compute(scheduler="sync"), np.zeros(3))
    assert dcd.max(E, axis=1).compute(scheduler="sync").shape == (0,)
    with pytest.raises(ValueError, match="zero-size"):
        dcd.max(E)
    with pytest.raises(ValueError, match="zero-size"):
        dcd.min(E, axis=0)


def test_nan_along_an_axis():
    x = np.arange(20.0).reshape(4, 5)
    x[1, 2] = np.nan
    X = da.from_array(x, chunks=2)
    for name in OPS:
        for axis in (None, 0, 1):
            got = getattr(dcd, name)(X, axis=axis).compute(scheduler="sync")
            np.testing.assert_allclose(got, getattr(np, name)(x, axis=axis), equal_nan=True)


def test_reductions_on_a_process_cluster(client):
    x = np.random.default_rng(1).integers(-50, 50, (40, 30)).astype(np.int16)
    X = da.from_array(x, chunks=((10, 0, 30), (7, 23)))
    futures = client.compute([getattr(dcd, name)(X, axis=axis) for name in OPS for axis in (None, 1)])
    got = client.gather(futures)
    want = [getattr(np, name)(x, axis=axis) for name in OPS for axis in (None, 1)]
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(g, w)


def test_float16_mean_accumulates_like_numpy():
    # numpy's mean of float16 sums in float32; a float16 sum stalls at 2048 (1 + 2048 rounds to 2048)
    # and overflows past 65504
    x = np.full(6000, 1.5, np.float16)
    X = da.from_array(x, chunks=6000)
    got = dcd.mean(X).compute(scheduler="sync")
    assert got.dtype == np.float16 and got == np.mean(x) == np.float16(1.5)
    y = np.full((50, 2000), 40.0, np.float16)
    np.testing.assert_array_equal(dcd.mean(da.from_array(y, chunks=(50, 500)), axis=1).compute(scheduler="sync"),
                                  np.mean(y, axis=1))


def test_complex_with_an_empty_chunk():
    x = np.array([1 + 2j, 3 - 1j, 2 + 5j, 0j], np.complex128)
    X = da.from_array(x, chunks=((2, 0, 2),))
    for name in OPS:
        assert getattr(dcd, name)(X).compute(scheduler="sync") == getattr(np, name)(x), name
