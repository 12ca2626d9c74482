"""The generated MSL compiled as C++ with tests/support/metal_shim and executed on the CPU."""

from __future__ import annotations

import sys
from pathlib import Path

import irkit
import numpy as np
import pytest
from test_emit_semantics import INT_CASES, int_ref

from dotcompute.lang.emit import emit
from dotcompute.lang.types import FLOAT32, INT32, INT64, UINT32

SHIM = Path(__file__).resolve().parents[2] / "support" / "metal_shim"
if not (SHIM / "runner.py").exists():
    pytest.skip("tests/support/metal_shim is missing", allow_module_level=True)
sys.path.insert(0, str(SHIM))
from runner import run_msl  # noqa: E402


def test_vadd_partial_group():
    a, b = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    run_msl(emit(irkit.vadd(), "metal").text, [a, b, out], global_size=100, local_size=32)
    np.testing.assert_array_equal(out, a + b)


def test_tiled_matmul_with_barriers():
    n = 8
    rng = np.random.default_rng(3)
    A, B = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    C = np.zeros((n, n), np.float32)
    run_msl(emit(irkit.matmul_tiled(4), "metal").text, [A, B, C], global_size=(n, n), local_size=(4, 4))
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


def test_reduction_barrier_in_while():
    x = np.random.default_rng(4).random(64, np.float32)
    out = np.zeros(4, np.float32)
    run_msl(emit(irkit.reduce_sum(16), "metal").text, [x, out], global_size=64, local_size=16)
    np.testing.assert_allclose(out, x.reshape(4, 16).sum(1), rtol=1e-5)


@pytest.mark.parametrize("t", [INT32, INT64, UINT32], ids=str)
@pytest.mark.parametrize("op", ["Mult", "FloorDiv", "Mod", "LShift", "RShift"])
def test_integer_semantics(t, op):
    cases = INT_CASES[t]
    dt = np.dtype(t.name)
    a = np.array([x for x, _ in cases], dt)
    b = np.array([y for _, y in cases], dt)
    out = np.zeros(len(cases), dt)
    run_msl(emit(irkit.elementwise(op, t), "metal").text, [a, b, out], global_size=len(cases), local_size=4)
    assert out.tolist() == [int_ref(op, int(x), int(y), t) for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("t", [INT32, UINT32, FLOAT32], ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "min", "max"])
def test_atomics(t, op):
    n = 32
    dt = np.dtype(t.name)
    idx = (np.arange(n) % 4).astype(np.int32)
    val = (np.arange(n) % 7 + 1).astype(dt)
    acc = np.full(4, 50, dt)
    old = np.zeros(n, dt)
    run_msl(emit(irkit.atomics(t, op), "metal").text, [idx, val, acc, old], global_size=n, local_size=8)
    groups = [val[idx == k] for k in range(4)]
    expect = {"add": [50 + g.sum() for g in groups], "sub": [np.array(50, dt) - g.sum(dtype=dt) for g in groups],
              "min": [min(50, g.min()) for g in groups], "max": [max(50, g.max()) for g in groups]}[op]
    np.testing.assert_array_equal(acc, np.array(expect, dt))


@pytest.mark.parametrize("local", [4, 8])
def test_barrier_inside_uniform_if(local):
    from test_emit_targets import _uniform_if_module
    xs = np.arange(16, dtype=np.float32)
    res = np.zeros(16, np.float32)
    run_msl(emit(_uniform_if_module(), "metal").text, [xs, res], global_size=16, local_size=local)
    if local == 4:
        assert (res == -1).all()
    else:
        assert res.tolist() == list(range(7, -1, -1)) + list(range(15, 7, -1))
