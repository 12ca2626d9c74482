"""Reductions down 8 or more columns fold eight columns per work-item on CPU-type devices
(ops/reduce_columns.py): against numpy on every device (other devices take their own paths and are
checked the same way) with one to many chunks of rows, a short last chunk, a partial last block of
columns, outer > 1, NaN, integers; and the same bits as the one-column chunk kernel it replaces."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch, reduce_columns, reduce_kernels
from dotcompute.ops.reduce import COLUMN_CHUNK

C = COLUMN_CHUNK
# (shape, axis): inner 8, 24, 64, 1024 and odd ones (a partial last block); rows 1, a few, one chunk,
# two chunks + 1, many chunks
SHAPES = [((1, 8), 0), ((5, 24), 0), ((2 * C + 1, 8), 0), ((7 * C + 3, 64), 0), ((3, 2 * C + 9, 16), 1),
          ((130 * C + 1, 8), 0), ((33, 1024), 0), ((3 * C + 1, 9), 0), ((2, 2 * C + 5, 1001), 1), ((7, 15), 0)]


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_column_blocks_match_numpy(accelerator, shape, axis, name):
    spread = 0.01 if name == "prod" else 0.5  # products of thousands of rows stay far from underflow
    x = np.random.default_rng(11).uniform(1 - spread, 1 + spread, shape).astype(np.float32)
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        got = getattr(dc.ops, name)(b, axis=axis).numpy()
    want = getattr(np, name)(x, axis=axis)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6 * np.sqrt(shape[axis]) + 1e-6)


def test_nan_and_integers_in_column_blocks(accelerator):
    x = np.random.default_rng(2).standard_normal((3 * C + 5, 40)).astype(np.float32)
    x[3 * C + 2, 37] = np.nan  # the last block's last column, in the short last chunk
    x[1, 8] = np.nan
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        for name in ("sum", "max", "min"):
            got, want = getattr(dc.ops, name)(b, axis=0).numpy(), getattr(np, name)(x, axis=0)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        k = np.random.default_rng(4).integers(-1000, 1000, (2 * C + 3, 16)).astype(np.int32)
        kb = accelerator.asarray(k)
        np.testing.assert_array_equal(dc.ops.sum(kb, axis=0).numpy(), k.sum(axis=0))
        np.testing.assert_array_equal(dc.ops.max(kb, axis=0).numpy(), k.max(axis=0))


@pytest.mark.parametrize("n,inner", [(1, 48), (63, 45), (64, 48), (65, 8), (200, 21)])
def test_same_bits_as_the_one_column_kernel(accelerator, n, inner):
    """Each column is folded in row order per chunk by both kernels: equal bits, partials included."""
    if accelerator.type != "cpu":
        pytest.skip("the column kernels of CPU-type devices")
    x = np.random.default_rng(n).standard_normal((2, n, inner)).astype(np.float32)
    flat = accelerator.asarray(x.reshape(-1))
    chunks = -(-n // C)
    add = reduce_kernels.op_add
    blocks = reduce_columns.fold_column_blocks(add, flat, 2, n, inner, np.float32, C)
    one = accelerator.empty((2 * chunks * inner,), np.float32)
    accelerator.launch(reduce_kernels.column_chunks_kernel(add, np.float32), one.size, flat, one, n, inner, C)
    assert blocks.numpy().tobytes() == one.numpy().tobytes()
    # one chunk of all rows: the column sums in row order, as numpy's axis-0 loop adds them
    whole = reduce_columns.fold_column_blocks(add, flat, 2, n, inner, np.float32, n).numpy()
    np.testing.assert_array_equal(whole.reshape(2, inner), np.add.reduce(x, axis=1))
