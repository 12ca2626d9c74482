"""Audit 2: numeric semantics a numpy user relies on, on every accelerator (DESIGN.md, "The kernel
language": every numpy type, NEP 50 promotion, Python's // and %, float16 storage, complex values).

Kernels are made by factories (one per dtype) the way a user parametrises them: the dtype appears
only in the annotations, so it is a local of the factory, not a free variable of the kernel.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

import dotcompute as dc

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
ALL = ["bool", *INTS, "float16", "float32", "float64", "complex64", "complex128"]


# ------------------------------------------------------------------ annotations from a factory's locals

def _add_constant_kernel(dt, c):
    @dc.kernel
    def add_c(a: dc.Buffer[dt]):
        i = dc.global_id(0)
        if i < a.shape[0]:
            a[i] = a[i] + c
    return add_c


def test_factory_dtype_in_annotation_only(accelerator):
    # This file has `from __future__ import annotations`: the annotation is the string "dc.Buffer[dt]"
    # and dt, a local of the factory that the body never uses, is no free variable of the kernel.
    # It used to fail with "name 'dt' is not defined".
    k_int = _add_constant_kernel(dc.int32, 5)
    k_flt = _add_constant_kernel(dc.float32, 0.5)
    a = np.zeros(4, np.int32)
    b = np.zeros(4, np.float32)
    dc.launch(k_int, 4, a, accelerator=accelerator)
    dc.launch(k_flt, 4, b, accelerator=accelerator)
    assert a.tolist() == [5] * 4
    assert b.tolist() == [0.5] * 4
    # each kernel keeps the type it was defined with: a float32 array for the int32 one is refused
    with pytest.raises(dc.KernelTypeError, match="a"):
        dc.launch(k_int, 4, np.zeros(4, np.float32), accelerator=accelerator)


# ------------------------------------------------------------------ Python // and % on every int width

def _divmod_kernel(dt):
    @dc.kernel
    def divmod_k(a: dc.Buffer[dt], b: dc.Buffer[dt], q: dc.Buffer[dt], r: dc.Buffer[dt]):
        i = dc.global_id(0)
        if i < a.shape[0]:
            q[i] = a[i] // b[i]
            r[i] = a[i] % b[i]
    return divmod_k


@pytest.mark.parametrize("name", INTS)
def test_floor_div_and_mod_with_negative_operands_and_zero(accelerator, name):
    info = np.iinfo(name)
    rng = np.random.default_rng(7)
    a = rng.integers(info.min, info.max, 64, dtype=name, endpoint=True)
    b = rng.integers(info.min, info.max, 64, dtype=name, endpoint=True)
    b[b == 0] = 3
    signed = info.min < 0
    a[:6] = [info.min, info.max, -7 if signed else 7, 7, 0, 9]
    b[:6] = [-1 if signed else 1, 2, 2, -2 if signed else 2, 5, 0]  # MIN // -1 wraps, x // 0 is 0 in numpy
    q, r = np.ones_like(a), np.ones_like(a)
    dc.launch(_divmod_kernel(getattr(dc, name)), 64, a, b, q, r, accelerator=accelerator)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)


# ------------------------------------------------------------------ casts between every pair of types

def _cast_kernel(src):
    # one kernel per source type (every target at once) keeps the number of compilations small
    @dc.kernel
    def cast_all(a: dc.Buffer[src, 2], o_b: dc.Buffer[dc.bool], o_i8: dc.Buffer[dc.int8], o_u8: dc.Buffer[dc.uint8],
                 o_i16: dc.Buffer[dc.int16], o_u16: dc.Buffer[dc.uint16], o_i32: dc.Buffer[dc.int32],
                 o_u32: dc.Buffer[dc.uint32], o_i64: dc.Buffer[dc.int64], o_u64: dc.Buffer[dc.uint64],
                 o_f16: dc.Buffer[dc.float16], o_f32: dc.Buffer[dc.float32], o_f64: dc.Buffer[dc.float64],
                 o_c64: dc.Buffer[dc.complex64], o_c128: dc.Buffer[dc.complex128]):
        i = dc.global_id(0)
        if i < a.shape[0]:
            o_b[i] = dc.bool(a[i, 0])
            o_i8[i] = dc.int8(a[i, 1])
            o_u8[i] = dc.uint8(a[i, 2])
            o_i16[i] = dc.int16(a[i, 3])
            o_u16[i] = dc.uint16(a[i, 4])
            o_i32[i] = dc.int32(a[i, 5])
            o_u32[i] = dc.uint32(a[i, 6])
            o_i64[i] = dc.int64(a[i, 7])
            o_u64[i] = dc.uint64(a[i, 8])
            o_f16[i] = dc.float16(a[i, 9])
            o_f32[i] = dc.float32(a[i, 10])
            o_f64[i] = dc.float64(a[i, 11])
            o_c64[i] = dc.complex64(a[i, 12])
            o_c128[i] = dc.complex128(a[i, 13])
    return cast_all


def _complex_cast_kernel(src):
    @dc.kernel
    def cast_complex(a: dc.Buffer[src], o_c64: dc.Buffer[dc.complex64], o_c128: dc.Buffer[dc.complex128]):
        i = dc.global_id(0)
        if i < a.shape[0]:
            o_c64[i] = dc.complex64(a[i])
            o_c128[i] = dc.complex128(a[i])
    return cast_complex


def _values(name: str, to: str) -> np.ndarray:
    if name == "bool":
        return np.array([0, 1, 1, 0, 1, 0, 0, 1], bool)
    if name in INTS:
        info = np.iinfo(name)
        return np.array([info.min, info.max, 0, 1, info.max // 2 + 3, info.min // 3, 100, 77], name)
    real = np.array([-3.75, 2.5, 0, 1, 100.9, -100.2, 0.5, 77.7])
    if to in INTS:  # float -> int is defined by numpy only inside the target's range
        real = np.clip(real, 0 if to.startswith("u") else -100, 100)
    if name.startswith("complex"):
        return (real + 1j * np.arange(1, 9)).astype(name)
    return real.astype(name)


@pytest.mark.parametrize("src", ALL)
def test_casts_match_numpy_astype(accelerator, src):
    if src.startswith("complex"):  # complex -> real is a KernelTypeError (numpy would drop .imag)
        a = _values(src, src)
        outs = [np.zeros(8, "complex64"), np.zeros(8, "complex128")]
        dc.launch(_complex_cast_kernel(getattr(dc, src)), 8, a, *outs, accelerator=accelerator)
        for o in outs:
            np.testing.assert_array_equal(o, a.astype(o.dtype), err_msg=f"{src} -> {o.dtype}")
        return
    # column j of the input holds values chosen for target ALL[j] (float -> int only inside the range)
    a = np.stack([_values(src, dst) for dst in ALL], axis=1)
    outs = [np.zeros(8, dst) for dst in ALL]
    dc.launch(_cast_kernel(getattr(dc, src)), 8, a, *outs, accelerator=accelerator)
    for j, (dst, o) in enumerate(zip(ALL, outs, strict=True)):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(o, a[:, j].astype(dst), err_msg=f"{src} -> {dst}")


# ------------------------------------------------------------------ NEP 50 promotion


@dc.kernel
def nep50(f: dc.Buffer[dc.float32], a32: dc.Buffer[dc.int32], a64: dc.Buffer[dc.int64],
          u32: dc.Buffer[dc.uint32], i8: dc.Buffer[dc.int8], of: dc.Buffer[dc.float64],
          oi: dc.Buffer[dc.int64], ou: dc.Buffer[dc.int64], o8: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < f.shape[0]:
        of[i] = f[i] * 2.1  # a Python float is weak: float32 math, then widened by the store
        oi[i] = a32[i] + a64[i]
        ou[i] = u32[i] + a32[i]  # uint32 + int32 -> int64
        o8[i] = i8[i] + 100  # a Python int is weak: int8 math that wraps


def test_nep50_promotion(accelerator):
    f = np.array([1.1, 3.3, 1e-3, 7], np.float32)
    a32 = np.array([2**31 - 1, -(2**31), 5, 6], np.int32)
    a64 = np.array([1, -1, 2**40, 0], np.int64)
    u32 = np.array([2**32 - 1, 0, 7, 2**31], np.uint32)
    i8 = np.array([100, -100, 27, 28], np.int8)
    of, oi, ou, o8 = np.zeros(4), np.zeros(4, np.int64), np.zeros(4, np.int64), np.zeros(4, np.int64)
    dc.launch(nep50, 4, f, a32, a64, u32, i8, of, oi, ou, o8, accelerator=accelerator)
    np.testing.assert_array_equal(of, (f * 2.1).astype(np.float64))
    assert (f * 2.1).dtype == np.float32
    np.testing.assert_array_equal(oi, a32 + a64)
    np.testing.assert_array_equal(ou, u32 + a32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(o8, (i8 + 100).astype(np.int64))


# ------------------------------------------------------------------ unsigned bit operations, uint64, bool


@dc.kernel
def bits(a: dc.Buffer[dc.uint32], b: dc.Buffer[dc.uint64], a8: dc.Buffer[dc.uint8], o32: dc.Buffer[dc.uint32],
         o64: dc.Buffer[dc.uint64], o8: dc.Buffer[dc.uint8], f: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        o32[i] = (a[i] << 3) ^ (a[i] >> 5) | (~a[i] & 0xFF)
        o64[i] = (b[i] >> 60) + (b[i] << 1) + ~b[i] + b[i] // 3
        o8[i] = (a8[i] << 1) | (~a8[i] >> 4)
        f[i] = dc.float64(b[i])


def test_unsigned_bit_operations_and_uint64_above_2_63(accelerator):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2**32, 64, dtype=np.uint32)
    b = rng.integers(2**63, 2**64, 64, dtype=np.uint64, endpoint=False)
    a8 = rng.integers(0, 256, 64, dtype=np.uint8)
    o32, o64, o8, f = np.zeros_like(a), np.zeros_like(b), np.zeros_like(a8), np.zeros(64)
    dc.launch(bits, 64, a, b, a8, o32, o64, o8, f, accelerator=accelerator)
    np.testing.assert_array_equal(o32, (a << np.uint32(3)) ^ (a >> np.uint32(5)) | (~a & np.uint32(0xFF)))
    np.testing.assert_array_equal(o64, (b >> np.uint64(60)) + (b << np.uint64(1)) + ~b + b // np.uint64(3))
    np.testing.assert_array_equal(o8, (a8 << np.uint8(1)) | (~a8 >> np.uint8(4)))
    np.testing.assert_array_equal(f, b.astype(np.float64))


@dc.kernel
def bool_math(a: dc.Buffer[dc.bool], b: dc.Buffer[dc.bool], o: dc.Buffer[dc.int32], ob: dc.Buffer[dc.bool],
              c: dc.Buffer[dc.int8], co: dc.Buffer[dc.int8]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        o[i] = a[i] + b[i] + a[i] * 3
        ob[i] = a[i] & b[i] | (a[i] ^ b[i])
        co[i] = c[i] + c[i] * 2  # int8 wraps


def test_bool_arithmetic_and_int8_wrap(accelerator):
    a, b = np.array([0, 1, 0, 1], bool), np.array([0, 0, 1, 1], bool)
    c = np.array([100, -100, 127, -128], np.int8)
    o, ob, co = np.zeros(4, np.int32), np.zeros(4, bool), np.zeros(4, np.int8)
    dc.launch(bool_math, 4, a, b, o, ob, c, co, accelerator=accelerator)
    np.testing.assert_array_equal(o, a.astype(np.int32) + b + a * 3)
    np.testing.assert_array_equal(ob, a & b | (a ^ b))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(co, c + c * np.int8(2))


# ------------------------------------------------------------------ abs, powers, math constants


@dc.kernel
def abs_pow(a: dc.Buffer[dc.int8], h: dc.Buffer[dc.float16], z: dc.Buffer[dc.complex64], n: dc.Buffer[dc.int32],
            x: dc.Buffer[dc.float32], oa: dc.Buffer[dc.int8], oh: dc.Buffer[dc.float16], oz: dc.Buffer[dc.float32],
            on: dc.Buffer[dc.int32], ox: dc.Buffer[dc.float32], consts: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        oa[i] = abs(a[i])
        oh[i] = abs(h[i])
        oz[i] = abs(z[i])
        on[i] = n[i] ** 2 + n[i] ** 3
        ox[i] = x[i] ** 0.5
    if i == 0:
        consts[0] = math.pi
        consts[1] = math.inf
        consts[2] = -math.inf
        consts[3] = math.e
        consts[4] = math.tau


def test_abs_powers_and_math_constants(accelerator):
    a = np.array([-128, -5, 0, 7, 127, -1, 3, -3], np.int8)
    h = np.array([-1.5, 2, -0.0, 65504, -65504, 0.1, -0.1, 3], np.float16)
    z = (np.arange(8) - 3 + 1j * np.arange(8)).astype(np.complex64)
    n = np.arange(-4, 4, dtype=np.int32)
    x = np.arange(8, dtype=np.float32)
    oa, oh, oz = np.zeros(8, np.int8), np.zeros(8, np.float16), np.zeros(8, np.float32)
    on, ox, consts = np.zeros(8, np.int32), np.zeros(8, np.float32), np.zeros(5)
    dc.launch(abs_pow, 8, a, h, z, n, x, oa, oh, oz, on, ox, consts, accelerator=accelerator)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(oa, np.abs(a))  # abs(-128) wraps to -128 as in numpy
    np.testing.assert_array_equal(oh, np.abs(h))
    np.testing.assert_allclose(oz, np.abs(z), rtol=1e-6)
    np.testing.assert_array_equal(on, n**2 + n**3)
    np.testing.assert_allclose(ox, x**0.5, rtol=1e-6)
    assert consts.tolist() == [math.pi, math.inf, -math.inf, math.e, math.tau]


# ------------------------------------------------------------------ float16 storage, float32 math


@dc.kernel
def conv3_half(x: dc.Buffer[dc.float16], w: dc.Buffer[dc.float16], o: dc.Buffer[dc.float16]):
    i = dc.global_id(0)
    n = x.shape[0]
    if i < n:
        acc = dc.float32(0.0)
        for k in range(-1, 2):
            j = min(max(i + k, 0), n - 1)
            acc += dc.float32(x[j]) * dc.float32(w[k + 1])
        o[i] = acc


def test_float16_convolution_computed_in_float32(accelerator):
    x = np.random.default_rng(0).random(100).astype(np.float16)
    w = np.array([0.25, 0.5, 0.25], np.float16)
    o = np.zeros(100, np.float16)
    dc.launch(conv3_half, 100, x, w, o, accelerator=accelerator)
    xp = np.pad(x.astype(np.float32), 1, mode="edge")
    want = (xp[:-2] * np.float32(w[0]) + xp[1:-1] * np.float32(w[1]) + xp[2:] * np.float32(w[2])).astype(np.float16)
    np.testing.assert_allclose(o.astype(np.float32), want.astype(np.float32), atol=1e-3)


# ------------------------------------------------------------------ complex values


@dc.kernel
def dft(x: dc.Buffer[dc.complex64], out: dc.Buffer[dc.complex64]):
    k = dc.global_id(0)
    n = x.shape[0]
    if k < n:
        s = dc.complex64(0)
        for t in range(n):
            ang = -2.0 * math.pi * k * t / n
            s += x[t] * dc.complex64(math.cos(ang), math.sin(ang))  # complex(re, im) as numpy spells it
        out[k] = s


def test_dft_with_two_argument_complex_constructor(accelerator):
    rng = np.random.default_rng(1)
    x = (rng.random(64) + 1j * rng.random(64)).astype(np.complex64)
    out = np.zeros_like(x)
    dc.launch(dft, 64, x, out, accelerator=accelerator)
    np.testing.assert_allclose(out, np.fft.fft(x), atol=2e-3)


@dc.kernel
def complex_ops(z: dc.Buffer[dc.complex128], w: dc.Buffer[dc.complex64], re: dc.Buffer[dc.float64],
                im: dc.Buffer[dc.float64], ab: dc.Buffer[dc.float64], cj: dc.Buffer[dc.complex128],
                m: dc.Buffer[dc.complex128], mw: dc.Buffer[dc.complex64], x: dc.float32):
    i = dc.global_id(0)
    if i < z.shape[0]:
        re[i] = z[i].real
        im[i] = z[i].imag
        ab[i] = abs(z[i])
        cj[i] = dc.conj(z[i]) * 2.5 + dc.exp(z[i]) + complex(i, -1)
        m[i] = z[i] * w[i] + 3
        mw[i] = w[i] * 2.0 - w[i] / (1 + 1j) + dc.complex64(x, i)


def test_complex_buffers_parts_abs_conj_exp(accelerator):
    rng = np.random.default_rng(2)
    z = rng.random(16) + 1j * rng.random(16)
    w = (rng.random(16) + 1j * rng.random(16)).astype(np.complex64)
    re, im, ab = np.zeros(16), np.zeros(16), np.zeros(16)
    cj, m, mw = np.zeros(16, complex), np.zeros(16, complex), np.zeros(16, np.complex64)
    dc.launch(complex_ops, 16, z, w, re, im, ab, cj, m, mw, np.float32(0.5), accelerator=accelerator)
    i = np.arange(16)
    np.testing.assert_array_equal(re, z.real)
    np.testing.assert_array_equal(im, z.imag)
    np.testing.assert_allclose(ab, abs(z), rtol=1e-12)
    np.testing.assert_allclose(cj, np.conj(z) * 2.5 + np.exp(z) + (i - 1j), rtol=1e-12)
    np.testing.assert_allclose(m, z * w + 3, rtol=1e-12)
    np.testing.assert_allclose(mw, w * 2.0 - w / (1 + 1j) + (0.5 + 1j * i), rtol=1e-5)


def test_complex_constructor_refuses_complex_parts():
    def bad(z: dc.Buffer[dc.complex64]):
        z[0] = dc.complex64(z[0], 1.0)

    with pytest.raises(dc.KernelTypeError, match="real numbers") as info:
        dc.kernel(bad).source("cpu")
    assert "test_audit2_types.py" in str(info.value)


@dc.kernel
def complex_spellings(z: dc.Buffer[dc.complex64], x: dc.Buffer[dc.float32], o: dc.Buffer[dc.complex64],
                      r: dc.Buffer[dc.float32], w: dc.Buffer[dc.complex128]):
    i = dc.global_id(0)
    if i < z.shape[0]:
        # numpy's and cmath's names for what DESIGN.md spells z.real, dc.conj, dc.exp
        o[i] = z[i].conjugate() * np.conj(z[i]) + cmath.exp(z[i]) - cmath.sqrt(x[i] - 2.0)
        r[i] = np.angle(z[i]) + cmath.phase(z[i]) + np.real(z[i]) * np.imag(z[i]) + x[i].conjugate()
        w[i] = cmath.sqrt(-1.0) + cmath.exp(dc.float64(x[i]))


def test_numpy_and_cmath_spellings_of_complex_functions(accelerator):
    # each used to be "calls to arbitrary Python functions" / "numbers have no attribute 'conjugate'"
    z = (np.arange(5) - 2 + 1j * np.arange(1, 6)).astype(np.complex64)
    x = np.arange(5, dtype=np.float32)
    o, r, w = np.zeros_like(z), np.zeros(5, np.float32), np.zeros(5, complex)
    dc.launch(complex_spellings, 5, z, x, o, r, w, accelerator=accelerator)
    want_o = z.conjugate() * np.conj(z) + np.exp(z) - np.sqrt((x - np.float32(2.0)).astype(np.complex64))
    np.testing.assert_allclose(o, want_o, rtol=1e-5)
    np.testing.assert_allclose(r, np.angle(z) * 2 + z.real * z.imag + x, rtol=1e-5)
    np.testing.assert_allclose(w, 1j + np.exp(x.astype(complex)), rtol=1e-12)


def test_factory_kernels_pickle_by_value_with_their_annotations(accelerator):
    # Dask ships kernels by value: the rebuilt function must still know what dt was
    import pickle

    k = pickle.loads(pickle.dumps(_add_constant_kernel(dc.int16, 3)))
    a = np.zeros(4, np.int16)
    dc.launch(k, 4, a, accelerator=accelerator)
    assert a.dtype == np.int16 and a.tolist() == [3] * 4
