"""Refusals of the scalar types, each naming the file and the offending line (marked ``# ERR``)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dotcompute as dc


def _err_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if text.rstrip().endswith("# ERR"))


def atomic_on_uint8(h: dc.Buffer[dc.uint8], x: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    dc.atomic_add(h, x[i], 1)  # ERR


def atomic_on_float16(h: dc.Buffer[dc.float16]):
    dc.atomic_max(h, 0, 1.0)  # ERR


def atomic_on_int16(h: dc.Buffer[dc.int16]):
    dc.atomic_add(h, 0, 1)  # ERR


def signed_and_uint64(a: dc.Buffer[dc.int64], b: dc.Buffer[dc.uint64], out: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    out[i] = a[i] & b[i]  # ERR


def shift_of_float16(a: dc.Buffer[dc.float16], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    out[i] = a[i] << 1  # ERR


def int32_times_float32(a: dc.Buffer[dc.int32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = a[i] * dc.float32(0.5)  # ERR


@pytest.mark.parametrize("fn, words", [
    (atomic_on_uint8, "atomics on uint8 arrays are not supported"),
    (atomic_on_float16, "atomics on float16 arrays are not supported"),
    (atomic_on_int16, "atomics on int16 arrays are not supported"),
    (signed_and_uint64, "unsupported operand types for &: int64 and uint64"),
    (shift_of_float16, "unsupported operand types for <<"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_refused_with_file_and_line(fn, words):
    with pytest.raises(dc.KernelTypeError) as info:
        dc.kernel(fn).source("cpu")
    err = info.value
    assert words in str(err)
    assert err.filename == __file__ and err.lineno == _err_line(fn), (err.filename, err.lineno)
    assert "# ERR" in str(err)  # the offending source line is shown


def test_atomic_refusal_has_a_hint():
    with pytest.raises(dc.KernelTypeError, match="accumulate into one of those"):
        dc.kernel(atomic_on_uint8).source("cpu")


def test_int32_times_float32_is_float64_so_metal_refuses_it():
    # numpy 2: int32 * float32 is float64, which MSL has no type for; the error names the line
    with pytest.raises(dc.KernelTypeError, match="float64 is not available on Metal") as info:
        dc.kernel(int32_times_float32).source("metal")
    assert info.value.lineno == _err_line(int32_times_float32)


def test_promotion_table_matches_numpy_for_every_pair():
    from dotcompute.lang import types as T

    for a in T.SCALAR_TYPES:
        for b in T.SCALAR_TYPES:
            if a.is_bool or b.is_bool:
                continue  # bool takes the other type (numpy agrees except bool with bool)
            assert T.promote(a, b).name == np.promote_types(a.np_dtype, b.np_dtype).name, (a, b)
    assert T.promote(T.INT8, T.UINT8) is T.INT16
    assert T.promote(T.INT64, T.UINT64) is T.FLOAT64
    assert T.promote(T.INT16, T.FLOAT16) is T.FLOAT32


def complex_ordering(a: dc.Buffer[dc.complex64], out: dc.Buffer[dc.bool_]):
    i = dc.global_id(0)
    out[i] = a[i] < a[0]  # ERR


def complex_floordiv(a: dc.Buffer[dc.complex64], out: dc.Buffer[dc.complex64]):
    i = dc.global_id(0)
    out[i] = a[i] // 2  # ERR


def complex_into_float(a: dc.Buffer[dc.complex64], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x = dc.float32(0)
    x = a[i]  # ERR
    out[i] = x


def complex_cast_to_float(a: dc.Buffer[dc.complex128], out: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    out[i] = dc.float64(a[i])  # ERR


def complex_atomic(a: dc.Buffer[dc.complex64]):
    dc.atomic_add(a, 0, 1j)  # ERR


def complex_max(a: dc.Buffer[dc.complex64], out: dc.Buffer[dc.complex64]):
    i = dc.global_id(0)
    out[i] = max(a[i], a[0])  # ERR


@pytest.mark.parametrize("fn, words", [
    (complex_ordering, "complex numbers have no order"),
    (complex_floordiv, "unsupported operand types for //: complex64"),
    (complex_into_float, "has no float32"),
    (complex_cast_to_float, "a complex128 value cannot become float64"),
    (complex_atomic, "atomics on complex64 arrays are not supported"),
    (complex_max, "max() is not defined for complex64"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_complex_refusals_name_file_and_line(fn, words):
    with pytest.raises(dc.KernelTypeError) as info:
        dc.kernel(fn).source("cpu")
    err = info.value
    assert words in str(err), str(err)
    assert err.filename == __file__ and err.lineno == _err_line(fn), (err.filename, err.lineno)
    if fn is complex_atomic:
        assert "z.real and z.imag" in (err.hint or "")
