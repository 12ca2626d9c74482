"""The per-run float min/max of CPU-type devices (reduce_kernels.lanes_extreme_fast_kernel), which
folds the raw IEEE bits as signed and unsigned integers: every sign mix that picks a different fold
(all non-negative, all negative, mixed, only zeros of both signs, infinities, NaN of either sign),
per run against numpy, on every device; and dc.min/dc.max through it."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch
from dotcompute.ops import reduce_kernels as rk
from dotcompute.runtime.default_device import has_float64

reduce_mod = importlib.import_module("dotcompute.ops.reduce")  # dc.ops.reduce is the function
RUN = rk.RUN


def _runs(dtype: type, run: int) -> np.ndarray:
    """Nine runs of ``run`` elements (and a short tenth), each a case for the folds."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(9 * run + 21) * 1e3).astype(dtype)
    r = [x[i * run:(i + 1) * run] for i in range(10)]
    r[0][:] = np.abs(r[0])  # all non-negative: signed min / signed max
    r[1][:] = -np.abs(r[1])  # all negative: unsigned max / unsigned min
    r[2][:] = -0.0  # zeros of both signs: equal values, either is numpy's answer
    r[2][7] = 0.0
    r[3][5] = -np.inf  # infinities are values, not NaN
    r[3][6] = np.inf
    r[4][:] = -np.abs(r[4])
    r[4][100] = np.nan  # a positive NaN among negatives
    r[5][:] = np.abs(r[5])
    r[5][200] = -np.nan  # a negative NaN among positives
    r[6][0] = np.nan  # the run's first element
    r[7][:] = np.float32(-1e-40) if dtype == np.float32 else -1e-310  # negative subnormals
    r[7][3] = np.finfo(dtype).tiny
    r[9][-1] = -np.nan  # the short last run's last element
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("run", [RUN, reduce_mod.EXTREME_RUN_CPU], ids=["arg-run", "min-max-run"])
def test_each_run_as_numpy(accelerator: dc.Accelerator, dtype: type, run: int) -> None:
    """Each run's extreme for the run lengths the callers use: argmin/argmax's rk.RUN and min/max's
    longer one on the CPU backend (an argument of the one program)."""
    if dtype == np.float64 and not has_float64(accelerator):
        pytest.skip("no float64 on this device")
    x = _runs(dtype, run)
    runs = -(-x.size // run)
    b = accelerator.asarray(x)
    for smallest, ref in ((True, np.min), (False, np.max)):
        want = np.array([ref(x[i * run:(i + 1) * run]) for i in range(runs)], dtype)
        out = accelerator.empty((runs,), dtype)
        accelerator.launch(rk.lanes_extreme_fast_kernel(dtype, smallest), runs * 2, b, out, 2, run)
        got = out.numpy()
        np.testing.assert_array_equal(got, want)  # NaN where numpy has NaN; -0.0 == 0.0
        assert got[1] == (x[run:2 * run].min() if smallest else x[run:2 * run].max())


@pytest.mark.parametrize("sign", [1.0, -1.0, 0.0])
def test_min_max_of_all_through_the_kernel(accelerator: dc.Accelerator, sign: float) -> None:
    """dc.min/dc.max of arrays large enough for the lanes path, of one sign, mixed (0.0), and with a
    NaN, as numpy's."""
    n = reduce_mod.LANES_MIN + 3 * RUN + 5
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    if sign:
        x = np.abs(x) * np.float32(sign)
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        assert dc.min(b).item() == x.min() and dc.max(b).item() == x.max()
    x[n // 2] = -np.nan
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        assert np.isnan(dc.min(b).item()) and np.isnan(dc.max(b).item())
