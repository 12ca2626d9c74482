"""Reassignment within a kind (docs: "without losing its kind"): int64 into int32/uint32 variables
wraps, float64 into float32 rounds; the same rule converts atomic values. Plus a few more loop,
parameter and builtin reflexes from ported kernels."""

import math

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def narrow_int(a: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    v = a[i]
    v += 1
    v -= i                 # int32 variable, int64 value: wraps to int32
    a[i] = v


@dc.kernel
def fnv_hash(out: dc.Buffer[dc.uint32]):
    i = dc.global_id(0)
    h = dc.uint32(2166136261)
    h = (h ^ i) * 16777619  # uint32 ^ int64 is int64; assigning back wraps to uint32
    out[i] = h


@dc.kernel
def narrow_float(x: dc.Buffer[dc.float32], dt: float):
    i = dc.global_id(0)
    v = x[i]
    v += dt * 2             # float64 value into a float32 variable: rounds
    x[i] = v


@dc.kernel
def atomic_int64_value(first: dc.Buffer[dc.int32], total: dc.Buffer[dc.float32], x: dc.Buffer[dc.float32],
                       w: float):
    i = dc.global_id(0)
    if x[i] > 0.5:
        dc.atomic_min(first, 0, i)
    dc.atomic_add(total, 0, x[i] * w)


def test_int64_into_int32_variable_wraps(accelerator):
    a = np.array([5, 2147483647, -3], np.int32)
    dc.launch(narrow_int, 3, a, accelerator=accelerator)
    # 2147483647 + 1 wraps in int32 to -2147483648; minus 1 (int64) is -2147483649, wrapped back: 2147483647
    assert a.tolist() == [6, 2147483647, -4]


def test_uint32_hash_idiom(accelerator):
    out = np.zeros(5, np.uint32)
    dc.launch(fnv_hash, 5, out, accelerator=accelerator)
    expect = [((2166136261 ^ i) * 16777619) & 0xFFFFFFFF for i in range(5)]
    assert out.tolist() == expect


def test_float64_into_float32_variable_rounds(accelerator):
    x = np.array([1.0, 2.0], np.float32)
    dc.launch(narrow_float, 2, x, 0.1, accelerator=accelerator)
    np.testing.assert_array_equal(x, (np.array([1.0, 2.0]) + 0.2).astype(np.float32))


def test_atomic_values_convert_within_their_kind(accelerator):
    x = np.array([0.1, 0.2, 0.9, 0.7, 0.3], np.float32)
    first = np.array([1000], np.int32)
    total = np.zeros(1, np.float32)
    dc.launch(atomic_int64_value, 5, first, total, x, 2.0, accelerator=accelerator)
    assert first[0] == 2
    np.testing.assert_allclose(total[0], 2 * x.astype(np.float64).sum(), rtol=1e-5)


@dc.kernel
def float_into_int(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    v = out[i]
    v = a[i]
    out[i] = v


@dc.kernel
def int_into_bool(out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    flag = False
    flag = i
    out[i] = flag


def test_kind_changing_reassignment_is_still_refused():
    with pytest.raises(dc.KernelTypeError, match="cannot become int32"):
        float_into_int.check()
    with pytest.raises(dc.KernelTypeError, match="cannot become bool"):
        int_into_bool.check()


@dc.kernel
def while_grid_stride(a: dc.Buffer[dc.float32], n: dc.int32):
    i = dc.global_id(0)
    while i < n:
        a[i] = a[i] + 1.0
        i += dc.global_size(0)


def test_while_grid_stride_with_int32_bound(accelerator):
    a = np.zeros(100, np.float32)
    dc.launch(while_grid_stride, 7, a, 100, accelerator=accelerator)
    assert (a == 1.0).all()


@dc.kernel
def uint_index_gather(a: dc.Buffer[dc.float32], idx: dc.Buffer[dc.uint32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = a[idx[i]]


def test_uint32_indices(accelerator):
    a = np.arange(10, dtype=np.float32) * 3
    idx = np.array([9, 0, 4], np.uint32)
    out = np.zeros(3, np.float32)
    dc.launch(uint_index_gather, 3, a, idx, out, accelerator=accelerator)
    assert out.tolist() == [27, 0, 12]


@dc.kernel
def python_typed_params(a: dc.Buffer[dc.float64], flag: bool, s: float, n: int):
    i = dc.global_id(0)
    x: float = 1.5
    y: int = 2
    if flag and not i == 1:
        a[i] = s * n + x * y + i / n


def test_python_annotations_bool_float_int(accelerator):
    from tests_idioms_support import need_fp64
    need_fp64(accelerator)
    a = np.zeros(3)
    dc.launch(python_typed_params, 3, a, True, 0.5, 4, accelerator=accelerator)
    assert a.tolist() == [5.0, 0.0, 5.5]


@dc.kernel
def numpy_math(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    v = a[i]
    out[i] = np.sqrt(v) + np.float32(1.0) + np.exp(v) + np.abs(-v) + np.minimum(v, 1.0) + math.fabs(v)


def test_numpy_ufuncs_on_scalars(accelerator):
    a = np.array([0.25, 4.0], np.float32)
    out = np.zeros_like(a)
    dc.launch(numpy_math, 2, a, out, accelerator=accelerator)
    expect = np.sqrt(a) + 1 + np.exp(a) + a + np.minimum(a, 1) + a
    np.testing.assert_allclose(out, expect, rtol=1e-5)


@dc.kernel
def return_from_loop(a: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    for j in range(4):
        if j == i:
            a[i] = j * 10
            return
    a[i] = -1


def test_return_from_inside_a_loop(accelerator):
    a = np.zeros(6, np.int32)
    dc.launch(return_from_loop, 6, a, accelerator=accelerator)
    assert a.tolist() == [0, 10, 20, 30, -1, -1]
