"""An expression evaluated again with the same structure skips planning its program (expr/evaluate.py,
``quick_walk``): the kernel planned the first time, the new values as its arguments. Every case here
is one where two expressions look alike to a careless key -- the same dtypes and shapes, other
sharing, other broadcasting, other scalars -- and must still compute their own values."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.expr import codegen

evaluate = importlib.import_module("dotcompute.expr.evaluate")
RNG = np.random.default_rng(17)


def _arr(acc: dc.Accelerator, *shape: int, dtype: type = np.float32) -> tuple[np.ndarray, dc.Buffer]:
    x = RNG.standard_normal(shape).astype(dtype)
    return x, acc.asarray(x)


def _evaluated(expr: dc.Buffer) -> np.ndarray:
    return expr.numpy()


def test_the_second_evaluation_is_quick_and_right(accelerator):
    x, a = _arr(accelerator, 37)
    y, b = _arr(accelerator, 37)
    _evaluated(a * b + 1.5)  # planned: the structure is filed
    generated = codegen.STATS["kernels_generated"]
    planned = dict(evaluate._QUICK)
    for k in range(3):
        x2, a2 = _arr(accelerator, 37)
        got = _evaluated(a2 * b + (2.5 + k))  # new buffer, new scalar: the same program
        np.testing.assert_allclose(got, x2 * y + np.float32(2.5 + k), rtol=1e-6)
    assert codegen.STATS["kernels_generated"] == generated
    assert evaluate._QUICK == planned  # nothing new to file: every evaluation was a quick one
    assert ("ew", evaluate.quick_walk(a * b + 9.0)[0]) in planned


def test_sharing_is_part_of_the_structure(accelerator):
    x, a = _arr(accelerator, 64)
    y, b = _arr(accelerator, 64)
    for _ in range(2):  # each twice: the second evaluation of each is the quick one
        np.testing.assert_allclose(_evaluated(a * b), x * y, rtol=1e-6)
        np.testing.assert_allclose(_evaluated(a * a), x * x, rtol=1e-6)
        np.testing.assert_allclose(_evaluated(b * a), y * x, rtol=1e-6)
        # the same shape of tree; the last operand refers back to a different one of the first two
        np.testing.assert_allclose(_evaluated(a * b + a), x * y + x, rtol=1e-6)
        np.testing.assert_allclose(_evaluated(a * b + b), x * y + y, rtol=1e-6)
        s = a + b  # a pending value used twice in one expression: computed once, read twice
        np.testing.assert_allclose(_evaluated(s * s - a), (x + y) * (x + y) - x, rtol=1e-5, atol=1e-5)
        del s


def test_broadcasting_and_dtypes_are_part_of_the_structure(accelerator):
    x, a = _arr(accelerator, 5, 8)
    r, row = _arr(accelerator, 8)
    c, col = _arr(accelerator, 5, 1)
    i, ints = _arr(accelerator, 5, 8, dtype=np.int32)
    for _ in range(2):
        np.testing.assert_allclose(_evaluated(a + row), x + r, rtol=1e-6)
        np.testing.assert_allclose(_evaluated(a + col), x + c, rtol=1e-6)
        np.testing.assert_allclose(_evaluated(a + a), x + x, rtol=1e-6)
        got = _evaluated(ints + a)
        assert got.dtype == (i + x).dtype
        np.testing.assert_allclose(got, i + x, rtol=1e-6)


@pytest.mark.parametrize("n", [1, 16, 1000])
def test_scalars_and_zero_d_values(accelerator, n):
    x, a = _arr(accelerator, n)
    for k in range(3):
        got = _evaluated((a - k) * 0.5 + dc.sum(a) * 0)  # a 0-d value (a Buffer) and Python numbers
        np.testing.assert_allclose(got, (x - np.float32(k)) * np.float32(0.5), rtol=1e-5, atol=1e-5)


def test_views_and_held_values_take_the_planned_path(accelerator):
    x, a = _arr(accelerator, 6, 10)
    for _ in range(2):
        np.testing.assert_allclose(_evaluated(a[1:4, ::2] * 2.0), x[1:4, ::2] * 2, rtol=1e-6)
        held = a + 1.0  # held by a variable: written out by the same kernel, so never the quick path
        np.testing.assert_allclose(_evaluated(held * 3.0), (x + 1) * 3, rtol=1e-6)
        np.testing.assert_allclose(held.numpy(), x + 1, rtol=1e-6)
        del held
    assert evaluate.quick_walk(a[1:4, ::2] * 2.0) is None


def test_the_quick_key_sees_the_operation_and_its_extra(accelerator):
    x, a = _arr(accelerator, 33)
    xp = np.abs(x) + 0.5
    p = accelerator.asarray(xp)
    for _ in range(2):
        np.testing.assert_allclose(_evaluated(p ** 2), xp ** 2, rtol=1e-6)
        np.testing.assert_allclose(_evaluated(p ** 3), xp ** 3, rtol=1e-5)
        np.testing.assert_allclose(_evaluated(dc.sqrt(p)), np.sqrt(xp), rtol=1e-6)
        np.testing.assert_allclose(_evaluated(dc.exp(a * 0.1)), np.exp(x * np.float32(0.1)), rtol=1e-5)


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "argmin"])
def test_fused_reductions_plan_once_per_structure(accelerator, kind, device_slice):
    """A fused reduction (``dc.sum(a * b)``: one kernel over the expression) takes the same quick
    path: new operands and sharing patterns, each result its own."""
    device_slice(kind in ("sum", "argmin"), "a sum and an argmin (the two kinds of partial results)")
    x, a = _arr(accelerator, 300)
    y, b = _arr(accelerator, 300)
    fn, ref = getattr(dc, kind), getattr(np, kind)
    for _ in range(2):
        for got, want in ((fn(a * b), ref(x * y)), (fn(a * a), ref(x * x)), (fn(a * b + a), ref(x * y + x)),
                          (fn(a * b + b), ref(x * y + y))):
            if kind == "argmin":
                assert int(got) == int(want)
            else:
                np.testing.assert_allclose(float(got), float(want), rtol=2e-5, atol=1e-4)
    structure = ("reduce", kind, accelerator.type == "gpu", evaluate.quick_walk(a * b + b)[0])
    assert structure in evaluate._QUICK
