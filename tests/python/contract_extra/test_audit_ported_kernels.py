"""Audit: kernels in the style of Numba/Warp/CUDA samples, ported to the kernel language, on every
accelerator: tiled matmul with work-group memory and barriers, an atomic histogram, a while-loop
(escape-time fractal), a tree reduction in shared memory, Python integer semantics with a device function."""

from __future__ import annotations

import math

import numpy as np

import dotcompute as dc

TILE = 16


@dc.kernel
def matmul_tiled(A: dc.Buffer[dc.float32, 2], B: dc.Buffer[dc.float32, 2], C: dc.Buffer[dc.float32, 2]):  # noqa: N803
    sa = dc.shared((TILE * TILE,), dc.float32)
    sb = dc.shared((TILE * TILE,), dc.float32)
    row = dc.global_id(0)
    col = dc.global_id(1)
    tr = dc.local_id(0)
    tc = dc.local_id(1)
    n = A.shape[1]
    acc = dc.float32(0.0)
    for t in range((n + TILE - 1) // TILE):
        k = t * TILE + tc
        if row < A.shape[0] and k < n:
            sa[tr * TILE + tc] = A[row, k]
        else:
            sa[tr * TILE + tc] = 0.0
        k2 = t * TILE + tr
        if col < B.shape[1] and k2 < n:
            sb[tr * TILE + tc] = B[k2, col]
        else:
            sb[tr * TILE + tc] = 0.0
        dc.barrier()
        for j in range(TILE):
            acc += sa[tr * TILE + j] * sb[j * TILE + tc]
        dc.barrier()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@dc.kernel
def histogram(data: dc.Buffer[dc.uint8], bins: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < data.shape[0]:
        dc.atomic_add(bins, int(data[i]) % 16, 1)


@dc.kernel
def escape_time(out: dc.Buffer[dc.int32, 2], max_iter: dc.int32):
    y = dc.global_id(0)
    x = dc.global_id(1)
    if y < out.shape[0] and x < out.shape[1]:
        cr = -2.0 + 3.0 * x / out.shape[1]
        ci = -1.5 + 3.0 * y / out.shape[0]
        zr = 0.0
        zi = 0.0
        n = 0
        while zr * zr + zi * zi <= 4.0 and n < max_iter:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        out[y, x] = n


@dc.kernel
def block_reduce(x: dc.Buffer[dc.float32], partial: dc.Buffer[dc.float32]):
    s = dc.shared((128,), dc.float32)
    lid = dc.local_id(0)
    gid = dc.global_id(0)
    s[lid] = x[gid] if gid < x.shape[0] else 0.0
    dc.barrier()
    step = 64
    while step > 0:
        if lid < step:
            s[lid] += s[lid + step]
        dc.barrier()
        step //= 2
    if lid == 0:
        partial[dc.group_id(0)] = s[0]


@dc.func
def clamp(v: dc.float32, lo: dc.float32, hi: dc.float32) -> dc.float32:
    return min(max(v, lo), hi)


@dc.kernel
def int_semantics(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32], q: dc.Buffer[dc.int32],
                  r: dc.Buffer[dc.int32], f: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        f[i] = clamp(math.sin(dc.float32(a[i])) * 2.0, -1.0, 1.0)


def _escape_reference(h: int, w: int, max_iter: int) -> np.ndarray:
    out = np.zeros((h, w), np.int32)
    for y in range(h):
        for x in range(w):
            cr, ci = -2.0 + 3.0 * x / w, -1.5 + 3.0 * y / h
            zr = zi = 0.0
            n = 0
            while zr * zr + zi * zi <= 4.0 and n < max_iter:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            out[y, x] = n
    return out


def test_tiled_matmul(accelerator):
    rng = np.random.default_rng(5)
    a = rng.random((37, 29), dtype=np.float32)
    b = rng.random((29, 41), dtype=np.float32)
    c = np.zeros((37, 41), np.float32)
    dc.launch(matmul_tiled, (48, 48), a, b, c, local_size=(TILE, TILE), accelerator=accelerator)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_atomic_histogram(accelerator):
    data = np.random.default_rng(6).integers(0, 256, 10_000).astype(np.uint8)
    bins = np.zeros(16, np.int32)
    dc.launch(histogram, data.size, data, bins, accelerator=accelerator)
    np.testing.assert_array_equal(bins, np.bincount(data % 16, minlength=16))


def test_escape_time_while_loop(accelerator):
    out = np.zeros((24, 32), np.int32)
    dc.launch(escape_time, out.shape, out, 50, accelerator=accelerator)
    np.testing.assert_array_equal(out, _escape_reference(24, 32, 50))


def test_shared_memory_tree_reduction(accelerator):
    x = np.random.default_rng(7).random(1000, dtype=np.float32)
    partial = np.zeros(8, np.float32)
    dc.launch(block_reduce, 1024, x, partial, local_size=128, accelerator=accelerator)
    np.testing.assert_allclose(partial, [x[i * 128:(i + 1) * 128].sum() for i in range(8)], rtol=1e-5)


def test_python_integer_semantics_and_device_functions(accelerator):
    a = np.array([7, -7, 7, -7, 0, 5], np.int32)
    b = np.array([2, 2, -2, -2, 3, -1], np.int32)
    q, r, f = np.zeros_like(a), np.zeros_like(a), np.zeros(6, np.float32)
    dc.launch(int_semantics, 6, a, b, q, r, f, accelerator=accelerator)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_allclose(f, np.clip(np.sin(a.astype(np.float32)) * 2, -1, 1), atol=1e-6)
