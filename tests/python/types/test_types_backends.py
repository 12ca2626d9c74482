"""The type conformance kernels on the targets this machine cannot run natively: every one compiled
by NVRTC (CUDA), and every one Metal supports (no float64) run through the Metal shim against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import typegen as g

OPS = list(g.UFUNC)
#: NVRTC's virtual architecture: the operator kernels (every dtype pair, hundreds of cases each) are
#: compiled to PTX, which is where our emitted CUDA C++ is accepted or not; lowering the PTX to one
#: GPU's machine code (ptxas: floordiv's kernel 3.5 -> 11.5 s) is NVIDIA's, and runs for sm_80 and
#: sm_90 on every emitted construct in lang_emit/test_emit_targets.py.
PTX_ARCH = "compute_80"


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
    ok, log = compile_(kern.source("cuda"), k.name, PTX_ARCH)
    assert ok, log


def test_nvrtc_compiles_unary_and_casts():
    compile_ = _nvrtc()
    types = [t for t in g.TYPES if t != "bool"]
    unary = g.load(g.unary_source("types_unary", types), "unary").types_unary
    cast = g.load(g.cast_source("types_cast", g.TYPES), "cast").types_cast
    for kern in (unary, cast):
        ok, log = compile_(kern.source("cuda"), kern.name, PTX_ARCH)
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


def test_software_half_conversions_are_numpys_bit_for_bit(tmp_path):
    """dc_f2h / dc_d2h / dc_h2f (CUDA's float16 path, integer code) against numpy over every half
    and many float and double bit patterns around half's range, compiled here with the host C++."""
    import ctypes
    import shutil
    import subprocess

    from dotcompute.lang.emit.helpers import f16_bits_helpers, f64_to_f16_helper

    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = ("#include <string.h>\n"
           "static inline unsigned int fb(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }\n"
           "static inline float bf(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }\n"
           "static inline unsigned long long db(double f) { unsigned long long u; memcpy(&u, &f, 8); return u; }\n"
           + f16_bits_helpers("static inline", "unsigned int", "unsigned short", "fb", "bf") + "\n"
           + f64_to_f16_helper("static inline", "unsigned long long", "unsigned short", "db") + "\n"
           'extern "C" void run(const float* x, unsigned short* hf, const double* d, unsigned short* hd,\n'
           "                    const unsigned short* hb, float* back, long n) {\n"
           "  for (long i = 0; i < n; i++) { hf[i] = dc_f2h(x[i]); hd[i] = dc_d2h(d[i]); back[i] = dc_h2f(hb[i]); }\n"
           "}\n")
    (tmp_path / "h.cpp").write_text(src)
    so = tmp_path / "h.so"
    subprocess.run([cxx, "-O1", "-shared", "-fPIC", str(tmp_path / "h.cpp"), "-o", str(so)], check=True)
    lib = ctypes.CDLL(str(so))
    rng = np.random.default_rng(0)
    n = 1 << 16
    x = rng.integers(0x32000000, 0x48000000, n, dtype=np.uint32) | (rng.integers(0, 2, n, dtype=np.uint32) << 31)
    x = x.view(np.float32)
    d = rng.integers(0x3e40000000000000, 0x40f1000000000000, n, dtype=np.uint64).view(np.float64)
    d[: n // 2] = -d[: n // 2]
    x[:4], d[:4] = [np.inf, -np.inf, np.nan, 0.0], [np.inf, -np.inf, np.nan, -0.0]
    hb = np.arange(n, dtype=np.uint16)
    hf, hd, back = np.zeros(n, np.uint16), np.zeros(n, np.uint16), np.zeros(n, np.float32)
    ptr = ctypes.c_void_p
    lib.run(*(ptr(a.ctypes.data) for a in (x, hf, d, hd, hb, back)), ctypes.c_long(n))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(hf.view(np.float16), x.astype(np.float16))
        np.testing.assert_array_equal(hd.view(np.float16), d.astype(np.float16))
    np.testing.assert_array_equal(back, hb.view(np.float16).astype(np.float32))
