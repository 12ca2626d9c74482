"""map_overlap stencils against numpy with each boundary mode; reductions against numpy."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
from dask_kernels import laplace

import dotcompute.dask as dcd


def numpy_laplace(u: np.ndarray, boundary: object) -> np.ndarray:
    mode = {"nearest": "edge", "reflect": "symmetric", "periodic": "wrap"}.get(boundary)
    p = np.pad(u, 1, mode=mode) if mode else np.pad(u, 1, constant_values=boundary)
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]


@pytest.mark.parametrize("boundary", ["nearest", "reflect", "periodic", 0.0, 2.5])
def test_map_overlap_stencil_matches_numpy(client, boundary):
    u = np.random.default_rng(2).random((61, 47), dtype=np.float32)
    U = da.from_array(u, chunks=((20, 21, 20), (25, 22)))
    out = dcd.map_overlap(laplace, U, depth=1, boundary=boundary)
    assert out.chunks == U.chunks and out.dtype == np.float32
    np.testing.assert_allclose(client.compute(out).result(), numpy_laplace(u, boundary), rtol=1e-5, atol=1e-5)


def test_map_overlap_boundary_none_keeps_interior():
    u = np.random.default_rng(3).random((40, 30), dtype=np.float32)
    U = da.from_array(u, chunks=(15, 12))
    got = dcd.map_overlap(laplace, U, depth={0: 1, 1: 1}, boundary="none").compute(scheduler="threads")
    want = numpy_laplace(u, 0.0)
    np.testing.assert_allclose(got[1:-1, 1:-1], want[1:-1, 1:-1], rtol=1e-5, atol=1e-5)
    assert np.all(got[0, :] == 0) and np.all(got[:, -1] == 0)  # the kernel writes 0 where there is no halo


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_reductions_match_numpy(client, dtype):
    x = (np.random.default_rng(4).random((53, 38)) * 100).astype(dtype)
    X = da.from_array(x, chunks=((20, 20, 13), (19, 19)))
    for name in ("sum", "min", "max", "mean"):
        for axis in (None, 0, 1, (0, 1)):
            got = client.compute(getattr(dcd, name)(X, axis=axis)).result()
            want = getattr(np, name)(x, axis=axis)
            assert np.asarray(got).dtype == want.dtype, (name, axis)
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_reduction_keepdims_and_split_every():
    x = np.arange(1000, dtype=np.int64).reshape(10, 100)
    X = da.from_array(x, chunks=(3, 7))
    got = dcd.sum(X, axis=1, keepdims=True, split_every=2).compute(scheduler="threads")
    np.testing.assert_array_equal(got, x.sum(axis=1, keepdims=True))
    assert float(dcd.max(X).compute(scheduler="sync")) == 999


def test_reduction_nan_propagates():
    x = np.arange(100, dtype=np.float64)
    x[57] = np.nan
    X = da.from_array(x, chunks=30)
    assert np.isnan(dcd.min(X).compute(scheduler="sync"))
    assert np.isnan(dcd.max(X).compute(scheduler="sync"))


def test_reduction_bad_axis():
    with pytest.raises(ValueError, match="axis"):
        dcd.sum(da.ones((4, 4), chunks=2), axis=2)
    with pytest.raises(TypeError, match="x must be a Dask array"):
        dcd.sum([1, 2, 3])
