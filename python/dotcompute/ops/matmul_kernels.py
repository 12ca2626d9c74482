"""Portable matrix multiplication, written in the kernel language.

``matmul_tiled``: C = A @ B for A (M×K), B (K×N), C (M×N), each indexed in its own shape (a
vector, a matrix, or a batch of them along the launch dimension that is not C's rows or columns).
A work-group of 16×16 items computes a 64×64 tile of C. Per step of 32 along K, the group stages
a 64×32 slice of A and a 32×64 slice of B in work-group memory (each item copies eight elements
of each: a load where the element is inside the matrix, a zero outside, at an index linear in the
item, so the copy has no branch and vectorises too; plain loads when the whole slice is inside both
matrices, a test the same for every item of the group), then every item adds the slice's 32 outer
products of a 4-vector of A and a 4-vector of B to its 4×4 block of C, held in registers: each
value loaded from work-group memory is used four times (register blocking). The 32 steps are
written out rather than looped: the item's body is then straight-line code, which the CPU backend
vectorises across the work-items (a loop inside the item kept it scalar: 1.8x slower). 32 rather
than 16 steps per slice: half the barriers, and two cache lines of each row of A per slice
(measured on cpu:0 at 1024²: 35 -> 42 % and 29 -> 45 % of OpenBLAS in two A/B runs).
An item owns rows ``ty + 16*r`` and columns ``tx + 16*c``: neighbouring items read and write
neighbouring addresses (coalesced global loads and stores, distinct banks of work-group memory
for the staging writes and the B reads; the A reads are one address per row of items, a
broadcast). Both tiles' rows are padded by 16 words so the two rows of items in a GPU warp write
to distinct banks.

``matmul_blocked`` (with ``matmul_pack_b``): the kernel for CPU-type OpenCL devices (PoCL), no
work-group memory and no barrier, 8×16 blocks of C per item over a padded copy of B; see
:func:`blocked_kernel`.

``matmul_naive``: one item per element of C, a plain loop over K; the reference point.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from . import klang as dc

TILE = 64  # rows and columns of C per work-group
TK = 32  # the K-slice staged per step (2 × LOCAL: the kernel stages and adds it written out)
LOCAL = 16  # items per dimension of the work-group (each computes 4×4 of C)


@cache
def tiled_kernel(dtype: Any, columns_dim: int = 0, nd: tuple[int, int, int] = (1, 1, 1)) -> Any:
    """``columns_dim``: the launch dimension that runs along C's columns (the batch takes the
    other of 0 and 2). Dimension 0 is the one whose neighbouring items are neighbours in the
    hardware on the CPU backend (its innermost, vectorised loop) and on GPUs (threadIdx.x: a warp's
    lanes, so their loads coalesce); PoCL's CPU devices measured faster with dimension 2.
    ``nd``: the number of dimensions of A, B and C as the kernel gets them (1: flat; 2: a matrix;
    3: a batch of matrices), so it reads and writes the operands in place, no flattening copies."""
    T = dtype  # noqa: N806
    COLS = columns_dim  # noqa: N806 -- a constant: the other branch is folded away
    V4 = dc.vector(4, T)  # noqa: N806
    M44 = dc.matrix(4, 4, T)  # noqa: N806
    load_a = (_load_a1, _load_a2, _load_a3)[nd[0] - 1]
    load_b = (_load_b1, _load_b2, _load_b3)[nd[1] - 1]
    put = (_store1, _store2, _store3)[nd[2] - 1]

    # contract: the products and sums of the K-slice may fuse into FMAs (as BLAS does; numpy's
    # matmul promises no particular rounding either), twice the arithmetic per instruction
    @dc.kernel(contract=True)
    def matmul_tiled(a: dc.Buffer, b: dc.Buffer, c: dc.Buffer, m: dc.int64, n: dc.int64, k: dc.int64,
                     a_batch: dc.int64, b_batch: dc.int64):
        # a_tile[row, kk]: read at one address per row of items (a broadcast), written along kk.
        # Rows of both tiles are padded by 16 words: the two rows of items that share a GPU warp
        # write two rows of a tile, and 32 or 64 words apart they would hit the same 16 banks (a
        # 2-way conflict); 48 or 80 apart they use all 32
        a_tile = dc.shared((TILE, TK + 16), T)
        b_tile = dc.shared((TK, TILE + 16), T)  # b_tile[kk, col]: read by consecutive items
        if COLS == 0:
            z = dc.group_id(2)
            i0 = dc.group_id(1) * TILE
            j0 = dc.group_id(0) * TILE
            tx = dc.local_id(0)
        else:
            z = dc.group_id(0)
            i0 = dc.group_id(1) * TILE
            j0 = dc.group_id(2) * TILE
            tx = dc.local_id(2)
        ty = dc.local_id(1)
        za = z * a_batch  # a_batch, b_batch: 1, or 0 for an operand the batch shares (broadcast)
        zb = z * b_batch
        acc = M44(T(0))  # the item's 4×4 block of C: rows ty + 16*r, columns tx + 16*c
        for k0 in range(0, k, TK):
            # each item stages 8 elements of each tile, written out (a loop here would keep the CPU
            # backend from vectorising the staging across the items). Consecutive items read
            # consecutive addresses of A (along K) and of B (along the columns): coalesced; and
            # write consecutive words of the tiles (the row padding keeps the two rows of items in
            # a warp on different banks).
            ka = k0 + tx
            kb = k0 + ty
            jb = j0 + tx
            ia = i0 + ty
            # a load only where the element is inside the matrix, else a zero (it adds nothing to
            # the products): a conditional load at an index linear in the item, which the CPU
            # backend's compiler turns into masked vector loads (an index clamped with min() made it
            # a gather it did not vectorise), and a GPU into a predicated load
            if i0 + TILE <= m and j0 + TILE <= n and k0 + TK <= k:
                # a tile wholly inside A and B (every tile of a 1024² product): plain loads; the
                # test is the same for the whole group, so the CPU backend's compiler takes it out
                # of the loop over the items and a GPU's warps do not diverge on it
                a_tile[ty + 0, tx + 0] = load_a(a, za, ia, ka)
                a_tile[ty + 16, tx + 0] = load_a(a, za, ia + 16, ka)
                a_tile[ty + 32, tx + 0] = load_a(a, za, ia + 32, ka)
                a_tile[ty + 48, tx + 0] = load_a(a, za, ia + 48, ka)
                a_tile[ty + 0, tx + 16] = load_a(a, za, ia, ka + 16)
                a_tile[ty + 16, tx + 16] = load_a(a, za, ia + 16, ka + 16)
                a_tile[ty + 32, tx + 16] = load_a(a, za, ia + 32, ka + 16)
                a_tile[ty + 48, tx + 16] = load_a(a, za, ia + 48, ka + 16)
                b_tile[ty + 0, tx + 0] = load_b(b, zb, kb, jb)
                b_tile[ty + 0, tx + 16] = load_b(b, zb, kb, jb + 16)
                b_tile[ty + 0, tx + 32] = load_b(b, zb, kb, jb + 32)
                b_tile[ty + 0, tx + 48] = load_b(b, zb, kb, jb + 48)
                b_tile[ty + 16, tx + 0] = load_b(b, zb, kb + 16, jb)
                b_tile[ty + 16, tx + 16] = load_b(b, zb, kb + 16, jb + 16)
                b_tile[ty + 16, tx + 32] = load_b(b, zb, kb + 16, jb + 32)
                b_tile[ty + 16, tx + 48] = load_b(b, zb, kb + 16, jb + 48)
            else:
                a_tile[ty + 0, tx + 0] = load_a(a, za, ia, ka) if ia < m and ka < k else T(0)
                a_tile[ty + 16, tx + 0] = load_a(a, za, ia + 16, ka) if ia + 16 < m and ka < k else T(0)
                a_tile[ty + 32, tx + 0] = load_a(a, za, ia + 32, ka) if ia + 32 < m and ka < k else T(0)
                a_tile[ty + 48, tx + 0] = load_a(a, za, ia + 48, ka) if ia + 48 < m and ka < k else T(0)
                a_tile[ty + 0, tx + 16] = load_a(a, za, ia, ka + 16) if ia < m and ka + 16 < k else T(0)
                a_tile[ty + 16, tx + 16] = load_a(a, za, ia + 16, ka + 16) if ia + 16 < m and ka + 16 < k else T(0)
                a_tile[ty + 32, tx + 16] = load_a(a, za, ia + 32, ka + 16) if ia + 32 < m and ka + 16 < k else T(0)
                a_tile[ty + 48, tx + 16] = load_a(a, za, ia + 48, ka + 16) if ia + 48 < m and ka + 16 < k else T(0)
                b_tile[ty + 0, tx + 0] = load_b(b, zb, kb, jb) if kb < k and jb < n else T(0)
                b_tile[ty + 0, tx + 16] = load_b(b, zb, kb, jb + 16) if kb < k and jb + 16 < n else T(0)
                b_tile[ty + 0, tx + 32] = load_b(b, zb, kb, jb + 32) if kb < k and jb + 32 < n else T(0)
                b_tile[ty + 0, tx + 48] = load_b(b, zb, kb, jb + 48) if kb < k and jb + 48 < n else T(0)
                b_tile[ty + 16, tx + 0] = load_b(b, zb, kb + 16, jb) if kb + 16 < k and jb < n else T(0)
                b_tile[ty + 16, tx + 16] = load_b(b, zb, kb + 16, jb + 16) if kb + 16 < k and jb + 16 < n else T(0)
                b_tile[ty + 16, tx + 32] = load_b(b, zb, kb + 16, jb + 32) if kb + 16 < k and jb + 32 < n else T(0)
                b_tile[ty + 16, tx + 48] = load_b(b, zb, kb + 16, jb + 48) if kb + 16 < k and jb + 48 < n else T(0)
            dc.barrier()
            # the 32 steps of the slice written out, no loop: the item's body is then straight-line
            # code, which the CPU backend vectorises across the work-items (a SIMD lane per column)
            # and a GPU keeps in registers. Each step adds one outer product: acc + x*y in K order.
            acc += dc.outer(V4(a_tile[ty, 0], a_tile[ty + 16, 0], a_tile[ty + 32, 0], a_tile[ty + 48, 0]),
                            V4(b_tile[0, tx], b_tile[0, tx + 16], b_tile[0, tx + 32], b_tile[0, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 1], a_tile[ty + 16, 1], a_tile[ty + 32, 1], a_tile[ty + 48, 1]),
                            V4(b_tile[1, tx], b_tile[1, tx + 16], b_tile[1, tx + 32], b_tile[1, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 2], a_tile[ty + 16, 2], a_tile[ty + 32, 2], a_tile[ty + 48, 2]),
                            V4(b_tile[2, tx], b_tile[2, tx + 16], b_tile[2, tx + 32], b_tile[2, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 3], a_tile[ty + 16, 3], a_tile[ty + 32, 3], a_tile[ty + 48, 3]),
                            V4(b_tile[3, tx], b_tile[3, tx + 16], b_tile[3, tx + 32], b_tile[3, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 4], a_tile[ty + 16, 4], a_tile[ty + 32, 4], a_tile[ty + 48, 4]),
                            V4(b_tile[4, tx], b_tile[4, tx + 16], b_tile[4, tx + 32], b_tile[4, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 5], a_tile[ty + 16, 5], a_tile[ty + 32, 5], a_tile[ty + 48, 5]),
                            V4(b_tile[5, tx], b_tile[5, tx + 16], b_tile[5, tx + 32], b_tile[5, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 6], a_tile[ty + 16, 6], a_tile[ty + 32, 6], a_tile[ty + 48, 6]),
                            V4(b_tile[6, tx], b_tile[6, tx + 16], b_tile[6, tx + 32], b_tile[6, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 7], a_tile[ty + 16, 7], a_tile[ty + 32, 7], a_tile[ty + 48, 7]),
                            V4(b_tile[7, tx], b_tile[7, tx + 16], b_tile[7, tx + 32], b_tile[7, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 8], a_tile[ty + 16, 8], a_tile[ty + 32, 8], a_tile[ty + 48, 8]),
                            V4(b_tile[8, tx], b_tile[8, tx + 16], b_tile[8, tx + 32], b_tile[8, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 9], a_tile[ty + 16, 9], a_tile[ty + 32, 9], a_tile[ty + 48, 9]),
                            V4(b_tile[9, tx], b_tile[9, tx + 16], b_tile[9, tx + 32], b_tile[9, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 10], a_tile[ty + 16, 10], a_tile[ty + 32, 10], a_tile[ty + 48, 10]),
                            V4(b_tile[10, tx], b_tile[10, tx + 16], b_tile[10, tx + 32], b_tile[10, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 11], a_tile[ty + 16, 11], a_tile[ty + 32, 11], a_tile[ty + 48, 11]),
                            V4(b_tile[11, tx], b_tile[11, tx + 16], b_tile[11, tx + 32], b_tile[11, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 12], a_tile[ty + 16, 12], a_tile[ty + 32, 12], a_tile[ty + 48, 12]),
                            V4(b_tile[12, tx], b_tile[12, tx + 16], b_tile[12, tx + 32], b_tile[12, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 13], a_tile[ty + 16, 13], a_tile[ty + 32, 13], a_tile[ty + 48, 13]),
                            V4(b_tile[13, tx], b_tile[13, tx + 16], b_tile[13, tx + 32], b_tile[13, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 14], a_tile[ty + 16, 14], a_tile[ty + 32, 14], a_tile[ty + 48, 14]),
                            V4(b_tile[14, tx], b_tile[14, tx + 16], b_tile[14, tx + 32], b_tile[14, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 15], a_tile[ty + 16, 15], a_tile[ty + 32, 15], a_tile[ty + 48, 15]),
                            V4(b_tile[15, tx], b_tile[15, tx + 16], b_tile[15, tx + 32], b_tile[15, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 16], a_tile[ty + 16, 16], a_tile[ty + 32, 16], a_tile[ty + 48, 16]),
                            V4(b_tile[16, tx], b_tile[16, tx + 16], b_tile[16, tx + 32], b_tile[16, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 17], a_tile[ty + 16, 17], a_tile[ty + 32, 17], a_tile[ty + 48, 17]),
                            V4(b_tile[17, tx], b_tile[17, tx + 16], b_tile[17, tx + 32], b_tile[17, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 18], a_tile[ty + 16, 18], a_tile[ty + 32, 18], a_tile[ty + 48, 18]),
                            V4(b_tile[18, tx], b_tile[18, tx + 16], b_tile[18, tx + 32], b_tile[18, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 19], a_tile[ty + 16, 19], a_tile[ty + 32, 19], a_tile[ty + 48, 19]),
                            V4(b_tile[19, tx], b_tile[19, tx + 16], b_tile[19, tx + 32], b_tile[19, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 20], a_tile[ty + 16, 20], a_tile[ty + 32, 20], a_tile[ty + 48, 20]),
                            V4(b_tile[20, tx], b_tile[20, tx + 16], b_tile[20, tx + 32], b_tile[20, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 21], a_tile[ty + 16, 21], a_tile[ty + 32, 21], a_tile[ty + 48, 21]),
                            V4(b_tile[21, tx], b_tile[21, tx + 16], b_tile[21, tx + 32], b_tile[21, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 22], a_tile[ty + 16, 22], a_tile[ty + 32, 22], a_tile[ty + 48, 22]),
                            V4(b_tile[22, tx], b_tile[22, tx + 16], b_tile[22, tx + 32], b_tile[22, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 23], a_tile[ty + 16, 23], a_tile[ty + 32, 23], a_tile[ty + 48, 23]),
                            V4(b_tile[23, tx], b_tile[23, tx + 16], b_tile[23, tx + 32], b_tile[23, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 24], a_tile[ty + 16, 24], a_tile[ty + 32, 24], a_tile[ty + 48, 24]),
                            V4(b_tile[24, tx], b_tile[24, tx + 16], b_tile[24, tx + 32], b_tile[24, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 25], a_tile[ty + 16, 25], a_tile[ty + 32, 25], a_tile[ty + 48, 25]),
                            V4(b_tile[25, tx], b_tile[25, tx + 16], b_tile[25, tx + 32], b_tile[25, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 26], a_tile[ty + 16, 26], a_tile[ty + 32, 26], a_tile[ty + 48, 26]),
                            V4(b_tile[26, tx], b_tile[26, tx + 16], b_tile[26, tx + 32], b_tile[26, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 27], a_tile[ty + 16, 27], a_tile[ty + 32, 27], a_tile[ty + 48, 27]),
                            V4(b_tile[27, tx], b_tile[27, tx + 16], b_tile[27, tx + 32], b_tile[27, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 28], a_tile[ty + 16, 28], a_tile[ty + 32, 28], a_tile[ty + 48, 28]),
                            V4(b_tile[28, tx], b_tile[28, tx + 16], b_tile[28, tx + 32], b_tile[28, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 29], a_tile[ty + 16, 29], a_tile[ty + 32, 29], a_tile[ty + 48, 29]),
                            V4(b_tile[29, tx], b_tile[29, tx + 16], b_tile[29, tx + 32], b_tile[29, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 30], a_tile[ty + 16, 30], a_tile[ty + 32, 30], a_tile[ty + 48, 30]),
                            V4(b_tile[30, tx], b_tile[30, tx + 16], b_tile[30, tx + 32], b_tile[30, tx + 48]))
            acc += dc.outer(V4(a_tile[ty, 31], a_tile[ty + 16, 31], a_tile[ty + 32, 31], a_tile[ty + 48, 31]),
                            V4(b_tile[31, tx], b_tile[31, tx + 16], b_tile[31, tx + 32], b_tile[31, tx + 48]))
            dc.barrier()
        put(c, z, m, n, i0 + ty, j0 + tx, acc[0, 0], acc[0, 1], acc[0, 2], acc[0, 3])
        put(c, z, m, n, i0 + ty + 16, j0 + tx, acc[1, 0], acc[1, 1], acc[1, 2], acc[1, 3])
        put(c, z, m, n, i0 + ty + 32, j0 + tx, acc[2, 0], acc[2, 1], acc[2, 2], acc[2, 3])
        put(c, z, m, n, i0 + ty + 48, j0 + tx, acc[3, 0], acc[3, 1], acc[3, 2], acc[3, 3])

    return matmul_tiled


@dc.func
def select(v, inside, zero):
    # v is loaded before the test, from a valid index: a select, not a branch around a load
    return v if inside else zero


# Element access for each number of dimensions an operand has in the kernel (chosen when the
# kernel is built: a kernel indexes a buffer with exactly its number of dimensions). A 1-D A is
# one row (m = 1), a 1-D B one column (n = 1), a 1-D C the flat batch of m×n results.
@dc.func
def _load_a1(a: dc.Buffer, z: dc.int64, i: dc.int64, kk: dc.int64):
    return a[kk]


@dc.func
def _load_a2(a: dc.Buffer, z: dc.int64, i: dc.int64, kk: dc.int64):
    return a[i, kk]


@dc.func
def _load_a3(a: dc.Buffer, z: dc.int64, i: dc.int64, kk: dc.int64):
    return a[z, i, kk]


@dc.func
def _load_b1(b: dc.Buffer, z: dc.int64, kk: dc.int64, j: dc.int64):
    return b[kk]


@dc.func
def _load_b2(b: dc.Buffer, z: dc.int64, kk: dc.int64, j: dc.int64):
    return b[kk, j]


@dc.func
def _load_b3(b: dc.Buffer, z: dc.int64, kk: dc.int64, j: dc.int64):
    return b[z, kk, j]


# one row of an item's 4×4 block of C: columns j, j+16, j+32, j+48, inside the matrix
@dc.func
def _store1(c: dc.Buffer, z: dc.int64, m: dc.int64, n: dc.int64, i: dc.int64, j: dc.int64, v0, v1, v2, v3):
    if i < m:
        base = (z * m + i) * n
        if j < n:
            c[base + j] = v0
        if j + 16 < n:
            c[base + j + 16] = v1
        if j + 32 < n:
            c[base + j + 32] = v2
        if j + 48 < n:
            c[base + j + 48] = v3


@dc.func
def _store2(c: dc.Buffer, z: dc.int64, m: dc.int64, n: dc.int64, i: dc.int64, j: dc.int64, v0, v1, v2, v3):
    if i < m:
        if j < n:
            c[i, j] = v0
        if j + 16 < n:
            c[i, j + 16] = v1
        if j + 32 < n:
            c[i, j + 32] = v2
        if j + 48 < n:
            c[i, j + 48] = v3


@dc.func
def _store3(c: dc.Buffer, z: dc.int64, m: dc.int64, n: dc.int64, i: dc.int64, j: dc.int64, v0, v1, v2, v3):
    if i < m:
        if j < n:
            c[z, i, j] = v0
        if j + 16 < n:
            c[z, i, j + 16] = v1
        if j + 32 < n:
            c[z, i, j + 32] = v2
        if j + 48 < n:
            c[z, i, j + 48] = v3


BLOCK = 8  # rows of C per item of the blocked kernel
BLOCK_COLS = 16  # columns of C per item (two 8×8 blocks in registers)
BLOCK_LOCAL = 8  # items per dimension of its work-group
BLOCK_PAD = 16  # extra words per row of the packed B: its row stride is then no multiple of 64 words


def packed_width(n: int) -> int:
    """Row stride of B as the blocked kernel reads it: n rounded up to a whole work-group's columns
    (BLOCK_COLS × BLOCK_LOCAL, so no item reads past a row and the inner loop needs no column test),
    plus BLOCK_PAD words. Without the pad, rows 4 KiB apart (n = 1024 float32) all map to the same
    L1 sets and the K loop's B lines evict each other (measured on PoCL at 1024²: 8.2 vs 13.1
    GFLOP/s with a 4×8 block)."""
    span = BLOCK_COLS * BLOCK_LOCAL
    return -(-max(n, 1) // span) * span + BLOCK_PAD


@cache
def pack_kernel(dtype: Any, nd_b: int = 2) -> Any:
    """``bp[z*k + kk, j] = b[z, kk, j]`` for j < n, zero beyond: B copied to the padded row stride
    of :func:`packed_width` (one item per element of the packed matrix; ``nd_b``: B's number of
    dimensions as the kernel gets it)."""
    T = dtype  # noqa: N806
    load_b = (_load_b1, _load_b2, _load_b3)[nd_b - 1]

    @dc.kernel
    def matmul_pack_b(b: dc.Buffer, bp: dc.Buffer, n: dc.int64, k: dc.int64):
        j = dc.global_id(0)
        kk = dc.global_id(1)
        z = dc.global_id(2)
        # min(): a valid index for the columns of the padding, whose value is then replaced by 0
        v = load_b(b, z, kk, min(j, n - 1))
        bp[z * k + kk, j] = v if j < n else T(0)

    return matmul_pack_b


@cache
def blocked_kernel(dtype: Any, nd: tuple[int, int, int] = (2, 2, 2)) -> Any:
    """C = A @ B on CPU-type OpenCL devices (PoCL): no work-group memory, no barrier. Each item
    computes an 8×16 block of C, rows ``i..i+7`` and columns ``j..j+15``, adding for every k the
    outer products of 8 values of A's column and 2 × 8 consecutive values of B's row, in registers
    (each A value loaded is used 16 times, each B value 8 times).
    Why this shape for PoCL: it runs a work-group as loops over the items on one thread; a barrier
    splits the kernel into separate item loops and keeps every item's accumulators in memory
    between them (the tiled kernel: 3-4 % of OpenBLAS), while a barrier-free body is one loop whose
    item's consecutive B loads become vector loads and its 128 products vector FMAs.
    B comes packed (:func:`pack_kernel`, row stride :func:`packed_width`, zeros past column n), so
    the K loop reads it with no test; rows past m are read clamped to the last row (one index per
    row of items, the same for the items of a vectorised loop) and not stored. Measured at 1024²
    float32 on this machine's PoCL (two runs, each side by side): 4×8 blocks 12.9, 8×8 blocks 20.8
    GFLOP/s; 8×8 14.8, 16×8 19.9, 8×16 26.2 (the tiled kernel 1.4). ``nd``: the number of
    dimensions of A, (unpacked) B and C, as for :func:`tiled_kernel`."""
    T = dtype  # noqa: N806
    V8 = dc.vector(8, T)  # noqa: N806
    M88 = dc.matrix(8, 8, T)  # noqa: N806
    load_a = (_load_a1, _load_a2, _load_a3)[nd[0] - 1]
    put = (_put1, _put2, _put3)[nd[2] - 1]

    @dc.kernel(contract=True)  # FMAs allowed, as for the tiled kernel
    def matmul_blocked(a: dc.Buffer, bp: dc.Buffer, c: dc.Buffer, m: dc.int64, n: dc.int64, k: dc.int64,
                       a_batch: dc.int64, b_batch: dc.int64):
        j = dc.global_id(0) * BLOCK_COLS
        i = dc.global_id(1) * BLOCK
        z = dc.global_id(2)
        za = z * a_batch  # a_batch, b_batch: 1, or 0 for an operand the batch shares (broadcast)
        kb = z * b_batch * k  # the first row of this batch's B in the packed matrix
        last = m - 1
        r1 = min(i + 1, last)
        r2 = min(i + 2, last)
        r3 = min(i + 3, last)
        r4 = min(i + 4, last)
        r5 = min(i + 5, last)
        r6 = min(i + 6, last)
        r7 = min(i + 7, last)
        r0 = min(i, last)
        acc = M88(T(0))  # columns j..j+7
        acc2 = M88(T(0))  # columns j+8..j+15
        for kk in range(k):
            av = V8(load_a(a, za, r0, kk), load_a(a, za, r1, kk), load_a(a, za, r2, kk), load_a(a, za, r3, kk),
                    load_a(a, za, r4, kk), load_a(a, za, r5, kk), load_a(a, za, r6, kk), load_a(a, za, r7, kk))
            row = kb + kk
            acc += dc.outer(av, V8(bp[row, j], bp[row, j + 1], bp[row, j + 2], bp[row, j + 3],
                                   bp[row, j + 4], bp[row, j + 5], bp[row, j + 6], bp[row, j + 7]))
            acc2 += dc.outer(av, V8(bp[row, j + 8], bp[row, j + 9], bp[row, j + 10], bp[row, j + 11],
                                    bp[row, j + 12], bp[row, j + 13], bp[row, j + 14], bp[row, j + 15]))
        for r in range(BLOCK):
            for cc in range(BLOCK):
                if i + r < m and j + cc < n:
                    put(c, z, m, n, i + r, j + cc, acc[r, cc])
                if i + r < m and j + BLOCK + cc < n:
                    put(c, z, m, n, i + r, j + BLOCK + cc, acc2[r, cc])

    return matmul_blocked


# one element of C, for each number of dimensions C has in the kernel (a 1-D C: the flat batch)
@dc.func
def _put1(c: dc.Buffer, z: dc.int64, m: dc.int64, n: dc.int64, i: dc.int64, j: dc.int64, v):
    c[(z * m + i) * n + j] = v


@dc.func
def _put2(c: dc.Buffer, z: dc.int64, m: dc.int64, n: dc.int64, i: dc.int64, j: dc.int64, v):
    c[i, j] = v


@dc.func
def _put3(c: dc.Buffer, z: dc.int64, m: dc.int64, n: dc.int64, i: dc.int64, j: dc.int64, v):
    c[z, i, j] = v


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


__all__ = ["BLOCK", "BLOCK_COLS", "BLOCK_LOCAL", "BLOCK_PAD", "LOCAL", "TILE", "TK", "blocked_kernel", "naive_kernel",
           "pack_kernel", "packed_width", "tiled_kernel"]
