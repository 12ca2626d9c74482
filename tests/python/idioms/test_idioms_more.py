"""More reflexes from ported kernels: reverse loops, index arithmetic, bool buffers, negative
constant indices, mixed-type conditional expressions, math.floor, pow(), walrus-free loops."""

import math

import numpy as np

import dotcompute as dc

WEIGHTS = (0.25, 0.5, 0.25)
HALF = 0.5
N_ITERS = 4


@dc.kernel
def reverse_cumsum(a: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i != 0:
        return
    n = len(a)
    s = 0
    for k in range(n - 1, -1, -1):
        s += a[k]
        out[k] = s


def test_reverse_range_loop(accelerator):
    a = np.arange(1, 7, dtype=np.int32)
    out = np.zeros_like(a)
    dc.launch(reverse_cumsum, 1, a, out, accelerator=accelerator)
    assert out.tolist() == np.cumsum(a[::-1])[::-1].tolist()


@dc.kernel
def flat_to_2d(a: dc.Buffer[dc.float32, 2], w: dc.int32):
    t = dc.global_id(0)
    r = t // w
    c = t % w
    if r < a.shape[0]:
        a[r, c] = r * 10 + c


def test_flat_index_arithmetic_with_int32_width(accelerator):
    a = np.zeros((3, 4), np.float32)
    dc.launch(flat_to_2d, 12, a, 4, accelerator=accelerator)
    r, c = np.indices(a.shape)
    np.testing.assert_array_equal(a, r * 10 + c)


@dc.kernel
def bool_mask(x: dc.Buffer[dc.float32], m: dc.Buffer[dc.bool_], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    m[i] = x[i] > HALF
    if not m[i]:
        out[i] = x[-1]
    else:
        out[i] = x[i] * N_ITERS


def test_bool_buffer_not_and_negative_constant_index(accelerator):
    x = np.array([0.1, 0.9, 0.4, 0.7], np.float32)
    m = np.zeros(4, np.bool_)
    out = np.zeros(4, np.float32)
    dc.launch(bool_mask, 4, x, m, out, accelerator=accelerator)
    assert m.tolist() == [False, True, False, True]
    np.testing.assert_array_equal(out, np.where(m, x * 4, x[-1]))


@dc.kernel
def mixed_ifexp(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], fl: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    v = x[i]
    out[i] = (1 if v > 0 else 2.5) + pow(v, 2) + v / 2
    fl[i] = math.floor(v) + round(v) * 100


def test_mixed_conditional_expression_pow_floor_round(accelerator):
    x = np.array([1.5, -1.5, 2.5, -0.25], np.float32)
    out = np.zeros_like(x)
    fl = np.zeros(4, np.int64)
    dc.launch(mixed_ifexp, 4, x, out, fl, accelerator=accelerator)
    xs = x.tolist()
    np.testing.assert_allclose(out, [(1 if v > 0 else 2.5) + v * v + v / 2 for v in xs], rtol=1e-6)
    assert fl.tolist() == [math.floor(v) + round(v) * 100 for v in xs]


@dc.kernel
def stencil_weights(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if 1 <= i < len(x) - 1:
        out[i] = WEIGHTS[0] * x[i - 1] + WEIGHTS[1] * x[i] + WEIGHTS[2] * x[i + 1]


def test_module_constant_tuple_indexed_by_literal(accelerator):
    x = np.arange(6, dtype=np.float32) ** 2
    out = np.zeros_like(x)
    dc.launch(stencil_weights, 6, x, out, accelerator=accelerator)
    expect = np.zeros_like(x)
    expect[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    np.testing.assert_allclose(out, expect, rtol=1e-6)


@dc.kernel
def loop_var_after_empty_loop(n32: dc.int32, out: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    for k in range(n32):  # noqa: B007
        pass
    for k in range(i, i):  # noqa: B007 (k is read after the loop)
        pass
    out[i] = k


def test_widened_loop_variable_keeps_its_value_after_an_empty_loop(accelerator):
    out = np.full(3, -7, np.int64)
    dc.launch(loop_var_after_empty_loop, 3, 5, out, accelerator=accelerator)
    assert out.tolist() == [4, 4, 4]


@dc.kernel
def augmented_everything(a: dc.Buffer[dc.int32], f: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    a[i] += 5
    a[i] *= 3
    a[i] //= 2
    a[i] %= 7
    a[i] <<= 2
    a[i] |= 1
    a[i] ^= 8
    a[i] >>= 1
    f[i] += 1
    f[i] /= 4
    f[i] **= 2
    f[i] -= 0.5


def test_augmented_stores_on_buffers(accelerator):
    a = np.arange(-3, 3, dtype=np.int32)
    f = np.arange(6, dtype=np.float32)
    dc.launch(augmented_everything, 6, a, f, accelerator=accelerator)
    exp_a = []
    for v in range(-3, 3):
        v = ((((((v + 5) * 3) // 2) % 7) << 2) | 1) ^ 8
        exp_a.append(v >> 1)
    assert a.tolist() == exp_a
    np.testing.assert_allclose(f, ((np.arange(6) + 1) / 4) ** 2 - 0.5, rtol=1e-6)


@dc.kernel
def reverse_in_place(a: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    n = len(a)
    if i < n // 2:
        a[i], a[n - 1 - i] = a[n - 1 - i], a[i]


def test_tuple_swap_of_buffer_elements(accelerator):
    a = np.arange(7, dtype=np.int32)
    dc.launch(reverse_in_place, 7, a, accelerator=accelerator)
    assert a.tolist() == list(range(6, -1, -1))


@dc.func
def area(m: dc.Buffer[dc.float32, 2]):
    h, w = m.shape
    return h * w


@dc.kernel
def generic_shape_unpack(a: dc.Buffer, out: dc.Buffer[dc.int64]):
    r, c = a.shape
    out[0] = r * 10 + c
    out[1] = area(a)


@dc.kernel
def shared_shape_unpack(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    t = dc.shared((8, 4), dc.float32)
    h, w = t.shape
    lid = dc.local_id(0)
    t[lid, 0] = a[dc.global_id(0)]
    dc.barrier()
    out[dc.global_id(0)] = t[(lid + 1) % h, 0] + w


def test_shape_unpack_of_generic_buffer_in_device_function_and_shared_array(accelerator):
    out = np.zeros(2, np.int64)
    dc.launch(generic_shape_unpack, 1, np.zeros((3, 5), np.float32), out, accelerator=accelerator)
    assert out.tolist() == [35, 15]
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    dc.launch(shared_shape_unpack, 16, x, y, local_size=8, accelerator=accelerator)
    expect = x.reshape(2, 8)[:, [1, 2, 3, 4, 5, 6, 7, 0]].ravel() + 4
    np.testing.assert_array_equal(y, expect)


def test_generic_buffer_default_specialisation_counts_shape_unpacking():
    # check() and source() without arguments pick ndim from `r, c = a.shape`
    generic_shape_unpack.check()
    assert generic_shape_unpack.ir().kernel.params[0].type.ndim == 2
    for backend in ("cpu", "cuda", "opencl", "metal"):
        assert generic_shape_unpack.source(backend)


@dc.kernel
def collatz_steps(a: dc.Buffer[dc.int64], steps: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    n = a[i]
    s = 0
    while True:
        if n == 1:
            steps[i] = s
            return
        s += 1
        if n % 2:
            n = 3 * n + 1
            continue
        n //= 2


@dc.kernel
def truthiness(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    v = x[i]
    out[i] = 0
    if not v:
        out[i] = 1
    elif v:
        out[i] = 2


@dc.kernel
def histogram_cuda_style(x: dc.Buffer[dc.float32], h: dc.Buffer[dc.int32], nb: dc.int32):
    tid = dc.group_id(0) * dc.local_size(0) + dc.local_id(0)
    if tid < x.shape[0]:
        b = int(x[tid] * nb)
        b = min(max(b, 0), nb - 1)
        dc.atomic_add(h, b, 1)


def test_while_true_with_return_and_continue(accelerator):
    a = np.array([1, 2, 3, 6, 27], np.int64)
    s = np.zeros(5, np.int32)
    dc.launch(collatz_steps, 5, a, s, accelerator=accelerator)
    assert s.tolist() == [0, 1, 7, 8, 111]


def test_float_truthiness_with_nan(accelerator):
    out = np.zeros(3, np.int32)
    dc.launch(truthiness, 3, np.array([0.0, np.nan, -1.0], np.float32), out, accelerator=accelerator)
    assert out.tolist() == [1, 2, 2]     # NaN is truthy in Python


def test_histogram_with_block_thread_index_arithmetic(accelerator):
    x = np.random.default_rng(3).random(1000).astype(np.float32)
    h = np.zeros(10, np.int32)
    dc.launch(histogram_cuda_style, 1000, x, h, 10, accelerator=accelerator)
    np.testing.assert_array_equal(h, np.histogram(x, 10, (0.0, 1.0))[0])
