"""Portable reductions over a non-last axis (inner > 1) against numpy on every device. On CPU-type
devices they run in two passes, chunks of COLUMN_CHUNK reduced positions per work-item and then the
chunks' partials (ops/reduce.py): sizes around the chunk, a last partial chunk, outer > 1, integer
min/max, NaN propagation and the mean's scale."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch

CHUNK = importlib.import_module("dotcompute.ops.reduce").COLUMN_CHUNK
SHAPES = [((2 * CHUNK + 1, 16), 0), ((5 * CHUNK - 3, 40), 0), ((3, 3 * CHUNK, 17), 1), ((2, 7 * CHUNK + 5, 33), 1),
          ((4 * CHUNK, 15), 0)]  # the last: inner below the column path's threshold (the plain rows kernel)


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("name", ["sum", "max", "min", "mean"])
def test_float_reductions_over_columns_match_numpy(accelerator, shape, axis, name):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        got = getattr(dc.ops, name)(b, axis=axis).numpy()
    np.testing.assert_allclose(got, getattr(np, name)(x, axis=axis), rtol=3e-6 * shape[axis], atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_columns_exact(accelerator, dtype):
    x = np.random.default_rng(3).integers(0, 200, (3 * CHUNK + 7, 48)).astype(dtype)
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        for name in ("max", "min"):
            np.testing.assert_array_equal(getattr(dc.ops, name)(b, axis=0).numpy(), getattr(np, name)(x, axis=0))
        total = dc.ops.sum(b, axis=0).numpy()
    np.testing.assert_array_equal(total, x.sum(axis=0))  # numpy's accumulator types (uint8 -> uint64)
    assert total.dtype == x.sum(axis=0).dtype


def test_nan_in_a_late_chunk_propagates(accelerator):
    x = np.ones((3 * CHUNK + 2, 20), np.float32)
    x[3 * CHUNK + 1, 5] = np.nan  # the last, partial chunk
    x[CHUNK, 6] = np.nan
    with dispatch.prefer("portable"):
        got = dc.ops.max(accelerator.asarray(x), axis=0).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(x.max(axis=0)))
