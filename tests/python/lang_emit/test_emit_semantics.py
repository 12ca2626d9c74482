"""Python semantics of the generated code: each operator run for real on the CPU (g++) and on
OpenCL (PoCL), compared with Python's own answer under the documented wrapping rules."""

from __future__ import annotations

import math

import harness
import irkit
import numpy as np
import pytest

from dotcompute.lang.emit import emit
from dotcompute.lang.types import BOOL, FLOAT32, FLOAT64, INT32, INT64, UINT32, wrap_int

RUNNERS = ["cpu", "opencl"]


def run(backend: str, module, n: int, args: list, local: int = 8) -> None:
    e = emit(module, backend)
    if backend == "cpu":
        harness.run_cpu(e, (n,), (local,), args)
    else:
        cl = harness.opencl()
        if cl is None:
            pytest.skip("no OpenCL platform (install pocl-opencl-icd)")
        cl.run(e, (n,), (local,), args)


def int_ref(op: str, a: int, b: int, t) -> int:
    if op == "FloorDiv":
        r = 0 if b == 0 else a // b
    elif op == "Mod":
        r = 0 if b == 0 else a % b
    elif op == "Pow":
        if b < 0:
            r = 1 if a == 1 else ((-1 if b % 2 else 1) if a == -1 else 0)
        else:
            r = pow(a, b, 1 << t.bits)
    elif op == "LShift":
        r = 0 if not 0 <= b < t.bits else a << b
    elif op == "RShift":
        r = (0 if b < 0 else (a >> b if b < t.bits else (-1 if a < 0 else 0)))
    else:
        r = {"Add": a + b, "Sub": a - b, "Mult": a * b}[op]
    return wrap_int(r, t)


INT_CASES = {
    INT32: [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (-2 ** 31, -1), (2 ** 31 - 1, 1), (-2 ** 31, 3),
            (3, 31), (3, 32), (-5, 40), (-1, -1), (0, 5), (123456, 789)],
    INT64: [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (-2 ** 63, -1), (2 ** 63 - 1, 1), (-9, 63),
            (3, 64), (-5, 70), (2 ** 40, 3), (-1, -1), (0, 5), (10 ** 12, 7)],
    UINT32: [(7, 2), (0, 3), (2 ** 32 - 1, 2), (5, 0), (1, 31), (1, 32), (100, 7), (3, 40)],
}


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("t", [INT32, INT64, UINT32], ids=str)
@pytest.mark.parametrize("op", ["Add", "Sub", "Mult", "FloorDiv", "Mod", "Pow", "LShift", "RShift"])
def test_integer_operators(backend, t, op):
    cases = INT_CASES[t]
    if op == "Pow":
        cases = [(a, b % 50 if t == UINT32 else (b if b < 50 else 3)) for a, b in cases]
    dt = np.dtype(t.name)
    a = np.array([x for x, _ in cases], dt)
    b = np.array([y for _, y in cases], dt)
    out = np.zeros(len(cases), dt)
    run(backend, irkit.elementwise(op, t), len(cases), [a, b, out])
    expect = [int_ref(op, int(x), int(y), t) for x, y in zip(a, b, strict=False)]
    assert out.tolist() == expect, list(zip(a.tolist(), b.tolist(), strict=False))


FLOATS = [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (0.0, 3.0), (-0.0, 3.0), (1e30, 3.0),
          (5.0, 0.5), (-1e-3, 7.0), (3.0, math.inf), (-3.0, math.inf), (2.0, 3.0)]


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("t", [FLOAT32, FLOAT64], ids=str)
@pytest.mark.parametrize("op", ["FloorDiv", "Mod", "TrueDiv", "Pow", "min", "max"])
def test_float_operators(backend, t, op):
    dt = np.dtype(t.name)
    a = np.array([x for x, _ in FLOATS], dt)
    b = np.array([y for _, y in FLOATS], dt)
    out = np.zeros(len(FLOATS), dt)
    run(backend, irkit.elementwise(op, t), len(FLOATS), [a, b, out])
    with np.errstate(all="ignore"):
        ref = {"FloorDiv": np.floor_divide, "Mod": np.remainder, "TrueDiv": np.true_divide,
               "Pow": np.power}.get(op)
        if ref is not None:
            expect = ref(a, b)
        else:  # Python's min/max: the second operand only when strictly smaller/greater
            expect = np.array([min(x, y) if op == "min" else max(x, y) for x, y in zip(a, b, strict=False)], dt)
    np.testing.assert_allclose(out, expect, rtol=2e-7 if t == FLOAT32 else 1e-15)
    assert (np.signbit(out) == np.signbit(expect)).all()  # -0.0 results keep their sign, as in Python


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("src", [FLOAT32, FLOAT64], ids=str)
@pytest.mark.parametrize("dst", [INT32, INT64, UINT32], ids=str)
def test_float_to_int_truncates_and_saturates(backend, src, dst):
    vals = [2.7, -2.7, 0.0, -0.5, 1e20, -1e20, math.nan, math.inf, -math.inf, 3e9, 123.0]
    a = np.array(vals, np.dtype(src.name))
    out = np.zeros(len(vals), np.dtype(dst.name))
    run(backend, irkit.elementwise("cvt", src, dst), len(vals), [a, a, out])
    info = np.iinfo(np.dtype(dst.name))
    expect = [0 if math.isnan(x) else int(min(max(math.trunc(x) if math.isfinite(x) else x, info.min), info.max))
              for x in a.tolist()]
    assert out.tolist() == expect


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("t", [INT32, INT64], ids=str)
def test_abs_of_most_negative_wraps(backend, t):
    lo = -(2 ** (t.bits - 1))
    a = np.array([lo, -5, 0, 7], np.dtype(t.name))
    out = np.zeros(4, a.dtype)
    run(backend, irkit.elementwise("abs", t), 4, [a, a, out])
    assert out.tolist() == [lo, 5, 0, 7]


@pytest.mark.parametrize("backend", RUNNERS)
def test_math_functions_float32(backend):
    names = ["sqrt", "exp", "log", "sin", "floor", "ceil", "trunc", "round", "fabs", "atan2", "hypot",
             "copysign", "fmod", "rsqrt", "cbrt", "log1p", "expm1"]
    a = np.array([0.25, 2.5, 3.5, 10.0], np.float32)
    b = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
    for name in names:
        out = np.zeros(4, np.float32)
        run(backend, irkit.elementwise(name, FLOAT32, name=f"m_{name}"), 4, [a, b, out])
        ref = {"rsqrt": lambda x: 1 / np.sqrt(x), "round": np.rint, "fabs": np.abs, "atan2": np.arctan2,
               "hypot": np.hypot, "copysign": np.copysign, "fmod": np.fmod}.get(name, getattr(np, name, None))
        args = (a, b) if name in ("atan2", "hypot", "copysign", "fmod") else (a,)
        np.testing.assert_allclose(out, ref(*args).astype(np.float32), rtol=1e-5, err_msg=name)


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("t", [INT32, INT64], ids=str)
def test_small_constant_powers(backend, t):
    import irkit as k

    from dotcompute.lang import ir
    a = k.buf("a", t, 1, 0)
    out = k.buf("out", t, 1, 1, read=False, written=True)
    body = [k.assign("i", k.gid(0)),
            k.store(out, [k.v("i")], k.binop("Add", k.binop("Pow", k.load(a, k.v("i")), k.c(3, t)),
                                             k.binop("Pow", k.load(a, k.v("i")), k.c(0, t))))]
    m = k.kernel(f"pow3_{t}", [a, out], body, [k.local("i")])
    vals = np.array([2, -3, 0, 2 ** 21 + 1], np.dtype(t.name))
    res = np.zeros(4, vals.dtype)
    run(backend, m, 4, [vals, res], local=4)
    assert res.tolist() == [wrap_int(int(x) ** 3 + 1, t) for x in vals]
    assert "ipow" not in emit(m, "cpu").text and isinstance(body[1], ir.BufferStore)


@pytest.mark.parametrize("backend", RUNNERS)
def test_bool_buffers(backend):
    a = np.array([1.0, 2.0, np.nan, -1.0], np.float32)
    b = np.array([2.0, 2.0, 1.0, -3.0], np.float32)
    out = np.zeros(4, np.bool_)
    run(backend, irkit.elementwise("Lt", FLOAT32, BOOL, name="lt_bool"), 4, [a, b, out], local=4)
    assert out.tolist() == [True, False, False, False]
