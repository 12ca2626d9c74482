"""Portable stable sorting, written in the kernel language: radix sort for integer keys, and
run sort + parallel merges for everything else. Float keys are radix-sorted through
``float_key``, an order-preserving unsigned key per float made from its bits with ``dc.bitcast``
(a few integer operations); sorted keys alone turn back into the floats (``key_float``).

Radix sort (one row of integer keys, 8-bit digits): the keys are cut into blocks (of ``BLOCK`` keys
on GPUs; ``BLOCKS_CPU`` of them on CPU devices); ``radix_count`` counts each block's digits into a
table, offsets come from it (an exclusive scan, ops/scan.py, of the digit-major table on GPUs;
``radix_offsets`` over the block-major table on CPU devices), and ``radix_scatter`` walks each
block in order, writing every key (and its payload) to its digit's next slot. Walking in order
makes every pass stable. GPUs run LSD passes over all digits (4 for 32-bit keys, 8 for 64-bit);
CPU devices run one MSD pass on the top digit, then ``radix_local`` sorts every bucket of equal top
digits by LSD passes in cache, one work-item per bucket.

Merge sort:

Rows of ``n`` keys lie one after another in flat buffers, each key with a payload value (the
original index for argsort). Two kernels:

* ``sort_runs``: each work-item sorts one run of ``RUN`` consecutive keys of a row by insertion
  sort (stable: an element moves left only past strictly greater keys).
* ``merge_path``: merges neighbouring sorted runs of width ``w`` into runs of ``2w``; each
  work-item produces a slice of ``MERGE_CHUNK`` outputs (more on CPU devices): a binary search along the merge-path
  diagonal finds how many of its first outputs come from each run, then it merges sequentially.
  Ties take the left run first, so equal keys keep their order (stability).
  ``ceil(log2(n / RUN))`` passes ping-pong between two buffer pairs.

The order is numpy's: NaN after every number. ``before(a, b)`` is that strict order.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from . import klang as dc

RUN = 16


@dc.func
def before(a, b):
    # a sorts strictly before b; NaN (x != x) after every number, as numpy
    return a < b or (b != b and a == a)


@dc.func
def before01(a, b):
    # before(a, b) as 0 or 1 without a short circuit, so that it compiles to flag arithmetic
    # rather than a branch (taken at random on random keys)
    return dc.int64(a < b) | (dc.int64(b != b) & dc.int64(a == a))


@cache
def sort_runs_kernel(key_dtype: Any, val_dtype: Any) -> Any:
    K = key_dtype  # noqa: N806
    V = val_dtype  # noqa: N806

    @dc.kernel
    def sort_runs(keys: dc.Buffer, vals: dc.Buffer, n: dc.int64, runs_per_row: dc.int64, has_vals: dc.int32):
        r = dc.global_id(0)
        row = r // runs_per_row
        start = row * n + (r - row * runs_per_row) * RUN
        stop = min(start + RUN, row * n + n)
        if r < runs_per_row * (keys.shape[0] // max(n, 1)):
            for i in range(start + 1, stop):
                k = K(keys[i])
                v = V(vals[i * has_vals])  # without payload, vals is one dummy element
                j = i - 1
                while j >= start and before(k, keys[j]):
                    keys[j + 1] = keys[j]
                    if has_vals == 1:
                        vals[j + 1] = vals[j]
                    j -= 1
                keys[j + 1] = k
                if has_vals == 1:
                    vals[j + 1] = v

    return sort_runs


MERGE_CHUNK = 32  # output elements per work-item in merge_path on GPUs (many items in flight)
#: ... and on CPU-type devices, whose few threads each run items one after another: each item's
#: binary search costs up to log2(w) cache misses, which 32 outputs did not amortise (4M float32
#: keys: the 18 merge passes took 2.8 s with 32, most of it in the searches)
MERGE_CHUNK_CPU = 4096


@cache
def merge_path_kernel(key_dtype: Any, val_dtype: Any) -> Any:
    """Merges neighbouring sorted runs of width ``w`` into runs of ``2w``; each item writes
    ``chunk`` consecutive outputs (``MERGE_CHUNK`` or ``MERGE_CHUNK_CPU``): one binary search on the
    "merge path" diagonal finds where its slice starts in the two runs, then a sequential merge
    (cache friendly, O(1) per element) produces the slice. Ties take the left run first, so the sort is stable."""

    @dc.kernel
    def merge_path(keys: dc.Buffer, vals: dc.Buffer, keys_out: dc.Buffer, vals_out: dc.Buffer, n: dc.int64,
                   w: dc.int64, blocks: dc.int64, per_block: dc.int64, has_vals: dc.int32, chunk: dc.int64):
        g = dc.global_id(0)
        rows = keys.shape[0] // n
        if g < rows * blocks * per_block:
            row = g // (blocks * per_block)
            rest = g - row * blocks * per_block
            blk = rest // per_block
            t = rest - blk * per_block
            base = row * n
            a0 = base + blk * 2 * w
            b0 = min(a0 + w, base + n)  # the right run starts where the left one ends
            la = b0 - a0
            lb = min(a0 + 2 * w, base + n) - b0
            d0 = t * chunk
            if d0 < la + lb:
                d1 = min(d0 + chunk, la + lb)
                # the split of the first d0 outputs: i from the left run, d0 - i from the right
                lo = max(0, d0 - lb)
                hi = min(d0, la)
                while lo < hi:
                    m = (lo + hi) // 2
                    if not before(keys[b0 + d0 - 1 - m], keys[a0 + m]):
                        lo = m + 1  # left[m] is output before right[d0-1-m]: more of the left run
                    else:
                        hi = m
                i = lo
                j = d0 - lo
                for d in range(d0, d1):
                    # branch-free: both heads are read (clamped into their runs, so an exhausted
                    # run re-reads its last key) and the source index is a select. A branch here is
                    # taken at random on random keys: mispredicted half the time on a CPU, and
                    # divergent within a GPU warp. The left run wins ties: stable.
                    ia = a0 + min(i, la - 1)
                    ib = b0 + min(j, lb - 1)
                    right = dc.int64(j < lb) & (dc.int64(i >= la) | before01(keys[ib], keys[ia]))
                    src = ia + right * (ib - ia)  # the select on the index: one load, no branch
                    keys_out[a0 + d] = keys[src]
                    if has_vals == 1:
                        vals_out[a0 + d] = vals[src]
                    i += 1 - right
                    j += right

    return merge_path


@cache
def iota_kernel() -> Any:
    @dc.kernel
    def iota(out: dc.Buffer[dc.int64], n: dc.int64):
        f = dc.global_id(0)
        if f < out.shape[0]:
            out[f] = f % n

    return iota


@cache
def move_axis_kernel() -> Any:
    @dc.kernel
    def move_axis(x: dc.Buffer, out: dc.Buffer, n: dc.int64, inner: dc.int64, to_last: dc.int32):
        # (outer, n, inner) <-> (outer, inner, n): the sorted axis last, and back
        f = dc.global_id(0)
        if f < x.shape[0]:
            o = f // (n * inner)
            rest = f - o * n * inner
            k = rest // inner
            j = rest - k * inner
            if to_last == 1:
                out[(o * inner + j) * n + k] = x[f]
            else:
                out[f] = x[(o * inner + j) * n + k]

    return move_axis


@cache
def gather_kernel() -> Any:
    @dc.kernel
    def gather(x: dc.Buffer, idx: dc.Buffer[dc.int64], out: dc.Buffer):
        f = dc.global_id(0)
        if f < out.shape[0]:
            out[f] = x[idx[f]]

    return gather


# ---------------------------------------------------------------------------------------- radix sort
RADIX_BITS = 8
BUCKETS = 1 << RADIX_BITS
BLOCK = 1024  # keys per work-item in the radix passes on GPUs (many items in flight)
#: ... on CPU-type devices: at most this many blocks (a few per thread), so that the digit-major
#: count table (256 x blocks) stays small and in cache; with 1024-key blocks 4M keys made a table
#: of 1M entries, scanned every pass, and a block's 256 offsets lay 32 KiB apart
BLOCKS_CPU = 64
#: the MSD digit of CPU devices' radix sort: 11 bits, so that float keys (whose top 8 bits are the
#: sign and 7 exponent bits: a dozen buckets for typical data) still split into buckets small enough
#: for the cache; 2048 buckets of uniform 32-bit keys are 2K keys each
TOP_BITS_CPU = 11
#: the digits of the in-cache passes below it (radix_local): 11 bits, two passes under the top digit
#: of 32-bit keys (4M normal float32 at load ~3.5, one run: 63 ms against 88 with three 8-bit passes)
LOCAL_BITS_CPU = 11
#: work-items of radix_local on CPU devices (each with its own counter table, taking every
#: LOCAL_ITEMS_CPU-th bucket): a few per thread, so skewed buckets still balance
LOCAL_ITEMS_CPU = 64


@dc.func
def digit(k, shift: dc.int64, top: dc.int32, buckets: dc.int64):
    # the radix digit (0 .. buckets-1, buckets a power of two) of integer key k at `shift`; the top
    # digit of a signed type has its sign bit flipped so that negative keys come first (two's
    # complement order → unsigned order)
    d = (dc.int64(k) >> shift) & (buckets - 1)
    return d ^ (buckets // 2) if top == 1 else d


def _float_bits(dtype: Any) -> tuple[Any, int, int]:
    """(unsigned type of dtype's size, its sign bit, its all-ones value)."""
    if np.dtype(dtype) == np.float32:
        return dc.uint32, 1 << 31, 2**32 - 1
    return dc.uint64, 1 << 63, 2**64 - 1


@cache
def float_key_kernel(dtype: Any, exact: bool = False) -> Any:
    """An unsigned key per float (float32 → uint32, float64 → uint64) whose unsigned order is
    numpy's sort order: the IEEE bits (``dc.bitcast``) with every bit flipped for negative numbers
    and only the sign bit flipped for the others (sign-magnitude → unsigned order), NaN last.

    ``exact`` (sorting the floats themselves, which are rebuilt from the keys by
    ``key_float_kernel``): the keys are a bijection except that a NaN's sign bit is cleared (a
    negative NaN would otherwise sort first); -0.0 sorts just before 0.0, which numpy counts equal,
    so any order of the two is sorted. Otherwise (argsort, sort_by_key: equal keys keep their
    order, so they must be equal): every NaN is the largest key and -0.0 is 0.0's key.
    Branch-free (masks, not ifs), so the CPU backend vectorises it: a few integer operations per float.
    """
    U, SIGN, ONES = _float_bits(dtype)  # noqa: N806
    MAG = SIGN - 1  # noqa: N806 -- every bit but the sign
    INF = 0x7F800000 if U is dc.uint32 else 0x7FF0000000000000  # noqa: N806
    EXACT = int(exact)  # noqa: N806
    SHIFT = 31 if U is dc.uint32 else 63  # noqa: N806

    @dc.kernel
    def float_key(x: dc.Buffer, key: dc.Buffer):
        f = dc.global_id(0)
        if f < x.shape[0]:
            b = dc.bitcast(x[f], U)
            mag = b & MAG
            nan = U(mag > INF)
            if EXACT == 1:
                b = b & (MAG | (nan - 1))  # a NaN loses its sign bit
            else:
                b = b & (U(mag != 0) * ONES)  # -0.0 → 0.0
            flip = (U(0) - (b >> SHIFT)) | SIGN  # negative: all bits; otherwise the sign bit
            k = b ^ flip
            if EXACT == 0:
                k = k | (U(0) - nan)  # every NaN the largest key
            key[f] = k

    return float_key


@cache
def key_float_kernel(dtype: Any) -> Any:
    """The inverse of ``float_key_kernel(dtype, exact=True)``: the float each key was made from."""
    U, SIGN, _ = _float_bits(dtype)  # noqa: N806
    SHIFT = 31 if U is dc.uint32 else 63  # noqa: N806
    F = dc.float32 if U is dc.uint32 else dc.float64  # noqa: N806

    @dc.kernel
    def key_float(key: dc.Buffer, x: dc.Buffer):
        f = dc.global_id(0)
        if f < x.shape[0]:
            k = U(key[f])
            flip = ((k >> SHIFT) - 1) | SIGN  # the key's top bit set: a non-negative float
            x[f] = dc.bitcast(k ^ flip, F)

    return key_float


@cache
def radix_count_kernel() -> Any:
    @dc.kernel
    def radix_count(keys: dc.Buffer, counts: dc.Buffer[dc.int64], n: dc.int64, blocks: dc.int64,
                    shift: dc.int64, top: dc.int32, block: dc.int64, dstride: dc.int64, bstride: dc.int64,
                    buckets: dc.int64):
        # counts[d * dstride + blk * bstride] = how many keys of block blk have digit d. Digit-major
        # (dstride = blocks, bstride = 1) on GPUs, so that an exclusive scan of the table gives every
        # (digit, block) its first output position; block-major (256, ... ) on CPU devices, where a
        # block's 256 counters then share 32 cache lines instead of taking 256 (radix_offsets scans it)
        blk = dc.global_id(0)
        if blk < blocks:
            base = blk * bstride
            for d in range(buckets):
                counts[d * dstride + base] = 0
            for i in range(blk * block, min(blk * block + block, n)):
                counts[digit(keys[i], shift, top, buckets) * dstride + base] += 1

    return radix_count


@cache
def radix_offsets_kernel() -> Any:
    """Every (block, digit)'s first output position, in place over the block-major count table of
    CPU devices (counts[blk * 256 + d]): the keys of smaller digits, then those of the same digit in
    earlier blocks; and each digit's first position in ``starts`` (256 + 1 entries, the last n),
    where radix_local finds its bucket. One work-item: the table is small (256 x at most
    ``BLOCKS_CPU``), and two passes over it cost less than the general scan's three launches."""

    @dc.kernel
    def radix_offsets(counts: dc.Buffer[dc.int64], starts: dc.Buffer[dc.int64], blocks: dc.int64, buckets: dc.int64):
        if dc.global_id(0) == 0:
            run = dc.int64(0)
            for d in range(buckets):
                starts[d] = run
                for b in range(blocks):
                    c = counts[b * buckets + d]
                    counts[b * buckets + d] = run
                    run += c
            starts[buckets] = run

    return radix_offsets


@dc.func
def local_pass(src: dc.Buffer, src_vals: dc.Buffer, dst: dc.Buffer, dst_vals: dc.Buffer, cnt: dc.Buffer[dc.int64],
               base: dc.int64, lo: dc.int64, hi: dc.int64, shift: dc.int64, has_vals: dc.int32, lbuckets: dc.int64):
    # one stable counting-sort pass of src[lo:hi] by the digit at `shift` into dst[lo:hi]
    for d in range(lbuckets):
        cnt[base + d] = 0
    for i in range(lo, hi):
        cnt[base + digit(src[i], shift, 0, lbuckets)] += 1
    run = lo
    for d in range(lbuckets):
        c = cnt[base + d]
        cnt[base + d] = run
        run += c
    for i in range(lo, hi):
        k = src[i]
        slot = base + digit(k, shift, 0, lbuckets)
        pos = cnt[slot]
        cnt[slot] = pos + 1
        dst[pos] = k
        if has_vals == 1:
            dst_vals[pos] = src_vals[i]


@cache
def radix_local_kernel() -> Any:
    """After one MSD pass on the top digit (radix_count, radix_offsets, radix_scatter at ``top_shift``),
    every bucket of equal top digits is sorted on its own by LSD passes of ``lbits`` bits over the
    ``top_shift`` bits below it. A bucket of 4M uniform keys is a few thousand keys, so these passes
    run in the core's cache instead of scattering across all of memory: on CPU devices one global
    scatter instead of four. The passes alternate from ``keys`` into ``keys_out`` and back: an odd
    number of them ends in ``keys_out``, an even number in ``keys``. The last pass may re-sort a few
    of the top digit's bits, which are equal within a bucket (a stable no-op).

    Work-item w sorts buckets w, w + items, w + 2*items, ... with its own ``2**lbits`` counters,
    ``items`` = cnt's length over that (the caller's choice: a few per thread), so the counters are a
    small table reused bucket after bucket, warm in cache, instead of one table per bucket (32 MiB for
    2,048 buckets of 11-bit counters, new pages on every sort): radix_local of 4M keys in one run on
    PoCL, medians of 5, 64 items against one per bucket: int32 42.7 vs 46.9 ms, normal float32 69.5
    vs 75.3. (Counting every pass's digits in one read of the bucket measured slower: the per-key
    loop over the passes cost more than the read it saved.)"""

    @dc.kernel
    def radix_local(keys: dc.Buffer, vals: dc.Buffer, keys_out: dc.Buffer, vals_out: dc.Buffer,
                    starts: dc.Buffer[dc.int64], cnt: dc.Buffer[dc.int64], top_shift: dc.int64, has_vals: dc.int32,
                    buckets: dc.int64, lbits: dc.int64):
        w = dc.global_id(0)
        lbuckets = dc.int64(1) << lbits
        passes = (top_shift + lbits - 1) // lbits
        items = cnt.shape[0] // lbuckets
        if w < items:
            base = w * lbuckets
            for b in range(w, buckets, items):
                lo = starts[b]
                hi = starts[b + 1]
                if hi - lo > 1:
                    for p in range(passes):
                        if p % 2 == 0:
                            local_pass(keys, vals, keys_out, vals_out, cnt, base, lo, hi, p * lbits, has_vals,
                                       lbuckets)
                        else:
                            local_pass(keys_out, vals_out, keys, vals, cnt, base, lo, hi, p * lbits, has_vals,
                                       lbuckets)
                elif hi - lo == 1:  # one key: where an odd number of passes would have put it
                    keys_out[lo] = keys[lo]
                    if has_vals == 1:
                        vals_out[lo] = vals[lo]

    return radix_local


@cache
def radix_scatter_kernel() -> Any:
    @dc.kernel
    def radix_scatter(keys: dc.Buffer, vals: dc.Buffer, keys_out: dc.Buffer, vals_out: dc.Buffer,
                      offsets: dc.Buffer[dc.int64], n: dc.int64, blocks: dc.int64, shift: dc.int64, top: dc.int32,
                      has_vals: dc.int32, block: dc.int64, dstride: dc.int64, bstride: dc.int64, buckets: dc.int64):
        # each block walks its keys in order and puts each at its digit's next slot: stable
        blk = dc.global_id(0)
        if blk < blocks:
            base = blk * bstride
            for i in range(blk * block, min(blk * block + block, n)):
                k = keys[i]
                slot = digit(k, shift, top, buckets) * dstride + base
                pos = offsets[slot]
                offsets[slot] = pos + 1
                keys_out[pos] = k
                if has_vals == 1:
                    vals_out[pos] = vals[i]

    return radix_scatter


__all__ = ["BLOCK", "BLOCKS_CPU", "BUCKETS", "MERGE_CHUNK", "MERGE_CHUNK_CPU", "RADIX_BITS", "RUN", "before",
           "before01", "digit", "float_key_kernel", "gather_kernel", "iota_kernel", "key_float_kernel", "local_pass",
           "merge_path_kernel", "move_axis_kernel", "radix_count_kernel", "radix_local_kernel",
           "radix_offsets_kernel", "radix_scatter_kernel", "sort_runs_kernel"]
