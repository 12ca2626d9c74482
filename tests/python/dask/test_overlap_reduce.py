"""map_overlap stencils against numpy with each boundary mode; reductions against numpy."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
from dask_kernels import heat, laplace, laplace_and_copy, split

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


def test_map_overlap_several_outputs(client):
    u = np.random.default_rng(6).random((33, 50), dtype=np.float32)
    U = da.from_array(u, chunks=(11, 20))
    lap, copy = dcd.map_overlap(laplace_and_copy, U, 2.0, depth=(1, 2), boundary="periodic")
    assert lap.chunks == U.chunks and copy.dtype == np.float64
    lap_v, copy_v = client.compute([lap, copy], sync=True)
    np.testing.assert_allclose(lap_v, 2.0 * numpy_laplace(u, "periodic"), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(copy_v, u.astype(np.float64))


def test_map_overlap_iterations_match_step_by_step(client):
    u = np.random.default_rng(7).random((48, 40), dtype=np.float32)
    want = u.copy()
    for _ in range(3):
        lap = (np.roll(want, 1, 0) + np.roll(want, -1, 0) + np.roll(want, 1, 1) + np.roll(want, -1, 1))
        want = want + np.float32(0.125) * (lap - np.float32(4.0) * want)
    U = da.from_array(u, chunks=(16, 20))
    stepped = U
    for _ in range(3):
        stepped = dcd.map_overlap(heat, stepped, depth=1, boundary="periodic")
    blocked = dcd.map_overlap(heat, U, depth=3, boundary="periodic", iterations=3)
    got_stepped, got_blocked = client.compute([stepped, blocked], sync=True)
    np.testing.assert_allclose(got_stepped, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_blocked, got_stepped)


def test_map_overlap_iterations_needs_one_matching_output():
    with pytest.raises(ValueError, match="iterations"):
        dcd.map_overlap(heat, da.ones((8, 8), chunks=4, dtype=np.float32), depth=1, iterations=0)
    with pytest.raises(ValueError, match="one output"):
        dcd.map_overlap(split, da.ones(8, chunks=4), depth=1, iterations=2)


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
