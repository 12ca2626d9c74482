"""Every scalar type against numpy: each operator over every pair of types (NEP 50 promotion, weak
literals), unary operators and casts, on every available accelerator. See typegen.py for how the
cases are batched into one kernel per operator."""

from __future__ import annotations

import numpy as np
import pytest
import typegen as g

import dotcompute as dc

OPS = list(g.UFUNC)


def _kernel(op: str, metal: bool = False):
    """Metal (no double) gets the cases without float64/complex128 anywhere."""
    k = g.plan(op, metal=metal)
    return k, getattr(g.load(g.op_source(k), f"{op}_metal" if metal else op), k.name)


def _check(got: np.ndarray, want: np.ndarray, what: str, approx: bool = False) -> None:
    assert got.dtype == want.dtype, what
    if (approx and want.dtype.kind == "f") or want.dtype.kind == "c":
        # pow: libm and device pow differ in the last bits; complex products may be contracted
        # into FMAs; everything else is exact
        rtol = {2: 2e-3, 4: 1e-6, 8: 1e-14, 16: 1e-14}[want.dtype.itemsize]
        if want.dtype.kind == "c":
            rtol = 1e-6 if want.dtype.itemsize == 8 else 1e-14
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


#: the operators whose C spelling differs from Python's (and `<`, numpy's mixed-sign comparisons):
#: the others are the same emitted operator with the frontend's casts around it, which
#: expr/test_operators.py runs on every device
DEVICE_OPS = ("truediv", "floordiv", "mod", "pow", "lshift", "rshift", "lt")


@pytest.mark.parametrize("op", OPS)
def test_binary_operator_matches_numpy(accelerator, op, device_slice):
    device_slice(op in DEVICE_OPS, "the operators spelled differently in C (/, //, %, **, <<, >>, <)")
    k, kern = _kernel(op, metal=accelerator.backend == "metal")
    args = g.op_args(k)
    accelerator.launch(kern, (g.N, g.N), *args)
    outs = dict(zip(k.types, args[2 * len(k.types):], strict=True))
    for c in k.cases:
        right = c.b if c.b is not None else repr(c.lit)
        _check(outs[c.out][c.slot], np.asarray(c.want()), f"{c.a} {g.SYMBOL[op]} {right}", approx=op == "pow")


@pytest.mark.parametrize("op", OPS)
def test_result_types_are_numpys(op):
    """The frontend's type of ``x OP y`` is numpy 2's result dtype for every pair and literal."""
    k, kern = _kernel(op)
    types = {v.name: v.type.name for v in kern.ir().kernel.locals}
    wrong = [(c.a, c.b if c.b else repr(c.lit), types[f"r{c.index}"], c.out) for c in k.cases
             if types[f"r{c.index}"] != c.out]
    assert not wrong, f"(left, right, ours, numpy's): {wrong}"


def test_pairs_cover_every_type_and_the_c_traps():
    k = g.plan("floordiv")
    pairs = {(c.a, c.b) for c in k.cases if c.b is not None}
    # bool // bool is Python's int (documented); numpy refuses // on complex
    assert len(pairs) == (len(g.TYPES) - len(g.COMPLEX)) ** 2 - 1
    lt = {(c.a, c.b) for c in g.plan("lt").cases}
    assert ("int64", "uint64") in lt and ("int8", "uint64") in lt and ("uint32", "int32") in lt
    assert ("int64", "uint64") not in {(c.a, c.b) for c in g.plan("and").cases}


def test_unary_operators_match_numpy(accelerator):
    metal = accelerator.backend == "metal"  # no float64 / complex128 there
    types = [t for t in g.TYPES if t != "bool" and not (metal and t in g.NO_METAL)]
    name = "types_unary_metal" if metal else "types_unary"
    kern = getattr(g.load(g.unary_source(name, types), name), name)
    xs = [g.x_values(t) for t in types]
    outs = [np.zeros((len(g.UNARY), g.N), t) for t in types]
    accelerator.launch(kern, g.N, *xs, *outs)
    for t, x, out in zip(types, xs, outs, strict=True):
        for k, (name, (_, ufunc)) in enumerate(g.UNARY.items()):
            if name == "inv" and t in g.FLOATS + g.COMPLEX:
                continue
            with np.errstate(all="ignore"):
                want = ufunc(x)
            # abs of a complex is its real type (numpy's too); stored into the complex row here
            _check(out[k], want.astype(out.dtype), f"{name} {t}")


def test_casts_match_numpy(accelerator):
    metal = accelerator.backend == "metal"
    types = [t for t in g.TYPES if not (metal and t in g.NO_METAL)]
    name = "types_cast_metal" if metal else "types_cast"
    kern = getattr(g.load(g.cast_source(name, types), name), name)
    inputs = g.cast_inputs(types)
    outs = [np.zeros((len(types), g.N), t) for t in types]
    accelerator.launch(kern, g.N, *inputs.values(), *outs)
    for d, out in zip(types, outs, strict=True):
        for k, s in enumerate(types):
            if s in g.COMPLEX and d not in g.COMPLEX:
                continue
            src = inputs[f"z_{s}"] if s in g.FLOATS and d in g.INTS else inputs[f"x_{s}"]
            with np.errstate(all="ignore"):
                want = src.astype(d)
            _check(out[k], want, f"dc.{d}({s})")


def test_float16_rounds_every_operation_like_numpy(accelerator):
    """float16 is computed in float32 but each result is rounded to half, so chains agree too."""

    @dc.kernel
    def chain(a: dc.Buffer[dc.float16], b: dc.Buffer[dc.float16], s: dc.float16, out: dc.Buffer[dc.float16]):
        i = dc.global_id(0)
        t = a[i] * b[i]
        out[i] = (t + s) / b[i] - a[i] * 0.1

    rng = np.random.default_rng(5)
    a = rng.uniform(-100, 100, 256).astype(np.float16)
    b = rng.uniform(0.5, 3, 256).astype(np.float16)
    s = np.float16(1000.3)
    out = np.zeros(256, np.float16)
    accelerator.launch(chain, 256, a, b, s, out)
    np.testing.assert_array_equal(out, (a * b + s) / b - a * np.float16(0.1))


def test_narrow_int_scalars_and_uint8_image(accelerator):
    @dc.kernel
    def brighten(img: dc.Buffer[dc.uint8, 2], gain: dc.float32, bias: dc.int16, out: dc.Buffer[dc.uint8, 2]):
        y = dc.global_id(0)
        x = dc.global_id(1)
        v = img[y, x] * gain + bias
        out[y, x] = dc.uint8(min(max(v, 0.0), 255.0))

    img = np.arange(48 * 64, dtype=np.uint8).reshape(48, 64)
    out = np.zeros_like(img)
    accelerator.launch(brighten, img.shape, img, np.float32(1.5), np.int16(-20), out)
    want = np.clip(img * np.float32(1.5) + np.int16(-20), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(out, want)


@dc.kernel
def cfun(z: dc.Buffer, s: dc.Buffer, out: dc.Buffer, cout: dc.Buffer):
    i = dc.global_id(0)
    v = z[i]
    out[0, i] = abs(v)
    out[1, i] = v.real
    out[2, i] = v.imag
    cout[0, i] = dc.conj(v)
    cout[1, i] = dc.exp(v)
    cout[2, i] = dc.sqrt(v)
    cout[3, i] = v ** 2 - 2j * v + s[0]
    cout[4, i] = v / (v.real + 1.5)


def cfun_args(ctype: str) -> list[np.ndarray]:
    vals = [0, 1, -1, 1j, -1j, -4, 3 + 4j, -3 - 4j, 0.5 - 0.25j, -2.5 + 1e-3j, 10 + 1j, -1e-3 - 7j]
    real = "float32" if ctype == "complex64" else "float64"
    return [np.array(vals, dtype=ctype), np.array([0.25 - 1j], dtype=ctype), np.zeros((3, len(vals)), real),
            np.zeros((5, len(vals)), ctype)]


def check_cfun(z: np.ndarray, s: np.ndarray, out: np.ndarray, cout: np.ndarray) -> None:
    rtol = 2e-6 if z.dtype == np.complex64 else 1e-13
    np.testing.assert_allclose(out, np.stack([np.abs(z), z.real, z.imag]), rtol=rtol, atol=0)
    want = np.stack([np.conj(z), np.exp(z), np.sqrt(z), z ** 2 - 2j * z + s[0], z / (z.real + 1.5)]).astype(z.dtype)
    np.testing.assert_allclose(cout, want, rtol=rtol, atol=rtol)
    assert cout[2, 5] == 2j and cout[2, 2] == 1j  # sqrt of a negative real: +i sqrt(|x|), as numpy


@pytest.mark.parametrize("ctype", ["complex64", "complex128"])
def test_complex_functions_match_numpy(accelerator, ctype):
    """abs, .real, .imag, dc.conj, dc.exp, dc.sqrt, z ** 2, literals with 1j, and a 1-element
    complex buffer standing in for a scalar argument."""
    args = cfun_args(ctype)
    accelerator.launch(cfun, len(args[0]), *args)
    check_cfun(*args)


def test_float64_to_float16_rounds_once(accelerator):
    """1 + 2**-11 + 2**-40 is just above half-way between two halves: numpy rounds it up; rounding
    through float32 first would land exactly half-way and round to even (down)."""

    @dc.kernel
    def narrow(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float16]):
        i = dc.global_id(0)
        out[i] = dc.float16(x[i])

    x = np.array([1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 65519.99, 1e-8, 0.1, 3.0], np.float64)
    out = np.zeros(len(x), np.float16)
    accelerator.launch(narrow, len(x), x, out)
    np.testing.assert_array_equal(out, x.astype(np.float16))
