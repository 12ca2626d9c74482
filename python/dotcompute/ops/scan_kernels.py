"""Portable scans (prefix sums with any associative operator), written in the kernel language.

Reduce-then-scan in three launches over the flat (outer, n, inner) layout of reduce_kernels.py:

1. ``reduce_tree`` (from reduce_kernels) folds each (row, chunk) to one partial;
2. ``scan_partials``: one work-item per row turns the partials into exclusive chunk prefixes
   (there are at most a few hundred per row, so a loop is the fastest way);
3. ``scan_tree``: each work-group rescans its chunk: every item folds its contiguous run, the
   group scans the run totals in work-group memory (Hillis–Steele, order kept), and each item
   rewrites its run starting from (chunk prefix ⊕ totals of the items before it).

No identity element is needed: a ``has`` flag says whether a carry exists yet, so any associative
``@dc.func`` works. ``scan_rows`` (one item per row, a loop) serves many short rows.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from . import klang as dc
from .reduce_kernels import WIDTH


@cache
def scan_partials_kernel(op: Any, acc_dtype: Any) -> Any:
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def scan_partials(partial: dc.Buffer, prefix: dc.Buffer, init: dc.Buffer, chunks: dc.int64,
                      has_init: dc.int32):
        row = dc.global_id(0)
        if row * chunks < partial.shape[0]:
            has = has_init
            carry = ACC(init[0])
            for c in range(chunks):
                prefix[row * chunks + c] = carry
                if has == 1:
                    carry = op(carry, partial[row * chunks + c])
                else:
                    carry = partial[row * chunks + c]
                    has = 1

    return scan_partials


@cache
def scan_tree_kernel(op: Any, acc_dtype: Any) -> Any:
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def scan_tree(x: dc.Buffer, out: dc.Buffer, prefix: dc.Buffer, n: dc.int64, inner: dc.int64,
                  chunk: dc.int64, chunks: dc.int64, has_init: dc.int32, exclusive: dc.int32):
        tile = dc.shared((WIDTH,), ACC)
        l = dc.local_id(0)  # noqa: E741
        g = dc.group_id(0)
        row = g // chunks
        c = g - row * chunks
        o = row // inner
        j = row - o * inner
        start = c * chunk
        stop = min(start + chunk, n)
        per = (stop - start + WIDTH - 1) // WIDTH
        valid = (stop - start + per - 1) // per
        lo = start + l * per
        hi = min(lo + per, stop)
        if lo < hi:
            total = ACC(x[(o * n + lo) * inner + j])
            for k in range(lo + 1, hi):
                total = op(total, ACC(x[(o * n + k) * inner + j]))
            tile[l] = total
        dc.barrier()
        # inclusive scan of the run totals: after the step for s, tile[l] covers items l-2s+1 .. l
        s = 1
        while s < WIDTH:
            t = ACC(0)  # only stored by the items that compute it: items past `valid` read nothing
            if l < valid and l >= s:
                t = op(tile[l - s], tile[l])
            dc.barrier()
            if l < valid and l >= s:
                tile[l] = t
            dc.barrier()
            s *= 2
        has = 0
        carry = ACC(prefix[g])
        if c > 0 or has_init == 1:
            has = 1
        if l > 0 and l - 1 < valid:
            if has == 1:
                carry = op(carry, tile[l - 1])
            else:
                carry = tile[l - 1]
                has = 1
        for k in range(lo, hi):
            f = (o * n + k) * inner + j
            v = ACC(x[f])
            if exclusive == 1:
                out[f] = carry
            if has == 1:
                carry = op(carry, v)
            else:
                carry = v
                has = 1
            if exclusive == 0:
                out[f] = carry

    return scan_tree


@cache
def scan_tile_kernel(op: Any, acc_dtype: Any) -> Any:
    """``scan_tree`` for GPUs: the group walks its chunk in tiles of WIDTH consecutive elements.

    Item l reads and writes element ``tile start + l``, so a warp's 32 accesses are one run of
    consecutive addresses (coalesced; scan_tree's per-item runs made every lane of a warp touch
    another sector: 25 % on the simulator's GPU model). Each tile is scanned in work-group memory
    (Hillis–Steele: item l reads words l - s and l, consecutive across a warp, so no bank
    conflicts), offset by the carry of the tiles before it. Same arguments as scan_tree. CPU
    devices keep scan_tree: there a barrier per few elements costs more than the long runs save.
    """
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def scan_tile(x: dc.Buffer, out: dc.Buffer, prefix: dc.Buffer, n: dc.int64, inner: dc.int64,
                  chunk: dc.int64, chunks: dc.int64, has_init: dc.int32, exclusive: dc.int32):
        tile = dc.shared((WIDTH,), ACC)
        l = dc.local_id(0)  # noqa: E741
        g = dc.group_id(0)
        row = g // chunks
        c = g - row * chunks
        o = row // inner
        j = row - o * inner
        start = c * chunk
        stop = min(start + chunk, n)
        has = 0
        if c > 0 or has_init == 1:
            has = 1
        carry = ACC(prefix[g])  # read only when has == 1
        for t0 in range(start, stop, WIDTH):
            valid = min(WIDTH, stop - t0)
            f = (o * n + t0 + l) * inner + j
            if l < valid:
                tile[l] = ACC(x[f])
            dc.barrier()
            s = 1
            while s < valid:  # valid is the same for every item of the group: a uniform loop
                v = ACC(0)
                if l < valid and l >= s:
                    v = op(tile[l - s], tile[l])
                dc.barrier()
                if l < valid and l >= s:
                    tile[l] = v
                dc.barrier()
                s *= 2
            if l < valid:
                if exclusive == 1:
                    w = carry  # item 0 of the first tile without an initial value: never read
                    if l > 0:
                        w = tile[l - 1]
                        if has == 1:
                            w = op(carry, w)
                    out[f] = w
                else:
                    w = tile[l]
                    if has == 1:
                        w = op(carry, w)
                    out[f] = w
            last = tile[valid - 1]
            if has == 1:
                carry = op(carry, last)
            else:
                carry = last
                has = 1
            dc.barrier()  # every item has read the tile before the next one overwrites it

    return scan_tile


@cache
def scan_rows_kernel(op: Any, acc_dtype: Any) -> Any:
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def scan_rows(x: dc.Buffer, out: dc.Buffer, init: dc.Buffer, rows: dc.int64, n: dc.int64, inner: dc.int64,
                  has_init: dc.int32, exclusive: dc.int32):
        r = dc.global_id(0)
        if r < rows:
            o = r // inner
            j = r - o * inner
            has = has_init
            carry = ACC(init[0])
            for k in range(n):
                f = (o * n + k) * inner + j
                v = ACC(x[f])
                if exclusive == 1:
                    out[f] = carry
                if has == 1:
                    carry = op(carry, v)
                else:
                    carry = v
                    has = 1
                if exclusive == 0:
                    out[f] = carry

    return scan_rows


@cache
def run_totals_kernel(op: Any, acc_dtype: Any) -> Any:
    """Contiguous rows (inner 1) on OpenCL CPU devices: item g folds run c = g % runs of row
    g // runs, elements [c * run, min((c + 1) * run, n)), in order, into ``partial[g]``. A plain loop
    over consecutive elements, which the driver's compiler vectorises (integer sums) where the
    work-group tree's passes and barriers did not (PoCL)."""
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def run_totals(x: dc.Buffer, partial: dc.Buffer, n: dc.int64, run: dc.int64, runs: dc.int64):
        g = dc.global_id(0)
        if g < partial.shape[0]:
            row = g // runs
            lo = row * n + (g - row * runs) * run
            hi = min(lo + run, row * n + n)
            total = ACC(x[lo])
            for k in range(lo + 1, hi):
                total = op(total, ACC(x[k]))
            partial[g] = total

    return run_totals


@cache
def scan_runs_kernel(op: Any, acc_dtype: Any) -> Any:
    """run_totals' runs rescanned: item g walks its run from its prefix (``prefix[g]``, from
    scan_partials), writing the inclusive (or exclusive) scan; one dependency chain per item."""
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def scan_runs(x: dc.Buffer, out: dc.Buffer, prefix: dc.Buffer, n: dc.int64, run: dc.int64, runs: dc.int64,
                  has_init: dc.int32, exclusive: dc.int32):
        g = dc.global_id(0)
        if g < prefix.shape[0]:
            row = g // runs
            c = g - row * runs
            lo = row * n + c * run
            hi = min(lo + run, row * n + n)
            carry = ACC(prefix[g])
            start = lo
            if c == 0 and has_init == 0:  # the row's first element starts the carry
                if exclusive == 1:
                    out[lo] = carry
                carry = ACC(x[lo])
                if exclusive == 0:
                    out[lo] = carry
                start = lo + 1
            if exclusive == 1:
                for f in range(start, hi):
                    out[f] = carry
                    carry = op(carry, ACC(x[f]))
            else:
                for f in range(start, hi):
                    carry = op(carry, ACC(x[f]))
                    out[f] = carry

    return scan_runs


@dc.kernel
def count_nonzero_runs(x: dc.Buffer, counts: dc.Buffer[dc.int64], run: dc.int64):
    # item g: how many elements of run g (x[g*run : (g+1)*run]) are not zero (NaN is not zero)
    g = dc.global_id(0)
    if g < counts.shape[0]:
        lo = g * run
        hi = min(lo + run, x.shape[0])
        c = dc.int64(0)
        for k in range(lo, hi):
            if x[k] != 0:
                c += 1
        counts[g] = c


@dc.kernel
def write_nonzero_runs(x: dc.Buffer, starts: dc.Buffer[dc.int64], counts: dc.Buffer[dc.int64],
                       out: dc.Buffer[dc.int64], run: dc.int64):
    # item g writes the positions of run g's non-zero elements, in order, into out[starts[g] :
    # starts[g] + counts[g]]. Without a branch per element (one taken at random is a misprediction
    # every other element: 9.5 ms for 1M on PoCL): every element stores, its position where it is
    # not zero, else the last position written (rewritten later, or the final slot's own value
    # again); the slot is clamped to the run's last one, so no store leaves the run's range
    g = dc.global_id(0)
    if g < starts.shape[0]:
        lo = g * run
        hi = min(lo + run, x.shape[0])
        at = starts[g]
        last_slot = at + counts[g] - 1
        if last_slot >= at:
            last = dc.int64(lo)
            for k in range(lo, hi):
                nz = x[k] != 0
                v = k if nz else last
                out[min(at, last_slot)] = v
                last = v
                at += dc.int64(1) if nz else dc.int64(0)


__all__ = ["count_nonzero_runs", "run_totals_kernel", "scan_partials_kernel", "scan_rows_kernel", "scan_runs_kernel",
           "scan_tile_kernel", "scan_tree_kernel", "write_nonzero_runs"]
