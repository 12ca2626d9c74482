"""Audit 2: kernels from outside projects (Numba/Warp/Taichi examples, classic CUDA/OpenCL samples)
written in the kernel language the way a user would after reading DESIGN.md, on every accelerator,
checked against numpy; the mistakes such users make, refused with the user's file and line.

No ``from __future__ import annotations`` here on purpose: annotations are evaluated objects.
"""

import math

import numpy as np
import pytest

import dotcompute as dc

HERE = "test_audit2_kernels.py"


# ------------------------------------------------------------------ annotations evaluated at def time

def _scaled(dt, factor):
    @dc.kernel
    def scale(a: dc.Buffer[dt]):  # dt is a local of the factory the body never uses
        i = dc.global_id(0)
        if i < a.shape[0]:
            a[i] = a[i] * factor
    return scale


LOOP_KERNELS = []
for _name in ("int16", "float64"):
    _T = getattr(dc, _name)

    @dc.kernel
    def _twice(a: dc.Buffer[_T]):  # _T, a module global, has moved on when the kernel compiles
        i = dc.global_id(0)
        if i < a.shape[0]:
            a[i] = a[i] * 2

    LOOP_KERNELS.append((_name, _twice))


def test_factory_kernel_pickled_by_value_keeps_its_annotation(accelerator):
    import pickle

    k = pickle.loads(pickle.dumps(_scaled(dc.uint16, 5)))  # how Dask ships a kernel to a worker
    a = np.arange(3, dtype=np.uint16)
    dc.launch(k, 3, a, accelerator=accelerator)
    assert a.dtype == np.uint16 and a.tolist() == [0, 5, 10]


def test_annotations_keep_their_def_time_values(accelerator):
    a = np.arange(4, dtype=np.int8)
    dc.launch(_scaled(dc.int8, 3), 4, a, accelerator=accelerator)
    assert a.tolist() == [0, 3, 6, 9]
    for name, k in LOOP_KERNELS:  # used to compile both for float64 (the global's last value)
        b = np.arange(5, dtype=name)
        dc.launch(k, 5, b, accelerator=accelerator)
        assert b.tolist() == [0, 2, 4, 6, 8], name


# ------------------------------------------------------------------ Python control flow habits


@dc.kernel
def control(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32], sums: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i == 0:
        s = 0
        for j in range(10, -3, -3):
            s += j
        sums[0] = s
        t = 0
        for j in range(1, 20, 4):
            t += j
        sums[1] = t
        c = 0
        for _j in range(5, 0):
            c += 1
        sums[2] = c
    if not (0 <= i < x.shape[0]):
        return
    v = x[i]
    if v < -5:
        out[i] = -1
    elif v < 0:
        out[i] = 0
    elif 0 <= v < 5:
        out[i] = 1
    else:
        out[i] = 2
    for j in range(100):
        if j * j > v:
            out[i] += j * 10
            return  # early return inside a loop
    out[i] += 5000


def test_steps_elif_chains_chained_comparisons_early_return(accelerator):
    x = np.arange(-10, 20, dtype=np.int32) * 37
    out = np.zeros_like(x)
    sums = np.zeros(3, np.int32)
    dc.launch(control, 64, x, out, sums, accelerator=accelerator)
    assert sums.tolist() == [sum(range(10, -3, -3)), sum(range(1, 20, 4)), 0]
    want = []
    for v in x.tolist():
        r = -1 if v < -5 else 0 if v < 0 else 1 if v < 5 else 2
        r += next((j * 10 for j in range(100) if j * j > v), 5000)
        want.append(r)
    assert out.tolist() == want


@dc.func
def sincos(a: dc.float32) -> dc.vec2:
    return dc.vec2(math.sin(a), math.cos(a))


@dc.kernel
def rotate(xy: dc.Buffer[dc.float32, 2], angle: dc.float32):
    i = dc.global_id(0)
    if i < xy.shape[0]:
        s, c = sincos(angle)  # two results from a device function, unpacked like a numpy pair
        x, y = xy[i, 0], xy[i, 1]
        xy[i, 0] = c * x - s * y
        xy[i, 1] = s * x + c * y


def test_device_function_pair_result_unpacked(accelerator):
    p = np.random.default_rng(3).random((50, 2), dtype=np.float32)
    q = p.copy()
    dc.launch(rotate, 50, q, np.float32(0.3), accelerator=accelerator)
    c, s = math.cos(0.3), math.sin(0.3)
    np.testing.assert_allclose(q, np.stack([c * p[:, 0] - s * p[:, 1], s * p[:, 0] + c * p[:, 1]], 1), rtol=1e-5,
                               atol=1e-6)


# ------------------------------------------------------------------ classic samples


TILE = 32


@dc.kernel
def nbody(pos: dc.Buffer[dc.float32, 2], acc_out: dc.Buffer[dc.float32, 2], eps2: dc.float32):
    sh = dc.shared((TILE, 4), dc.float32)
    i = dc.global_id(0)
    lid = dc.local_id(0)
    n = pos.shape[0]
    xi = pos[i, 0] if i < n else 0.0
    yi = pos[i, 1] if i < n else 0.0
    zi = pos[i, 2] if i < n else 0.0
    ax = 0.0
    ay = 0.0
    az = 0.0
    for t in range((n + TILE - 1) // TILE):
        j = t * TILE + lid
        for c in range(4):
            sh[lid, c] = pos[j, c] if j < n else 0.0
        dc.barrier()
        for k in range(TILE):
            dx = sh[k, 0] - xi
            dy = sh[k, 1] - yi
            dz = sh[k, 2] - zi
            inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
            s = sh[k, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        dc.barrier()
    if i < n:
        acc_out[i, 0] = ax
        acc_out[i, 1] = ay
        acc_out[i, 2] = az


def test_nbody_with_shared_tiles(accelerator):
    n = 100
    p = np.random.default_rng(0).random((n, 4), dtype=np.float32)
    out = np.zeros((n, 3), np.float32)
    dc.launch(nbody, 128, p, out, np.float32(0.01), local_size=TILE, accelerator=accelerator)
    d = p[None, :, :3].astype(np.float64) - p[:, None, :3]
    r2 = (d**2).sum(-1) + 0.01
    np.testing.assert_allclose(out, (d * (p[None, :, 3] / r2**1.5)[..., None]).sum(1), rtol=1e-3, atol=1e-3)


@dc.func
def cnd(d: dc.float32) -> dc.float32:
    return 0.5 * (1.0 + math.erf(d / math.sqrt(2.0)))


@dc.kernel
def black_scholes(s: dc.Buffer[dc.float32], k: dc.Buffer[dc.float32], t: dc.Buffer[dc.float32], r: dc.float32,
                  v: dc.float32, call: dc.Buffer[dc.float32], put: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i >= s.shape[0]:
        return
    sq = math.sqrt(t[i])
    d1 = (math.log(s[i] / k[i]) + (r + 0.5 * v * v) * t[i]) / (v * sq)
    d2 = d1 - v * sq
    e = math.exp(-r * t[i])
    call[i] = s[i] * cnd(d1) - k[i] * e * cnd(d2)
    put[i] = k[i] * e * (1.0 - cnd(d2)) - s[i] * (1.0 - cnd(d1))


def test_black_scholes(accelerator):
    n = 500
    rng = np.random.default_rng(0)
    s = rng.uniform(5, 30, n).astype(np.float32)
    k = rng.uniform(1, 100, n).astype(np.float32)
    t = rng.uniform(0.25, 10, n).astype(np.float32)
    call, put = np.zeros(n, np.float32), np.zeros(n, np.float32)
    dc.launch(black_scholes, n, s, k, t, np.float32(0.02), np.float32(0.3), call, put, accelerator=accelerator)
    S, K, T = s.astype(float), k.astype(float), t.astype(float)  # noqa: N806
    d1 = (np.log(S / K) + (0.02 + 0.045) * T) / (0.3 * np.sqrt(T))
    d2 = d1 - 0.3 * np.sqrt(T)
    N = np.vectorize(lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2))))  # noqa: N806
    np.testing.assert_allclose(call, S * N(d1) - K * np.exp(-0.02 * T) * N(d2), atol=2e-3)
    np.testing.assert_allclose(put, K * np.exp(-0.02 * T) * (1 - N(d2)) - S * (1 - N(d1)), atol=2e-3)


@dc.kernel
def life(g: dc.Buffer[dc.uint8, 2], out: dc.Buffer[dc.uint8, 2]):
    x = dc.global_id(0)
    y = dc.global_id(1)
    h, w = g.shape
    if y >= h or x >= w:
        return
    n = 0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            if dy == 0 and dx == 0:
                continue
            n += g[(y + dy) % h, (x + dx) % w]  # % of a negative index wraps like Python's
    alive = g[y, x] == 1
    out[y, x] = 1 if (alive and (n == 2 or n == 3)) or (not alive and n == 3) else 0


def test_game_of_life_on_a_torus(accelerator):
    g = (np.random.default_rng(0).random((33, 47)) < 0.3).astype(np.uint8)
    out = np.zeros_like(g)
    dc.launch(life, (47, 33), g, out, accelerator=accelerator)
    n = sum(np.roll(np.roll(g, dy, 0), dx, 1).astype(int) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
            if (dy, dx) != (0, 0))
    np.testing.assert_array_equal(out, (((g == 1) & ((n == 2) | (n == 3))) | ((g == 0) & (n == 3))).astype(np.uint8))


@dc.kernel
def jacobi(u: dc.Buffer[dc.float64, 2], f: dc.Buffer[dc.float64, 2], un: dc.Buffer[dc.float64, 2], h2: dc.float64):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if 0 < i < u.shape[0] - 1 and 0 < j < u.shape[1] - 1:
        un[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - h2 * f[i, j])


@dc.kernel
def spmv_csr(indptr: dc.Buffer[dc.int32], indices: dc.Buffer[dc.int32], data: dc.Buffer[dc.float32],
             x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    row = dc.global_id(0)
    if row < y.shape[0]:
        s = dc.float32(0)
        for jj in range(indptr[row], indptr[row + 1]):
            s += data[jj] * x[indices[jj]]
        y[row] = s


def test_jacobi_sweep_and_csr_spmv(accelerator):
    rng = np.random.default_rng(0)
    u = rng.random((20, 30))
    un = u.copy()
    dc.launch(jacobi, (20, 30), u, np.ones_like(u), un, 0.01, accelerator=accelerator)
    want = u.copy()
    want[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 0.01)
    np.testing.assert_allclose(un, want, rtol=1e-14)

    a = (rng.random((50, 40)) < 0.1) * rng.random((50, 40))
    indptr = np.concatenate([[0], np.cumsum((a != 0).sum(1))]).astype(np.int32)
    indices = np.concatenate([np.nonzero(r)[0] for r in a]).astype(np.int32)
    x = rng.random(40).astype(np.float32)
    y = np.zeros(50, np.float32)
    dc.launch(spmv_csr, 50, indptr, indices, a[a != 0].astype(np.float32), x, y, accelerator=accelerator)
    np.testing.assert_allclose(y, a.astype(np.float32) @ x, rtol=1e-5)


@dc.kernel
def brighten(img: dc.Buffer[dc.uint8, 2], out: dc.Buffer[dc.uint8, 2], gain: dc.float32, bias: dc.int32):
    y = dc.global_id(0)
    x = dc.global_id(1)
    if y < img.shape[0] and x < img.shape[1]:
        v = int(img[y, x] * gain) + bias
        out[y, x] = min(max(v, 0), 255)  # saturate by hand, as in OpenCV's saturate_cast


@dc.kernel
def diff_i8(a: dc.Buffer[dc.int8], b: dc.Buffer[dc.int8], sat: dc.Buffer[dc.int8], wrap: dc.Buffer[dc.int8]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        d = dc.int16(a[i]) - dc.int16(b[i])
        sat[i] = dc.int8(min(max(d, -128), 127))
        wrap[i] = a[i] - b[i]


def test_uint8_and_int8_image_processing_with_saturation(accelerator):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (17, 23), dtype=np.uint8)
    out = np.zeros_like(img)
    dc.launch(brighten, (17, 23), img, out, np.float32(1.7), np.int32(-20), accelerator=accelerator)
    want = np.clip((img.astype(np.float32) * np.float32(1.7)).astype(np.int64) - 20, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(out, want)
    a = rng.integers(-128, 128, 100, dtype=np.int8)
    b = rng.integers(-128, 128, 100, dtype=np.int8)
    sat, wrap = np.zeros_like(a), np.zeros_like(a)
    dc.launch(diff_i8, 100, a, b, sat, wrap, accelerator=accelerator)
    np.testing.assert_array_equal(sat, np.clip(a.astype(np.int16) - b, -128, 127).astype(np.int8))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(wrap, a - b)


@dc.kernel
def mandelbrot(out: dc.Buffer[dc.uint16, 2], maxit: dc.int32):
    px = dc.global_id(0)
    py = dc.global_id(1)
    h, w = out.shape
    if px >= w or py >= h:
        return
    c = complex(-2.0 + 3.0 * px / w, -1.5 + 3.0 * py / h)
    z = 0j
    n = 0
    while abs(z) <= 2.0 and n < maxit:
        z = z * z + c
        n += 1
    out[py, px] = n


def test_mandelbrot_in_complex_arithmetic(accelerator):
    out = np.zeros((24, 32), np.uint16)
    dc.launch(mandelbrot, (32, 24), out, 50, accelerator=accelerator)
    py, px = np.indices(out.shape)
    c = (-2.0 + 3.0 * px / 32) + 1j * (-1.5 + 3.0 * py / 24)
    z = np.zeros_like(c)
    n = np.zeros(out.shape, int)
    for _ in range(50):
        m = np.abs(z) <= 2.0
        z[m] = z[m] ** 2 + c[m]
        n[m] += 1
    assert (out != n).sum() <= 3  # a point on the boundary may escape one step apart (fma)


# ------------------------------------------------------------------ work-group memory and barriers

T8 = 8


@dc.kernel
def transpose_padded(a: dc.Buffer[dc.float32, 2], o: dc.Buffer[dc.float32, 2]):
    tile = dc.shared((T8, T8 + 1), dc.float32)  # +1 column: no bank conflicts
    bx = dc.group_id(0) * T8
    by = dc.group_id(1) * T8
    tx = dc.local_id(0)
    ty = dc.local_id(1)
    if bx + tx < a.shape[0] and by + ty < a.shape[1]:
        tile[ty, tx] = a[bx + tx, by + ty]
    dc.barrier()
    if by + tx < o.shape[0] and bx + ty < o.shape[1]:
        o[by + tx, bx + ty] = tile[tx, ty]


@dc.kernel
def index3(o: dc.Buffer[dc.int32, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    k = dc.global_id(2)
    if i < o.shape[0] and j < o.shape[1] and k < o.shape[2]:
        o[i, j, k] = i * 10000 + j * 100 + k


def test_2d_shared_tile_transpose_and_3d_launch(accelerator):
    a = np.random.default_rng(0).random((37, 21), dtype=np.float32)
    o = np.zeros((21, 37), np.float32)
    dc.launch(transpose_padded, (40, 24), a, o, local_size=(T8, T8), accelerator=accelerator)
    np.testing.assert_array_equal(o, a.T)
    i, j, k = np.indices((5, 6, 7))
    for gs, ls in (((5, 6, 7), None), ((8, 8, 8), (2, 2, 2))):
        o3 = np.zeros((5, 6, 7), np.int32)
        dc.launch(index3, gs, o3, local_size=ls, accelerator=accelerator)
        np.testing.assert_array_equal(o3, i * 10000 + j * 100 + k)


@dc.kernel
def block_sum(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((256,), dc.float32)
    lid = dc.local_id(0)
    g = dc.global_id(0)
    s[lid] = x[g] if g < x.shape[0] else 0.0
    dc.barrier()
    step = dc.local_size(0) // 2
    while step > 0:
        if lid < step:
            s[lid] += s[lid + step]
        dc.barrier()
        step //= 2
    if lid == 0:
        dc.atomic_add(out, 0, s[0])


@dc.kernel
def scan128(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    s = dc.shared((2, 128), dc.int32)  # Hillis-Steele, double-buffered
    lid = dc.local_id(0)
    s[0, lid] = x[lid]
    dc.barrier()
    src = 0
    off = 1
    while off < 128:
        dst = 1 - src
        if lid >= off:
            s[dst, lid] = s[src, lid] + s[src, lid - off]
        else:
            s[dst, lid] = s[src, lid]
        dc.barrier()
        src = dst
        off *= 2
    out[lid] = s[src, lid]


def test_tree_reduction_with_and_without_local_size_and_scan(accelerator):
    x = np.random.default_rng(0).random(5000, dtype=np.float32)
    for ls in (None, 64, 256):
        out = np.zeros(1, np.float32)
        dc.launch(block_sum, 5120, x, out, local_size=ls, accelerator=accelerator)
        assert out[0] == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-4), ls
    v = (np.arange(128) % 5).astype(np.int32)
    o = np.zeros(128, np.int32)
    dc.launch(scan128, 128, v, o, local_size=128, accelerator=accelerator)
    np.testing.assert_array_equal(o, np.cumsum(v))


@dc.kernel
def bitonic_step(a: dc.Buffer[dc.float32], j: dc.int32, k: dc.int32):
    i = dc.global_id(0)
    ixj = i ^ j
    if ixj > i:
        if (i & k) == 0:
            if a[i] > a[ixj]:
                a[i], a[ixj] = a[ixj], a[i]
        elif a[i] < a[ixj]:
            a[i], a[ixj] = a[ixj], a[i]


def test_bitonic_sort(accelerator):
    x = np.random.default_rng(0).random(256, dtype=np.float32)
    b = accelerator.asarray(x)
    k = 2
    while k <= 256:
        j = k // 2
        while j > 0:
            dc.launch(bitonic_step, 256, b, j, k, accelerator=accelerator)
            j //= 2
        k *= 2
    np.testing.assert_array_equal(b.numpy(), np.sort(x))


@dc.kernel
def subgroup_total(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    s = dc.subgroup_sum(x[i] if i < x.shape[0] else 0.0)
    if dc.subgroup_local_id() == 0:
        dc.atomic_add(out, 0, s)


def test_subgroup_reduction(accelerator):
    x = np.random.default_rng(0).random(1000, dtype=np.float32)
    for ls in (64, None):
        out = np.zeros(1, np.float32)
        dc.launch(subgroup_total, 1024, x, out, local_size=ls, accelerator=accelerator)
        assert out[0] == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-4)


# ------------------------------------------------------------------ atomics


def _atomics_kernel(T):
    @dc.kernel
    def atomics(x: dc.Buffer[T], acc: dc.Buffer[T], old: dc.Buffer[T]):
        i = dc.global_id(0)
        if i < x.shape[0]:
            old[i] = dc.atomic_add(acc, 0, x[i])
            dc.atomic_max(acc, 1, x[i])
            dc.atomic_min(acc, 2, x[i])
            dc.atomic_sub(acc, 3, x[i])
            dc.atomic_exchange(acc, 4, x[i])
    return atomics


@pytest.mark.parametrize("name", ["int32", "uint32", "int64", "float32", "float64"])
def test_atomics_return_the_old_value(accelerator, name):
    n = 200
    x = (np.arange(n) % 7 + 1).astype(name)
    acc = np.array([0, 0, 100, 5000, 0], name)
    old = np.zeros(n, name)
    dc.launch(_atomics_kernel(getattr(dc, name)), n, x, acc, old, accelerator=accelerator)
    assert acc[0] == x.sum(dtype=name) and acc[1] == 7 and acc[2] == 1 and acc[3] == 5000 - x.sum(dtype=name)
    assert acc[4] in x
    # the old values are the running totals in some order: sorted, each step adds one x
    order = np.sort(old.astype(np.float64))
    assert order[0] == 0 and np.all(np.diff(order) >= 1) and order[-1] + 1 <= acc[0]


@dc.kernel
def atomic_float_max(x: dc.Buffer[dc.float32], m: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        old = m[0]
        while old < v:  # the CUDA idiom: a compare-and-swap loop
            prev = dc.atomic_cas(m, 0, old, v)
            if prev == old:
                break
            old = prev


@dc.kernel
def ticket(m: dc.Buffer[dc.int32], tickets: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    while True:
        old = m[0]
        if dc.atomic_cas(m, 0, old, old + 1) == old:
            tickets[i] = old
            break


def test_atomic_cas_loops(accelerator):
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    m = np.array([-np.inf], np.float32)
    dc.launch(atomic_float_max, 1000, x, m, accelerator=accelerator)
    assert m[0] == x.max()
    counter, t = np.zeros(1, np.int32), np.zeros(256, np.int32)
    dc.launch(ticket, 256, counter, t, accelerator=accelerator)
    assert counter[0] == 256 and sorted(t.tolist()) == list(range(256))


@dc.kernel
def histogram_local(data: dc.Buffer[dc.uint8], bins: dc.Buffer[dc.uint32]):
    local = dc.shared((256,), dc.uint32)
    lid = dc.local_id(0)
    for b in range(lid, 256, dc.local_size(0)):
        local[b] = 0
    dc.barrier()
    for i in range(dc.global_id(0), data.shape[0], dc.global_size(0)):  # grid-stride loop
        dc.atomic_add(local, int(data[i]), 1)
    dc.barrier()
    for b in range(lid, 256, dc.local_size(0)):
        dc.atomic_add(bins, b, local[b])


def test_histogram_with_shared_atomics_and_grid_stride(accelerator):
    d = np.random.default_rng(0).integers(0, 256, 10000, dtype=np.uint8)
    bins = np.zeros(256, np.uint32)
    dc.launch(histogram_local, 8 * 64, d, bins, local_size=64, accelerator=accelerator)
    np.testing.assert_array_equal(bins, np.bincount(d, minlength=256))


# ------------------------------------------------------------------ mistakes, refused clearly


def _refused(fn, exc, words):
    with pytest.raises(exc) as info:
        dc.kernel(fn).source("cpu")
    text = str(info.value)
    assert words in text, text
    assert HERE in text, text  # the user's file, with line and column
    return text


def test_misspelt_builtin_names_the_nearest():
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_idx(0)
        a[i] = 1.0

    text = _refused(k, dc.KernelTypeError, "global_idx")
    assert "did you mean dc.global_id" in text


def test_math_function_with_wrong_argument_count_says_so():
    def k(a: dc.Buffer[dc.float32]):
        a[0] = math.sqrt(a[0], a[1])

    text = _refused(k, dc.KernelTypeError, "takes 1 argument")
    assert "arbitrary Python functions" not in text


@dc.func
def _two_values(x: dc.float32):
    return x, x * 2


def test_device_function_returning_a_tuple_is_refused_at_the_return():
    def k(a: dc.Buffer[dc.float32]):
        p, q = _two_values(a[0])
        a[0] = p + q

    text = _refused(k, dc.KernelSyntaxError, "not a tuple")
    assert "return x, x * 2" in text

    def k2(a: dc.Buffer[dc.float32]):
        p, q = a[0]
        a[1] = p + q

    _refused(k2, dc.KernelSyntaxError, "cannot unpack one value into 2 names")

    def k3(a: dc.Buffer[dc.float32]):
        p, q = dc.vec3(1.0, 2.0, 3.0)
        a[1] = p + q

    _refused(k3, dc.KernelSyntaxError, "cannot unpack a vec3 with 3 components into 2 names")


def helper(x):
    return x * 2


@dc.func
def fact(n: dc.int32) -> dc.int32:
    return 1 if n <= 1 else n * fact(n - 1)


def test_python_things_outside_the_language():
    def uses_list(a: dc.Buffer[dc.float32]):
        v = [1, 2, 3]
        a[0] = v[0]

    def uses_dict(a: dc.Buffer[dc.float32]):
        v = {"a": 1}
        a[0] = v["a"]

    def uses_str(a: dc.Buffer[dc.float32]):
        a[0] = len("abc")

    def calls_python(a: dc.Buffer[dc.float32]):
        a[0] = helper(3.0)

    def recursion(a: dc.Buffer[dc.int32]):
        a[0] = fact(5)

    def writes_scalar_param(a: dc.Buffer[dc.float32], s: dc.float32):
        s += 1.0
        a[0] = s

    def float_index(a: dc.Buffer[dc.float32]):
        j = 1.5
        a[j] = 1.0

    def float_into_int(a: dc.Buffer[dc.float32]):
        j = 0
        j = 1.5
        a[j] = 1.0

    _refused(uses_list, dc.KernelSyntaxError, "lists are not supported")
    _refused(uses_dict, dc.KernelSyntaxError, "dicts are not supported")
    _refused(uses_str, dc.KernelSyntaxError, "strings are not supported")
    _refused(calls_python, dc.KernelSyntaxError, "'helper'")
    _refused(recursion, dc.KernelSyntaxError, "recursion")
    _refused(writes_scalar_param, dc.KernelSyntaxError, "parameter 's'")
    _refused(float_index, dc.KernelTypeError, "indices must be integers")
    _refused(float_into_int, dc.KernelTypeError, "cannot assign to 'j'")


@dc.kernel
def copy2d(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < a.shape[0] and j < a.shape[1]:
        b[i, j] = a[i, j]


@dc.kernel
def generic_copy(a, b):
    i = dc.global_id(0)
    if i < a.shape[0]:
        b[i] = a[i]


def test_launch_argument_mistakes_name_the_parameter(accelerator):
    good = np.zeros((4, 4), np.float32)
    with pytest.raises(dc.KernelTypeError, match="'a'.*2 dimension"):
        dc.launch(copy2d, (4, 4), np.zeros(16, np.float32), good, accelerator=accelerator)
    with pytest.raises(dc.KernelTypeError, match="'a' is a 4-d array; kernel buffers have 1 to 3"):
        dc.launch(generic_copy, 4, np.zeros((1, 1, 2, 2), np.float32), np.zeros(4, np.float32),
                  accelerator=accelerator)
    with pytest.raises(dc.KernelTypeError, match="'a' is a 0-d array"):
        dc.launch(generic_copy, 4, np.array(3.0, np.float32), np.zeros(4, np.float32), accelerator=accelerator)
    with pytest.raises(dc.KernelTypeError, match="'b'"):
        dc.launch(copy2d, (4, 4), good, np.zeros((4, 4), np.float64), accelerator=accelerator)


@dc.kernel
def clip_where(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.int8], o: dc.Buffer[dc.float32], ob: dc.Buffer[dc.int8],
               o64: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        o[i] = dc.clip(a[i], 0.0, 1.0) + np.where(a[i] > 0, a[i], 2.0) + np.clip(a[i], -0.5, 0.5)
        ob[i] = np.clip(b[i], -10, 10) + dc.where(b[i] > 0, b[i], 1)
        o64[i] = np.clip(a[i], 0.0, dc.float64(0.3))  # float32 and float64 -> float64


def test_numpy_clip_and_where_on_numbers(accelerator):
    # numpy's spellings, as ported from array code: used to be "calls to arbitrary Python functions"
    a = np.array([-1, 0.5, 2, 1, 0.3, -0.2], np.float32)
    b = np.array([-100, 5, 100, 0, -3, 127], np.int8)
    o, ob, o64 = np.zeros(6, np.float32), np.zeros(6, np.int8), np.zeros(6)
    dc.launch(clip_where, 6, a, b, o, ob, o64, accelerator=accelerator)
    np.testing.assert_array_equal(o, np.clip(a, 0.0, 1.0) + np.where(a > 0, a, np.float32(2.0)) + np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(ob, np.clip(b, -10, 10) + np.where(b > 0, b, np.int8(1)))
    np.testing.assert_array_equal(o64, np.clip(a, 0.0, np.float64(0.3)))


@dc.kernel
def macro_names(M_PI: dc.Buffer[dc.float32], FLT_MAX: dc.float32, cl_khr_fp64: dc.int32):  # noqa: N803
    # parameter and local names the targets' headers define as macros (math.h, float.h, OpenCL C)
    INT_MAX = dc.global_id(0)  # noqa: N806
    if INT_MAX < M_PI.shape[0]:
        M_PI[INT_MAX] = M_PI[INT_MAX] * FLT_MAX + cl_khr_fp64


def test_names_that_are_macros_in_the_target_headers(accelerator):
    # OpenCL and CUDA used to fail to compile ("expected identifier"): the macro replaced the name
    a = np.arange(4, dtype=np.float32)
    dc.launch(macro_names, 4, a, np.float32(2), np.int32(1), accelerator=accelerator)
    assert a.tolist() == [1, 3, 5, 7]


@dc.struct
class Place:
    lat: dc.float32
    long: dc.float32  # a C keyword
    half: dc.float32  # an OpenCL type name
    M_PI: dc.float64  # noqa: N815 (a math.h macro)


@dc.kernel
def move_places(ps: dc.Buffer[Place], dlong: dc.float32):
    i = dc.global_id(0)
    if i < ps.shape[0]:
        p = ps[i]
        p.long = p.long + dlong
        ps[i] = p
        ps[i].half = ps[i].lat * 0.5
        ps[i].M_PI = math.pi + p.long


def test_struct_fields_named_like_c_keywords_and_macros(accelerator):
    # the fields were printed as they are: "float long;" failed to compile on every backend
    ps = np.zeros(5, Place.dtype)
    ps["lat"] = np.arange(5)
    ps["long"] = 10
    for debug in (False, True):
        got = ps.copy()
        dc.launch(dc.kernel(move_places.pyfunc, debug=debug), 5, got, np.float32(1.5), accelerator=accelerator)
        assert got["long"].tolist() == [11.5] * 5
        assert got["half"].tolist() == (np.arange(5) * 0.5).tolist()
        assert got["M_PI"].tolist() == [float(np.float32(11.5) + math.pi)] * 5  # float32 math (NEP 50)


def test_argument_errors_name_the_kernel_as_written_after_the_first_launch(accelerator):
    a, b = np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32)
    dc.launch(copy2d, (4, 4), a, b, accelerator=accelerator)  # compiled: later checks are native
    with pytest.raises(dc.KernelTypeError) as info:
        dc.launch(copy2d, (4, 4), np.zeros((4, 4), np.float64), b, accelerator=accelerator)
    assert "'copy2d'" in str(info.value) and "'a'" in str(info.value)
    assert "copy2d_" not in str(info.value)  # not the generated entry point's name


@dc.kernel
def store_scalar(o, v):
    if dc.global_id(0) == 0:
        o[0] = v


def test_python_int_past_int64_is_a_uint64_as_numpy_types_it(accelerator):
    # np.asarray(2**63).dtype is uint64; it used to be "does not fit in 64 bits"
    for value, dt in ((5, np.uint64), (2**64 - 1, np.uint64), (-3, np.int64), (2**63, np.uint64), (7, np.int64)):
        o = np.zeros(1, dt)
        dc.launch(store_scalar, 1, o, value, accelerator=accelerator)
        assert int(o[0]) == value
    with pytest.raises(dc.KernelTypeError, match="does not fit"):
        dc.launch(store_scalar, 1, np.zeros(1, np.uint64), 2**64, accelerator=accelerator)


# ------------------------------------------------------------------ constant tables (stencil weights, offsets)

GAUSS = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32) / 16  # a module-level numpy table
OFFSETS = ((-1, 0), (1, 0), (0, -1), (0, 1))
PRIMES = (2, 3, 5, 7, 11, 13)
PRIME_ARRAY = np.array(PRIMES, np.int64)
OFFSET_ARRAY = np.array(OFFSETS, np.int32)


@dc.kernel
def gauss3(img: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    h, w = img.shape
    if 0 < y < h - 1 and 0 < x < w - 1:
        s = dc.float32(0)
        for dy in range(3):
            for dx in range(3):
                s += GAUSS[dy, dx] * img[y + dy - 1, x + dx - 1]  # indexed at run time
        out[y, x] = s


@dc.kernel
def neighbours(g: dc.Buffer[dc.int32, 2], o: dc.Buffer[dc.int32, 2], o2: dc.Buffer[dc.int32, 2]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    if y < g.shape[0] and x < g.shape[1]:
        s = 0
        for dy, dx in OFFSETS:  # iterating a constant tuple of pairs
            if not (0 <= y + dy < g.shape[0] and 0 <= x + dx < g.shape[1]):
                continue
            s += g[y + dy, x + dx]
        o[y, x] = s
        t = 0
        for d in range(4):
            yy = y + OFFSET_ARRAY[d][0]  # a numpy table indexed at run time
            xx = x + OFFSET_ARRAY[d, 1]
            if 0 <= yy < g.shape[0] and 0 <= xx < g.shape[1]:
                t += g[yy, xx]
        o2[y, x] = t + OFFSETS[1][0] - OFFSETS[-1][-1]  # constant indices fold (1 - 1)


@dc.kernel
def smallest_prime_factor(a: dc.Buffer[dc.int64], o: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        o[i] = 0
        for p in PRIMES:
            if a[i] % p == 0:
                o[i] = p
                break
        o[i] += PRIME_ARRAY[a[i] % len(PRIMES)] * 1000 + PRIMES[-1] * 100000


def test_constant_tables_indexed_at_run_time_and_iterated(accelerator):
    # numpy tables indexed at run time, tuples iterated: "'GAUSS' cannot be indexed" / "only for ...
    # in range(...)" before
    img = np.random.default_rng(0).random((9, 11), dtype=np.float32)
    out = np.zeros_like(img)
    dc.launch(gauss3, (9, 11), img, out, accelerator=accelerator)
    want = np.zeros_like(img)
    for dy in range(3):
        for dx in range(3):
            want[1:-1, 1:-1] += GAUSS[dy, dx] * img[dy:dy + 7, dx:dx + 9]
    np.testing.assert_allclose(out, want, rtol=1e-6)

    g = np.arange(12, dtype=np.int32).reshape(3, 4)
    o, o2 = np.zeros_like(g), np.zeros_like(g)
    dc.launch(neighbours, (3, 4), g, o, o2, accelerator=accelerator)
    padded = np.pad(g, 1)
    want_n = padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]
    np.testing.assert_array_equal(o, want_n)
    np.testing.assert_array_equal(o2, want_n)

    a = np.arange(1, 40, dtype=np.int64)
    o3 = np.zeros_like(a)
    dc.launch(smallest_prime_factor, 39, a, o3, accelerator=accelerator)
    want_p = [next((p for p in PRIMES if v % p == 0), 0) + PRIMES[v % 6] * 1000 + 1300000 for v in a.tolist()]
    assert o3.tolist() == want_p


def test_constant_table_mistakes_are_named():
    def too_few(a: dc.Buffer[dc.int32]):
        a[0] = OFFSET_ARRAY[a[1]]

    def float_index(a: dc.Buffer[dc.float32]):
        a[0] = PRIME_ARRAY[a[1]]

    def tuple_at_run_time(a: dc.Buffer[dc.int32]):
        a[0] = PRIMES[a[1]]  # tuples fold: constant indices or iteration only

    def bad_unpack(a: dc.Buffer[dc.int32]):
        for p, q in PRIMES:
            a[0] = p + q

    _refused(too_few, dc.KernelTypeError, "needs more indices")
    _refused(float_index, dc.KernelTypeError, "must be integers, not float32")
    _refused(bad_unpack, dc.KernelTypeError, "cannot unpack the rows of 'PRIMES'")
    assert "numpy array" in _refused(tuple_at_run_time, dc.KernelTypeError, "constant integer")


# ------------------------------------------------------------------ debug mode covers work-group memory


@dc.kernel(debug=True)
def shift_in_tile(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    tile = dc.shared((32,), dc.float32)
    lid = dc.local_id(0)
    tile[lid] = x[dc.global_id(0)]
    dc.barrier()
    out[dc.global_id(0)] = tile[lid + 1]  # off by one at the tile's edge


def test_debug_mode_reports_a_shared_array_read_past_its_end(accelerator):
    with pytest.raises(dc.KernelIndexError) as info:
        dc.launch(shift_in_tile, 64, np.zeros(64, np.float32), np.zeros(64, np.float32), local_size=32,
                  accelerator=accelerator)
    text = str(info.value)
    assert "dc.shared array 'tile'" in text and "32" in text and HERE in text, text
    assert "tile[lid + 1]" in text  # the source line
    # a correct tiled kernel is quiet under debug mode (transpose with a padded 2-d tile)
    a = np.random.default_rng(1).random((37, 21), dtype=np.float32)
    o = np.zeros((21, 37), np.float32)
    dc.launch(dc.kernel(transpose_padded.pyfunc, debug=True), (40, 24), a, o, local_size=(T8, T8),
              accelerator=accelerator)
    np.testing.assert_array_equal(o, a.T)



# ------------------------------------------------------------------ raw kernels copied from samples

RAW_CU = r"""
#define BLOCK 64
#define IDX(r, c, w) ((r) * (w) + (c))
template <typename T>
__device__ inline T clampv(T v, T lo, T hi) { return v < lo ? lo : (v > hi ? hi : v); }

template <typename T, int N>
__global__ void scale_t(T* __restrict__ out, const T* __restrict__ in, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * s * N;
}
template __global__ void scale_t<float, 2>(float*, const float*, float, int);

__global__ void hist(const unsigned char* __restrict__ data, unsigned int* __restrict__ bins, int n) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

__global__ void transpose(float* odata, const float* idata, int w, int h) {
    __shared__ float tile[16][16 + 1];
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = idata[IDX(y, x, w)];
    __syncthreads();
    x = blockIdx.y * 16 + threadIdx.x;
    y = blockIdx.x * 16 + threadIdx.y;
    if (x < h && y < w) odata[IDX(y, x, h)] = tile[threadIdx.x][threadIdx.y];
}

__global__ void clampk(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = clampv(a[i], -1.0f, 1.0f);
}

__global__ void dyn_shared(const float* in, float* out, int n) {
    extern __shared__ float buf[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = buf[blockDim.x - 1 - t];
}
"""

RAW_CL = r"""
#define TILE 16
#define SQ(x) ((x) * (x))
inline float sq(float x) { return SQ(x); }
__kernel void hist(__global const uchar* restrict data, __global uint* restrict bins, int n) {
    __local uint local_bins[256];
    for (int b = get_local_id(0); b < 256; b += get_local_size(0)) local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) atomic_inc(&local_bins[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = get_local_id(0); b < 256; b += get_local_size(0)) atomic_add(&bins[b], local_bins[b]);
}
__kernel void transpose(__global float* odata, __global const float* idata, int w, int h) {
    __local float tile[TILE][TILE + 1];
    int x = get_group_id(0) * TILE + get_local_id(0);
    int y = get_group_id(1) * TILE + get_local_id(1);
    if (x < w && y < h) tile[get_local_id(1)][get_local_id(0)] = idata[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    x = get_group_id(1) * TILE + get_local_id(0);
    y = get_group_id(0) * TILE + get_local_id(1);
    if (x < h && y < w) odata[y * h + x] = tile[get_local_id(0)][get_local_id(1)];
}
__kernel void sqk(__global float2* v, __global float* o, const unsigned int n) {
    size_t i = get_global_id(0);
    if (i < n) o[i] = sqrt(sq(v[i].x) + sq(v[i].y));
}
__kernel void dbl(__global double* a, long n, __global long* cnt) {
    long i = get_global_id(0);
    if (i < n) { a[i] = a[i] * 2.0; atom_add(cnt, 1L); }
}
"""

RAW_CPP = r"""
#include <stdint.h>
#include <cmath>
#include <algorithm>
#include "dotcompute/cpu_kernel_abi.h"
#define CLAMP(x, lo, hi) std::min(std::max((x), (lo)), (hi))
template <typename T> static inline T sq(T v) { return v * v; }
namespace {
struct Acc { double s = 0; void add(double v) { s += v; } };
}
extern "C" void rms(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
  const float* __restrict__ x = *(const float* const*)launch->args[0];
  float* __restrict__ out = *(float* const*)launch->args[1];
  const int n = *(const int*)launch->args[2];
  const uint64_t local = launch->local_size[0];
  for (uint64_t g = gb; g < ge; ++g)
    for (uint64_t i = g * local; i < (g + 1) * local && i < (uint64_t)n; ++i) {
      Acc a; a.add(sq<double>(x[i]));
      out[i] = CLAMP((float)std::sqrt(a.s), 0.0f, 2.0f);
    }
}
"""


def test_raw_kernels_from_samples(accelerator):
    """Per backend, sources as they appear in samples: macros, templates (a kernel found by its
    instantiation's name), __restrict__, fixed and dynamic __shared__/__local arrays, barriers,
    atomics in work-group memory."""
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, 10000, dtype=np.uint8)
    a = rng.random((20, 37), dtype=np.float32)
    if accelerator.backend == "cuda":
        x = np.arange(100, dtype=np.float32)
        o = np.zeros(100, np.float32)
        dc.launch(dc.RawKernel(RAW_CU, "scale_t<float, 2>", backend="cuda"), 128, o, x, np.float32(3), np.int32(100),
                  local_size=64, accelerator=accelerator)
        np.testing.assert_array_equal(o, x * 6)
        c = np.linspace(-3, 3, 50, dtype=np.float32)
        want = np.clip(c, -1, 1)
        dc.launch(dc.RawKernel(RAW_CU, "clampk", backend="cuda"), 64, c, np.int32(50), accelerator=accelerator)
        np.testing.assert_array_equal(c, want)
        r = np.arange(128, dtype=np.float32)
        ro = np.zeros(128, np.float32)
        dc.launch(dc.RawKernel(RAW_CU, "dyn_shared", backend="cuda", shared_mem=64 * 4), 128, r, ro, np.int32(128),
                  local_size=64,
                  accelerator=accelerator)
        np.testing.assert_array_equal(ro, np.concatenate([r[:64][::-1], r[64:][::-1]]))
        src = RAW_CU
    elif accelerator.backend == "opencl":
        v = rng.random((30, 2), dtype=np.float32)
        o = np.zeros(30, np.float32)
        dc.launch(dc.RawKernel(RAW_CL, "sqk", backend="opencl"), 32, v, o, np.uint32(30), accelerator=accelerator)
        np.testing.assert_allclose(o, np.hypot(v[:, 0], v[:, 1]), rtol=1e-6)
        d, cnt = np.arange(10.0), np.zeros(1, np.int64)
        dc.launch(dc.RawKernel(RAW_CL, "dbl", backend="opencl"), 16, d, np.int64(10), cnt, accelerator=accelerator)
        assert d.tolist() == (np.arange(10.0) * 2).tolist() and cnt[0] == 10
        src = RAW_CL
    elif accelerator.backend == "cpu":
        x = np.linspace(-3, 3, 100, dtype=np.float32)
        o = np.zeros(100, np.float32)
        dc.launch(dc.RawKernel(RAW_CPP, "rms", backend="cpu"), 100, x, o, np.int32(100), accelerator=accelerator)
        np.testing.assert_allclose(o, np.clip(np.abs(x), 0, 2), rtol=1e-6)
        return
    else:
        pytest.skip(f"no raw source written for {accelerator.backend}")
    bins = np.zeros(256, np.uint32)
    dc.launch(dc.RawKernel(src, "hist", backend=accelerator.backend), 8 * 64, data, bins, np.int32(data.size),
              local_size=64, accelerator=accelerator)
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=256))
    o = np.zeros((37, 20), np.float32)
    dc.launch(dc.RawKernel(src, "transpose", backend=accelerator.backend), (48, 32), o, a, np.int32(37),
              np.int32(20), local_size=(16, 16), accelerator=accelerator)
    np.testing.assert_array_equal(o, a.T)


# ------------------------------------------------------------------ edit, reload, launch

_RELOADED = '''import dotcompute as dc


@dc.kernel
def bump(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + {value}
'''


def test_an_edited_and_reloaded_module_compiles_its_new_kernel(tmp_path, monkeypatch, accelerator):
    # the kernel's source came from linecache's copy of the old file: after importlib.reload (or
    # IPython's autoreload) the new kernel object silently ran the old body
    import importlib
    import os
    import sys

    name = f"audit2_reload_{accelerator.backend}"
    path = tmp_path / f"{name}.py"
    path.write_text(_RELOADED.format(value="1.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    try:
        mod = importlib.import_module(name)
        a = np.zeros(3, np.float32)
        dc.launch(mod.bump, 3, a, accelerator=accelerator)
        assert a.tolist() == [1.0] * 3
        path.write_text(_RELOADED.format(value="100.0") + "\n# edited\n")
        st = path.stat()
        os.utime(path, (st.st_atime, st.st_mtime + 5))  # a later mtime even on coarse clocks
        mod = importlib.reload(mod)
        b = np.zeros(3, np.float32)
        dc.launch(mod.bump, 3, b, accelerator=accelerator)
        assert b.tolist() == [100.0] * 3
    finally:
        sys.modules.pop(name, None)


# ------------------------------------------------------------------ Warp-style vector code with numpy's names


@dc.kernel
def integrate(pos: dc.Buffer[dc.vec3], vel: dc.Buffer[dc.vec3], rot: dc.mat33, dt: dc.float32,
              energy: dc.Buffer[dc.float32], spin: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    if i < pos.shape[0]:
        v = vel[i]
        v.y -= 9.81 * dt
        x, y, z = pos[i] + v * dt  # a vector unpacks into its components
        pos[i] = dc.vec3(x, max(y, 0.0), z)
        vel[i] = v
        energy[i] = 0.5 * np.dot(v, v) + np.linalg.norm(pos[i])  # numpy's names for dc.dot, dc.length
        spin[i] = np.cross(pos[i], v) + np.transpose(rot) @ v


def test_particle_step_with_vectors_and_numpy_vector_functions(accelerator):
    rng = np.random.default_rng(5)
    pos = rng.random((40, 3), dtype=np.float32)
    vel = rng.standard_normal((40, 3)).astype(np.float32)
    rot = rng.standard_normal((3, 3)).astype(np.float32)
    p, v = pos.copy(), vel.copy()
    energy, spin = np.zeros(40, np.float32), np.zeros((40, 3), np.float32)
    dc.launch(integrate, 40, p, v, rot, np.float32(0.01), energy, spin, accelerator=accelerator)
    wv = vel.copy()
    wv[:, 1] -= np.float32(9.81 * 0.01)
    wp = pos + wv * np.float32(0.01)
    wp[:, 1] = np.maximum(wp[:, 1], 0)
    np.testing.assert_allclose(v, wv, rtol=1e-6)
    np.testing.assert_allclose(p, wp, rtol=1e-6)
    np.testing.assert_allclose(energy, 0.5 * (wv * wv).sum(1) + np.linalg.norm(wp, axis=1), rtol=1e-5)
    np.testing.assert_allclose(spin, np.cross(wp, wv) + wv @ rot, rtol=1e-4, atol=1e-5)



# ------------------------------------------------------------------ Numba examples, Blelloch scan, bitonic sort
# (Numba's spellings: untyped parameters, dc.shared(shape=..., dtype=...), np.int32(...) casts)

TPB = 16

@dc.kernel
def fast_matmul(A, B, C):
    sA = dc.shared(shape=(TPB, TPB), dtype=dc.float32)
    sB = dc.shared(shape=(TPB, TPB), dtype=dc.float32)
    x, y = dc.global_id(0), dc.global_id(1)
    tx = dc.local_id(0)
    ty = dc.local_id(1)
    bpg = dc.global_size(0) // TPB
    tmp = dc.float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        dc.barrier()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        dc.barrier()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp

@dc.kernel
def matmul_naive(A, B, C):
    i, j = dc.global_id(0), dc.global_id(1)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp

@dc.kernel
def increment_by_one(an_array):
    pos = dc.global_id(0)
    if pos < an_array.size:
        an_array[pos] += 1

@dc.kernel
def hist_numba(x, xmin, xmax, histogram_out):
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins
    start = dc.global_id(0)
    stride = dc.global_size(0)
    for i in range(start, x.shape[0], stride):
        bin_number = np.int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < histogram_out.shape[0]:
            dc.atomic_add(histogram_out, bin_number, 1)


NS = 256
@dc.kernel
def blelloch(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    temp = dc.shared((NS,), dc.int32)
    thid = dc.local_id(0)
    temp[2 * thid] = x[2 * thid]
    temp[2 * thid + 1] = x[2 * thid + 1]
    offset = 1
    d = NS >> 1
    while d > 0:
        dc.barrier()
        if thid < d:
            ai = offset * (2 * thid + 1) - 1
            bi = offset * (2 * thid + 2) - 1
            temp[bi] += temp[ai]
        offset *= 2
        d >>= 1
    if thid == 0:
        temp[NS - 1] = 0
    d = 1
    while d < NS:
        offset >>= 1
        dc.barrier()
        if thid < d:
            ai = offset * (2 * thid + 1) - 1
            bi = offset * (2 * thid + 2) - 1
            t = temp[ai]
            temp[ai] = temp[bi]
            temp[bi] += t
        d *= 2
    dc.barrier()
    out[2 * thid] = temp[2 * thid]
    out[2 * thid + 1] = temp[2 * thid + 1]

@dc.kernel
def local_bitonic(a: dc.Buffer[dc.float32]):
    s = dc.shared((NS,), dc.float32)
    t = dc.local_id(0)
    s[t] = a[t]
    dc.barrier()
    k = 2
    while k <= NS:
        j = k >> 1
        while j > 0:
            ixj = t ^ j
            if ixj > t:
                up = (t & k) == 0
                if (s[t] > s[ixj]) == up:
                    s[t], s[ixj] = s[ixj], s[t]
            dc.barrier()
            j >>= 1
        k <<= 1
    a[t] = s[t]


def test_numba_examples_blelloch_scan_and_local_bitonic_sort(accelerator):
    n = 48
    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    b = np.random.default_rng(1).random((n, n), dtype=np.float32)
    c, c2 = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32)
    dc.launch(fast_matmul, (n, n), a, b, c, local_size=(TPB, TPB), accelerator=accelerator)
    dc.launch(matmul_naive, (n, n), a, b, c2, accelerator=accelerator)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    np.testing.assert_allclose(c2, a @ b, rtol=1e-4)
    arr = np.arange(10, dtype=np.float32)
    dc.launch(increment_by_one, 16, arr, accelerator=accelerator)
    np.testing.assert_array_equal(arr, np.arange(10) + 1)
    x = np.random.default_rng(2).random(1000)
    h = np.zeros(10, np.int32)
    dc.launch(hist_numba, 128, x, 0.0, 1.0, h, accelerator=accelerator)
    np.testing.assert_array_equal(h, np.histogram(x, 10, (0, 1))[0])

    v = np.random.default_rng(3).integers(0, 10, NS).astype(np.int32)
    o = np.zeros(NS, np.int32)
    dc.launch(blelloch, NS // 2, v, o, local_size=NS // 2, accelerator=accelerator)
    np.testing.assert_array_equal(o, np.concatenate([[0], np.cumsum(v)[:-1]]))  # exclusive scan
    f = np.random.default_rng(4).random(NS, dtype=np.float32)
    g = f.copy()
    dc.launch(local_bitonic, NS, g, local_size=NS, accelerator=accelerator)
    np.testing.assert_array_equal(g, np.sort(f))


# ------------------------------------------------------------------ device functions with default values

EPS = 1e-3


@dc.func
def soft_sign(x, eps=EPS, scale: dc.float32 = 2.0, n: dc.int32 = 3):  # Python's defaults, as numba allows
    return scale * x / (abs(x) + eps) + n


@dc.func
def scaled(v: dc.vec3, s=1.0) -> dc.vec3:
    return v * s


@dc.kernel
def use_defaults(a: dc.Buffer[dc.float32], o: dc.Buffer[dc.float32, 2], p: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        o[i, 0] = soft_sign(a[i])
        o[i, 1] = soft_sign(a[i], 0.5)
        o[i, 2] = soft_sign(a[i], n=10)
        o[i, 3] = soft_sign(a[i], scale=1.0, eps=0.0)
        p[i] = scaled(p[i]) + scaled(p[i], 2.0)


def test_device_function_default_values(accelerator):
    # "default parameter values are not supported in kernels" before, for device functions too
    a = np.array([1, -2, 3, 0.5], np.float32)
    o, p = np.zeros((4, 4), np.float32), np.ones((4, 3), np.float32)
    dc.launch(use_defaults, 4, a, o, p, accelerator=accelerator)
    want = np.stack([2 * a / (abs(a) + np.float32(1e-3)) + 3, 2 * a / (abs(a) + np.float32(0.5)) + 3,
                     2 * a / (abs(a) + np.float32(1e-3)) + 10, a / abs(a) + 3], 1)
    np.testing.assert_allclose(o, want, rtol=1e-5)
    np.testing.assert_array_equal(p, 3)


def test_defaults_stay_refused_in_kernels_and_must_be_numbers():
    def kernel_default(a: dc.Buffer[dc.float32], s: dc.float32 = 1.0):
        a[0] = s

    _refused(kernel_default, dc.KernelSyntaxError, "default parameter values are not supported in kernels")

    @dc.func
    def text_default(x, y="s"):
        return x

    def calls_it(a: dc.Buffer[dc.float32]):
        a[0] = text_default(1.0)

    _refused(calls_it, dc.KernelTypeError, "must be numbers")


# ------------------------------------------------------------------ float16 convolution with a halo tile

HB = 64
HR = 2
BINOMIAL = np.array([1, 4, 6, 4, 1], np.float32) / 16


@dc.kernel
def conv_half_tiled(x: dc.Buffer[dc.float16], y: dc.Buffer[dc.float16]):
    tile = dc.shared((HB + 2 * HR,), dc.float16)
    g = dc.global_id(0)
    lid = dc.local_id(0)
    n = x.shape[0]
    tile[lid + HR] = x[min(g, n - 1)]
    if lid < HR:  # the halo, clamped at the edges
        tile[lid] = x[max(g - HR, 0)]
        tile[lid + HB + HR] = x[min(g + HB, n - 1)]
    dc.barrier()
    acc = dc.float32(0)
    for k in range(2 * HR + 1):
        acc += BINOMIAL[k] * tile[lid + k]
    if g < n:
        y[g] = acc


def test_float16_convolution_with_a_shared_halo_tile_and_a_weight_table(accelerator):
    x = np.random.default_rng(0).random(256).astype(np.float16)
    xp = np.pad(x.astype(np.float32), HR, mode="edge")
    want = sum(BINOMIAL[k] * xp[k:k + 256] for k in range(5)).astype(np.float16)
    for debug in (False, True):  # debug mode checks the tile accesses and finds none out of bounds
        y = np.zeros_like(x)
        dc.launch(dc.kernel(conv_half_tiled.pyfunc, debug=debug), 256, x, y, local_size=HB, accelerator=accelerator)
        np.testing.assert_allclose(y.astype(np.float32), want.astype(np.float32), atol=1e-3)
