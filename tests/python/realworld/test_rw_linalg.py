"""Matrix kernels: naive and tiled matmul, padded shared-tile transpose, batched matvec."""

import numpy as np

import dotcompute as dc


@dc.kernel
def matmul_naive(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2], c: dc.Buffer[dc.float32, 2]):
    row = dc.global_id(0)
    col = dc.global_id(1)
    if row < c.shape[0] and col < c.shape[1]:
        s: dc.float32 = 0.0
        for k in range(a.shape[1]):
            s += a[row, k] * b[k, col]
        c[row, col] = s


def test_matmul_naive(accelerator):
    rng = np.random.default_rng(20)
    a = rng.standard_normal((23, 31)).astype(np.float32)
    b = rng.standard_normal((31, 17)).astype(np.float32)
    c = np.zeros((23, 17), np.float32)
    dc.launch(matmul_naive, c.shape, a, b, c, accelerator=accelerator)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


TILE = 16


@dc.kernel
def matmul_tiled(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2], c: dc.Buffer[dc.float32, 2]):
    ta = dc.shared((TILE, TILE), dc.float32)
    tb = dc.shared((TILE, TILE), dc.float32)
    ty = dc.local_id(0)
    tx = dc.local_id(1)
    row = dc.global_id(0)
    col = dc.global_id(1)
    m = a.shape[0]
    kk = a.shape[1]
    n = b.shape[1]
    acc: dc.float32 = 0.0
    ntiles = (kk + TILE - 1) // TILE
    for t in range(ntiles):
        ka = t * TILE + tx
        kb = t * TILE + ty
        ta[ty, tx] = a[row, ka] if row < m and ka < kk else 0.0
        tb[ty, tx] = b[kb, col] if kb < kk and col < n else 0.0
        dc.barrier()
        for k in range(TILE):
            acc += ta[ty, k] * tb[k, tx]
        dc.barrier()
    if row < m and col < n:
        c[row, col] = acc


def test_matmul_tiled_ragged_sizes(accelerator):
    rng = np.random.default_rng(21)
    m, k, n = 40, 37, 24
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = accelerator.zeros((m, n), np.float32)
    grid = (48, 32)  # rounded up to whole 16x16 tiles
    accelerator.launch(matmul_tiled, grid, accelerator.asarray(a), accelerator.asarray(b), c,
                       local_size=(TILE, TILE))
    accelerator.synchronize()
    np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@dc.kernel
def transpose_tiled(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    tile = dc.shared((TILE, TILE + 1), dc.float32)  # +1 column: no bank conflicts on GPUs
    h = src.shape[0]
    w = src.shape[1]
    r0 = dc.group_id(0) * TILE
    c0 = dc.group_id(1) * TILE
    lr = dc.local_id(0)
    lc = dc.local_id(1)
    if r0 + lr < h and c0 + lc < w:
        tile[lc, lr] = src[r0 + lr, c0 + lc]
    dc.barrier()
    orow = c0 + lr
    ocol = r0 + lc
    if orow < w and ocol < h:
        dst[orow, ocol] = tile[lr, lc]


def test_transpose_through_padded_tile(accelerator):
    rng = np.random.default_rng(22)
    src = rng.standard_normal((35, 50)).astype(np.float32)
    dst = np.zeros((50, 35), np.float32)
    dc.launch(transpose_tiled, (48, 64), src, dst, local_size=(TILE, TILE), accelerator=accelerator)
    np.testing.assert_array_equal(dst, src.T)


@dc.kernel
def batched_matvec(a: dc.Buffer[dc.float64, 3], x: dc.Buffer[dc.float64, 2], y: dc.Buffer[dc.float64, 2]):
    bidx = dc.global_id(0)
    r = dc.global_id(1)
    if bidx < a.shape[0] and r < a.shape[1]:
        s = 0.0
        for j in range(a.shape[2]):
            s += a[bidx, r, j] * x[bidx, j]
        y[bidx, r] = s


def test_batched_matvec_3d(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    rng = np.random.default_rng(23)
    a = rng.standard_normal((5, 13, 9))
    x = rng.standard_normal((5, 9))
    y = np.zeros((5, 13))
    dc.launch(batched_matvec, (5, 13), a, x, y, accelerator=accelerator)
    np.testing.assert_allclose(y, np.einsum("bij,bj->bi", a, x), rtol=1e-12, atol=1e-12)
