"""Integer edge cases, dtype specialisation, device-function libraries and closures."""

import numpy as np

import dotcompute as dc


@dc.kernel
def floordiv_mod(a: dc.Buffer, b: dc.Buffer, q: dc.Buffer, r: dc.Buffer):
    i = dc.global_id(0)
    if i < a.shape[0]:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def test_negative_floordiv_and_mod_like_python(accelerator):
    vals = [-7, 7, -8, 8, -1, 0, 1, 13, -13, 2**31 - 1, -(2**31)]
    divs = [2, -2, 3, -3, 5, -5, 7, 1, -1, 0]
    a = np.array([x for x in vals for _ in divs], np.int64)
    b = np.array([d for _ in vals for d in divs], np.int64)
    for dt in (np.int32, np.int64):
        aa = a.astype(dt)
        bb = b.astype(dt)
        q, r = np.zeros_like(aa), np.zeros_like(aa)
        dc.launch(floordiv_mod, aa.size, aa, bb, q, r, accelerator=accelerator)
        for x, d, qq, rr in zip(aa.tolist(), bb.tolist(), q.tolist(), r.tolist(), strict=True):
            if d == 0:
                assert (qq, rr) == (0, 0), (dt, x, d)
            elif dt is np.int32 and x == -(2**31) and d == -1:
                assert (qq, rr) == (-(2**31), 0)  # INT_MIN // -1 wraps
            else:
                assert (qq, rr) == (x // d, x % d), (dt, x, d, qq, rr)


def test_float_floordiv_and_mod_like_python(accelerator):
    a = np.array([-7.5, 7.5, -0.5, 5.25, -5.25], np.float64)
    b = np.array([2.0, -2.0, 3.0, -1.5, 1.5], np.float64)
    q, r = np.zeros_like(a), np.zeros_like(a)
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    dc.launch(floordiv_mod, a.size, a, b, q, r, accelerator=accelerator)
    assert q.tolist() == [x // y for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert r.tolist() == [x % y for x, y in zip(a.tolist(), b.tolist(), strict=True)]


@dc.kernel
def wrap_index(rows: dc.Buffer[dc.int32], cols: dc.Buffer[dc.int32], width: dc.int32,
               idx64: dc.Buffer[dc.int64], idx32: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < rows.shape[0]:
        idx64[i] = dc.int64(rows[i]) * width + cols[i]
        idx32[i] = rows[i] * width + cols[i]   # int32 arithmetic wraps


def test_int64_linear_index_does_not_overflow(accelerator):
    rows = np.array([0, 1, 50000, 99999, 65536], np.int32)
    cols = np.array([5, 7, 123, 99999, 0], np.int32)
    width = 100000
    i64, i32 = np.zeros(5, np.int64), np.zeros(5, np.int32)
    dc.launch(wrap_index, 5, rows, cols, width, i64, i32, accelerator=accelerator)
    ref = rows.astype(np.int64) * width + cols
    np.testing.assert_array_equal(i64, ref)
    np.testing.assert_array_equal(i32, ref.astype(np.int32))  # two's complement wrap


@dc.kernel
def shape_product_index(v: dc.Buffer[dc.float32, 3], flat: dc.Buffer[dc.int64, 3]):
    z = dc.global_id(0)
    y = dc.global_id(1)
    x = dc.global_id(2)
    if z < v.shape[0] and y < v.shape[1] and x < v.shape[2]:
        f = (z * v.shape[1] + y) * v.shape[2] + x
        flat[z, y, x] = f + 3_000_000_000 * (z % 2)


def test_index_from_shape_products_is_int64(accelerator):
    v = np.zeros((3, 5, 7), np.float32)
    flat = np.zeros((3, 5, 7), np.int64)
    dc.launch(shape_product_index, v.shape, v, flat, accelerator=accelerator)
    z = np.arange(3)[:, None, None]
    ref = np.arange(105).reshape(3, 5, 7) + 3_000_000_000 * (z % 2)
    np.testing.assert_array_equal(flat, ref)


@dc.kernel
def uint32_ops(u: dc.Buffer[dc.uint32], out: dc.Buffer[dc.uint32, 2]):
    i = dc.global_id(0)
    if i < u.shape[0]:
        x = u[i]
        out[i, 0] = x - 1
        out[i, 1] = x * 3
        out[i, 2] = x + 4000000000
        out[i, 3] = (x << 4) | (x >> 28)   # rotate left by 4
        out[i, 4] = ~x
        out[i, 5] = x // 7
        out[i, 6] = (x * 2654435761) >> 16


def test_uint32_wraparound(accelerator):
    u = np.array([0, 1, 2**31, 2**32 - 1, 123456789, 3000000000], np.uint32)
    out = np.zeros((6, 7), np.uint32)
    dc.launch(uint32_ops, u.size, u, out, accelerator=accelerator)
    x = u.astype(np.uint64)
    m = 2**32
    ref = np.stack([(x - 1) % m, (x * 3) % m, (x + 4000000000) % m, ((x << 4) | (x >> 28)) % m,
                    (~u).astype(np.uint64), x // 7, ((x * 2654435761) % m) >> 16], 1)
    np.testing.assert_array_equal(out, ref.astype(np.uint32))


@dc.kernel
def poly_eval(coef: dc.Buffer, x: dc.Buffer, y: dc.Buffer):
    i = dc.global_id(0)
    if i < x.shape[0]:
        acc = coef[coef.shape[0] - 1] * 0   # typed like the coefficients
        for k in range(coef.shape[0] - 1, -1, -1):
            acc = acc * x[i] + coef[k]
        y[i] = acc


def test_generic_kernel_specialised_per_dtype(accelerator):
    coef = np.array([1.0, -2.0, 0.5, 1.0 / 3.0])
    xs = np.linspace(-2, 2, 33)
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    y64 = np.zeros_like(xs)
    dc.launch(poly_eval, xs.size, coef, xs, y64, accelerator=accelerator)
    ref64 = np.zeros_like(xs)
    for c in coef[::-1]:
        ref64 = ref64 * xs + c
    np.testing.assert_allclose(y64, ref64, rtol=1e-14, atol=1e-14)
    c32, x32 = coef.astype(np.float32), xs.astype(np.float32)
    y32 = np.zeros_like(x32)
    dc.launch(poly_eval, x32.size, c32, x32, y32, accelerator=accelerator)
    ref32 = np.zeros_like(x32)
    for c in c32[::-1]:
        ref32 = ref32 * x32 + c
    np.testing.assert_allclose(y32, ref32, rtol=1e-6, atol=1e-6)
    # float32 really ran in float32: a third is not representable, so the answers differ
    assert not np.array_equal(y32.astype(np.float64), y64)
    ci, xi = np.array([1, 2, 3], np.int32), np.arange(-3, 4, dtype=np.int32)
    yi = np.zeros_like(xi)
    dc.launch(poly_eval, xi.size, ci, xi, yi, accelerator=accelerator)
    np.testing.assert_array_equal(yi, 1 + 2 * xi + 3 * xi * xi)


@dc.func
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


@dc.func
def lerp(a: dc.float32, b: dc.float32, t: dc.float32) -> dc.float32:
    return a + (b - a) * t


@dc.func
def smoothstep(e0: dc.float32, e1: dc.float32, x: dc.float32) -> dc.float32:
    t = clamp((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@dc.func
def classify(v: dc.float32) -> dc.int32:
    if v < -1.0:
        return -2
    elif v < 0.0:
        return -1
    if v == 0.0:
        return 0
    return 1 if v <= 1.0 else 2


@dc.kernel
def shading(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], cls: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        s = smoothstep(-1.0, 1.0, x[i])
        y[i] = lerp(10.0, 20.0, s)
        cls[i] = classify(x[i])


def test_device_function_library(accelerator):
    x = np.linspace(-2, 2, 41).astype(np.float32)
    y, cls = np.zeros_like(x), np.zeros(41, np.int32)
    dc.launch(shading, x.size, x, y, cls, accelerator=accelerator)
    t = np.clip((x.astype(np.float64) + 1) / 2, 0, 1)
    s = t * t * (3 - 2 * t)
    np.testing.assert_allclose(y, 10 + 10 * s, rtol=1e-5)
    ref = np.select([x < -1, x < 0, x == 0, x <= 1], [-2, -1, 0, 1], 2)
    np.testing.assert_array_equal(cls, ref)
    # called from plain Python, a device function runs the Python body
    assert clamp(5, 0, 3) == 3


def make_scale(factor):
    @dc.kernel
    def scale(x: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < x.shape[0]:
            x[i] = x[i] * factor
    return scale


def make_box(radius):
    @dc.kernel
    def box(src: dc.Buffer[dc.float32], dst: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        n = src.shape[0]
        if i < n:
            s: dc.float32 = 0.0
            for d in range(-radius, radius + 1):
                s += src[min(max(i + d, 0), n - 1)]
            dst[i] = s / (2 * radius + 1)
    return box


def test_closure_factories_give_distinct_kernels(accelerator):
    double, triple = make_scale(2.0), make_scale(3.0)
    a = np.arange(10, dtype=np.float32)
    b = a.copy()
    dc.launch(double, 10, a, accelerator=accelerator)
    dc.launch(triple, 10, b, accelerator=accelerator)
    np.testing.assert_array_equal(a, np.arange(10) * 2)
    np.testing.assert_array_equal(b, np.arange(10) * 3)
    src = np.random.default_rng(50).random(30).astype(np.float32)
    for r in (1, 3):
        dst = np.zeros_like(src)
        dc.launch(make_box(r), 30, src, dst, accelerator=accelerator)
        p = np.pad(src.astype(np.float64), r, mode="edge")
        ref = sum(p[k:k + 30] for k in range(2 * r + 1)) / (2 * r + 1)
        np.testing.assert_allclose(dst, ref, rtol=1e-5)


THRESHOLD = 0.5


@dc.kernel
def threshold(x: dc.Buffer[dc.float32], m: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        m[i] = 1 if x[i] > THRESHOLD else 0


def test_module_constant_rebinding_recompiles(accelerator):
    global THRESHOLD
    x = np.linspace(0, 1, 11).astype(np.float32)
    m = np.zeros(11, np.int32)
    dc.launch(threshold, 11, x, m, accelerator=accelerator)
    assert m.sum() == 5
    old = THRESHOLD
    try:
        THRESHOLD = 0.15
        dc.launch(threshold, 11, x, m, accelerator=accelerator)
        assert m.sum() == 9
    finally:
        THRESHOLD = old


@dc.kernel
def literal_precision(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        y[i] = x[i] * 0.1 + 1e-8   # weak literals: float32 arithmetic, like CUDA's 0.1f


def test_float_literals_stay_float32(accelerator):
    x = np.array([1.0, 3.0, 7.0, 1e7], np.float32)
    y = np.zeros_like(x)
    dc.launch(literal_precision, 4, x, y, accelerator=accelerator)
    ref = x * np.float32(0.1) + np.float32(1e-8)
    np.testing.assert_allclose(y, ref, rtol=1e-7, atol=0)
