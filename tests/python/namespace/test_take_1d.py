"""dc.take and dc.nonzero of a 1-D buffer on devices: the division-free gather (outer = inner = 1)
and scatter, and the bounds check by one fused count of out-of-range indices (issue 24); numpy's
results and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.int16])
def test_take_1d_matches_numpy(accelerator: dc.Accelerator, dtype: type) -> None:
    rng = np.random.default_rng(5)
    src = rng.standard_normal(1001).astype(np.float32)
    low = 0 if np.dtype(dtype).kind == "u" else -1001
    where = rng.integers(low, 1001, 777).astype(dtype)
    where[:3] = np.array([0, 1000, 1000 if low == 0 else -1001], dtype)  # both ends, the last from the end
    out = dc.take(accelerator.asarray(src), accelerator.asarray(where))
    np.testing.assert_array_equal(np.asarray(out), np.take(src, where))


def test_take_1d_empty_and_2d_axis_still_right(accelerator: dc.Accelerator) -> None:
    src = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = accelerator.asarray(src)
    idx = accelerator.asarray(np.array([2, -1, 0], np.int64))
    np.testing.assert_array_equal(np.asarray(dc.take(x, idx, axis=0)), np.take(src, [2, -1, 0], axis=0))
    np.testing.assert_array_equal(np.asarray(dc.take(x, idx, axis=1)), np.take(src, [2, -1, 0], axis=1))
    empty = dc.take(accelerator.asarray(src[0]), accelerator.asarray(np.zeros(0, np.int64)))
    assert empty.shape == (0,)


@pytest.mark.parametrize("bad", [[5, 12], [-13], [3, -13, 40]])
def test_take_out_of_bounds_names_an_index(accelerator: dc.Accelerator, bad: list[int]) -> None:
    x = accelerator.asarray(np.arange(12, dtype=np.float32))
    with pytest.raises(IndexError, match="out of bounds for an axis of size 12"):
        dc.take(x, accelerator.asarray(np.array(bad, np.int64)))


def test_unsigned_index_past_the_end(accelerator: dc.Accelerator) -> None:
    x = accelerator.asarray(np.arange(12, dtype=np.float32))
    with pytest.raises(IndexError, match="index 12 is out of bounds"):
        dc.take(x, accelerator.asarray(np.array([0, 12], np.uint32)))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_nonzero_1d_matches_numpy(accelerator: dc.Accelerator, dtype: type) -> None:
    # the 1-D scatter writes the flat position itself; NaN and -0.0 count as numpy counts them
    src = np.array([0, 3, 0, -1, 0, 0, 7, 1, 0, 2] * 37, dtype=dtype)
    if np.dtype(dtype).kind == "f":
        src[5], src[8] = np.nan, -0.0
    (got,) = dc.nonzero(accelerator.asarray(src))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(got), np.nonzero(src)[0])
    (none,) = dc.nonzero(accelerator.asarray(np.zeros(9, dtype)))
    assert none.shape == (0,)
