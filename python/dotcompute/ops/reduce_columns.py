"""Reductions down columns (``x.sum(axis=0)``) on CPU-type devices, eight columns per work-item.

An OpenCL CPU driver (PoCL) vectorises a kernel across the work-items of dimension 0 only where
the work-item loop is the innermost loop; a work-item that walks its column in a loop of its own
(reduce_kernels.column_chunks_kernel) leaves that loop innermost, so every load is scalar there
(1024² float32 ``sum(axis=0)``: ~4x cpu:0). Here each item folds a chunk of rows for BLOCK
neighbouring columns at once: the loop body reads BLOCK consecutive elements into BLOCK
independent accumulators, straight-line code that the compiler packs into one vector load and
one vector operation per row. Each column is still folded in row order, chunk by chunk, so the
values are the same bits as the one-column kernel's.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from . import klang as dc

#: columns per work-item: one 256-bit vector of float32 (what PoCL and the CPU backend prefer)
BLOCK = 8


@cache
def column_blocks_kernel(op: Any, acc_dtype: Any) -> Any:
    """One work-item per (outer, chunk of ``chunk`` rows, block of BLOCK columns); ``out`` viewed as
    (outer, chunks, inner) gets each chunk's fold per column. Where ``inner`` is not a multiple of
    BLOCK, each row's last item folds its remaining columns one after the other."""
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def reduce_column_blocks(x: dc.Buffer, out: dc.Buffer, n: dc.int64, inner: dc.int64, chunk: dc.int64):
        r = dc.global_id(0)
        blocks = (inner + 7) // 8
        chunks = (n + chunk - 1) // chunk
        if r < (out.shape[0] // inner) * blocks:
            q = r // blocks  # (outer, chunk) pair
            j = (r - q * blocks) * 8
            o = q // chunks
            lo = (q - o * chunks) * chunk
            hi = lo + chunk
            if hi > n:
                hi = n
            b = (o * n + lo) * inner + j
            w = q * inner + j
            if j + 8 <= inner:
                a0 = ACC(x[b])
                a1 = ACC(x[b + 1])
                a2 = ACC(x[b + 2])
                a3 = ACC(x[b + 3])
                a4 = ACC(x[b + 4])
                a5 = ACC(x[b + 5])
                a6 = ACC(x[b + 6])
                a7 = ACC(x[b + 7])
                for _ in range(lo + 1, hi):
                    b += inner
                    a0 = op(a0, ACC(x[b]))
                    a1 = op(a1, ACC(x[b + 1]))
                    a2 = op(a2, ACC(x[b + 2]))
                    a3 = op(a3, ACC(x[b + 3]))
                    a4 = op(a4, ACC(x[b + 4]))
                    a5 = op(a5, ACC(x[b + 5]))
                    a6 = op(a6, ACC(x[b + 6]))
                    a7 = op(a7, ACC(x[b + 7]))
                out[w] = a0
                out[w + 1] = a1
                out[w + 2] = a2
                out[w + 3] = a3
                out[w + 4] = a4
                out[w + 5] = a5
                out[w + 6] = a6
                out[w + 7] = a7
            else:  # the row's last, partial block: its columns one at a time
                for c in range(inner - j):
                    a = ACC(x[b + c])
                    for k in range(1, hi - lo):
                        a = op(a, ACC(x[b + c + k * inner]))
                    out[w + c] = a

    return reduce_column_blocks


def fold_column_blocks(op: Any, x: Any, outer: int, n: int, inner: int, acc_t: Any, chunk: int) -> Any:
    """``x`` as (outer, n, inner) folded in chunks of ``chunk`` rows → (outer, ceil(n / chunk), inner)
    partials (the result itself when ``chunk >= n``), flat, ``acc_t``."""
    acc = x.accelerator
    chunks = -(-n // chunk)
    out = acc.empty((outer * chunks * inner,), acc_t)
    acc.launch(column_blocks_kernel(op, acc_t), outer * chunks * -(-inner // BLOCK), x, out, n, inner, chunk)
    return out


__all__ = ["BLOCK", "column_blocks_kernel", "fold_column_blocks"]
