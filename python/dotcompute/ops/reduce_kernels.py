"""Portable reductions, written in the kernel language.

Layout: the input is flat, viewed as (outer, n, inner) around the reduced axis; output row
``r = o * inner + j`` reduces ``x[(o * n + k) * inner + j]`` over k.

* ``tree`` kernels: one work-group per (row, chunk of the row). Each work-item folds a contiguous
  run of the chunk in a register, then the group combines the items' values in work-group memory
  with an order-preserving tree (neighbours at distance 1, 2, 4, ...), so the operator need only be
  associative, not commutative. Items that got no element are left out of the tree, so no identity
  value is needed. A second launch of the same kernel reduces the per-chunk partials.
* ``rows`` kernel: one work-item per output row, a plain loop; used when rows are many and short.

The kernels are made per (operator, accumulator dtype) by closures: the kernel language folds the
captured ``@dc.func`` and dtype in, and compiles one specialisation per combination.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from . import klang as dc

WIDTH = 256  # work-group size of the tree kernels


@dc.func
def op_add(a, b):
    return a + b


@dc.func
def op_mul(a, b):
    return a * b


@dc.func
def op_min(a, b):
    # NaN wins, as in numpy.min: once the accumulator a is NaN no b is smaller, so it stays
    return b if (b < a or dc.isnan(b)) else a


@dc.func
def op_max(a, b):
    return b if (b > a or dc.isnan(b)) else a


@dc.func
def op_min_int(a, b):
    return b if b < a else a  # integers have no NaN: a plain select, which vectorises


@dc.func
def op_max_int(a, b):
    return b if b > a else a


ORDERED, STRIDED, UNROLLED = 0, 1, 2  # how the items of tree_kernel read their elements


@cache
def tree_kernel(op: Any, acc_dtype: Any, mode: int = ORDERED) -> Any:
    """``x`` (any dtype) → ``partial[row * chunks + c]`` (``acc_dtype``), combined with ``op``.

    ``mode``: ORDERED: each item folds a contiguous run in order (any associative op).
    The two others reorder, for commutative ops only: STRIDED: item l takes start + l,
    start + l + WIDTH, ... so neighbouring items read neighbouring elements (coalesced loads on
    GPUs); UNROLLED: a contiguous run folded into four independent accumulators, which a CPU
    overlaps (and its compiler turns into SIMD) instead of waiting on one dependency chain.
    """
    ACC = acc_dtype  # noqa: N806 -- a dtype, folded into the kernel
    MODE = mode  # noqa: N806 -- a constant: the untaken branches are folded away

    @dc.kernel
    def reduce_tree(x: dc.Buffer, partial: dc.Buffer, n: dc.int64, inner: dc.int64, chunk: dc.int64,
                    chunks: dc.int64):
        tile = dc.shared((WIDTH,), ACC)
        l = dc.local_id(0)  # noqa: E741
        g = dc.group_id(0)
        row = g // chunks
        c = g - row * chunks
        o = row // inner
        j = row - o * inner
        start = c * chunk
        stop = min(start + chunk, n)
        if MODE == STRIDED:
            valid = min(WIDTH, stop - start)
            if l < valid:
                acc = ACC(x[(o * n + start + l) * inner + j])
                for k in range(start + l + WIDTH, stop, WIDTH):
                    acc = op(acc, ACC(x[(o * n + k) * inner + j]))
                tile[l] = acc
        else:
            per = (stop - start + WIDTH - 1) // WIDTH  # each item folds `per` consecutive elements
            valid = (stop - start + per - 1) // per  # the items that got at least one
            lo = start + l * per
            hi = min(lo + per, stop)
            if lo < hi:
                acc = ACC(x[(o * n + lo) * inner + j])
                k0 = lo + 1
                if MODE == UNROLLED and hi - lo >= 8 and inner == 1:
                    # the reduced axis is contiguous here: plain consecutive loads the compiler
                    # can pack into one vector of four accumulators
                    b = o * n + lo  # this item's run: x[b], x[b + 1], ...
                    a1 = ACC(x[b + 1])
                    a2 = ACC(x[b + 2])
                    a3 = ACC(x[b + 3])
                    quads = (hi - lo - 4) // 4
                    for q in range(quads):
                        k = b + 4 + 4 * q
                        acc = op(acc, ACC(x[k]))
                        a1 = op(a1, ACC(x[k + 1]))
                        a2 = op(a2, ACC(x[k + 2]))
                        a3 = op(a3, ACC(x[k + 3]))
                    acc = op(op(acc, a1), op(a2, a3))
                    k0 = lo + 4 + 4 * quads
                for k in range(k0, hi):
                    acc = op(acc, ACC(x[(o * n + k) * inner + j]))
                tile[l] = acc
        dc.barrier()
        s = 1
        while s < WIDTH:
            if l % (2 * s) == 0 and l + s < valid:
                tile[l] = op(tile[l], tile[l + s])
            dc.barrier()
            s *= 2
        if l == 0:
            partial[g] = tile[0]

    return reduce_tree


@cache
def rows_kernel(op: Any, acc_dtype: Any) -> Any:
    """One work-item per output row: ``out[r] = fold(op, row r)``."""
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def reduce_rows(x: dc.Buffer, out: dc.Buffer, n: dc.int64, inner: dc.int64):
        r = dc.global_id(0)
        if r < out.shape[0]:
            o = r // inner
            j = r - o * inner
            acc = ACC(x[o * n * inner + j])
            for k in range(1, n):
                acc = op(acc, ACC(x[(o * n + k) * inner + j]))
            out[r] = acc

    return reduce_rows


@cache
def column_chunks_kernel(op: Any, acc_dtype: Any) -> Any:
    """One work-item per (row, chunk of ``chunk`` reduced positions): ``out`` viewed as (outer,
    chunks, inner) holds each chunk's fold. For CPU devices and ``inner`` > 1 (``x.sum(axis=0)``): a
    whole column walked by one item strides a row length per step and has lost its cache lines
    before the neighbouring columns' items come to them; a short chunk keeps them in L1."""
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def reduce_column_chunks(x: dc.Buffer, out: dc.Buffer, n: dc.int64, inner: dc.int64, chunk: dc.int64):
        r = dc.global_id(0)
        if r < out.shape[0]:
            chunks = (n + chunk - 1) // chunk
            q = r // inner
            j = r - q * inner
            o = q // chunks
            lo = (q - o * chunks) * chunk
            hi = lo + chunk
            if hi > n:
                hi = n
            acc = ACC(x[(o * n + lo) * inner + j])
            for k in range(lo + 1, hi):
                acc = op(acc, ACC(x[(o * n + k) * inner + j]))
            out[r] = acc

    return reduce_column_chunks


@cache
def arg_tree_kernel(better: Any, dtype: Any, first: bool) -> Any:
    """Index of the best element per (row, chunk): ``better(b, a)`` says b beats a (ties: lowest index).

    ``first``: the pass reads the data (an element's index is its position); later passes read the
    (value, index) pairs of the previous one. A constant, so each variant has no per-element test.
    """
    T = dtype  # noqa: N806
    FIRST = 1 if first else 0  # noqa: N806

    @dc.kernel
    def arg_tree(x: dc.Buffer, vals: dc.Buffer, idx_in: dc.Buffer[dc.int64], vals_out: dc.Buffer,
                 idx_out: dc.Buffer[dc.int64], n: dc.int64, inner: dc.int64, chunk: dc.int64,
                 chunks: dc.int64):
        best = dc.shared((WIDTH,), T)
        where = dc.shared((WIDTH,), dc.int64)
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
            f = (o * n + lo) * inner + j
            # the first pass reads the data (index = position); later passes read (value, index) pairs
            v = T(x[f]) if FIRST == 1 else T(vals[f])
            w = lo if FIRST == 1 else idx_in[f]
            for k in range(lo + 1, hi):
                f = (o * n + k) * inner + j
                v2 = T(x[f]) if FIRST == 1 else T(vals[f])
                if better(v2, v):
                    v = v2
                    w = k if FIRST == 1 else idx_in[f]
            best[l] = v
            where[l] = w
        dc.barrier()
        s = 1
        while s < WIDTH:
            if l % (2 * s) == 0 and l + s < valid:
                if better(best[l + s], best[l]):
                    best[l] = best[l + s]
                    where[l] = where[l + s]
            dc.barrier()
            s *= 2
        if l == 0:
            vals_out[g] = best[0]
            idx_out[g] = where[0]

    return arg_tree


@cache
def first_index_kernel(dtype: Any) -> Any:
    """Per (row, chunk): the smallest index k of the chunk with x[k] == target[row] (NaN matches
    NaN), or n when there is none. With the row's min or max as the target this is argmin/argmax
    in two fast passes (a plain reduction, then this search), instead of one pass that carries
    (value, index) pairs through a branch per element."""
    T = dtype  # noqa: N806

    @dc.kernel
    def first_index(x: dc.Buffer, target: dc.Buffer, partial: dc.Buffer[dc.int64], n: dc.int64, inner: dc.int64,
                    chunk: dc.int64, chunks: dc.int64):
        tile = dc.shared((WIDTH,), dc.int64)
        l = dc.local_id(0)  # noqa: E741
        g = dc.group_id(0)
        row = g // chunks
        c = g - row * chunks
        o = row // inner
        j = row - o * inner
        start = c * chunk
        stop = min(start + chunk, n)
        per = (stop - start + WIDTH - 1) // WIDTH
        lo = start + l * per
        hi = min(lo + per, stop)
        want = T(target[row])
        nan = want != want
        found = n
        for k in range(lo, hi):
            v = T(x[(o * n + k) * inner + j])
            if v == want or (nan and v != v):
                found = k
                break
        tile[l] = found
        dc.barrier()
        s = 1
        while s < WIDTH:
            if l % (2 * s) == 0:
                tile[l] = min(tile[l], tile[l + s])
            dc.barrier()
            s *= 2
        if l == 0:
            partial[g] = tile[0]

    return first_index


@cache
def first_in_run_kernel(dtype: Any) -> Any:
    """``out[0]`` = the smallest index k in run ``r = run[0]`` (``RUN`` elements of the flat ``x``) with
    x[k] == target[r] (NaN matches NaN), or the length of ``x``: one work-group of ``WIDTH``.
    ``target``: lanes_extreme_kernel's per-run extremes; with the first run holding the best of
    them, argmin/argmax read one run a second time instead of the whole array."""
    T = dtype  # noqa: N806

    @dc.kernel
    def first_in_run(x: dc.Buffer, target: dc.Buffer, run: dc.Buffer[dc.int64], out: dc.Buffer[dc.int64]):
        tile = dc.shared((WIDTH,), dc.int64)
        l = dc.local_id(0)  # noqa: E741
        n = x.shape[0]
        lo = run[0] * RUN
        hi = min(lo + RUN, n)
        want = T(target[run[0]])
        nan = want != want
        found = n
        k = lo + l  # item l looks at lo + l, lo + l + WIDTH, ...: its first match is its smallest
        while k < hi:
            v = T(x[k])
            if v == want or (nan and v != v):
                found = k
                break
            k += WIDTH
        tile[l] = found
        dc.barrier()
        s = 1
        while s < WIDTH:
            if l % (2 * s) == 0:
                tile[l] = min(tile[l], tile[l + s])
            dc.barrier()
            s *= 2
        if l == 0:
            out[0] = tile[0]

    return first_in_run


@dc.func
def less_nan_first(b, a):
    # b beats a for argmin: smaller, or the first NaN (numpy's argmin returns the first NaN)
    return (b < a or b != b) and a == a


@dc.func
def greater_nan_first(b, a):
    return (b > a or b != b) and a == a


LANES = 32  # independent accumulators of lanes_kernel: two 512-bit (four 256-bit) vectors of float32
RUN = 32 * LANES  # elements per partial of lanes_extreme_kernel: each lane takes 32 of them
SUM_RUN = 128 * LANES  # elements per partial of lanes_kernel: each lane adds 128 of them


@cache
def lanes_kernel(acc_dtype: Any) -> Any:
    """``partial[i]`` = the sum of run i (``SUM_RUN`` consecutive elements of the flat ``x``), written
    for CPU compilers.

    Each run is added up in ``LANES`` independent accumulators (lane j takes elements j, j + 32,
    j + 64, ... of the run), which a C++ compiler keeps in SIMD registers. Why 32 and not one
    vector's 16: a vector add has a latency of several cycles, so a single accumulator vector
    makes the loop wait on its own previous add; two (or four 256-bit ones) in flight let the
    loads run at memory speed. Why runs of 4,096 (128 per lane): the lanes are then combined as a
    balanced tree -- 31 scalar adds and their shuffles, once per run -- which with runs of 1,024
    cost ~10 % of a core's time (16M float32 on one core, issue 24: 7.2 ms with 1,024-element runs,
    6.0-6.6 with 4,096 or 8,192, a -ffast-math C loop 5.8-6.3). The caller adds the partials pairwise
    (numpy's pairwise summation). This is a pairwise sum whose leaves are 128 elements added in
    order (numpy's leaves are 128 elements in 8 accumulators): the rounding error grows as
    O(128 + log n) ulps in the worst case (docs/operations.md has measured errors) -- the
    pairwise class, not one accumulator's O(n) (Numba's fastmath prange sum adds ~n/64 elements in
    order per lane). The last run's rest (fewer than 32) is added in order. The operator is ``+``
    written out rather than a ``@dc.func`` parameter: every use of a captured name is checked again
    at each launch, and the uses an operator would need cost more than the work for arrays of a
    million elements. Item g adds run g // ``spread`` if g is a multiple of ``spread`` (1: item i, run
    i): the CPU backend's thread pool hands out contiguous chunks of items, so a launch padded past
    its inline limit (ops/reduce.py) keeps its runs spread over every chunk. Other items do nothing.
    """
    ACC = acc_dtype  # noqa: N806

    @dc.kernel
    def sum_lanes(x: dc.Buffer, partial: dc.Buffer, spread: dc.int64):
        g = dc.global_id(0)
        i = g // spread  # every spread-th item takes a run: the runs spread over the launch (see there)
        if g % spread == 0 and i < partial.shape[0]:
            n = x.shape[0]
            lo = i * SUM_RUN
            hi = min(lo + SUM_RUN, n)
            whole = (hi - lo) // LANES
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = ACC(0)
            a8 = a9 = a10 = a11 = a12 = a13 = a14 = a15 = ACC(0)
            b0 = b1 = b2 = b3 = b4 = b5 = b6 = b7 = ACC(0)
            b8 = b9 = b10 = b11 = b12 = b13 = b14 = b15 = ACC(0)
            for q in range(whole):
                k = lo + q * LANES
                a0 += ACC(x[k])
                a1 += ACC(x[k + 1])
                a2 += ACC(x[k + 2])
                a3 += ACC(x[k + 3])
                a4 += ACC(x[k + 4])
                a5 += ACC(x[k + 5])
                a6 += ACC(x[k + 6])
                a7 += ACC(x[k + 7])
                a8 += ACC(x[k + 8])
                a9 += ACC(x[k + 9])
                a10 += ACC(x[k + 10])
                a11 += ACC(x[k + 11])
                a12 += ACC(x[k + 12])
                a13 += ACC(x[k + 13])
                a14 += ACC(x[k + 14])
                a15 += ACC(x[k + 15])
                b0 += ACC(x[k + 16])
                b1 += ACC(x[k + 17])
                b2 += ACC(x[k + 18])
                b3 += ACC(x[k + 19])
                b4 += ACC(x[k + 20])
                b5 += ACC(x[k + 21])
                b6 += ACC(x[k + 22])
                b7 += ACC(x[k + 23])
                b8 += ACC(x[k + 24])
                b9 += ACC(x[k + 25])
                b10 += ACC(x[k + 26])
                b11 += ACC(x[k + 27])
                b12 += ACC(x[k + 28])
                b13 += ACC(x[k + 29])
                b14 += ACC(x[k + 30])
                b15 += ACC(x[k + 31])
            a = (((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))) + \
                (((a8 + a9) + (a10 + a11)) + ((a12 + a13) + (a14 + a15)))
            b = (((b0 + b1) + (b2 + b3)) + ((b4 + b5) + (b6 + b7))) + \
                (((b8 + b9) + (b10 + b11)) + ((b12 + b13) + (b14 + b15)))
            acc = a + b
            for k in range(lo + whole * LANES, hi):
                acc += ACC(x[k])
            partial[i] = acc

    return sum_lanes


@cache
def divide_kernel(dtype: Any) -> Any:
    """``x[0] /= n``: a mean from its sum, rounded as numpy rounds it: the count converted to the
    sum's dtype first (NEP 50's rule for a Python int beside a float32), then one division -- not a
    multiplication by 1/n, which can differ in the last bit; an integer sum's true quotient is
    truncated back to its dtype, as ``np.mean(x, dtype=np.int64)`` does."""
    T = dtype  # noqa: N806

    @dc.kernel
    def divide_first(x: dc.Buffer, n: dc.int64):
        if dc.global_id(0) == 0:
            x[0] = T(x[0] / T(n))  # an integer dtype (mean(..., dtype=int64)) truncates, as numpy

    return divide_first


@cache
def lanes_extreme_kernel(dtype: Any, smallest: bool) -> Any:
    """``partial[i]`` = the min (``smallest``) or max of run i (``RUN`` consecutive elements of the
    flat ``x``), in ``LANES`` independent accumulators as lanes_kernel, for CPU-type devices.

    min and max are idempotent, so every lane starts from the run's first element (a run shorter than
    the lanes needs no identity value). NaN wins, as in numpy: a lane that met a NaN keeps it, and the
    lanes are combined with the same rule.
    """
    T = dtype  # noqa: N806
    SMALLEST = smallest  # noqa: N806 -- constants: the untaken branches are folded away
    FLOAT = np.dtype(dtype).kind == "f"  # noqa: N806

    @dc.func
    def pick(a, v):
        better = v < a if SMALLEST else v > a
        if FLOAT:
            # `|`, not `or`: both tests are evaluated, so the select has no branch and the C
            # compiler vectorises it (16M float32 on cpu:0 under load: 54 ms with `|`, 160-220 ms
            # with the short-circuit `or`, which stayed scalar)
            better = better | (v != v)
        return v if better else a

    @dc.kernel
    def extreme_lanes(x: dc.Buffer, partial: dc.Buffer):
        i = dc.global_id(0)
        if i < partial.shape[0]:
            n = x.shape[0]
            lo = i * RUN
            hi = min(lo + RUN, n)
            whole = (hi - lo) // LANES
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = T(x[lo])
            a8 = a9 = a10 = a11 = a12 = a13 = a14 = a15 = a0
            a16 = a17 = a18 = a19 = a20 = a21 = a22 = a23 = a0
            a24 = a25 = a26 = a27 = a28 = a29 = a30 = a31 = a0
            for q in range(whole):
                k = lo + q * LANES
                a0 = pick(a0, T(x[k]))
                a1 = pick(a1, T(x[k + 1]))
                a2 = pick(a2, T(x[k + 2]))
                a3 = pick(a3, T(x[k + 3]))
                a4 = pick(a4, T(x[k + 4]))
                a5 = pick(a5, T(x[k + 5]))
                a6 = pick(a6, T(x[k + 6]))
                a7 = pick(a7, T(x[k + 7]))
                a8 = pick(a8, T(x[k + 8]))
                a9 = pick(a9, T(x[k + 9]))
                a10 = pick(a10, T(x[k + 10]))
                a11 = pick(a11, T(x[k + 11]))
                a12 = pick(a12, T(x[k + 12]))
                a13 = pick(a13, T(x[k + 13]))
                a14 = pick(a14, T(x[k + 14]))
                a15 = pick(a15, T(x[k + 15]))
                a16 = pick(a16, T(x[k + 16]))
                a17 = pick(a17, T(x[k + 17]))
                a18 = pick(a18, T(x[k + 18]))
                a19 = pick(a19, T(x[k + 19]))
                a20 = pick(a20, T(x[k + 20]))
                a21 = pick(a21, T(x[k + 21]))
                a22 = pick(a22, T(x[k + 22]))
                a23 = pick(a23, T(x[k + 23]))
                a24 = pick(a24, T(x[k + 24]))
                a25 = pick(a25, T(x[k + 25]))
                a26 = pick(a26, T(x[k + 26]))
                a27 = pick(a27, T(x[k + 27]))
                a28 = pick(a28, T(x[k + 28]))
                a29 = pick(a29, T(x[k + 29]))
                a30 = pick(a30, T(x[k + 30]))
                a31 = pick(a31, T(x[k + 31]))
            for k in range(lo + whole * LANES, hi):
                a0 = pick(a0, T(x[k]))
            a0 = pick(pick(pick(a0, a1), pick(a2, a3)), pick(pick(a4, a5), pick(a6, a7)))
            a8 = pick(pick(pick(a8, a9), pick(a10, a11)), pick(pick(a12, a13), pick(a14, a15)))
            a16 = pick(pick(pick(a16, a17), pick(a18, a19)), pick(pick(a20, a21), pick(a22, a23)))
            a24 = pick(pick(pick(a24, a25), pick(a26, a27)), pick(pick(a28, a29), pick(a30, a31)))
            partial[i] = pick(pick(a0, a8), pick(a16, a24))

    return extreme_lanes


@cache
def lanes_extreme_fast_kernel(dtype: Any, smallest: bool) -> Any:
    """lanes_extreme_kernel for float32/float64 on CPU-type devices (the CPU backend, PoCL):
    ``partial[i]`` = min (``smallest``) or max of run i, folded as integers of the IEEE bits.

    GCC does not vectorise a float select (``v if v < a else a`` stays a scalar ``vminss`` without
    -ffinite-math-only, which would also drop the NaN tests), so the floats' bits (``dc.bitcast``)
    are folded with integer min/max, which vectorise (``vpminsd``/``vpmaxud``). Read as signed
    integers, non-negative floats order as their values and every negative one lies below them; read
    as unsigned, the negatives lie above every non-negative float and order by magnitude. So the
    smallest float of a run is its unsigned maximum when that has the sign bit (a negative element),
    else its signed minimum; the largest is the signed maximum when that is non-negative, else the
    unsigned minimum. A NaN lies beyond +inf's bits in the signed maximum (positive NaN) or beyond
    -inf's in the unsigned maximum (negative NaN); such a run is folded again in order with the
    NaN-aware float select (the first NaN wins, as numpy). -0.0 counts as below 0.0; they compare
    equal, so the value and argmin/argmax's first-equal search agree with numpy.

    Why three raw folds rather than one order-preserving key per element (``b ^ ((b >> 31) & MAG)``)
    folded twice: the key's shift and xor doubled the vector operations per element (and GCC loaded
    each vector twice for them), and with the other hyperthread of the core busy the loop then ran
    below memory speed (16M float32, one thread, CPU time: numpy 3.06 ms, key kernel 4.16, this one
    3.71, the same loop as a C function 3.61; bench/results/portable_round9.md). ``spread`` as
    lanes_kernel's: the launch is padded past the backend's inline limit so the runs spread over its
    thread pool. ``run`` is the elements per partial (RUN for argmin/argmax's first-index search;
    longer for min/max on the CPU backend, reduce.EXTREME_RUN_CPU), an argument so that both share
    one program.
    """
    T = dtype  # noqa: N806
    SMALLEST = smallest  # noqa: N806 -- a constant: the untaken branches are folded away
    WIDE = np.dtype(dtype).itemsize == 8  # noqa: N806
    I = dc.int64 if WIDE else dc.int32  # noqa: N806, E741
    U = dc.uint64 if WIDE else dc.uint32  # noqa: N806
    PINF = 0x7FF0000000000000 if WIDE else 0x7F800000  # noqa: N806 -- +inf's bits
    SIGN = 1 << 63 if WIDE else 1 << 31  # noqa: N806
    NINF = SIGN | PINF  # noqa: N806 -- -inf's bits as an unsigned number

    @dc.func
    def lo(a, v):
        return v if v < a else a

    @dc.func
    def hi(a, v):
        return v if v > a else a

    @dc.func
    def pick(a, v):
        better = v < a if SMALLEST else v > a
        better = better | (v != v)
        return v if better else a

    @dc.kernel
    def extreme_fast(x: dc.Buffer, partial: dc.Buffer, spread: dc.int64, run: dc.int64):
        g = dc.global_id(0)
        i = g // spread
        if g % spread == 0 and i < partial.shape[0]:
            n = x.shape[0]
            start = i * run
            stop = min(start + run, n)
            smax = dc.bitcast(T(x[start]), I)
            smin = smax  # the signed minimum (min) -- unused by max
            umax = dc.bitcast(T(x[start]), U)
            umin = umax  # the unsigned minimum (max) -- unused by min
            for k in range(start, stop):
                s = dc.bitcast(T(x[k]), I)
                u = dc.bitcast(T(x[k]), U)
                smax = hi(smax, s)
                umax = hi(umax, u)
                if SMALLEST:
                    smin = lo(smin, s)
                else:
                    umin = lo(umin, u)
            if smax > PINF or umax > U(NINF):
                best = T(x[start])
                for k in range(start + 1, stop):
                    best = pick(best, T(x[k]))
                partial[i] = best
            elif SMALLEST:
                if umax >= U(SIGN):
                    partial[i] = dc.bitcast(umax, T)
                else:
                    partial[i] = dc.bitcast(smin, T)
            elif smax >= 0:
                partial[i] = dc.bitcast(smax, T)
            else:
                partial[i] = dc.bitcast(umin, T)

    return extreme_fast


#: Elements per work-item of the contiguous arg pass on CPU-type devices (argmax of all of x, or of
#: rows longer than this): a chunk of 8 KiB of float32 is still in L1 when the item reads it a second
#: time for the first index of its extreme (1M float32 on PoCL, the kernel alone: 0.84, 0.88, 0.90 ms
#: with chunks of 1,024, 4,096, 8,192 in one run, the lanes kernel for the max alone 1.18).
ARG_RUN = 2048


@cache
def _order_keys(dtype: Any) -> tuple[Any, Any, Any, int, int]:
    """(key, low, high, NINF, PINF) for the arg kernels: ``key(v)`` an integer that orders as ``v``
    (floats: their IEEE bits with the magnitude flipped for negatives, -0.0 as 0.0; integers: the
    value), ``low``/``high`` its plain selects (vector min/max once compiled), and the keys of -inf
    and +inf (a NaN's key lies beyond them)."""
    T = dtype  # noqa: N806
    FLOAT = np.dtype(dtype).kind == "f"  # noqa: N806
    WIDE = np.dtype(dtype).itemsize == 8  # noqa: N806
    I = dc.int64 if WIDE else dc.int32  # noqa: N806, E741
    MAG = (1 << 63) - 1 if WIDE else (1 << 31) - 1  # noqa: N806
    SHIFT = 63 if WIDE else 31  # noqa: N806
    PINF = 0x7FF0000000000000 if WIDE else 0x7F800000  # noqa: N806

    @dc.func
    def float_key(e):
        # + 0.0 turns -0.0 into 0.0 (and nothing else): they compare equal, so they must share a key
        # for the first-match search (numpy's ties)
        bits = dc.bitcast(e + T(0.0), I)
        return bits ^ ((bits >> SHIFT) & MAG)

    @dc.func
    def same(e):
        return e

    @dc.func
    def low(a, v):
        return v if v < a else a

    @dc.func
    def high(a, v):
        return v if v > a else a

    # chosen here, not by a branch on FLOAT inside one function: its two returns would be unified
    # into one type (int32 and float32 -> float64)
    return (float_key if FLOAT else same), low, high, -1 - PINF, PINF


@cache
def arg_chunks_kernel(dtype: Any, smallest: bool) -> Any:
    """One work-item per (outer, chunk of ``chunk`` contiguous positions along n; inner == 1):
    ``vals[r]``/``idx[r]`` = the chunk's best element and its index along n (the first one on ties;
    NaN wins, the first NaN), ``vals``/``idx`` viewed as (outer, chunks, 1). For CPU-type devices
    (PoCL), integer dtypes, float32 and float64.

    The extreme first, by order-preserving integer keys (``dc.bitcast``; integers are their own key)
    with plain selects, which LLVM turns into vector min/max -- a (value, index) fold carries two
    values through a select per element and stays scalar -- then the first position equal to it,
    read again from cache.
    """
    T = dtype  # noqa: N806
    SMALLEST = smallest  # noqa: N806 -- constants: the untaken branches are folded away
    FLOAT = np.dtype(dtype).kind == "f"  # noqa: N806
    key, low, high, NINF, PINF = _order_keys(dtype)  # noqa: N806

    @dc.kernel
    def arg_chunks(x: dc.Buffer, vals: dc.Buffer, idx: dc.Buffer[dc.int64], n: dc.int64, chunk: dc.int64):
        r = dc.global_id(0)
        if r < vals.shape[0]:
            chunks = (n + chunk - 1) // chunk
            o = r // chunks
            lo = (r - o * chunks) * chunk
            hi = min(lo + chunk, n)
            s0 = o * n  # the row's start: x[s0 + k] for k in [lo, hi)
            least = key(T(x[s0 + lo]))
            most = least
            for k in range(s0 + lo, s0 + hi):
                kk = key(T(x[k]))
                least = low(least, kk)
                most = high(most, kk)
            nan = False
            if FLOAT:
                nan = least < NINF or most > PINF  # a NaN's key lies beyond an infinity's
            w = lo
            if nan:
                for k in range(lo, hi):  # the first NaN wins, as numpy
                    if T(x[s0 + k]) != T(x[s0 + k]):
                        w = k
                        break
            else:
                # the first position holding the extreme: a min over the (int32) offsets of the
                # matches in blocks of 64, with no early exit inside a block, so it vectorises like
                # the pass above and rereads the chunk from cache (a scalar search with a break per
                # element took as long as the whole pass); it stops after the block holding it
                want = least if SMALLEST else most
                span = dc.int32(hi - lo)
                first = span
                t0 = dc.int32(0)
                while t0 < span and first == span:
                    t1 = min(t0 + 64, span)
                    for t in range(t0, t1):
                        first = low(first, t if key(T(x[s0 + lo + t])) == want else span)
                    t0 = t1
                w = lo + first
            vals[r] = T(x[s0 + w])
            idx[r] = w

    return arg_chunks


@cache
def arg_columns_kernel(dtype: Any, smallest: bool) -> Any:
    """One work-item per (outer, chunk of ``chunk`` positions along n, inner): the chunk's best
    element and its first index, as arg_chunks_kernel's ``vals``/``idx`` viewed as (outer, chunks,
    inner). For columns (inner > 1) on CPU-type devices: the chunk's rows are read by the
    neighbouring items at the same time (column_chunks_kernel's idea: a whole column per item lost
    its cache lines before its neighbours came to them). The same two passes as arg_chunks_kernel
    down the column, both branch-free (a NaN's search aside): (131,072, 8) float32 on PoCL, the
    kernel alone in one run, 3.3 ms, where a branch-free (value, index) fold took 7.5 and a fold
    with short-circuit tests or a search that breaks 6-9; 1024² about the same (5.8 and 6.0)."""
    T = dtype  # noqa: N806
    SMALLEST = smallest  # noqa: N806
    FLOAT = np.dtype(dtype).kind == "f"  # noqa: N806
    key, low, high, NINF, PINF = _order_keys(dtype)  # noqa: N806

    @dc.kernel
    def arg_columns(x: dc.Buffer, vals: dc.Buffer, idx: dc.Buffer[dc.int64], n: dc.int64, inner: dc.int64,
                    chunk: dc.int64):
        r = dc.global_id(0)
        if r < vals.shape[0]:
            chunks = (n + chunk - 1) // chunk
            q = r // inner
            j = r - q * inner
            o = q // chunks
            lo = (q - o * chunks) * chunk
            hi = min(lo + chunk, n)
            s0 = o * n * inner + j  # the column's first element: x[s0 + k * inner]
            least = key(T(x[s0 + lo * inner]))
            most = least
            for k in range(lo, hi):
                kk = key(T(x[s0 + k * inner]))
                least = low(least, kk)
                most = high(most, kk)
            nan = False
            if FLOAT:
                nan = least < NINF or most > PINF
            w = hi
            if nan:
                for k in range(lo, hi):  # the first NaN wins, as numpy
                    if T(x[s0 + k * inner]) != T(x[s0 + k * inner]):
                        w = k
                        break
            else:
                want = least if SMALLEST else most
                for k in range(lo, hi):
                    w = low(w, k if key(T(x[s0 + k * inner])) == want else hi)
            vals[r] = T(x[s0 + w * inner])
            idx[r] = w

    return arg_columns


@cache
def arg_pairs_kernel(dtype: Any, smallest: bool) -> Any:
    """``out[r]`` = the index of the best of the (``vals``, ``idx``) pairs of arg_chunks_kernel along
    their chunks (viewed as (outer, chunks, inner)): taken in chunk order with a strict ``better``,
    so the first chunk holding the extreme (or the first NaN) wins, as numpy."""
    T = dtype  # noqa: N806
    better = less_nan_first if smallest else greater_nan_first

    @dc.kernel
    def arg_pairs(vals: dc.Buffer, idx: dc.Buffer[dc.int64], out: dc.Buffer[dc.int64], chunks: dc.int64,
                  inner: dc.int64):
        r = dc.global_id(0)
        if r < out.shape[0]:
            o = r // inner
            f = o * chunks * inner + (r - o * inner)
            v = T(vals[f])
            w = idx[f]
            for c in range(1, chunks):
                v2 = T(vals[f + c * inner])
                if better(v2, v):
                    v = v2
                    w = idx[f + c * inner]
            out[r] = w

    return arg_pairs


def plan(rows: int, n: int) -> tuple[int, int]:
    """(chunk, chunks): how a row of n elements is split among work-groups.

    Enough groups in all for every compute unit (a few hundred), each group at least a few
    elements per item so that the register fold, not the tree, does most of the work.
    """
    target_groups = 256
    chunks = max(1, min(-(-n // (WIDTH * 4)), -(-target_groups // max(rows, 1))))
    chunk = -(-n // chunks)
    chunks = -(-n // chunk)
    return chunk, chunks


__all__ = ["ARG_RUN", "LANES", "RUN", "SUM_RUN", "ORDERED", "STRIDED", "UNROLLED", "WIDTH", "arg_chunks_kernel",
           "arg_columns_kernel", "arg_pairs_kernel", "arg_tree_kernel", "divide_kernel",
           "first_index_kernel",
           "first_in_run_kernel", "lanes_extreme_fast_kernel", "lanes_extreme_kernel",
           "greater_nan_first", "lanes_kernel", "less_nan_first", "op_add", "op_max", "op_max_int", "op_min",
           "op_min_int", "op_mul", "plan", "rows_kernel", "tree_kernel"]
