"""Audit: map_overlap against numpy reference stencils -- every boundary mode (and a per-axis dict of
them), depth as int/tuple/dict, depths larger than a chunk (Dask's rule: small chunks are merged),
empty arrays, a second array with other chunks or fewer dimensions, and ``iterations=k`` equal to k
single steps whatever the boundary."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest

import dotcompute as dc
import dotcompute.dask as dcd

_PAD = {"nearest": "edge", "reflect": "symmetric", "periodic": "wrap"}


def pad(u: np.ndarray, r: int | tuple, boundary: object) -> np.ndarray:
    mode = _PAD.get(boundary)
    return np.pad(u, r, mode=mode) if mode else np.pad(u, r, constant_values=boundary)


@dc.kernel
def blur1(u: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    n = u.shape[0]
    if i < n:
        if i > 0 and i < n - 1:
            out[i] = u[i - 1] + 2.0 * u[i] + u[i + 1]
        else:
            out[i] = 0.0


@dc.kernel
def box2(u: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    n = u.shape[0]
    if i < n:
        if i > 1 and i < n - 2:
            out[i] = u[i - 2] + u[i - 1] + u[i] + u[i + 1] + u[i + 2]
        else:
            out[i] = 0.0


@dc.kernel
def drift(u: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
    # an upwind-like, asymmetric radius-1 step: reflect and nearest halos differ from its own result
    i = dc.global_id(0)
    n = u.shape[0]
    if i < n:
        out[i] = 0.5 * u[max(i - 1, 0)] + 0.3 * u[i] + 0.2 * u[min(i + 1, n - 1)] + 0.01 * u[i] * u[i]


@dc.kernel
def lap(u: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        if i > 0 and j > 0 and i < n - 1 and j < m - 1:
            out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
        else:
            out[i, j] = 0.0


@dc.kernel
def lap_weighted(u: dc.Buffer[dc.float32, 2], w: dc.Buffer[dc.float32, 1], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        if i > 0 and j > 0 and i < n - 1 and j < m - 1:
            out[i, j] = w[j] * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        else:
            out[i, j] = 0.0


def ref1(u: np.ndarray, r: int, boundary: object) -> np.ndarray:
    p, n = pad(u, r, boundary), len(u)
    if r == 1:
        return p[:n] + 2 * p[1:n + 1] + p[2:n + 2]
    return sum(p[k:n + k] for k in range(2 * r + 1))


def ref_lap(u: np.ndarray, boundary: object) -> np.ndarray:
    p = pad(u, 1, boundary)
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]


BOUNDARIES = ["reflect", "periodic", "nearest", 0.0, 3.5, 2, np.float32(1.5)]
U = np.random.default_rng(0).random(23)


@pytest.mark.parametrize("boundary", BOUNDARIES, ids=repr)
@pytest.mark.parametrize("chunks", [5, (10, 3, 10), (23,)], ids=str)
def test_1d_stencils_every_boundary(boundary, chunks):
    X = da.from_array(U, chunks=chunks)
    got1 = dcd.map_overlap(blur1, X, depth=1, boundary=boundary).compute(scheduler="sync")
    np.testing.assert_allclose(got1, ref1(U, 1, boundary), rtol=1e-12)
    got2 = dcd.map_overlap(box2, X, depth=2, boundary=boundary).compute(scheduler="sync")
    np.testing.assert_allclose(got2, ref1(U, 2, boundary), rtol=1e-12)


@pytest.mark.parametrize("chunks", [(10, 1, 12), (1, 1, 21), ((10, 0, 13),)], ids=str)
def test_depth_larger_than_a_chunk_merges_it_as_dask_does(chunks):
    # da.map_overlap merges chunks smaller than the depth into their neighbours; so does dcd
    X = da.from_array(U, chunks=chunks)
    want = da.map_overlap(lambda b: b, X, depth=2, boundary="reflect").compute(scheduler="sync")
    np.testing.assert_array_equal(want, U)
    got = dcd.map_overlap(box2, X, depth=2, boundary="reflect")
    assert got.shape == U.shape
    np.testing.assert_allclose(got.compute(scheduler="sync"), ref1(U, 2, "reflect"), rtol=1e-12)


def test_empty_array():
    got = dcd.map_overlap(blur1, da.zeros(0, chunks=5), depth=1, boundary="periodic")
    assert got.compute(scheduler="sync").shape == (0,)
    got = dcd.map_overlap(lap, da.zeros((0, 6), chunks=3, dtype=np.float32), depth=1, boundary="reflect")
    assert got.compute(scheduler="sync").shape == (0, 6)


U2 = np.random.default_rng(1).random((17, 13)).astype(np.float32)


@pytest.mark.parametrize("depth", [1, (1, 1), [1, 1], {0: 1, 1: 1}, {-1: 1, 0: 1}, (2, 1), {0: 1, 1: 3},
                                   np.int64(1)], ids=repr)
def test_2d_depth_spellings(client, depth):
    U = da.from_array(U2, chunks=(5, 4))
    got = client.compute(dcd.map_overlap(lap, U, depth=depth, boundary="reflect")).result()
    np.testing.assert_allclose(got, ref_lap(U2, "reflect"), rtol=1e-5, atol=1e-5)


def test_boundary_per_axis_dict():
    U = da.from_array(U2, chunks=(5, 4))
    got = dcd.map_overlap(lap, U, depth=1, boundary={0: "periodic", 1: 0.0}).compute(scheduler="sync")
    p = np.pad(np.pad(U2, ((1, 1), (0, 0)), mode="wrap"), ((0, 0), (1, 1)))
    want = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="boundary"):
        dcd.map_overlap(lap, U, depth=1, boundary={0: "wrap"})


def test_second_array_with_other_chunks_or_fewer_dimensions():
    U = da.from_array(U2, chunks=(5, 4))
    w = np.linspace(1, 2, 13, dtype=np.float32)
    for W in (w, da.from_array(w, chunks=7), da.from_array(w, chunks=13)):
        got = dcd.map_overlap(lap_weighted, U, W, depth=1, boundary="nearest").compute(scheduler="sync")
        np.testing.assert_allclose(got, w * ref_lap(U2, "nearest"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("boundary", ["periodic", "reflect", "nearest", 0.0, 1.25, "none"], ids=repr)
def test_iterations_equal_single_steps_for_every_boundary(client, boundary):
    # k steps on one k-deep halo must equal k map_overlap calls; at the array's edges the halo holds
    # the boundary's values, which have to be refreshed between the steps (they were not for nearest,
    # reflect with an asymmetric stencil, or a constant)
    X = da.from_array(U, chunks=8)
    stepped = X
    for _ in range(3):
        stepped = dcd.map_overlap(drift, stepped, depth=1, boundary=boundary)
    blocked = dcd.map_overlap(drift, X, depth=3, boundary=boundary, iterations=3)
    got_stepped, got_blocked = client.compute([stepped, blocked], sync=True)
    np.testing.assert_allclose(got_blocked, got_stepped, rtol=1e-13)
    if boundary != "none":
        want = U.copy()
        for _ in range(3):
            p = pad(want, 1, boundary)
            want = 0.5 * p[:-2] + 0.3 * p[1:-1] + 0.2 * p[2:] + 0.01 * p[1:-1] ** 2
        np.testing.assert_allclose(got_blocked, want, rtol=1e-13)


def test_local_size_checked_against_the_grown_blocks():
    U = da.from_array(U2[:16, :12], chunks=(8, 6))
    # blocks grow to 10x8 with boundary="nearest": (5, 4) tiles them, (4, 3) does not
    got = dcd.map_overlap(lap, U, depth=1, boundary="nearest", local_size=(5, 4)).compute(scheduler="sync")
    np.testing.assert_allclose(got, ref_lap(U2[:16, :12], "nearest"), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="does not tile"):
        dcd.map_overlap(lap, U, depth=1, boundary="nearest", local_size=(4, 3))
    # boundary="none": edge blocks grow on one side only (9x7), interior sides on both
    with pytest.raises(ValueError, match=r"\(9, 7\)"):
        dcd.map_overlap(lap, U, depth=1, boundary="none", local_size=(5, 4))


@dc.kernel
def heat_drift(u: dc.Buffer[dc.float64, 2], out: dc.Buffer[dc.float64, 2]):
    # asymmetric 9-point step (the corners matter): reflect/nearest halos must be refreshed per step
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        im = max(i - 1, 0)
        ip = min(i + 1, n - 1)
        jm = max(j - 1, 0)
        jp = min(j + 1, m - 1)
        out[i, j] = (0.4 * u[i, j] + 0.2 * u[im, j] + 0.1 * u[ip, j] + 0.15 * u[i, jm] + 0.05 * u[i, jp]
                     + 0.06 * u[im, jm] + 0.04 * u[ip, jp])


@pytest.mark.parametrize("boundary", ["nearest", "reflect", -1.0, {0: "periodic", 1: "nearest"}], ids=repr)
def test_2d_iterations_equal_single_steps(boundary):
    u = np.random.default_rng(9).random((18, 14))
    U = da.from_array(u, chunks=(6, 7))
    stepped = U
    for _ in range(3):
        stepped = dcd.map_overlap(heat_drift, stepped, depth=1, boundary=boundary)
    blocked = dcd.map_overlap(heat_drift, U, depth=3, boundary=boundary, iterations=3)
    want, got = dask.compute(stepped, blocked, scheduler="threads")
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_unknown_chunk_sizes_say_what_to_do():
    x = da.from_array(np.arange(-5.0, 5.0), chunks=3)
    y = x[x > 0]
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        dcd.map_overlap(blur1, y, depth=1, boundary="nearest")
    y.compute_chunk_sizes()
    got = dcd.map_overlap(blur1, y, depth=1, boundary="nearest").compute(scheduler="sync")
    np.testing.assert_allclose(got, ref1(np.arange(1.0, 5.0), 1, "nearest"))


@dc.kernel
def lap3(u: dc.Buffer[dc.float64, 3], out: dc.Buffer[dc.float64, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    k = dc.global_id(2)
    n, m, r = u.shape
    if i < n and j < m and k < r:
        if i > 0 and j > 0 and k > 0 and i < n - 1 and j < m - 1 and k < r - 1:
            out[i, j, k] = (u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k] + u[i, j + 1, k] + u[i, j, k - 1]
                            + u[i, j, k + 1] - 6.0 * u[i, j, k])
        else:
            out[i, j, k] = 0.0


@pytest.mark.parametrize("boundary", ["nearest", "reflect", "periodic", 0.5], ids=repr)
def test_3d_stencil(client, boundary):
    u = np.random.default_rng(4).random((9, 8, 7))
    p = pad(u, 1, boundary)
    want = (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1] + p[1:-1, 1:-1, :-2]
            + p[1:-1, 1:-1, 2:] - 6 * p[1:-1, 1:-1, 1:-1])
    got = client.compute(dcd.map_overlap(lap3, da.from_array(u, chunks=(4, 3, 7)), depth=1, boundary=boundary))
    np.testing.assert_allclose(got.result(), want, rtol=1e-12, atol=1e-12)
