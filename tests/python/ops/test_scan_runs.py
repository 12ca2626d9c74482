"""Scans along contiguous rows on OpenCL CPU devices run one work-item per run (ops/scan.py,
scan_kernels.run_totals/scan_runs); every device checked the same way against numpy: several rows,
inclusive and exclusive with an initial value, an order-sensitive operator whose answer lies in a
later run, runs of one element, odd and empty sizes. dc.nonzero there counts and writes by runs
(ops.scan.flat_nonzero): 1-d and n-d against numpy too."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch, reduce_kernels


@dc.func
def add(a, b):
    return a + b


@dc.func
def last_nonzero(a, b):
    # associative, not commutative: the latest non-zero value so far
    return b if b != 0 else a


@pytest.mark.parametrize("shape", [(0,), (1,), (33,), (3, 5001), (2, 1024 * 4 + 1), (300_007,)])
def test_runs_scan_matches_numpy(accelerator, shape):
    x = np.random.default_rng(sum(shape)).integers(-9, 10, shape).astype(np.int32)
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        got = dc.ops.cumsum(b, axis=-1).numpy()
        np.testing.assert_array_equal(got, np.cumsum(x, axis=-1))
        inc = dc.scan(add, b, initial=5).numpy()
        np.testing.assert_array_equal(inc, 5 + np.cumsum(x, axis=-1, dtype=np.int32))
        exc = dc.scan(add, b, exclusive=True, initial=-2).numpy()
        want = np.concatenate([np.zeros(shape[:-1] + (1,), np.int32), np.cumsum(x, axis=-1)[..., :-1]], axis=-1)
        np.testing.assert_array_equal(exc, (want - 2)[..., :shape[-1]])


def test_order_kept_across_runs(accelerator):
    n = 20_000
    chunk, chunks = reduce_kernels.plan(2, n)
    assert chunks > 2
    z = np.zeros((2, n), np.int64)
    z[0, [chunk + 3, 2 * chunk + 1]] = [4, 6]  # row 0: 4 from inside run 1, 6 from inside run 2
    z[1, n - 1] = 9  # row 1: zeros until its very last element
    got = dc.scan(last_nonzero, accelerator.asarray(z)).numpy()
    want = np.zeros_like(z)
    want[0, chunk + 3:] = 4
    want[0, 2 * chunk + 1:] = 6
    want[1, n - 1] = 9
    np.testing.assert_array_equal(got, want)
    # float: each run folds in order from its prefix, so the sums are close to numpy's sequential ones
    y = np.random.default_rng(1).standard_normal(n).astype(np.float64)
    with dispatch.prefer("portable"):
        np.testing.assert_allclose(dc.ops.cumsum(accelerator.asarray(y)).numpy(), np.cumsum(y), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 5, 4097, 300_001])
@pytest.mark.parametrize("dtype", ["float32", "int16", "bool"])
def test_nonzero_by_runs(accelerator, n, dtype):
    """dc.nonzero of 1-d device buffers (OpenCL CPU devices: counted, then written by runs): NaN is not
    zero, -0.0 is; runs with no non-zero element, all non-zero, a lone one at either end."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * (rng.random(n) < 0.3)).astype(dtype)
    if n > 4096 and dtype == "float32":
        x[:4096] = 0  # the first run(s) empty
        x[1] = -0.0
        x[5000:9000] = np.nan  # a block of NaNs, every one selected
        x[-1] = 1
    for v in (x, np.zeros_like(x), np.ones_like(x)):
        got = dc.nonzero(accelerator.asarray(v))
        assert len(got) == 1 and got[0].dtype == np.int64
        np.testing.assert_array_equal(got[0].numpy(), np.nonzero(v)[0])


@pytest.mark.parametrize("shape", [(3, 5), (64, 129), (2, 3, 701), (4, 0)])
def test_nonzero_coordinates(accelerator, shape):
    """n-d dc.nonzero: one int64 coordinate array per axis, C order, as numpy (OpenCL CPU devices:
    the flat positions by runs, then each axis's coordinate from them)."""
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    x[x < 0.5] = 0
    got = dc.nonzero(accelerator.asarray(x))
    want = np.nonzero(x)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g.numpy(), w)
    np.testing.assert_array_equal([c.numpy() for c in dc.nonzero(accelerator.asarray(x) > 1)], np.nonzero(x > 1))
