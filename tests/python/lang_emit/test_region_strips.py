"""The CPU backend runs a long region (the code between two barriers) in strips of one SIMD vector of
items with a constant trip count, then the rest of the group's items in the usual loop
(lang/emit/cpu.py): every item runs once, whatever the work-group's size and the host's vector width,
and short regions keep one loop."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang.emit import cpu as emit_cpu

V4 = dc.vector(4, dc.float32)
M44 = dc.matrix(4, 4, dc.float32)
W = 48  # work-group memory: W columns of a 16-row tile


@dc.kernel
def long_region(x: dc.Buffer[dc.float32, 1], out: dc.Buffer[dc.float32, 1]):
    # each item stages one value, then (after the barrier) adds 8 outer products of values its
    # neighbours staged: a straight-line region of several hundred statements
    tile = dc.shared((W,), dc.float32)
    g = dc.global_id(0)
    t = dc.local_id(0)
    n = x.shape[0]
    tile[t] = x[g] if g < n else dc.float32(0)
    dc.barrier()
    s = dc.local_size(0)
    acc = M44(dc.float32(0))
    acc += dc.outer(V4(tile[t], tile[(t + 1) % s], tile[(t + 2) % s], tile[(t + 3) % s]), V4(1.0, 2.0, 3.0, 4.0))
    acc += dc.outer(V4(tile[(t + 4) % s], tile[t], tile[t], tile[t]), V4(tile[t], 1.0, 0.5, 0.25))
    acc += dc.outer(V4(tile[(t + 5) % s], tile[t], 2.0, 3.0), V4(1.0, tile[(t + 1) % s], 1.0, 1.0))
    acc += dc.outer(V4(1.0, 1.0, tile[(t + 6) % s], 1.0), V4(tile[(t + 2) % s], 1.0, 1.0, 2.0))
    acc += dc.outer(V4(tile[t], tile[t], tile[t], tile[t]), V4(1.0, 1.0, 1.0, 1.0))
    acc += dc.outer(V4(2.0, tile[(t + 7) % s], 2.0, 2.0), V4(tile[t], tile[t], 3.0, 1.0))
    acc += dc.outer(V4(tile[(t + 1) % s], 0.5, 0.5, tile[(t + 3) % s]), V4(2.0, 2.0, tile[t], 2.0))
    acc += dc.outer(V4(tile[(t + 2) % s], 1.0, 1.0, 1.0), V4(1.0, tile[(t + 5) % s], 1.0, tile[t]))
    dc.barrier()
    if g < n:
        total = dc.float32(0)
        for r in range(4):
            for c in range(4):
                total += acc[r, c] * dc.float32(r * 4 + c + 1)
        out[g] = total


@dc.kernel
def short_region(x: dc.Buffer[dc.float32, 1], out: dc.Buffer[dc.float32, 1]):
    tile = dc.shared((W,), dc.float32)
    g = dc.global_id(0)
    t = dc.local_id(0)
    tile[t] = x[g] if g < x.shape[0] else dc.float32(0)
    dc.barrier()
    if g < x.shape[0]:
        out[g] = tile[(t + 1) % dc.local_size(0)] * 2.0


def _reference(x: np.ndarray, local: int) -> np.ndarray:
    """long_region in numpy, group by group (float64: the kernel's sums differ in rounding only)."""
    out = np.zeros(x.size)
    padded = np.concatenate([x, np.zeros(-x.size % local, np.float32)]).astype(np.float64)
    weights = np.arange(1, 17, dtype=np.float64).reshape(4, 4)
    for g0 in range(0, x.size, local):
        tile = padded[g0:g0 + local]
        for t in range(min(local, x.size - g0)):
            def v(d: int, t: int = t, tile: np.ndarray = tile) -> float:
                return tile[(t + d) % local]
            pairs = [((v(0), v(1), v(2), v(3)), (1, 2, 3, 4)), ((v(4), v(0), v(0), v(0)), (v(0), 1, 0.5, 0.25)),
                     ((v(5), v(0), 2, 3), (1, v(1), 1, 1)), ((1, 1, v(6), 1), (v(2), 1, 1, 2)),
                     ((v(0),) * 4, (1, 1, 1, 1)), ((2, v(7), 2, 2), (v(0), v(0), 3, 1)),
                     ((v(1), 0.5, 0.5, v(3)), (2, 2, v(0), 2)), ((v(2), 1, 1, 1), (1, v(5), 1, v(0)))]
            acc = sum(np.outer(a, b) for a, b in pairs)
            out[g0 + t] = (acc * weights).sum()
    return out


def test_only_long_regions_run_in_strips():
    src = long_region.source("cpu")
    # one vector of the region's float32 values, its width the compiler's (the prologue defines it)
    assert f"dc_j0 < ({emit_cpu.STRIP_BYTES_MACRO} / 4)" in src
    assert src.index(f"#define {emit_cpu.STRIP_BYTES_MACRO} 32") < src.index("#include <dotcompute/cpu_kernel_abi.h>")
    assert "dc_j0" not in short_region.source("cpu")
    assert emit_cpu.STRIP_BYTES_MACRO not in short_region.source("cpu")


@dc.kernel
def long_region_f64(x: dc.Buffer[dc.float64, 1], out: dc.Buffer[dc.float64, 1]):
    g = dc.global_id(0)
    t = dc.local_id(0)
    s = dc.local_size(0)
    tile = dc.shared((W,), dc.float64)
    tile[t] = x[g] if g < x.shape[0] else dc.float64(0)
    dc.barrier()
    acc = dc.matrix(4, 4, dc.float64)(dc.float64(0))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 0) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 1) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 1) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 2) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 2) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 3) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 3) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 4) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 4) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 5) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 5) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 6) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 6) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 7) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 7) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 8) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 8) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 9) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 9) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 10) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 10) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 11) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 11) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 12) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 12) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 13) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 13) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 14) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 14) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 15) % s], tile[t], 0.5))
    acc += dc.outer(dc.vector(4, dc.float64)(tile[(t + 15) % s], tile[t], 1.0, 2.0),
                    dc.vector(4, dc.float64)(1.0, tile[(t + 16) % s], tile[t], 0.5))
    dc.barrier()
    if g < x.shape[0]:
        out[g] = acc[0, 0] + acc[1, 1] + acc[2, 2] + acc[3, 3] + acc[0, 3]


def test_strips_of_float64_values_are_half_as_many_items():
    src = long_region_f64.source("cpu")
    assert f"dc_j0 < ({emit_cpu.STRIP_BYTES_MACRO} / 8)" in src
    local = 12  # strips of 4 (256-bit) or 2 (128-bit) items, or none (512-bit: 8 items, then a rest of 4)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(3 * local).astype(np.float64)
    out = np.zeros_like(x)
    dc.launch(long_region_f64, x.size, x, out, accelerator="cpu", local_size=local)
    want = np.zeros_like(x)
    for g0 in range(0, x.size, local):
        tile = x[g0:g0 + local]
        for t in range(local):
            acc = sum(np.outer([tile[(t + i) % local], tile[t], 1.0, 2.0],
                               [1.0, tile[(t + i + 1) % local], tile[t], 0.5]) for i in range(16))
            want[g0 + t] = acc[0, 0] + acc[1, 1] + acc[2, 2] + acc[3, 3] + acc[0, 3]
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)


# local sizes: whole strips (16, 32), strips and a rest (24, 40), fewer items than a strip (8, 1)
@pytest.mark.parametrize("local", [16, 32, 24, 40, 8, 1])
def test_every_item_runs_once_in_strips_and_the_rest(local):
    rng = np.random.default_rng(local)
    x = rng.standard_normal(4 * local + 3).astype(np.float32)  # a partial last group too
    out = np.full(x.size, np.nan, np.float32)
    dc.launch(long_region, -(-x.size // local) * local, x, out, accelerator="cpu", local_size=local)
    np.testing.assert_allclose(out, _reference(x, local), rtol=2e-5, atol=1e-4)
