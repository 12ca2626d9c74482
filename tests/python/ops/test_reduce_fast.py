"""The fast full reductions of host memory: the lanes kernel and numpy in threads (ops/reduce.py,
ops/host_threads.py), forced at small sizes so every edge is exercised, against numpy."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch, host_threads
from dotcompute.ops import reduce_kernels as rk

RNG = np.random.default_rng(11)
reduce_mod = importlib.import_module("dotcompute.ops.reduce")  # dc.ops.reduce is the function
SIZES = [1, 15, 16, 17, rk.LANES - 1, rk.LANES, rk.LANES + 1, rk.RUN - 1, rk.RUN, rk.RUN + 1, 3 * rk.RUN + 17,
         rk.SUM_RUN - 1, rk.SUM_RUN, rk.SUM_RUN + 1, 5 * rk.SUM_RUN + 33, 100_003]


def _cpu() -> dc.Accelerator:
    return dc.accelerator("cpu:0")


def _data(n: int, dtype: np.dtype) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(n).astype(dtype)
    return RNG.integers(-50_000, 50_000, n).astype(dtype)


@pytest.mark.parametrize("pref", ["lanes", "threads"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32])
def test_fast_paths_match_numpy(pref, n, dtype):
    x = _data(n, dtype)
    b = _cpu().asarray(x)
    with dispatch.prefer(pref):
        for name in ("sum", "mean", "min", "max", "argmin", "argmax"):
            got = getattr(dc, name)(b)
            want = getattr(np, name)(x)
            assert got.shape == () and got.dtype == np.asarray(want).dtype, (name, got.dtype)
            if np.dtype(dtype).kind == "f" and name in ("sum", "mean"):
                np.testing.assert_allclose(got.item(), want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                           atol=1e-4, err_msg=name)
            else:
                assert got.item() == want, (name, got.item(), want)
        # keepdims and numpy input take the same path
        assert dc.sum(b, keepdims=True).shape == (1,)
        assert dc.argmax(x) == np.argmax(x)


@pytest.mark.parametrize("pref", ["lanes", "threads"])
def test_prod_and_dtype_argument(pref):
    x = (1 + RNG.standard_normal(5000) * 1e-3).astype(np.float32)
    b = _cpu().asarray(x)
    with dispatch.prefer(pref):
        np.testing.assert_allclose(dc.prod(b).item(), np.prod(x), rtol=1e-4)
        s64 = dc.sum(b, dtype=np.float64)
        assert s64.dtype == np.float64
        np.testing.assert_allclose(s64.item(), np.sum(x, dtype=np.float64), rtol=1e-12)
        xi = RNG.integers(0, 3, 5000).astype(np.int32)
        got = dc.prod(_cpu().asarray(xi))
        assert got.dtype == np.int64 and got.item() == np.prod(xi)


@pytest.mark.parametrize("pref", ["lanes", "threads"])
@pytest.mark.parametrize("where", [0, 5, 4096, 70_000, 99_999])
def test_nan_rules(pref, where):
    """min/max propagate NaN, argmin/argmax give the first NaN, wherever the NaNs fall among the
    runs and slices."""
    x = RNG.standard_normal(100_000).astype(np.float32)
    x[where] = np.nan
    x[min(where + 30_001, x.size - 1)] = np.nan
    b = _cpu().asarray(x)
    with dispatch.prefer(pref):
        assert math.isnan(float(dc.sum(b))) and math.isnan(float(dc.min(b))) and math.isnan(float(dc.max(b)))
        assert int(dc.argmin(b)) == where and int(dc.argmax(b)) == where


@pytest.mark.parametrize("pref", ["lanes", "threads"])
def test_ties_take_the_first_index(pref):
    x = np.zeros(200_000, np.float32)
    x[[70_000, 150_000]] = 5.0  # the same maximum in two threads' slices
    x[[120_000, 199_999]] = -5.0
    b = _cpu().asarray(x)
    with dispatch.prefer(pref):
        assert int(dc.argmax(b)) == 70_000 and int(dc.argmin(b)) == 120_000


def test_sum_accuracy_is_pairwise_class():
    """A float32 sum of 4M ones-ish values: a single accumulator would be off by ~1e-3 relative;
    the lanes kernel's blocked sum stays within numpy's error class."""
    x = (1 + RNG.random(1 << 22) * 1e-3).astype(np.float32)
    exact = math.fsum(x.astype(np.float64))
    b = _cpu().asarray(x)
    with dispatch.prefer("lanes"):
        lanes = float(dc.sum(b))
    naive = float(np.cumsum(x, dtype=np.float32)[-1])  # one accumulator, in order
    assert abs(naive - exact) / exact > 1e-4  # the data really punish a plain loop
    assert abs(lanes - exact) / exact < 1e-6
    assert abs(float(np.sum(x)) - exact) / exact < 1e-6


def test_lanes_partials_are_reduced_on_the_device_level_by_level():
    """More than SUM_RUN² elements: the lanes kernel runs three times (runs, their partials, the last
    two), all queued; integer sums are exact whatever the order, a mean is one division rounded as
    numpy's (a float32 sum of zeros and ones is exact, so its mean must equal numpy's to the bit), and
    ``dtype=int64`` truncates the quotient as numpy does."""
    n = rk.SUM_RUN ** 2 + 5
    x = RNG.integers(-100, 100, n).astype(np.int8)
    b = _cpu().asarray(x)
    with dispatch.prefer("lanes"):
        s = dc.sum(b)
        assert s.shape == () and s.dtype == np.int64 and int(s) == int(x.sum(dtype=np.int64))
        assert dc.mean(b).item() == x.mean()
        assert dc.mean(b, dtype=np.int64).item() == np.mean(x, dtype=np.int64)
        kept = dc.sum(b, keepdims=True)
        assert kept.shape == (1,) and kept.numpy()[0] == x.sum(dtype=np.int64)
        ones = (RNG.random(5_000_011) < 0.3).astype(np.float32)
        got = dc.mean(_cpu().asarray(ones))
        assert got.dtype == np.float32 and got.item() == np.mean(ones)


def test_prod_takes_threads_not_lanes():
    b = _cpu().asarray(np.ones(10, np.float32))
    seen: list[tuple[str, str, str]] = []
    dispatch.listeners.append(lambda *a: seen.append(a))
    try:
        with dispatch.prefer("lanes"):
            dc.sum(b)
            dc.prod(b)  # the lanes kernel adds only: a product stays on numpy
    finally:
        dispatch.listeners.pop()
    assert [s[2] for s in seen] == ["lanes", "vendor"]


def test_choice_by_size_and_visible_in_profile():
    small = _cpu().asarray(np.ones(1000, np.float32))
    big = _cpu().asarray(np.ones(max(reduce_mod.LANES_MIN, reduce_mod.THREADS_MIN), np.float32))
    seen: list[tuple[str, str, str]] = []
    dispatch.listeners.append(lambda *a: seen.append(a))
    try:
        with dc.profile() as prof:
            dc.sum(small)
            dc.sum(big)
            dc.max(big)
            with dispatch.prefer("vendor"):
                dc.sum(big)
    finally:
        dispatch.listeners.pop()
    assert [s[2] for s in seen] == ["vendor", "lanes", "threads", "vendor"]
    paths = [n.attrs["path"] for n in prof.notes if n.kind == "operation"]
    assert paths == ["vendor", "lanes", "threads", "vendor"]


def test_axis_reductions_keep_their_paths():
    x = RNG.standard_normal((300, 400)).astype(np.float32)
    b = _cpu().asarray(x)
    with dispatch.prefer("lanes"):
        np.testing.assert_allclose(dc.sum(b, axis=0).numpy(), x.sum(axis=0), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(dc.sum(b, axis=(0, 1)).item(), x.sum(), rtol=1e-5)
    with dispatch.prefer("threads"):
        np.testing.assert_array_equal(dc.argmax(b, axis=1).numpy(), x.argmax(axis=1))
        assert int(dc.argmax(b)) == x.argmax()


def test_slices_cover_the_array():
    for n in (1, 63, 64, 65, 1000, 4099):
        for parts in (1, 2, 3, 8):
            sl = host_threads.bounds(n, parts)
            assert sl[0][0] == 0 and sl[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(sl, sl[1:], strict=False))
            assert all(lo % host_threads.ALIGN == 0 for lo, _ in sl)
            assert len(sl) <= parts


def test_lanes_kernel_on_every_accelerator(accelerator):
    """The lanes kernel is portable (kernel language): its partials are right on every device,
    and items past the last run (the padding the CPU backend's thread pool gets) do nothing."""
    run = rk.SUM_RUN
    x = RNG.standard_normal(3 * run + 5).astype(np.float32)
    runs = -(-x.size // run)
    xb = accelerator.asarray(x)
    want = [np.sum(x[i * run:(i + 1) * run], dtype=np.float64) for i in range(runs)]
    for spread in (1, 3):  # spread: only every spread-th item takes a run (runs spread over the launch)
        out = accelerator.asarray(np.full(runs, np.nan, np.float32))
        accelerator.launch(rk.lanes_kernel(np.float32), runs * spread + 100, xb, out, spread)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-4)
    xi = RNG.integers(-1000, 1000, 2 * run + 3).astype(np.int32)
    outi = accelerator.empty((3,), np.int64)
    accelerator.launch(rk.lanes_kernel(np.int64), 3, accelerator.asarray(xi), outi, 1)
    np.testing.assert_array_equal(outi.numpy(), [xi[i * run:(i + 1) * run].sum() for i in range(3)])


def test_portable_full_sums_on_cpu_devices_use_the_lanes_kernel(accelerator):
    """On CPU-type devices (the CPU backend, PoCL) the portable full sum/mean of a large array runs
    the lanes kernel, then the tree over its partials, all on the device; GPUs keep the tree."""
    x = RNG.standard_normal(reduce_mod.LANES_MIN + 5).astype(np.float32)
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"), dc.profile() as prof:
        s = dc.sum(b)
        m = dc.mean(b)
    names = {k.name for k in prof.kernels}
    assert ("sum_lanes" in names) == (accelerator.type == "cpu"), names
    np.testing.assert_allclose(s.item(), x.sum(dtype=np.float64), rtol=1e-5, atol=1e-2)
    np.testing.assert_allclose(m.item(), x.mean(dtype=np.float64), rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32])
def test_lanes_extreme_kernel_on_every_accelerator(accelerator, dtype):
    """The min/max lanes kernel: per-run extremes right on every device, runs shorter than the lanes
    included (every lane starts from the run's first element), NaN kept where a run has one."""
    n = 3 * rk.RUN + 5
    x = (RNG.standard_normal(n) * 1000).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[rk.RUN + 17] = np.nan  # run 1 has a NaN (not its first element)
    runs = -(-n // rk.RUN)
    xb = accelerator.asarray(x)
    for smallest, ref in ((True, np.min), (False, np.max)):
        out = accelerator.empty((runs,), dtype)
        accelerator.launch(rk.lanes_extreme_kernel(dtype, smallest), runs + 50, xb, out)
        want = np.array([ref(x[i * rk.RUN:(i + 1) * rk.RUN]) for i in range(runs)], dtype)
        np.testing.assert_array_equal(out.numpy(), want)


def test_portable_min_max_argmin_argmax_on_cpu_devices_use_the_lanes_kernel(accelerator):
    """On CPU-type devices the portable full min/max (and the target search of argmin/argmax) run the
    lanes kernel; results as numpy's, with ties (the first index) and NaN (propagated; the first NaN)."""
    n = reduce_mod.LANES_MIN + 12_345
    x = RNG.standard_normal(n).astype(np.float32)
    x[[1000, n - 3]] = 99.0  # a tie for the max: argmax is the first
    x[[2000, n - 7]] = -99.0
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"), dc.profile() as prof:
        got = [dc.min(b).item(), dc.max(b).item(), int(dc.argmin(b)), int(dc.argmax(b))]
    assert got == [-99.0, 99.0, 2000, 1000]
    names = {k.name for k in prof.kernels}
    assert ("extreme_fast" in names) == (accelerator.type == "cpu"), names  # float32: the integer-key kernel
    x[777_777] = np.nan
    x[888_888] = np.nan
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        assert np.isnan(dc.min(b).item()) and np.isnan(dc.max(b).item())
        assert int(dc.argmin(b)) == 777_777 and int(dc.argmax(b)) == 777_777
    xi = RNG.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    bi = accelerator.asarray(xi)
    with dispatch.prefer("portable"):
        assert [dc.min(bi).item(), dc.max(bi).item(), int(dc.argmin(bi)), int(dc.argmax(bi))] == \
            [xi.min(), xi.max(), xi.argmin(), xi.argmax()]
