"""The CPU emitter's fastmath fold of ``a / (x * sqrt(x))`` into ``a / sqrt(x * x * x)`` (lang/emit/cpu.py):
the n-body result stays numpy's (float64 reference) within fastmath's tolerance, and kernels without
fastmath keep numpy's float32 arithmetic bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

EPS = np.float32(1e-3)


def _nbody(fastmath: bool, root_first: bool):
    """The bench's n-body step (bench/dotcompute_workloads.py), with the divisor's factors in either order."""
    if root_first:
        def step(pos: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2], eps: dc.float32):
            i = dc.global_id(0)
            n = pos.shape[1]
            if i < n:
                ax = dc.float32(0.0)
                ay = dc.float32(0.0)
                az = dc.float32(0.0)
                for j in range(n):
                    dx = pos[0, j] - pos[0, i]
                    dy = pos[1, j] - pos[1, i]
                    dz = pos[2, j] - pos[2, i]
                    r2 = dx * dx + dy * dy + dz * dz + eps
                    inv = 1.0 / (dc.sqrt(r2) * r2)
                    ax += dx * inv
                    ay += dy * inv
                    az += dz * inv
                out[0, i] = ax
                out[1, i] = ay
                out[2, i] = az
    else:
        def step(pos: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2], eps: dc.float32):
            i = dc.global_id(0)
            n = pos.shape[1]
            if i < n:
                ax = dc.float32(0.0)
                ay = dc.float32(0.0)
                az = dc.float32(0.0)
                for j in range(n):
                    dx = pos[0, j] - pos[0, i]
                    dy = pos[1, j] - pos[1, i]
                    dz = pos[2, j] - pos[2, i]
                    r2 = dx * dx + dy * dy + dz * dz + eps
                    inv = 1.0 / (r2 * dc.sqrt(r2))
                    ax += dx * inv
                    ay += dy * inv
                    az += dz * inv
                out[0, i] = ax
                out[1, i] = ay
                out[2, i] = az
    return dc.kernel(fastmath=fastmath)(step)


@dc.kernel(fastmath=True)
def other_root(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        a = x[i]
        b = y[i]
        out[i] = 2.0 / (a * dc.sqrt(b))  # two different values: nothing to fold


def _reference(pos: np.ndarray) -> np.ndarray:
    p = pos.astype(np.float64)
    d = p[:, None, :] - p[:, :, None]  # d[:, i, j] = p_j - p_i
    r2 = (d * d).sum(axis=0) + float(EPS)
    return (d / (r2 * np.sqrt(r2))).sum(axis=2)


def _numpy_float32(pos: np.ndarray) -> np.ndarray:
    """The kernel's own float32 operations in its order (j ascending), vectorised over i."""
    n = pos.shape[1]
    acc = np.zeros((3, n), np.float32)
    for j in range(n):
        d = pos[:, j:j + 1] - pos  # (3, n): p_j - p_i for every i
        r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS
        inv = np.float32(1.0) / (r2 * np.sqrt(r2))
        acc += d * inv
    return acc


@pytest.mark.parametrize("root_first", [False, True])
@pytest.mark.parametrize("n", [1, 257, 1024])
def test_fastmath_nbody_matches_the_float64_reference(cpu, n, root_first):
    pos = np.random.default_rng(n).random((3, n), dtype=np.float32)
    out = np.full((3, n), np.nan, np.float32)
    dc.launch(_nbody(True, root_first), n, pos, out, EPS, accelerator=cpu)
    want = _reference(pos)
    np.testing.assert_allclose(out, want, rtol=2e-3, atol=2e-3 * max(np.abs(want).max(), 1.0))


@pytest.mark.parametrize("root_first", [False, True])
def test_without_fastmath_the_kernel_keeps_numpy_float32_bits(cpu, root_first):
    pos = np.random.default_rng(7).random((3, 257), dtype=np.float32)
    out = np.zeros_like(pos)
    dc.launch(_nbody(False, root_first), 257, pos, out, EPS, accelerator=cpu)
    np.testing.assert_array_equal(out, _numpy_float32(pos))


def test_the_fold_is_fastmath_only_and_needs_one_value():
    fast, ieee = _nbody(True, False).source("cpu"), _nbody(False, False).source("cpu")
    assert "r2 * r2 * r2" in fast
    assert "r2 * r2 * r2" not in ieee
    assert "* __builtin_sqrtf(b)" in other_root.source("cpu")


def test_a_product_of_two_values_is_left_alone(cpu):
    x = np.array([1.0, 4.0, 0.25, 9.0], np.float32)
    y = np.array([4.0, 1.0, 16.0, 0.01], np.float32)
    out = np.zeros_like(x)
    dc.launch(other_root, 4, x, y, out, accelerator=cpu)
    np.testing.assert_allclose(out, 2.0 / (x.astype(np.float64) * np.sqrt(y.astype(np.float64))), rtol=1e-4)
