"""The type conformance kernels on the targets this machine cannot run natively: every one compiled
by NVRTC (CUDA), and every one Metal supports (no float64) run through the Metal shim against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import typegen as g

OPS = list(g.UFUNC)


def _nvrtc():
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is None:
        pytest.skip("NVRTC (nvidia-cuda-nvrtc-cu12) is not installed")
    return harness.nvrtc_compile


def _metal():
    return pytest.importorskip("runner").run_msl


@pytest.mark.parametrize("op", OPS)
def test_nvrtc_compiles_every_operator_kernel(op):
    compile_ = _nvrtc()
    k = g.plan(op)
    kern = getattr(g.load(g.op_source(k), op), k.name)
    ok, log = compile_(kern.source("cuda"), k.name)
    assert ok, log


def test_nvrtc_compiles_unary_and_casts():
    compile_ = _nvrtc()
    types = [t for t in g.TYPES if t != "bool"]
    unary = g.load(g.unary_source("types_unary", types), "unary").types_unary
    cast = g.load(g.cast_source("types_cast", g.TYPES), "cast").types_cast
    for kern in (unary, cast):
        ok, log = compile_(kern.source("cuda"), kern.name)
        assert ok, log


@pytest.mark.parametrize("op", OPS)
def test_metal_shim_runs_every_operator_without_float64(op):
    run_msl = _metal()
    k = g.plan(op, metal=True)
    kern = getattr(g.load(g.op_source(k), f"{op}_metal"), k.name)
    args = g.op_args(k)
    run_msl(kern.source("metal"), args, global_size=(g.N, g.N), local_size=(4, 4))
    outs = dict(zip(k.types, args[2 * len(k.types):], strict=True))
    assert "float64" not in outs and "complex128" not in outs
    for c in k.cases:
        got, want = outs[c.out][c.slot], np.asarray(c.want())
        what = f"{c.a} {g.SYMBOL[op]} {c.b if c.b else repr(c.lit)}"
        if (op == "pow" and want.dtype.kind == "f") or want.dtype.kind == "c":
            rtol = 2e-3 if want.dtype.itemsize == 2 else 1e-6
            np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(got, want, err_msg=what)


def test_metal_shim_casts_without_float64():
    run_msl = _metal()
    types = [t for t in g.TYPES if t not in g.NO_METAL]
    kern = g.load(g.cast_source("types_cast_metal", types), "cast_metal").types_cast_metal
    inputs = g.cast_inputs(types)
    outs = [np.zeros((len(types), g.N), t) for t in types]
    run_msl(kern.source("metal"), [*inputs.values(), *outs], global_size=g.N, local_size=4)
    for d, out in zip(types, outs, strict=True):
        for k, s in enumerate(types):
            if s in g.COMPLEX and d not in g.COMPLEX:
                continue
            src = inputs[f"z_{s}"] if s in g.FLOATS and d in g.INTS else inputs[f"x_{s}"]
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(out[k], src.astype(d), err_msg=f"dc.{d}({s})")


def test_complex_functions_on_nvrtc_and_the_metal_shim():
    from test_numpy_conformance import cfun, cfun_args, check_cfun

    compile_ = _nvrtc()
    for ctype in ("complex64", "complex128"):
        ok, log = compile_(cfun.source("cuda", *cfun_args(ctype)), "cfun")
        assert ok, log
    run_msl = _metal()
    args = cfun_args("complex64")  # Metal has no complex128 (no double)
    run_msl(cfun.source("metal", *args), args, global_size=len(args[0]), local_size=4)
    check_cfun(*args)
