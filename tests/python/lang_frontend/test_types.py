"""The type rules of lang/types.py."""

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang import types as T


def test_promote_same_kind_takes_the_wider():
    assert T.promote(T.INT32, T.INT64) is T.INT64
    assert T.promote(T.FLOAT32, T.FLOAT64) is T.FLOAT64
    assert T.promote(T.UINT32, T.UINT32) is T.UINT32


def test_promote_mixed_signedness_is_int64():
    assert T.promote(T.INT32, T.UINT32) is T.INT64
    assert T.promote(T.UINT32, T.INT64) is T.INT64


def test_int_with_float_follows_numpy():
    # NEP 50: the smallest float holding both (DESIGN.md; docs/kernel-language.md's table)
    assert T.promote(T.INT64, T.FLOAT32) is T.FLOAT64
    assert T.promote(T.INT16, T.FLOAT32) is T.FLOAT32
    assert T.promote(T.FLOAT64, T.INT32) is T.FLOAT64


def test_bool_takes_the_other_type():
    assert T.promote(T.BOOL, T.INT32) is T.INT32
    assert T.promote(T.FLOAT32, T.BOOL) is T.FLOAT32
    assert T.promote(T.BOOL, T.BOOL) is T.BOOL


@pytest.mark.parametrize("value,other,expected", [
    (2.0, T.FLOAT32, T.FLOAT32),
    (2, T.FLOAT32, T.FLOAT32),
    (2, T.INT32, T.INT32),
    (2**40, T.INT32, T.INT64),
    (-1, T.UINT32, T.INT64),
    (2.5, T.INT32, T.FLOAT64),
    (3, None, T.INT64),
    (3.0, None, T.FLOAT64),
    (True, None, T.BOOL),
])
def test_literal_type(value, other, expected):
    assert T.literal_type(value, other) is expected


def test_wrap_int_is_twos_complement():
    assert T.wrap_int(2**31, T.INT32) == -(2**31)
    assert T.wrap_int(-1, T.UINT32) == 2**32 - 1
    assert T.wrap_int(2**63, T.INT64) == -(2**63)


def test_buffer_annotation_forms():
    assert T.buffer_annotation(np.float32) == T.BufferAnnotation(T.FLOAT32, 1)
    assert T.buffer_annotation(dc.int64, 3) == T.BufferAnnotation(T.INT64, 3)
    assert T.buffer_annotation().generic
    with pytest.raises(ValueError, match="ndim"):
        T.buffer_annotation(np.float32, 4)
    with pytest.raises(ValueError, match="not a kernel dtype"):
        T.buffer_annotation(np.clongdouble)


def test_dc_buffer_subscript_uses_buffer_annotation():
    assert dc.Buffer[dc.float32, 2] == T.BufferAnnotation(T.FLOAT32, 2)
    assert dc.Buffer[dc.uint32] == T.BufferAnnotation(T.UINT32, 1)


def test_scalar_type_accepts_numpy_and_python_spellings():
    assert T.scalar_type(np.float32) is T.FLOAT32
    assert T.scalar_type(np.dtype("int32")) is T.INT32
    assert T.scalar_type(int) is T.INT64
    assert T.scalar_type(float) is T.FLOAT64
    assert T.scalar_type(bool) is T.BOOL
    assert T.scalar_type("bool_") is T.BOOL
    assert T.scalar_type(np.int8) is T.INT8
    assert T.scalar_type(np.complex256) is None
