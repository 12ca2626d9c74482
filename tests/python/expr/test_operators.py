"""Every operator on every dtype pair against numpy, on every accelerator; numpy 2 promotion (NEP 50)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.expr.evaluate import run

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
          "float64"]
BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a ** b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def _values(dtype: str, positive: bool) -> np.ndarray:
    # divisors and exponents stay in 1..3 (numpy refuses negative integer powers, x // 0 differs by design)
    if dtype == "bool":
        return np.array([True, False, True, True, False, True, False, True])
    if positive:
        return np.array([1, 2, 3, 1, 2, 3, 2, 1], dtype)
    if dtype.startswith("uint"):
        return np.array([0, 7, 3, 10, 1, 5, 9, 2], dtype)
    if dtype.startswith("float"):
        return np.array([-5.5, 7.25, -3.0, 10.0, 0.5, -1.75, 9.0, 2.0], dtype)
    return np.array([-5, 7, -3, 10, 0, -1, 9, 2], dtype)


def _check(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, numpy {want.dtype}"
    if want.dtype.kind == "f":
        rtol = {np.float16: 2e-3, np.float32: 1e-6}.get(want.dtype.type, 1e-12)
        np.testing.assert_allclose(got, want, rtol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


#: Left operands run on every device by default; the others on cpu:0, and everywhere with --full.
#: An expression is kernel-language code: the numbers of each operator on each dtype pair come from
#: the backend's emitter, whose own matrix (types/test_numpy_conformance.py, every pair and literal)
#: runs on cpu:0 and, for the operators C spells differently from Python, on every device. What
#: this test adds is the expression layer's promotion and refusals, which
#: are the same Python on every device, so on the others three left dtypes (int8: small-integer
#: promotion, uint64: mixed signs promoting to float64, float16) each still meet all twelve partners.
EVERY_DEVICE = ("int8", "uint64", "float16")
#: weak Python scalars and unary operators on devices other than cpu:0: small-integer promotion, the
#: unsigned 64-bit type, half and single precision
SCALAR_SLICE = ("int8", "uint64", "float16", "float32")


@pytest.mark.parametrize("ta", DTYPES)
def test_every_binary_operator_on_every_dtype_pair(accelerator: dc.Accelerator, ta: str, device_slice) -> None:
    device_slice(ta in EVERY_DEVICE, "int8, uint64 and float16 on the left (each against all twelve partners)")
    for tb in DTYPES:
        ha, hb = _values(ta, False), _values(tb, True)
        a, b = accelerator.asarray(ha), accelerator.asarray(hb)
        pending, expected = [], []
        for sym, fn in BINARY.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    want = fn(ha, hb)
            except TypeError:
                with pytest.raises(TypeError):
                    fn(a, b)
                continue
            if want.dtype.name not in DTYPES:  # e.g. bool // bool is int8 in numpy: refused here
                with pytest.raises(TypeError):
                    fn(a, b)
                continue
            pending.append(fn(a, b))
            expected.append((want, f"{ta} {sym} {tb}"))
        before = dc.expr.stats()["launches"]
        run(pending)  # all operators of this pair: ONE kernel
        assert dc.expr.stats()["launches"] == before + 1
        for got, (want, what) in zip(pending, expected, strict=True):
            _check(got.numpy(), want, what)


@pytest.mark.parametrize("dtype", DTYPES)
def test_python_scalars_are_weak(accelerator: dc.Accelerator, dtype: str, device_slice) -> None:
    device_slice(dtype in SCALAR_SLICE, "int8, uint64, float16 and float32 (of twelve)")
    h = _values(dtype, True)
    b = accelerator.asarray(h)
    pending, expected = [], []
    for scalar in (3, -2, 2.5, True):
        for fn in (lambda x, s=scalar: x + s, lambda x, s=scalar: s * x, lambda x, s=scalar: x - s,
                   lambda x, s=scalar: x < s):
            try:
                want = fn(h)
            except (TypeError, OverflowError) as e:
                with pytest.raises(type(e)):
                    fn(b)
                continue
            pending.append(fn(b))
            expected.append((want, f"{dtype} with {scalar!r}"))
    run(pending)  # one kernel for all of them (fewer compilations on a cold cache)
    for got, (want, what) in zip(pending, expected, strict=True):
        _check(got.numpy(), want, what)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_operators(accelerator: dc.Accelerator, dtype: str, device_slice) -> None:
    device_slice(dtype in SCALAR_SLICE, "int8, uint64, float16 and float32 (of twelve)")
    h = _values(dtype, False)
    b = accelerator.asarray(h)
    pending, expected = [], []
    for name, fn in {"-": lambda x: -x, "+": lambda x: +x, "abs": abs, "~": lambda x: ~x}.items():
        try:
            want = fn(h)
        except TypeError:
            with pytest.raises(TypeError):
                fn(b)
            continue
        pending.append(fn(b))
        expected.append((want, f"{name} {dtype}"))
    run(pending)
    for got, (want, what) in zip(pending, expected, strict=True):
        _check(got.numpy(), want, what)


def test_floor_division_and_modulo_follow_python(accelerator: dc.Accelerator) -> None:
    hi = np.array([7, -7, 7, -7, 0, 5], np.int64)
    hj = np.array([2, 2, -2, -2, 3, -3], np.int64)
    hf = hi.astype(np.float64) + 0.5
    i, j, f = accelerator.asarray(hi), accelerator.asarray(hj), accelerator.asarray(hf)
    np.testing.assert_array_equal((i // j).numpy(), hi // hj)
    np.testing.assert_array_equal((i % j).numpy(), hi % hj)
    np.testing.assert_allclose((f // j).numpy(), hf // hj)
    np.testing.assert_allclose((f % j).numpy(), hf % hj)


def test_broadcasting(accelerator: dc.Accelerator) -> None:
    rng = np.random.default_rng(1)
    hm = rng.standard_normal((4, 5)).astype(np.float32)
    hr = rng.standard_normal(5).astype(np.float32)
    hc = rng.standard_normal((4, 1)).astype(np.float32)
    m, r, c = (accelerator.asarray(x) for x in (hm, hr, hc))
    np.testing.assert_allclose((m * r + c).numpy(), hm * hr + hc, rtol=1e-6)
    np.testing.assert_allclose((r + c).numpy(), hr + hc, rtol=1e-6)  # (5,) with (4, 1) → (4, 5)
    h3 = rng.standard_normal((2, 1, 5))
    np.testing.assert_allclose((accelerator.asarray(h3) - m).numpy(), h3 - hm, rtol=1e-6)


def test_numpy_arrays_and_scalars_mix_in(accelerator: dc.Accelerator) -> None:
    h = np.arange(6, dtype=np.float32)
    b = accelerator.asarray(h)
    got = h * b + np.float64(1.5)  # numpy array on the left: __array_ufunc__ keeps it lazy
    assert isinstance(got, dc.Buffer)
    np.testing.assert_allclose(got.numpy(), h * h + np.float64(1.5))
    assert (b + np.float64(1.5)).dtype == np.float64  # numpy scalars are strong (NEP 50)
    assert (b + np.int32(2)).dtype == (h + np.int32(2)).dtype == np.float64


def test_bad_operands_raise_clearly(accelerator: dc.Accelerator) -> None:
    a = accelerator.asarray(np.zeros((3, 4), np.float32))
    b = accelerator.asarray(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(5,\)"):
        a + b
    c64 = accelerator.asarray(np.zeros(4, np.complex64))
    # complex values compute on every device (numpy on host memory, complex kernels elsewhere)
    assert (c64 + 1).dtype == np.complex64 and (c64 + 1).accelerator is accelerator
    assert a.astype(np.complex64).dtype == np.complex64
    with pytest.raises(OverflowError):
        accelerator.asarray(np.zeros(2, np.uint32)) + (-1)
    with pytest.raises(TypeError):
        a + "text"
    with pytest.raises(ValueError, match="negative integer powers"):
        accelerator.asarray(np.arange(3)) ** -1


def test_buffers_on_different_accelerators_are_refused() -> None:
    devices = dc.devices()
    if len(devices) < 2:
        pytest.skip("needs two accelerators")
    a = devices[0].asarray(np.ones(3, np.float32))
    b = devices[1].asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError, match=f"{devices[0].id}.*{devices[1].id}"):
        a + b


def test_buffers_stay_hashable() -> None:
    b = dc.accelerator("cpu").asarray(np.ones(3))
    assert {b: 1}[b] == 1


def test_float64_on_a_device_without_fp64_names_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    from dotcompute.expr import operands

    acc = dc.accelerator("cpu")
    b = acc.asarray(np.ones(3, np.float32))
    monkeypatch.setitem(operands._FP64, acc.id, False)  # as a Metal device reports it
    with pytest.raises(TypeError, match="cpu:0 \\(cpu backend\\) has no float64"):
        b + np.float64(1.0)
    with pytest.raises(TypeError, match="no float64"):
        b.astype(np.float64)
    assert (b * 2.0).dtype == np.float32  # float32 work is unaffected
