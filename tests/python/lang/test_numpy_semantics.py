"""Kernels mean what numpy means: the same body run as a kernel and as Python over numpy scalars gives
the same dtype and the same bits (NEP 50 promotion, no floating-point contraction), on every device.

Each corpus entry is a few lines computing ``r`` from ``a``, ``b`` (float32), ``h`` (float16),
``d`` (float64), ``m`` (int32) -- elements of numpy arrays, so numpy scalars, strong -- and ``i``, a
Python int in the Python run and ``dc.global_id(0)`` in the kernel (weak in both).
"""

from __future__ import annotations

import math
import pickle
import re
import textwrap

import numpy as np
import pytest

import dotcompute as dc

N = 64

# (name, body). float64 results are marked: Metal has no double, so they are skipped there.
CORPUS = [
    ("times_id", "r = a * i"),
    ("fraction", "r = a - math.floor(a)"),
    ("literals", "r = a * 2.0 + 1"),
    ("id_ratio", "r = (a + i) / (i + 1)"),
    ("float_of_id", "r = a * float(i)"),
    ("int_of_value", "r = a - int(a)"),
    ("half", "r = h * i + h"),
    ("half_then_single", "r = h * 3 - a"),
    ("ceil_trunc", "r = math.ceil(a) * a + math.trunc(float(b))"),
    ("id_arith", "r = (i % 3) * a + i // 2"),
    ("lengths", "r = a * len(x) - i * b"),
    ("negated_id", "r = -i * a + abs(b) * i"),
    ("shape_loop", "s = b\nfor j in range(3):\n    s = s + a * j\nr = s"),
    ("id_variable", "k = i + 1\nr = b / k"),
    ("accumulator", "s = 0.0\nfor j in range(3):\n    s += a * j\nr = s"),
    ("half_accumulator", "s = 0.0\nfor j in range(2):\n    s = s + h\nr = s * 2"),
    ("asks_for_double", "r = dc.float64(a) * i"),
    ("strong_double", "r = d * a"),
    ("int32_and_float", "r = m * 2.5"),
    ("int32_and_single", "r = m + a"),
    ("cancel", "r = b - a * a"),
]

_KERNEL = """
def {name}(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], hs: dc.Buffer[dc.float16],
           ds: dc.Buffer[dc.{dd}], ms: dc.Buffer[dc.int32], out: dc.Buffer[dc.{out}]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        a = x[i]
        b = y[i]
        h = hs[i]
        d = ds[i]
        m = ms[i]
{body}
        out[i] = r
"""


def _inputs() -> tuple[np.ndarray, ...]:
    g = np.random.default_rng(22)
    x = g.uniform(-4, 4, N).astype(np.float32)
    y = g.uniform(-4, 4, N).astype(np.float32)
    return x, y, g.uniform(-2, 2, N).astype(np.float16), g.uniform(-4, 4, N), g.integers(-50, 50, N).astype(np.int32)


def _as_python(body: str, x, y, hs, ds, ms) -> list:
    """The body run as Python: array elements are numpy scalars, ``i`` a Python int."""
    out = []
    code = compile(body, "<corpus>", "exec")
    with np.errstate(all="ignore"):
        for i in range(N):
            ns = {"math": math, "dc": dc, "np": np, "x": x, "i": i, "a": x[i], "b": y[i], "h": hs[i], "d": ds[i],
                  "m": ms[i]}
            exec(code, ns)
            out.append(ns["r"])
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]) if a.dtype.kind == "f" else a


@pytest.mark.parametrize("name,body", CORPUS, ids=[c[0] for c in CORPUS])
def test_kernel_computes_what_python_computes(accelerator, name: str, body: str) -> None:
    inputs = _inputs()
    py = _as_python(body, *inputs)
    want_dtype = np.asarray(py[0]).dtype
    assert all(np.asarray(v).dtype == want_dtype for v in py)  # the corpus is type-stable in Python
    want = np.array(py, dtype=want_dtype)
    uses_double = want_dtype == np.float64 or re.search(r"\bd\b", body) is not None
    if accelerator.backend == "metal" and uses_double:
        pytest.skip("float64 (Metal has no double)")
    if not uses_double:  # so that the kernel has no float64 parameter either
        inputs = (*inputs[:3], inputs[3].astype(np.float32), inputs[4])
    src = _KERNEL.format(name=name, out=want_dtype.name, dd=inputs[3].dtype.name,
                         body=textwrap.indent(body, " " * 8))
    k = dc.kernel(source=src, namespace={"dc": dc, "math": math, "np": np})
    r_type = next(v.type for v in k.ir(*inputs, np.empty(N, want_dtype)).kernel.locals if v.py_name == "r")
    assert r_type.np_dtype == want_dtype, f"{name}: the kernel computes r as {r_type}, Python as {want_dtype}"
    out = np.zeros(N, want_dtype)
    dc.launch(k, N, *inputs, out, accelerator=accelerator)
    np.testing.assert_array_equal(_bits(out), _bits(want), err_msg=f"{name} on {accelerator.id}")


def test_the_metal_example_is_float32_throughout() -> None:
    """The issue's kernel: float32 in, float32 computed (no double in any backend's source)."""
    src = """
def smooth(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        y[i] = smoothstep(-1.0, 1.0, v) - math.floor(v) + x[i] * i
"""
    fn = dc.func(source="def smoothstep(e0, e1, x):\n"
                        "    t = min(max((x - e0) / (e1 - e0), 0.0), 1.0)\n"
                        "    return t * t * (3.0 - 2.0 * t)\n")
    k = dc.kernel(source=src, namespace={"dc": dc, "math": math, "smoothstep": fn})
    for backend in ("cpu", "cuda", "opencl"):
        assert "double" not in k.source(backend)
    assert "float" in k.source("metal")  # compiles for Metal: no float64 refusal


def test_weak_ints_keep_64_bit_indices() -> None:
    """A weak id meeting a strong int32 stays 64-bit (an index must not wrap at 2**31), while the
    same id with a float32 stays float32."""
    src = """
def idx(x: dc.Buffer[dc.float32], s: dc.int32, out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    j = i * s
    f = x[0] * i
    out[0] = f + j
"""
    k = dc.kernel(source=src, namespace={"dc": dc})
    types = {v.py_name: v.type.name for v in k.ir(np.zeros(1, np.float32), np.int32(1), np.zeros(1, np.float32))
             .kernel.locals}
    assert types["j"] == "int64" and types["f"] == "float32"


def test_fused_multiply_subtract_is_numpy_bit_exact(accelerator) -> None:
    """m - row * col rounds the product first (no FMA), in a kernel and in an expression."""
    g = np.random.default_rng(7)
    m, row, col = (g.random(4096, dtype=np.float32) for _ in range(3))
    want = m - row * col
    src = """
def fms(m: dc.Buffer[dc.float32], r: dc.Buffer[dc.float32], c: dc.Buffer[dc.float32], o: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < o.shape[0]:
        o[i] = m[i] - r[i] * c[i]
"""
    k = dc.kernel(source=src, namespace={"dc": dc})
    out = np.zeros_like(m)
    dc.launch(k, m.size, m, row, col, out, accelerator=accelerator)
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
    M, R, C = (accelerator.asarray(a) for a in (m, row, col))
    np.testing.assert_array_equal((M - R * C).numpy().view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_expression_operators_are_numpy_bit_exact(accelerator, op: str, dtype: str) -> None:
    if accelerator.backend == "metal" and dtype == "float64":
        pytest.skip("float64 (Metal has no double)")
    g = np.random.default_rng(3)
    a = g.uniform(-8, 8, 2000).astype(dtype)
    b = g.uniform(0.25, 8, 2000).astype(dtype) * np.where(g.random(2000) < 0.5, -1, 1).astype(dtype)
    c = g.uniform(-8, 8, 2000).astype(dtype)
    with np.errstate(all="ignore"):
        want = eval(f"a {op} b * c")  # a product feeding + or -: where contraction would show
        want2 = eval(f"a {op} b")
    A, B, C = (accelerator.asarray(v) for v in (a, b, c))
    got = eval(f"A {op} B * C").numpy()
    got2 = eval(f"A {op} B").numpy()
    assert got.dtype == want.dtype and got2.dtype == want2.dtype
    np.testing.assert_array_equal(_bits(got), _bits(want))
    np.testing.assert_array_equal(_bits(got2), _bits(want2))


def test_contract_option_is_a_different_build() -> None:
    """contract=True / fastmath=True turn contraction on; the default source says it is off."""
    src = """
def fma_ok(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] * b[i] + 1.0
"""
    plain = dc.kernel(source=src, namespace={"dc": dc})
    fused = dc.kernel(source=src, namespace={"dc": dc}, contract=True)
    assert "#pragma OPENCL FP_CONTRACT OFF" in plain.source("opencl")
    assert "#pragma OPENCL FP_CONTRACT ON" in fused.source("opencl")
    from dotcompute.lang.compile_options import compile_options

    assert "-ffp-contract=off" in compile_options(plain, "cpu").split()
    assert "-ffp-contract=fast" in compile_options(fused, "cpu").split()
    assert compile_options(plain, "cuda") == "--fmad=false" and compile_options(fused, "cuda") == "--fmad=true"
    with pytest.raises(TypeError, match="contract"):
        dc.kernel(source=src, namespace={"dc": dc}, contract="yes")
    again = pickle.loads(pickle.dumps(fused))  # process workers rebuild kernels from the pickle
    assert again.contract is True and "#pragma OPENCL FP_CONTRACT ON" in again.source("opencl")


def test_nvrtc_keeps_products_rounded() -> None:
    """Real NVRTC, no GPU: the default build rounds the product (mul.rn, never fused); contract=True
    leaves ptxas free to fuse (a plain mul)."""
    import dotcompute.cuda as dcuda

    if dcuda.nvrtc_library_path() is None:
        pytest.skip(f"NVRTC not installed ({dcuda.INSTALL_HINT})")
    from dotcompute.lang.compile_options import compile_options

    src = """
def fms(m: dc.Buffer[dc.float32], r: dc.Buffer[dc.float32], c: dc.Buffer[dc.float32], o: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < o.shape[0]:
        o[i] = m[i] - r[i] * c[i]
"""
    for contract, rounded in ((False, True), (True, False)):
        k = dc.kernel(source=src, namespace={"dc": dc}, contract=contract)
        ptx = dcuda.compile(k, arch="compute_80", output="ptx", options=compile_options(k, "cuda").split(),
                            signature=[dc.Buffer[dc.float32, 1]] * 4).decode(errors="replace")
        assert "fma.rn.f32" not in ptx or contract
        assert ("mul.rn.f32" in ptx) == rounded, ptx[-2000:]


def test_device_function_arguments_keep_python_numbers_weak() -> None:
    """An id passed to an unannotated @dc.func parameter stays a Python int inside it, and a literal
    argument stays a literal: f(x[i], i) and f(x[i], 2) are float32, as Python computes them."""
    fn = dc.func(source="def scale(v, k):\n    return v * k\n")
    src = """
def calls(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        y[i] = scale(x[i], i) + scale(x[i], 2)
"""
    k = dc.kernel(source=src, namespace={"dc": dc, "scale": fn})
    m = k.ir(np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert [f.return_type.name for f in m.functions] == ["float32", "float32"]
    assert [[p.py_name for p in f.params] for f in m.functions] == [["v", "k"], ["v"]]  # 2 is folded in
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    dc.launch(k, 8, x, y, accelerator="cpu:0")
    np.testing.assert_array_equal(y, np.array([x[i] * i + x[i] * 2 for i in range(8)], np.float32))
