"""argmin/argmax against numpy on every device, shaped around the chunked passes that CPU-type devices
take (ops/reduce.py `_arg_chunked`): rows longer than 32 (one or several chunks of ARG_RUN each),
columns longer than two COLUMN_CHUNKs, and all of an array; ties (the first index), NaN (the first
NaN), -0.0 beside 0.0, infinities, odd sizes, a 1-element axis and empty input. The portable
kernels are forced, so cpu:0 runs them too; other devices check their own paths on the same data."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch

_reduce = importlib.import_module("dotcompute.ops.reduce")
RUN = _reduce.rk.ARG_RUN
CHUNK = _reduce.COLUMN_CHUNK

# (shape, axis): rows just past the short-row kernel, rows of several chunks with a partial last one,
# columns of several chunks (inner 8 and 5, outer 1 and 3), a column with inner 1, a 1-element axis
COL8, COL5 = _reduce.column_arg_chunk(8), _reduce.column_arg_chunk(5)  # narrow columns: longer chunks
CASES = [((5, 33), 1), ((3, 2 * RUN + 5), 1), ((1, 3 * RUN + 7), None), ((2 * CHUNK + 1, 8), 0),
         ((2 * COL8 + 3, 8), 0), ((3, 2 * COL5 + 1, 5), 1), ((2 * CHUNK + 5, 40), 0), ((3, 3 * CHUNK + 5, 5), 1),
         ((4 * CHUNK + 3, 1), 0), ((6, 1), 1), ((1, 9), 0)]


def _arg(name: str, acc: dc.Accelerator, x: np.ndarray, axis: int | None) -> np.ndarray:
    with dispatch.prefer("portable"):
        return np.asarray(getattr(dc, name)(acc.asarray(x), axis=axis).numpy())


def _check(acc: dc.Accelerator, x: np.ndarray, axis: int | None, names: tuple[str, ...] = ("argmin", "argmax")):
    for name in names:
        got = _arg(name, acc, x, axis)
        want = getattr(np, name)(x, axis=axis)
        assert got.shape == want.shape, (name, x.shape, axis)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} of {x.dtype} {x.shape} axis={axis}")


@pytest.mark.parametrize("shape,axis", CASES)
def test_float32_with_ties_matches_numpy(accelerator, shape, axis):
    # few distinct values: every row has its extreme many times, in several chunks
    x = np.random.default_rng(11).integers(-3, 4, shape).astype(np.float32)
    _check(accelerator, x, axis)


@pytest.mark.parametrize("dtype,names", [(np.float64, ("argmax",)), (np.int32, ("argmin", "argmax")),
                                         (np.int64, ("argmin",)), (np.uint8, ("argmax",)),
                                         (np.int8, ("argmin",))])
@pytest.mark.parametrize("shape,axis", [((3, 2 * RUN + 5), 1), ((2 * COL8 + 3, 8), 0), ((1, 3 * RUN + 7), None)])
def test_dtypes_match_numpy(accelerator, dtype, names, shape, axis):
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)  # the extremes tie often
    _check(accelerator, x, axis, names)


def test_nan_positions_first_nan_wins(accelerator):
    rows = np.random.default_rng(2).standard_normal((6, 2 * RUN + 9)).astype(np.float32)
    rows[0, 2 * RUN + 3] = np.nan  # the last, partial chunk only
    rows[1, [RUN + 1, 5]] = np.nan  # two chunks: the earlier one wins
    rows[2, 0] = np.nan  # the first element
    rows[3, -1] = -np.nan  # a NaN with the sign bit: its key lies below -inf's
    rows[4, [7, 8]] = [np.inf, np.nan]
    _check(accelerator, rows, 1)
    _check(accelerator, rows, None)
    cols = np.random.default_rng(3).standard_normal((3 * COL8 + 2, 8)).astype(np.float32)
    cols[3 * COL8 + 1, 1] = np.nan  # the last, partial chunk
    cols[[2 * COL8, COL8 + 3], 2] = np.nan
    cols[0, 3] = -np.nan
    _check(accelerator, cols, 0)


def test_signed_zeros_and_infinities_tie_as_numpy(accelerator):
    n = RUN + 40
    x = -np.ones((4, n), np.float32)
    x[0, [10, 20]] = [-0.0, 0.0]  # argmax: -0.0 == 0.0, the first of them
    x[1, [RUN + 3, 30]] = [0.0, -0.0]
    x[2, :] = -np.inf  # all equal: index 0
    x[3, [5, RUN + 5]] = np.inf
    _check(accelerator, x, 1)
    _check(accelerator, -x, 1)  # the same as minima
    _check(accelerator, x.T.copy(), 0)


def test_empty_raises_like_numpy(accelerator):
    for name in ("argmin", "argmax"):
        with pytest.raises(ValueError):
            _arg(name, accelerator, np.zeros((0,), np.float32), None)
        with pytest.raises(ValueError):
            _arg(name, accelerator, np.zeros((3, 0), np.float32), 1)
        got = _arg(name, accelerator, np.zeros((0, 3), np.float32), 1)
        assert got.shape == (0,)
