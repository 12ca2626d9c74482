"""Portable matrix multiplication, written in the kernel language.

``matmul_tiled``: C = A @ B for row-major flat A (M×K), B (K×N), C (M×N), batched along launch
dimension 0. A work-group of 16×16 items computes a 64×64 tile of C. Per step of 16 along K, the
group stages a 64×16 slice of A (stored transposed, so the inner loop reads it with a unit
stride) and a 16×64 slice of B in work-group memory, then every item accumulates a 4×4 block of C
in sixteen registers: each value loaded from work-group memory is used four times (register
blocking), which is what makes it fast. An item owns rows ``ty + 16*r`` and columns
``tx + 16*c``: neighbouring items touch neighbouring columns, so the loads coalesce on GPUs and
the CPU backend vectorises the loop over the items.

``matmul_naive``: one item per element of C, a plain loop over K; the reference point.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from . import klang as dc

TILE = 64  # rows and columns of C per work-group
TK = 16  # the K-slice staged per step
LOCAL = 16  # items per dimension of the work-group (each computes 4×4 of C)


@cache
def tiled_kernel(dtype: Any, columns_dim: int = 2) -> Any:
    """``columns_dim``: the launch dimension that runs along C's columns (the batch takes the
    other of 0 and 2). Which one the device iterates fastest differs: the CPU backend's innermost
    loop is dimension 0, while the GPU emitters put the last dimension on the hardware's fastest."""
    T = dtype  # noqa: N806
    COLS = columns_dim  # noqa: N806 -- a constant: the other branch is folded away

    @dc.kernel
    def matmul_tiled(a: dc.Buffer, b: dc.Buffer, c: dc.Buffer, m: dc.int64, n: dc.int64, k: dc.int64,
                     a_batch: dc.int64, b_batch: dc.int64):
        a_tile = dc.shared((TK, TILE), T)  # a_tile[kk, row]
        b_tile = dc.shared((TK, TILE), T)  # b_tile[kk, col]
        if COLS == 0:
            z = dc.group_id(2)
            j0 = dc.group_id(0) * TILE
            tx = dc.local_id(0)
        else:
            z = dc.group_id(0)
            j0 = dc.group_id(2) * TILE
            tx = dc.local_id(2)
        i0 = dc.group_id(1) * TILE
        ty = dc.local_id(1)
        lid = ty * LOCAL + tx
        a0 = z * a_batch
        b0 = z * b_batch
        c00 = T(0)
        c01 = T(0)
        c02 = T(0)
        c03 = T(0)
        c10 = T(0)
        c11 = T(0)
        c12 = T(0)
        c13 = T(0)
        c20 = T(0)
        c21 = T(0)
        c22 = T(0)
        c23 = T(0)
        c30 = T(0)
        c31 = T(0)
        c32 = T(0)
        c33 = T(0)
        for k0 in range(0, k, TK):
            for r in range(4):  # 1024 elements of each tile, 4 per item
                e = lid + r * (LOCAL * LOCAL)
                ar = e // TK
                ak = e % TK
                a_tile[ak, ar] = a[a0 + (i0 + ar) * k + k0 + ak] if i0 + ar < m and k0 + ak < k else T(0)
                bk = e // TILE
                bc = e % TILE
                b_tile[bk, bc] = b[b0 + (k0 + bk) * n + j0 + bc] if k0 + bk < k and j0 + bc < n else T(0)
            dc.barrier()
            for kk in range(TK):
                x0 = a_tile[kk, ty]
                x1 = a_tile[kk, ty + 16]
                x2 = a_tile[kk, ty + 32]
                x3 = a_tile[kk, ty + 48]
                y0 = b_tile[kk, tx]
                y1 = b_tile[kk, tx + 16]
                y2 = b_tile[kk, tx + 32]
                y3 = b_tile[kk, tx + 48]
                c00 += x0 * y0
                c01 += x0 * y1
                c02 += x0 * y2
                c03 += x0 * y3
                c10 += x1 * y0
                c11 += x1 * y1
                c12 += x1 * y2
                c13 += x1 * y3
                c20 += x2 * y0
                c21 += x2 * y1
                c22 += x2 * y2
                c23 += x2 * y3
                c30 += x3 * y0
                c31 += x3 * y1
                c32 += x3 * y2
                c33 += x3 * y3
            dc.barrier()
        store(c, z * m * n, m, n, i0 + ty, j0 + tx, c00, c01, c02, c03)
        store(c, z * m * n, m, n, i0 + ty + 16, j0 + tx, c10, c11, c12, c13)
        store(c, z * m * n, m, n, i0 + ty + 32, j0 + tx, c20, c21, c22, c23)
        store(c, z * m * n, m, n, i0 + ty + 48, j0 + tx, c30, c31, c32, c33)

    return matmul_tiled


@dc.func
def store(c: dc.Buffer, base: dc.int64, m: dc.int64, n: dc.int64, i: dc.int64, j: dc.int64, v0, v1, v2, v3):
    # one row of an item's 4×4 block: columns j, j+16, j+32, j+48
    if i < m:
        if j < n:
            c[base + i * n + j] = v0
        if j + 16 < n:
            c[base + i * n + j + 16] = v1
        if j + 32 < n:
            c[base + i * n + j + 32] = v2
        if j + 48 < n:
            c[base + i * n + j + 48] = v3


@cache
def naive_kernel(dtype: Any) -> Any:
    T = dtype  # noqa: N806

    @dc.kernel
    def matmul_naive(a: dc.Buffer, b: dc.Buffer, c: dc.Buffer, m: dc.int64, n: dc.int64, k: dc.int64,
                     a_batch: dc.int64, b_batch: dc.int64):
        z = dc.global_id(0)
        i = dc.global_id(1)
        j = dc.global_id(2)
        if i < m and j < n:
            acc = T(0)
            for kk in range(k):
                acc += a[z * a_batch + i * k + kk] * b[z * b_batch + kk * n + j]
            c[z * m * n + i * n + j] = acc

    return matmul_naive


__all__ = ["LOCAL", "TILE", "TK", "naive_kernel", "store", "tiled_kernel"]
