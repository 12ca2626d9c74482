"""Portable stable sorting, written in the kernel language: LSD radix sort for integer keys, and
run sort + parallel merges for everything else. Float keys are radix-sorted through
``float_key``, an order-preserving integer key per float (with the original index as payload,
then a gather).

Radix sort (one row of integer keys, 8 bits per pass, 4 passes for 32-bit keys, 8 for 64-bit):
the keys are cut into blocks (of ``BLOCK`` keys on GPUs; ``BLOCKS_CPU`` of them on CPU devices);
``radix_count`` counts each block's digits into a digit-major table, an exclusive scan of the
table (ops/scan.py) gives each (digit, block) its first output slot, and ``radix_scatter`` walks
each block in order, writing every key (and its payload) to its digit's next slot. Walking in
order makes every pass stable, so LSD works.

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

import math
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


@dc.func
def digit(k, shift: dc.int64, top: dc.int32):
    # the radix digit of integer key k at `shift`; the top digit of a signed type has its sign bit
    # flipped so that negative keys come first (two's complement order → unsigned order)
    d = (dc.int64(k) >> shift) & (BUCKETS - 1)
    return d ^ (BUCKETS // 2) if top == 1 else d


@cache
def float_key_kernel(dtype: Any) -> Any:
    """An integer key per float with the same order as numpy's sort: IEEE sign-magnitude bits,
    negated (minus one) for negative numbers, -0.0 equal to 0.0, every NaN the largest key.

    The kernel language cannot reinterpret a float's bits yet, so the bits are rebuilt
    exactly by arithmetic: the exponent from log2 (then corrected by comparing with exact powers
    of two), the mantissa from the exact quotient by that power; subnormals scale by 2**-emin.
    float32 → int32 keys (4 radix passes), float64 → int64 (8 passes).
    """
    if dtype == np.float32:
        mant, bias, emin, kmax = 23, 127, -126, 2**31 - 1
    else:
        mant, bias, emin, kmax = 52, 1023, -1022, 2**63 - 1
    INF_BITS = (2 * bias + 1) << mant  # noqa: N806 -- all exponent bits set
    HALF_SUB = 2.0 ** ((mant - emin) // 2)  # noqa: N806 -- 2**(mant-emin) in two exact factors
    REST_SUB = 2.0 ** ((mant - emin) - (mant - emin) // 2)  # noqa: N806
    SCALE = 2.0**mant  # noqa: N806
    # float32 keys are rebuilt in float32 (every step is exact there: powers of two within its
    # range and a mantissa of 24 bits), so the kernel also runs where there is no float64 (Metal)
    FT = dc.float32 if dtype == np.float32 else dc.float64  # noqa: N806

    @dc.kernel
    def float_key(x: dc.Buffer, key: dc.Buffer):
        f = dc.global_id(0)
        if f < x.shape[0]:
            v = FT(x[f])
            k = dc.int64(0)
            if v != v:
                k = kmax
            else:
                a = abs(v)
                bits = dc.int64(0)
                if a == math.inf:
                    bits = INF_BITS
                elif a > 0.0:
                    e = dc.int64(math.floor(math.log2(a)))
                    while a >= dc.exp2(FT(e + 1)):
                        e += 1
                    while a < dc.exp2(FT(e)):
                        e -= 1
                    if e < emin:
                        bits = dc.int64(a * HALF_SUB * REST_SUB)
                    else:
                        bits = ((e + bias) << mant) | dc.int64((a / dc.exp2(FT(e)) - 1.0) * SCALE)
                k = -bits - 1 if v < 0.0 else bits
            key[f] = k

    return float_key


@cache
def radix_count_kernel() -> Any:
    @dc.kernel
    def radix_count(keys: dc.Buffer, counts: dc.Buffer[dc.int64], n: dc.int64, blocks: dc.int64,
                    shift: dc.int64, top: dc.int32, block: dc.int64):
        # counts[d * blocks + blk] = how many keys of block blk have digit d (digit-major, so an
        # exclusive scan of counts gives every (digit, block) its first output position)
        blk = dc.global_id(0)
        if blk < blocks:
            for d in range(BUCKETS):
                counts[d * blocks + blk] = 0
            for i in range(blk * block, min(blk * block + block, n)):
                counts[digit(keys[i], shift, top) * blocks + blk] += 1

    return radix_count


@cache
def radix_scatter_kernel() -> Any:
    @dc.kernel
    def radix_scatter(keys: dc.Buffer, vals: dc.Buffer, keys_out: dc.Buffer, vals_out: dc.Buffer,
                      offsets: dc.Buffer[dc.int64], n: dc.int64, blocks: dc.int64, shift: dc.int64, top: dc.int32,
                      has_vals: dc.int32, block: dc.int64):
        # each block walks its keys in order and puts each at its digit's next slot: stable
        blk = dc.global_id(0)
        if blk < blocks:
            for i in range(blk * block, min(blk * block + block, n)):
                k = keys[i]
                slot = digit(k, shift, top) * blocks + blk
                pos = offsets[slot]
                offsets[slot] = pos + 1
                keys_out[pos] = k
                if has_vals == 1:
                    vals_out[pos] = vals[i]

    return radix_scatter


__all__ = ["BLOCK", "BLOCKS_CPU", "BUCKETS", "MERGE_CHUNK", "MERGE_CHUNK_CPU", "RADIX_BITS", "RUN", "before",
           "before01", "digit", "float_key_kernel", "gather_kernel", "iota_kernel", "merge_path_kernel",
           "move_axis_kernel", "radix_count_kernel", "radix_scatter_kernel", "sort_runs_kernel"]
