"""Python names that are keywords or builtins in C, C++, CUDA, OpenCL C or MSL. Users pick them
all the time (`new`, `half`, `local`, `floor = ...`); the generated code must not trip on them."""

import math

import numpy as np

import dotcompute as dc


@dc.kernel
def ping_pong(old: dc.Buffer[dc.float32], new: dc.Buffer[dc.float32], half: dc.float32,
              register: dc.Buffer[dc.int32]):
    this = dc.global_id(0)
    local = dc.local_id(0)
    kernel = old.shape[0]
    default = 0.0
    if this < kernel:
        char = old[this]
        short = char * half
        long = short + default
        signed = dc.int32(long)
        union = signed + 0 * local
        new[this] = long
        register[this] = union


def test_c_keywords_as_python_names(accelerator):
    old = np.arange(10, dtype=np.float32) * 3
    new = np.zeros_like(old)
    reg = np.zeros(10, np.int32)
    dc.launch(ping_pong, 10, old, new, 0.5, reg, accelerator=accelerator)
    np.testing.assert_array_equal(new, old * 0.5)
    np.testing.assert_array_equal(reg, (old * 0.5).astype(np.int32))


@dc.kernel
def shadow_c_math(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i >= x.shape[0]:
        return
    floor = x[i] // y[i]           # float floor division in the generated code is a floor() call
    fmod = x[i] % y[i]
    sqrt = math.sqrt(abs(x[i]))
    exp = math.exp(-abs(x[i]))
    isnan = math.isnan(x[i])
    dot = floor * 2.0
    length = dc.fabs(fmod)
    sign = 1.0 if x[i] >= 0.0 else -1.0
    select = sqrt + exp
    step = dot + length
    mix = sign * select
    fma = step + mix
    barrier = 0.0 if isnan else 1.0
    out[i, 0] = floor
    out[i, 1] = fmod
    out[i, 2] = fma * barrier


def test_locals_named_like_c_math_functions(accelerator):
    x = np.array([-7.5, 7.5, 3.25, -0.5, 9.0], np.float32)
    y = np.array([2.0, -2.0, 1.5, 3.0, 4.0], np.float32)
    out = np.zeros((5, 3), np.float32)
    dc.launch(shadow_c_math, 5, x, y, out, accelerator=accelerator)
    fl = np.floor_divide(x, y)
    md = np.mod(x, y)
    rest = fl * 2 + np.abs(md) + np.sign(x) * (np.sqrt(np.abs(x)) + np.exp(-np.abs(x)))
    np.testing.assert_array_equal(out[:, 0], fl)
    np.testing.assert_array_equal(out[:, 1], md)
    np.testing.assert_allclose(out[:, 2], rest, rtol=1e-5)


@dc.func
def floor(v: dc.float32) -> dc.float32:     # a user function named like the C library's
    return v - 1000.0


@dc.func
def sign(v):
    return -1 if v < 0 else 1


@dc.func
def min3(a, b, c):
    return min(a, min(b, c))


@dc.kernel
def calls_user_floor(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        out[i] = floor(x[i]) + x[i] // 2.0 + sign(x[i]) + min3(x[i], 5.0, 10.0)


def test_device_functions_named_like_c_builtins(accelerator):
    x = np.array([-3.5, 0.0, 2.5, 11.0], np.float32)
    out = np.zeros_like(x)
    dc.launch(calls_user_floor, 4, x, out, accelerator=accelerator)
    ref = (x - 1000) + np.floor(x / 2) + np.where(x < 0, -1, 1) + np.minimum(x, 5)
    np.testing.assert_array_equal(out, ref.astype(np.float32))


@dc.kernel
def int(a: dc.Buffer[dc.int32]):  # a kernel called like a C type
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = dc.int32(i) * 2


def test_kernel_named_like_a_c_type(accelerator):
    a = np.zeros(5, np.int32)
    dc.launch(int, 5, a, accelerator=accelerator)
    np.testing.assert_array_equal(a, np.arange(5) * 2)


@dc.kernel
def shape_names(a: dc.Buffer[dc.float32, 2], a_shape0: dc.int64, a_shape_0: dc.int64, out: dc.Buffer[dc.int64]):
    # parameters named like what an emitter might call a's extents
    i = dc.global_id(0)
    if i == 0:
        out[0] = a.shape[0] * 1000 + a.shape[1]
        out[1] = a_shape0
        out[2] = a_shape_0
        out[3] = len(a) + a.size * 10 + a.shape[-1] * 100000


def test_parameters_named_like_generated_extents(accelerator):
    a = np.zeros((3, 7), np.float32)
    out = np.zeros(4, np.int64)
    dc.launch(shape_names, 1, a, 11, 22, out, accelerator=accelerator)
    assert out.tolist() == [3007, 11, 22, 3 + 210 + 700000]
