"""Idioms ported-kernel authors write by reflex (Numba, Warp, Taichi, PyOpenCL, CuPy),
run on every accelerator and checked against numpy / Python semantics."""

import math

import numpy as np

import dotcompute as dc

SCALE = 2.5
NCONST = 3
FLAG = True


@dc.kernel
def shape_attrs(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    n = a.shape[0]
    i = dc.global_id(0)
    if i >= n:
        return
    out[i] = a[i] + len(a) * 1000 + a.size * 100 + a.ndim


def test_shape_len_size_ndim_and_early_return(accelerator):
    a = np.arange(7, dtype=np.float32)
    out = np.full(7, -1, np.float32)
    dc.launch(shape_attrs, 16, a, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, a + 7000 + 700 + 1)


@dc.kernel
def unpack_shape(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    n, m = a.shape
    i, j = dc.global_id(0), dc.global_id(1)
    if i < n and j < m:
        out[i, j] = a[i, j] * 2.0 + n * 100 + m


def test_tuple_unpack_of_shape_and_2d_ids(accelerator):
    a = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = np.zeros_like(a)
    dc.launch(unpack_shape, (4, 8), a, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, a * 2 + 305)


@dc.kernel
def reuse_loop_var(a: dc.Buffer[dc.float32], n32: dc.int32, out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i >= n32:
        return
    acc = 0.0
    for k in range(n32):
        acc += a[k]
    for k in range(i, n32):  # noqa: B007 (k is read after the loop)
        acc += 1.0
    out[i] = acc + k


def test_loop_variable_reused_with_int32_then_int64_range(accelerator):
    a = np.arange(6, dtype=np.float32)
    out = np.zeros(6, np.float32)
    dc.launch(reuse_loop_var, 6, a, 6, out, accelerator=accelerator)
    expect = [a.sum() + (6 - i) + 5 for i in range(6)]
    np.testing.assert_array_equal(out, np.array(expect, np.float32))


@dc.kernel
def swap_pair(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x = a[i]
    y = a[i] + 10.0
    x, y = y, x
    out[i] = x - 2 * y


def test_tuple_swap(accelerator):
    a = np.arange(5, dtype=np.float32)
    out = np.zeros_like(a)
    dc.launch(swap_pair, 5, a, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, (a + 10) - 2 * a)


@dc.kernel
def casts_k(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], iout: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    x = a[i]
    out[i] = dc.float32(float(x) * 2) + dc.float32(1)
    iout[i] = int(x) + dc.int64(i) * 100


def test_casts(accelerator):
    a = np.array([1.75, -1.75, 2.5, 0.0], np.float32)
    out = np.zeros_like(a)
    iout = np.zeros(4, np.int64)
    dc.launch(casts_k, 4, a, out, iout, accelerator=accelerator)
    np.testing.assert_array_equal(out, a * 2 + 1)
    assert iout.tolist() == [1, -1 + 100, 2 + 200, 300]


@dc.kernel
def math_consts(out: dc.Buffer[dc.float32], flags: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    lo = -math.inf
    best = math.inf
    if a_small(out[i]) < best:
        best = a_small(out[i])
    out[i] = math.pi * i + math.e
    flags[i] = int(lo < -1e30) + 2 * int(best < math.inf) + 4 * int(math.isinf(lo))


@dc.func
def a_small(v):
    return v


def test_math_constants_and_infinities(accelerator):
    out = np.zeros(3, np.float32)
    flags = np.zeros(3, np.int32)
    dc.launch(math_consts, 3, out, flags, accelerator=accelerator)
    np.testing.assert_allclose(out, np.float32(math.pi) * np.arange(3) + np.float32(math.e), rtol=1e-6)
    assert flags.tolist() == [7, 7, 7]


@dc.kernel
def min_max_abs(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.int32], out: dc.Buffer[dc.float32],
                iout: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    out[i] = min(a[i], b[i], 3) + 10 * max(b[i], a[i]) + 100 * abs(a[i])
    iout[i] = abs(b[i]) + max(b[i], 0, -5) * 10 + min(b[i], 2) * 100


def test_min_max_abs_mixed_int_float(accelerator):
    a = np.array([0.5, -2.5, 7.0, 3.25], np.float32)
    b = np.array([1, -3, 9, -1], np.int32)
    out = np.zeros(4, np.float32)
    iout = np.zeros(4, np.int32)
    dc.launch(min_max_abs, 4, a, b, out, iout, accelerator=accelerator)
    expect = [min(x, y, 3) + 10 * max(y, x) + 100 * abs(x) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    np.testing.assert_allclose(out, np.array(expect, np.float32), rtol=1e-6)
    assert iout.tolist() == [abs(y) + max(y, 0, -5) * 10 + min(y, 2) * 100 for y in b.tolist()]


@dc.kernel
def powers_k(a: dc.Buffer[dc.float32], k: dc.int32, out: dc.Buffer[dc.float32], iout: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    x = a[i]
    out[i] = x ** 2 + x ** 0.5
    iout[i] = 2 ** k + dc.int32(i) ** 3


def test_powers(accelerator):
    a = np.array([4.0, 9.0, 2.25], np.float32)
    out = np.zeros(3, np.float32)
    iout = np.zeros(3, np.int32)
    dc.launch(powers_k, 3, a, 5, out, iout, accelerator=accelerator)
    np.testing.assert_allclose(out, a * a + np.sqrt(a), rtol=1e-6)
    assert iout.tolist() == [32 + i ** 3 for i in range(3)]


@dc.kernel
def floor_div_mod(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32], q: dc.Buffer[dc.int32],
                  r: dc.Buffer[dc.int32], fa: dc.Buffer[dc.float32], fq: dc.Buffer[dc.float32],
                  fr: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]
    fq[i] = fa[i] // b[i]
    fr[i] = fa[i] % b[i]


def test_floor_division_and_modulo_negative_operands(accelerator):
    a = np.array([7, -7, 7, -7, 0, 6, -6], np.int32)
    b = np.array([2, 2, -2, -2, 3, -4, 4], np.int32)
    fa = a.astype(np.float32) + 0.5
    q, r = np.zeros_like(a), np.zeros_like(a)
    fq, fr = np.zeros_like(fa), np.zeros_like(fa)
    dc.launch(floor_div_mod, a.size, a, b, q, r, fa, fq, fr, accelerator=accelerator)
    assert q.tolist() == [x // y for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert r.tolist() == [x % y for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert fq.tolist() == [x // y for x, y in zip(fa.tolist(), b.tolist(), strict=True)]
    assert fr.tolist() == [x % y for x, y in zip(fa.tolist(), b.tolist(), strict=True)]


@dc.kernel
def bit_ops(a: dc.Buffer[dc.int32], u: dc.Buffer[dc.uint32], out: dc.Buffer[dc.int32],
            uo: dc.Buffer[dc.uint32]):
    i = dc.global_id(0)
    x = a[i]
    out[i] = ((x & 0xF) | (x ^ 3)) + (~x) + (x << 2) + (x >> 1)
    y = u[i]
    uo[i] = ((y & 0xF) | (y ^ 3)) + (~y) + (y << 2) + (y >> 1)


def test_bit_operations_int32_uint32(accelerator):
    a = np.array([0, 1, -1, 12345, -99999, 2 ** 30], np.int32)
    u = np.array([0, 1, 0xFFFFFFFF, 12345, 0x80000001, 2 ** 31], np.uint32)
    out, uo = np.zeros_like(a), np.zeros_like(u)
    dc.launch(bit_ops, a.size, a, u, out, uo, accelerator=accelerator)
    with np.errstate(over="ignore"):
        ea = ((a & 0xF) | (a ^ 3)) + (~a) + (a << 2) + (a >> 1)
        eu = ((u & np.uint32(0xF)) | (u ^ np.uint32(3))) + (~u) + (u << np.uint32(2)) + (u >> np.uint32(1))
    np.testing.assert_array_equal(out, ea.astype(np.int32))
    np.testing.assert_array_equal(uo, eu.astype(np.uint32))


@dc.kernel
def chained_cmp(a: dc.Buffer[dc.float32], n: dc.int64, out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if 0 <= i < n and not (a[i] > 5.0):
        out[i] = 1 if a[i] > 2.0 else 2
    else:
        out[i] = 0


def test_chained_comparison_not_and_conditional_expression(accelerator):
    a = np.array([1.0, 3.0, 6.0, 3.0, 1.0], np.float32)
    out = np.full(5, 9, np.int32)
    dc.launch(chained_cmp, 5, a, 4, out, accelerator=accelerator)
    assert out.tolist() == [2, 1, 0, 1, 0]


@dc.kernel
def while_true_break(out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    k = 0
    while True:
        k += 1
        if k > i:
            break
    out[i] = k


def test_while_true_with_break(accelerator):
    out = np.zeros(6, np.int32)
    dc.launch(while_true_break, 6, out, accelerator=accelerator)
    assert out.tolist() == [1, 2, 3, 4, 5, 6]


@dc.func
def square(x):
    return x * x


@dc.func
def norm2(x, y):
    return square(x) + square(y)


@dc.func
def positive(x) -> bool:
    return x > 0


@dc.func
def positive_inferred(x):
    return x > 0


@dc.kernel
def nested_funcs(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if positive(a[i]) and positive_inferred(a[i]):
        out[i] = norm2(a[i], dc.float32(3))
    else:
        out[i] = -1.0


def test_nested_device_functions_and_bool_result_in_if(accelerator):
    a = np.array([1.0, -2.0, 4.0, 0.0], np.float32)
    out = np.zeros_like(a)
    dc.launch(nested_funcs, 4, a, out, accelerator=accelerator)
    assert out.tolist() == [10.0, -1.0, 25.0, -1.0]


@dc.kernel
def module_constants(out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if FLAG and i < NCONST:
        out[i] = SCALE * NCONST + i


def make_closure_kernel(factor):
    @dc.kernel
    def scaled(out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        out[i] = out[i] * factor
    return scaled


def test_module_constants_and_closure_float(accelerator):
    out = np.zeros(5, np.float32)
    dc.launch(module_constants, 5, out, accelerator=accelerator)
    assert out.tolist() == [7.5, 8.5, 9.5, 0, 0]
    k = make_closure_kernel(1.5)
    out2 = np.arange(4, dtype=np.float32)
    dc.launch(k, 4, out2, accelerator=accelerator)
    assert out2.tolist() == [0, 1.5, 3.0, 4.5]


@dc.kernel
def grid_stride(a: dc.Buffer[dc.float32], n: dc.int64):
    i = dc.global_id(0)
    for j in range(i, n, dc.global_size(0)):
        a[j] = a[j] * 2.0 + 1.0


def test_grid_stride_loop(accelerator):
    a = np.arange(1000, dtype=np.float32)
    dc.launch(grid_stride, 64, a, 1000, accelerator=accelerator)
    np.testing.assert_array_equal(a, np.arange(1000, dtype=np.float32) * 2 + 1)


@dc.kernel
def write_3d(a: dc.Buffer[dc.float32, 3]):
    i, j, k = dc.global_id(0), dc.global_id(1), dc.global_id(2)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        a[i, j, k] = i * 100 + j * 10 + k


def test_3d_buffer_store(accelerator):
    a = np.zeros((3, 4, 5), np.float32)
    dc.launch(write_3d, (3, 4, 5), a, accelerator=accelerator)
    ii, jj, kk = np.indices(a.shape)
    np.testing.assert_array_equal(a, ii * 100 + jj * 10 + kk)


@dc.kernel
def doc_pass_annot(a: dc.Buffer[dc.float32]):
    """Docstrings, comments, pass and annotated locals are all fine."""
    i = dc.global_id(0)  # a comment
    pass
    acc: dc.float32 = 0.0
    n: dc.int32 = 2
    acc += a[i] * n
    a[i] = acc


def test_docstring_pass_comment_annotated_local(accelerator):
    a = np.arange(4, dtype=np.float32)
    dc.launch(doc_pass_annot, 4, a, accelerator=accelerator)
    assert a.tolist() == [0, 2, 4, 6]
    assert "float" in doc_pass_annot.source("cpu")


@dc.kernel
def thirteen_params(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], c: dc.Buffer[dc.float32],
                    d: dc.Buffer[dc.float32], e: dc.float32, f: dc.float32, g: dc.int32, h: dc.int64,
                    p: dc.float32, q: dc.uint32, r: dc.bool_, s: dc.float32, out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = a[i] + b[i] + c[i] + d[i] + e + f + g + h + p + q + r + s


def test_kernel_with_thirteen_parameters(accelerator):
    v = [np.full(3, x, np.float32) for x in (1, 2, 3, 4)]
    out = np.zeros(3, np.float32)
    dc.launch(thirteen_params, 3, *v, 5.0, 6.0, 7, 8, 9.0, 10, True, 12.0, out, accelerator=accelerator)
    assert out.tolist() == [68.0] * 3


@dc.kernel
def shadow_builtin(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    min = 3
    a[i] = a[i] + min


def test_shadowing_a_builtin_name(accelerator):
    a = np.zeros(3, np.float32)
    dc.launch(shadow_builtin, 3, a, accelerator=accelerator)
    assert a.tolist() == [3, 3, 3]


@dc.kernel
def unicode_names(données: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    λ = dc.float32(2)
    données[i] = données[i] * λ


def test_unicode_identifiers(accelerator):
    a = np.arange(3, dtype=np.float32)
    dc.launch(unicode_names, 3, a, accelerator=accelerator)
    assert a.tolist() == [0, 2, 4]
