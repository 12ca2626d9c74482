"""Reductions, scans and histograms: shared-memory trees, barriers and atomics."""

import numpy as np
import pytest

import dotcompute as dc

LS = 64


@dc.kernel
def block_sum_atomic(x: dc.Buffer[dc.float32], total: dc.Buffer[dc.float32]):
    tile = dc.shared((LS,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    tile[l] = x[i] if i < x.shape[0] else 0.0
    dc.barrier()
    step = LS // 2
    while step > 0:
        if l < step:
            tile[l] += tile[l + step]
        dc.barrier()
        step //= 2
    if l == 0:
        dc.atomic_add(total, 0, tile[0])


def test_tree_reduction_then_atomic_combine(accelerator):
    rng = np.random.default_rng(7)
    n = 1000
    x = rng.random(n, dtype=np.float32)
    total = np.zeros(1, np.float32)
    padded = ((n + LS - 1) // LS) * LS
    dc.launch(block_sum_atomic, padded, x, total, local_size=LS, accelerator=accelerator)
    np.testing.assert_allclose(total[0], x.astype(np.float64).sum(), rtol=1e-5)


@dc.kernel
def dot_partial(a: dc.Buffer[dc.float64], b: dc.Buffer[dc.float64], partial: dc.Buffer[dc.float64]):
    tile = dc.shared((LS,), dc.float64)
    l = dc.local_id(0)
    # grid-stride loop: each item accumulates many products before the tree
    acc = 0.0
    k = dc.global_id(0)
    while k < a.shape[0]:
        acc += a[k] * b[k]
        k += dc.global_size(0)
    tile[l] = acc
    dc.barrier()
    s = LS // 2
    while s > 0:
        if l < s:
            tile[l] = tile[l] + tile[l + s]
        dc.barrier()
        s = s // 2
    if l == 0:
        partial[dc.group_id(0)] = tile[0]


def test_dot_product_grid_stride(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    rng = np.random.default_rng(8)
    n = 5003
    a = rng.standard_normal(n)
    b = rng.standard_normal(n)
    groups = 4
    partial = np.zeros(groups)
    dc.launch(dot_partial, groups * LS, a, b, partial, local_size=LS, accelerator=accelerator)
    np.testing.assert_allclose(partial.sum(), np.dot(a, b), rtol=1e-10)


@dc.kernel
def max_and_first_index(x: dc.Buffer[dc.int32], best: dc.Buffer[dc.int32], stage: dc.int32):
    i = dc.global_id(0)
    if i >= x.shape[0]:
        return
    if stage == 0:
        dc.atomic_max(best, 0, x[i])
    elif x[i] == best[0]:
        dc.atomic_min(best, 1, dc.int32(i))


def test_argmax_with_two_atomic_passes(accelerator):
    rng = np.random.default_rng(9)
    x = rng.integers(-1000, 1000, size=3000).astype(np.int32)
    x[[700, 2100]] = 5000  # ties: the first index wins
    best = accelerator.asarray(np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max], np.int32))
    xb = accelerator.asarray(x)
    accelerator.launch(max_and_first_index, x.size, xb, best, 0)
    accelerator.launch(max_and_first_index, x.size, xb, best, 1)
    accelerator.synchronize()
    assert best.numpy().tolist() == [5000, 700]


@dc.kernel
def float_max(x: dc.Buffer[dc.float32], m: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        dc.atomic_max(m, 0, x[i])
        dc.atomic_min(m, 1, x[i])


def test_float_atomic_min_max(accelerator):
    rng = np.random.default_rng(10)
    x = (rng.standard_normal(2049) * 100).astype(np.float32)
    m = np.array([-np.inf, np.inf], np.float32)
    dc.launch(float_max, x.size, x, m, accelerator=accelerator)
    assert m[0] == x.max() and m[1] == x.min()


@dc.kernel
def histogram(data: dc.Buffer[dc.float32], hist: dc.Buffer[dc.int32], lo: dc.float32, hi: dc.float32):
    i = dc.global_id(0)
    # the range check comes first: int64() truncates toward zero, so (-1, 0) would land in bin 0
    if i < data.shape[0] and lo <= data[i] < hi:
        nb = hist.shape[0]
        b = dc.int64((data[i] - lo) / (hi - lo) * nb)
        dc.atomic_add(hist, min(b, nb - 1), 1)


def test_histogram_global_atomics(accelerator):
    rng = np.random.default_rng(11)
    data = rng.standard_normal(4000).astype(np.float32)
    hist = np.zeros(16, np.int32)
    dc.launch(histogram, data.size, data, hist, -2.0, 2.0, accelerator=accelerator)
    inside = data[(data >= -2) & (data < 2)]
    b = np.minimum(((inside - np.float32(-2)) / np.float32(4) * np.float32(16)).astype(np.int64), 15)
    ref = np.bincount(b, minlength=16)
    np.testing.assert_array_equal(hist, ref)


NBINS = 32


@dc.kernel
def histogram_private(keys: dc.Buffer[dc.uint32], hist: dc.Buffer[dc.uint32]):
    local_hist = dc.shared((NBINS,), dc.uint32)
    l = dc.local_id(0)
    if l < NBINS:
        local_hist[l] = 0
    dc.barrier()
    i = dc.global_id(0)
    if i < keys.shape[0]:
        dc.atomic_add(local_hist, keys[i] % NBINS, 1)
    dc.barrier()
    if l < NBINS:
        dc.atomic_add(hist, l, local_hist[l])


def test_histogram_shared_privatised(accelerator):
    rng = np.random.default_rng(12)
    keys = rng.integers(0, 2**32, size=64 * 20, dtype=np.uint64).astype(np.uint32)
    hist = np.zeros(NBINS, np.uint32)
    dc.launch(histogram_private, keys.size, keys, hist, local_size=64, accelerator=accelerator)
    np.testing.assert_array_equal(hist, np.bincount(keys % NBINS, minlength=NBINS))


@dc.kernel
def hillis_steele_scan(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32], sums: dc.Buffer[dc.int32]):
    tile = dc.shared((LS,), dc.int32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    tile[l] = x[i]
    dc.barrier()
    off = 1
    while off < LS:
        v = tile[l]
        if l >= off:
            v += tile[l - off]
        dc.barrier()
        tile[l] = v
        dc.barrier()
        off *= 2
    out[i] = tile[l]
    if l == LS - 1:
        sums[dc.group_id(0)] = tile[l]


@dc.kernel
def add_group_offsets(out: dc.Buffer[dc.int32], sums: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    g = i // LS
    add = 0
    for k in range(g):
        add += sums[k]
    out[i] += add


def test_inclusive_scan_two_kernels(accelerator):
    rng = np.random.default_rng(13)
    n = LS * 6
    x = rng.integers(-50, 50, size=n).astype(np.int32)
    xb, out = accelerator.asarray(x), accelerator.empty((n,), np.int32)
    sums = accelerator.zeros((n // LS,), np.int32)
    accelerator.launch(hillis_steele_scan, n, xb, out, sums, local_size=LS)
    accelerator.launch(add_group_offsets, n, out, sums)
    accelerator.synchronize()
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x))


BL = 128  # elements per group; each of the BL // 2 items owns two


@dc.kernel
def blelloch_exclusive(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    t = dc.shared((BL,), dc.float32)
    l = dc.local_id(0)
    base = dc.group_id(0) * BL
    t[2 * l] = x[base + 2 * l]
    t[2 * l + 1] = x[base + 2 * l + 1]
    offset = 1
    d = BL >> 1
    while d > 0:
        dc.barrier()
        if l < d:
            ai = offset * (2 * l + 1) - 1
            bi = offset * (2 * l + 2) - 1
            t[bi] += t[ai]
        offset *= 2
        d >>= 1
    if l == 0:
        t[BL - 1] = 0.0
    d = 1
    while d < BL:
        offset >>= 1
        dc.barrier()
        if l < d:
            ai = offset * (2 * l + 1) - 1
            bi = offset * (2 * l + 2) - 1
            tmp = t[ai]
            t[ai] = t[bi]
            t[bi] += tmp
        d *= 2
    dc.barrier()
    out[base + 2 * l] = t[2 * l]
    out[base + 2 * l + 1] = t[2 * l + 1]


def test_blelloch_per_group_exclusive_scan(accelerator):
    rng = np.random.default_rng(14)
    groups = 3
    x = rng.integers(0, 10, size=groups * BL).astype(np.float32)  # small ints: exact in float32
    out = np.full_like(x, -1.0)
    dc.launch(blelloch_exclusive, groups * BL // 2, x, out, local_size=BL // 2, accelerator=accelerator)
    ref = x.reshape(groups, BL)
    ref = np.cumsum(ref, axis=1) - ref
    np.testing.assert_array_equal(out.reshape(groups, BL), ref)


@dc.kernel
def segment_sum(values: dc.Buffer[dc.int64], seg: dc.Buffer[dc.int32], sums: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < values.shape[0]:
        dc.atomic_add(sums, seg[i], values[i])


@dc.kernel
def segmented_row_scan(m: dc.Buffer[dc.float32, 2], flags: dc.Buffer[dc.bool_, 2]):
    r = dc.global_id(0)
    if r >= m.shape[0]:
        return
    run: dc.float32 = 0.0
    for c in range(m.shape[1]):
        if flags[r, c]:
            run = 0.0
        run += m[r, c]
        m[r, c] = run


def test_segment_sum_atomics_int64(accelerator):
    rng = np.random.default_rng(15)
    n = 3000
    seg = np.sort(rng.integers(0, 40, size=n)).astype(np.int32)
    values = rng.integers(-(2**40), 2**40, size=n).astype(np.int64)
    sums = np.zeros(40, np.int64)
    dc.launch(segment_sum, n, values, seg, sums, accelerator=accelerator)
    ref = np.zeros(40, np.int64)
    np.add.at(ref, seg, values)
    np.testing.assert_array_equal(sums, ref)


def test_segmented_scan_with_flags(accelerator):
    rng = np.random.default_rng(16)
    m = rng.integers(0, 8, size=(7, 40)).astype(np.float32)
    flags = rng.random((7, 40)) < 0.2
    orig = m.copy()
    dc.launch(segmented_row_scan, 7, m, flags, accelerator=accelerator)
    ref = np.zeros_like(orig)
    for r in range(7):
        run = 0.0
        for c in range(40):
            if flags[r, c]:
                run = 0.0
            run += orig[r, c]
            ref[r, c] = run
    np.testing.assert_array_equal(m, ref)


def test_barrier_kernel_rejects_partial_group(accelerator):
    x = np.ones(100, np.float32)
    total = np.zeros(1, np.float32)
    with pytest.raises(dc.LaunchError):
        dc.launch(block_sum_atomic, 100, x, total, local_size=LS, accelerator=accelerator)
