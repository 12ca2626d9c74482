"""More idioms from real projects: 2-D work-groups, CAS loops, lock-free lists, integer loops,
resampling, NaN handling, aliasing and views of numpy arrays, host edits between launches."""

import math

import numpy as np
import pytest

import dotcompute as dc

GX, GY = 4, 32


@dc.kernel
def row_max_2d_groups(m: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32]):
    # a (4, 32) group handles 4 rows; the 32 items of a row reduce that row together
    red = dc.shared((GX, GY), dc.float32)
    lr = dc.local_id(0)
    lc = dc.local_id(1)
    r = dc.group_id(0) * dc.local_size(0) + lr
    best: dc.float32 = -math.inf
    c = lc
    while c < m.shape[1]:
        if r < m.shape[0]:
            best = max(best, m[r, c])
        c += GY
    red[lr, lc] = best
    dc.barrier()
    s = GY // 2
    while s > 0:
        if lc < s:
            red[lr, lc] = max(red[lr, lc], red[lr, lc + s])
        dc.barrier()
        s //= 2
    if lc == 0 and r < m.shape[0]:
        out[r] = red[lr, 0]


def test_row_reduction_with_2d_work_groups(accelerator):
    rng = np.random.default_rng(70)
    m = rng.standard_normal((10, 77)).astype(np.float32)
    out = np.zeros(10, np.float32)
    dc.launch(row_max_2d_groups, (12, GY), m, out, local_size=(GX, GY), accelerator=accelerator)
    np.testing.assert_array_equal(out, m.max(1))


@dc.kernel
def block_sum_3d(v: dc.Buffer[dc.int32, 3], out: dc.Buffer[dc.int32, 3]):
    t = dc.shared((2, 4, 4), dc.int32)
    a = dc.local_id(0)
    b = dc.local_id(1)
    c = dc.local_id(2)
    t[a, b, c] = v[dc.global_id(0), dc.global_id(1), dc.global_id(2)]
    dc.barrier()
    if a == 0 and b == 0 and c == 0:
        s = 0
        for p in range(2):
            for q in range(4):
                for r in range(4):
                    s += t[p, q, r]
        out[dc.group_id(0), dc.group_id(1), dc.group_id(2)] = s


def test_3d_work_groups_and_3d_shared(accelerator):
    rng = np.random.default_rng(71)
    v = rng.integers(-100, 100, size=(4, 8, 12)).astype(np.int32)
    out = np.zeros((2, 2, 3), np.int32)
    dc.launch(block_sum_3d, v.shape, v, out, local_size=(2, 4, 4), accelerator=accelerator)
    np.testing.assert_array_equal(out, v.reshape(2, 2, 2, 4, 3, 4).sum(axis=(1, 3, 5)))


@dc.kernel
def atomic_mul_cas(x: dc.Buffer[dc.int32], prod: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        old = prod[0]
        while True:
            assumed = old
            old = dc.atomic_cas(prod, 0, assumed, assumed * x[i])
            if old == assumed:
                break


def test_cas_loop_atomic_multiply(accelerator):
    rng = np.random.default_rng(72)
    x = rng.integers(1, 50, size=500).astype(np.int32) | 1  # odd factors
    prod = np.ones(1, np.int32)
    dc.launch(atomic_mul_cas, x.size, x, prod, accelerator=accelerator)
    ref = 1
    for v in x.tolist():
        ref = (ref * v) % 2**32
    assert int(prod[0]) == (ref - 2**32 if ref >= 2**31 else ref)


@dc.kernel
def push_front(head: dc.Buffer[dc.int32], nxt: dc.Buffer[dc.int32], keep: dc.Buffer[dc.bool_]):
    i = dc.global_id(0)
    if i < nxt.shape[0] and keep[i]:
        nxt[i] = dc.atomic_exchange(head, 0, dc.int32(i))


def test_lock_free_list_with_atomic_exchange(accelerator):
    n = 1000
    keep = (np.arange(n) % 3) != 0
    head = np.full(1, -1, np.int32)
    nxt = np.full(n, -2, np.int32)
    dc.launch(push_front, n, head, nxt, keep, accelerator=accelerator)
    seen = []
    node = int(head[0])
    while node != -1 and len(seen) <= n:
        seen.append(node)
        node = int(nxt[node])
    assert sorted(seen) == np.flatnonzero(keep).tolist()


@dc.kernel
def gcd_and_collatz(a: dc.Buffer[dc.int64], b: dc.Buffer[dc.int64], g: dc.Buffer[dc.int64],
                    steps: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i >= a.shape[0]:
        return
    x = a[i]
    y = b[i]
    while y != 0:
        x, y = y, x % y
    g[i] = abs(x)
    n = a[i]
    k: dc.int32 = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    steps[i] = k


def test_integer_while_loops_gcd_collatz(accelerator):
    rng = np.random.default_rng(73)
    a = rng.integers(1, 10**12, size=64).astype(np.int64)
    b = rng.integers(1, 10**6, size=64).astype(np.int64) * rng.integers(1, 100, size=64)
    a[:3] = [27, 97, 1]
    g, steps = np.zeros(64, np.int64), np.zeros(64, np.int32)
    dc.launch(gcd_and_collatz, 64, a, b, g, steps, accelerator=accelerator)
    np.testing.assert_array_equal(g, np.gcd(a, b))

    def collatz(n):
        k = 0
        while n > 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            k += 1
        return k
    assert steps.tolist() == [collatz(int(v)) for v in a]


@dc.kernel
def resize_bilinear(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    if y >= dst.shape[0] or x >= dst.shape[1]:
        return
    sy = (y + 0.5) * src.shape[0] / dst.shape[0] - 0.5
    sx = (x + 0.5) * src.shape[1] / dst.shape[1] - 0.5
    y0 = math.floor(sy)        # int64, like Python
    x0 = math.floor(sx)
    fy = sy - y0
    fx = sx - x0
    ya = min(max(y0, 0), src.shape[0] - 1)
    yb = min(max(y0 + 1, 0), src.shape[0] - 1)
    xa = min(max(x0, 0), src.shape[1] - 1)
    xb = min(max(x0 + 1, 0), src.shape[1] - 1)
    top = src[ya, xa] * (1.0 - fx) + src[ya, xb] * fx
    bot = src[yb, xa] * (1.0 - fx) + src[yb, xb] * fx
    dst[y, x] = top * (1.0 - fy) + bot * fy


def test_bilinear_resize_with_math_floor(accelerator):
    rng = np.random.default_rng(74)
    src = rng.random((9, 13), dtype=np.float32)
    dst = np.zeros((20, 7), np.float32)
    dc.launch(resize_bilinear, dst.shape, src, dst, accelerator=accelerator)
    sy = (np.arange(20) + 0.5) * 9 / 20 - 0.5
    sx = (np.arange(7) + 0.5) * 13 / 7 - 0.5
    y0, x0 = np.floor(sy).astype(int), np.floor(sx).astype(int)
    fy, fx = (sy - y0)[:, None], (sx - x0)[None, :]
    ya, yb = np.clip(y0, 0, 8), np.clip(y0 + 1, 0, 8)
    xa, xb = np.clip(x0, 0, 12), np.clip(x0 + 1, 0, 12)
    s = src.astype(np.float64)
    top = s[ya][:, xa] * (1 - fx) + s[ya][:, xb] * fx
    bot = s[yb][:, xa] * (1 - fx) + s[yb][:, xb] * fx
    np.testing.assert_allclose(dst, top * (1 - fy) + bot * fy, rtol=1e-5, atol=1e-6)


@dc.kernel
def nan_stats(x: dc.Buffer[dc.float64, 2], out: dc.Buffer[dc.float64, 2]):
    r = dc.global_id(0)
    if r >= x.shape[0]:
        return
    s = 0.0
    cnt = 0
    for c in range(x.shape[1]):
        v = x[r, c]
        if math.isnan(v) or math.isinf(v):
            continue
        s += v
        cnt += 1
    out[r, 0] = s
    out[r, 1] = s / cnt if cnt > 0 else math.nan


def test_nan_aware_row_mean(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    rng = np.random.default_rng(75)
    x = rng.standard_normal((6, 20))
    x[rng.random(x.shape) < 0.3] = np.nan
    x[0, 3] = np.inf
    x[5, :] = np.nan
    out = np.zeros((6, 2))
    dc.launch(nan_stats, 6, x, out, accelerator=accelerator)
    clean = np.where(np.isfinite(x), x, np.nan)
    np.testing.assert_allclose(out[:, 0], np.nansum(clean, 1), rtol=1e-12)
    with np.errstate(invalid="ignore"):
        ref_mean = np.nansum(clean, 1) / np.isfinite(x).sum(1)
    np.testing.assert_allclose(out[:, 1], ref_mean, rtol=1e-12)
    assert np.isnan(out[5, 1])


@dc.kernel(debug=True)
def guarded_neighbours(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    n = a.shape[0]
    if i < n:
        right = a[i + 1] if i + 1 < n else 0.0      # only the chosen branch is evaluated
        left = i > 0 and a[i - 1] > 0.0             # short-circuit: no a[-1] read
        out[i] = right + (1.0 if left else 0.0) + a[-1]


def test_short_circuit_guards_pass_debug_bounds_checks(accelerator):
    a = np.arange(1, 9, dtype=np.float32)
    out = np.zeros_like(a)
    dc.launch(guarded_neighbours, 8, a, out, accelerator=accelerator)
    ref = np.append(a[1:], 0) + np.r_[0, np.ones(7)] + a[-1]
    np.testing.assert_array_equal(out, ref)


@dc.kernel
def countdown(out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        k = 0
        for j in range(out.shape[1] * 2 - 1, -1, -2):
            out[i, k] = j * (i + 1)
            k += 1


def test_negative_step_range(accelerator):
    out = np.zeros((3, 5), np.int64)
    dc.launch(countdown, 3, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, np.arange(9, -1, -2)[None, :] * np.arange(1, 4)[:, None])


@dc.kernel
def coverage(hits: dc.Buffer[dc.int32, 2], total: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    dc.atomic_add(hits, (i, j), 1)
    dc.atomic_add(total, 0, 1)


def test_partial_groups_run_every_item_exactly_once(accelerator):
    hits = np.zeros((37, 29), np.int32)
    total = np.zeros(1, np.int64)
    dc.launch(coverage, (37, 29), hits, total, local_size=(8, 8), accelerator=accelerator)
    assert (hits == 1).all()
    assert total[0] == 37 * 29


@dc.kernel
def iota(out: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = i * 3


def test_large_1d_launch(accelerator):
    n = (1 << 21) + 17
    out = accelerator.empty((n,), np.int64)
    accelerator.launch(iota, n, out)
    accelerator.synchronize()
    np.testing.assert_array_equal(out.numpy(), np.arange(n, dtype=np.int64) * 3)


@dc.kernel
def axpy_inplace(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]


def test_same_numpy_array_for_two_parameters(accelerator):
    y = np.arange(10, dtype=np.float32)
    dc.launch(axpy_inplace, 10, 2.0, y, y, accelerator=accelerator)
    np.testing.assert_array_equal(y, 3 * np.arange(10))


def test_contiguous_slice_writes_into_base_array(accelerator):
    base = np.zeros(20, np.float32)
    x = np.ones(10, np.float32)
    dc.launch(axpy_inplace, 10, 5.0, x, base[5:15], accelerator=accelerator)
    np.testing.assert_array_equal(base, np.r_[np.zeros(5), np.full(10, 5.0), np.zeros(5)])
    m = np.zeros((6, 4), np.float32)
    dc.launch(axpy_inplace, 4, 1.0, x[:4], m[2], accelerator=accelerator)  # a row of a matrix
    assert (m[2] == 1).all() and m.sum() == 4


def test_host_edits_between_launches(accelerator):
    n = 32
    u = accelerator.zeros((n,), np.float32)
    one = accelerator.asarray(np.ones(n, np.float32))
    for step in range(5):
        with u.host() as h:   # e.g. re-impose a boundary value on the host
            h[0] = 100.0 + step
        accelerator.launch(axpy_inplace, n, 1.0, one, u)
    accelerator.synchronize()
    got = u.numpy()
    assert got[0] == 105.0
    assert (got[1:] == 5.0).all()
    back = np.empty(n, np.float32)
    u.copy_to(back)
    np.testing.assert_array_equal(back, got)
    u.copy_from(np.full(n, 7.0, np.float32))
    accelerator.launch(axpy_inplace, n, 1.0, one, u)
    accelerator.synchronize()
    assert (u.numpy() == 8.0).all()


@dc.kernel
def generic_copy(src: dc.Buffer, dst: dc.Buffer):
    i = dc.global_id(0)
    if i < dst.size:
        dst[i] = src[i]


def test_unsupported_dtype_is_refused_naming_parameter(accelerator):
    # int16 and float16 are kernel dtypes now (issue 12); these still are not
    for bad in (np.zeros(4, np.complex256), np.zeros(4, np.dtype("datetime64[s]")), np.zeros(4, "S2")):
        with pytest.raises(TypeError) as ei:
            dc.launch(generic_copy, 4, bad, np.zeros(4, np.float32), accelerator=accelerator)
        assert "src" in str(ei.value), str(ei.value)


def test_buffer_from_another_device(accelerator):
    others = [d for d in dc.devices() if d.id != accelerator.id]
    if not others:
        pytest.skip("only one device")
    src = others[0].asarray(np.arange(6, dtype=np.float32))
    dst = np.zeros(6, np.float32)
    try:
        dc.launch(generic_copy, 6, src, dst, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert "src" in str(e) or "accelerator" in str(e).lower() or "device" in str(e).lower(), str(e)
    else:
        np.testing.assert_array_equal(dst, np.arange(6))
