"""Scans: ``cumsum`` and ``scan(op, x, axis, exclusive, initial)`` with an associative ``@dc.func``.

Paths (ops/dispatch.py): numpy's cumsum on host-memory buffers; the reduce-then-scan kernels of
scan_kernels.py elsewhere (on GPU devices the coalesced tile forms of the scan passes, on CPU
devices the per-item runs; on OpenCL CPU devices, along contiguous rows, one item per run and no
work-group passes), when forced, and always for a user operator. Long integer cumsums of
CPU-backend Buffers (``SCAN_MIN`` elements or more along the axis) also take the kernels: they use
both cores where numpy's cumsum uses one, and integer sums are exact in any order, so the result
is numpy's to the bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Buffer
from . import dispatch
from . import reduce_kernels as rk
from . import scan_kernels as sk
from .arrays import flat, into, normalize_axis, operand, result, shaped, split_axis
from .reduce import check_operator, operator_errors

#: Length along the axis from which the portable scan beats numpy's single-threaded cumsum for
#: integer Buffers on the CPU backend (bench/ops_bench.py --crossover on the 2-core AMD EPYC, int32
#: in, int64 out: 6M 6.1 ms numpy vs 7.0 ms portable, 8M 8.4 vs 7.7, 16M 18.4 vs 13.5). The kernels
#: need both cores: with another process busy on one, numpy stays ahead to about 24M. Floats stay on
#: numpy: the kernels add in a different order, so their rounding would differ from numpy's
#: sequential sums.
SCAN_MIN = 1 << 23


def scan_flat(op: Any, x: Buffer, outer: int, n: int, inner: int, acc_dtype: Any, exclusive: bool = False,
              initial: Any = None) -> Buffer:
    """The portable scan of the flat ``x`` viewed as (outer, n, inner) along n, into a new flat buffer."""
    acc = x.accelerator
    t = np.dtype(acc_dtype).type
    out = acc.empty((x.size,), t)
    rows = outer * inner
    if x.size == 0:
        return out
    has_init = 0 if initial is None else 1
    init = acc.asarray(np.array([0 if initial is None else initial], t))
    if n <= 32 or rows >= 1024:
        acc.launch(sk.scan_rows_kernel(op, t), rows, x, out, init, rows, n, inner, has_init, int(exclusive))
        return out
    chunk, chunks = rk.plan(rows, n)
    if acc.type == "cpu" and acc.backend != "cpu" and inner == 1:
        # OpenCL CPU devices (PoCL), contiguous rows: one item per run, plain loops and no work-group
        # trees (1M int64 cumsum on PoCL: 9.8 -> 2.6 ms); the CPU backend keeps the group kernels,
        # whose launches are large enough for its thread pool
        partial = acc.empty((rows * chunks,), t)
        prefix = acc.empty((rows * chunks,), t)
        acc.launch(sk.run_totals_kernel(op, t), rows * chunks, x, partial, n, chunk, chunks)
        acc.launch(sk.scan_partials_kernel(op, t), rows, partial, prefix, init, chunks, has_init)
        acc.launch(sk.scan_runs_kernel(op, t), rows * chunks, x, out, prefix, n, chunk, chunks, has_init,
                   int(exclusive))
        return out
    # GPUs read in tiles of consecutive elements (scan_tile_kernel); CPU devices fold per-item runs
    gpu = acc.type != "cpu"
    if chunks > 1:
        prefix = acc.empty((rows * chunks,), t)
        partial = acc.empty((rows * chunks,), t)
        # Integer sums (cumsum, sort's offsets) may fold a chunk in any order with the same result, so on
        # GPUs the items read interleaved (coalesced: 4 sectors per float32/int32 warp request on the
        # simulator's GPU model instead of 16 for contiguous runs, bench/results/gpu_model.md); other
        # operators need the chunk's order, and CPU devices prefer each item's own run.
        exact_sum = op is rk.op_add and np.dtype(t).kind in "iub"
        mode = rk.STRIDED if exact_sum and acc.type != "cpu" else rk.ORDERED
        acc.launch(rk.tree_kernel(op, t, mode), rows * chunks * rk.WIDTH, x, partial, n, inner, chunk, chunks,
                   local_size=rk.WIDTH)
        if gpu:  # a work-group per row scans its partials in tiles: coalesced, where one item would loop
            starts = acc.asarray(np.full(rows, 0 if initial is None else initial, t))
            acc.launch(sk.scan_tile_kernel(op, t), rows * rk.WIDTH, partial, prefix, starts, chunks, 1, chunks, 1,
                       has_init, 1, local_size=rk.WIDTH)
        else:  # CPU devices: one item per row's few hundred partials, a plain loop
            acc.launch(sk.scan_partials_kernel(op, t), rows, partial, prefix, init, chunks, has_init)
    else:  # one chunk per row: its prefix is the initial value (read only when there is one)
        prefix = acc.asarray(np.full(rows, 0 if initial is None else initial, t))
    rescan = sk.scan_tile_kernel(op, t) if gpu else sk.scan_tree_kernel(op, t)
    acc.launch(rescan, rows * chunks * rk.WIDTH, x, out, prefix, n, inner, chunk, chunks, has_init, int(exclusive),
               local_size=rk.WIDTH)
    return out


def flat_nonzero(x: Buffer) -> Buffer:
    """The positions of the non-zero elements of the 1-d device buffer ``x`` (int64, ascending):
    numpy's ``flatnonzero``, for CPU-type devices. Two passes over ``x`` by runs: each item counts
    its run's non-zero elements, the counts' exclusive scan gives each run its place, and each item
    writes its run's positions there, in order (no flags, prefix-sum or scatter arrays of x's size:
    on PoCL the flags + cumsum + scatter form cost 4x numpy's nonzero on cpu:0)."""
    acc = x.accelerator
    if x.size == 0:
        return acc.empty((0,), np.int64)
    run, runs = rk.plan(1, x.size)
    counts = acc.empty((runs,), np.int64)
    starts = acc.empty((runs,), np.int64)
    acc.launch(sk.count_nonzero_runs, runs, x, counts, run)
    acc.launch(sk.scan_partials_kernel(rk.op_add, np.int64), 1, counts, starts, acc.asarray(np.zeros(1, np.int64)),
               runs, 1)
    total = int(np.asarray(starts[runs - 1])) + int(np.asarray(counts[runs - 1]))
    out = acc.empty((total,), np.int64)
    if total:
        acc.launch(sk.write_nonzero_runs, runs, x, starts, counts, out, run)
    return out


def _scan(name: str, op: Any, x: Any, axis: Any, exclusive: bool, initial: Any, accelerator: Any,
          out_dtype: np.dtype | None, vendor: bool) -> Any:
    o = operand(name, x, accelerator)
    shape = o.shape
    if axis is None:
        shape, ax = (o.size,), 0
    else:
        ax = normalize_axis(name, axis, len(shape))
        if not shape:
            shape = (1,)
    t = np.dtype(out_dtype if out_dtype is not None else o.dtype)
    fast, worth = None, False
    if (name == "dc.cumsum" and o.buf is not None and o.dtype.kind in "iu" and t.kind in "iu"
            and dispatch.kernel_dtype(o.dtype) and dispatch.kernel_dtype(t) and dispatch.host_cpu(o.acc)):
        # the portable kernels as the faster refinement of numpy's path, by the measured length
        fast, worth = "portable", (shape[ax] if shape else 1) >= SCAN_MIN
    path = dispatch.choose(name, o.acc, o.dtype, t, vendor=vendor, fast=fast, fast_worth=worth)
    if path in ("vendor", "host"):
        host = (o.on_host(path)).reshape(shape)

        def fill(out: np.ndarray) -> None:
            np.cumsum(host, axis=ax, dtype=t, out=out)
            if exclusive and out.size:  # shift by one along the axis, the initial value first
                moved = np.moveaxis(out, ax, -1)
                moved[..., 1:] = moved[..., :-1].copy()
                moved[..., 0] = 0
            if initial is not None:
                out += t.type(initial)

        return into(o, shape, t, fill)
    outer, n, inner = split_axis(shape, ax)
    out = scan_flat(op, flat(o.device()), outer, n, inner, t, exclusive, initial)
    return result(o, shaped(out, shape if axis is None else (o.shape or (1,))))


def cumsum(x: Any, axis: Any = -1, dtype: Any = None, *, accelerator: Any = "auto") -> Any:
    """Inclusive prefix sums along ``axis`` (None: over the flattened array); numpy's result dtype."""
    t = np.dtype(dtype) if dtype is not None else None
    probe = operand("dc.cumsum", x, accelerator)
    if t is None:
        t = np.cumsum(np.zeros(1, probe.dtype)).dtype
    return _scan("dc.cumsum", rk.op_add, probe.buf if probe.buf is not None else probe.host, axis, False, None,
                 accelerator, t, vendor=None)


def scan(op: Any, x: Any, axis: Any = -1, exclusive: bool = False, initial: Any = None, *,
         accelerator: Any = "auto") -> Any:
    """Prefix combination along ``axis`` with ``op``, an associative ``@dc.func`` of two values.

    Inclusive by default (``out[i] = x[0] op ... op x[i]``); ``exclusive=True`` gives
    ``out[i] = initial op x[0] op ... op x[i-1]`` and needs ``initial``. ``initial`` is combined
    first in both forms. The result has ``x``'s dtype. Always the portable kernels.
    """
    check_operator("dc.scan", op, 2)
    if exclusive and initial is None:
        raise ValueError("dc.scan: an exclusive scan needs initial= (the value before the first element)")
    o = operand("dc.scan", x, accelerator)
    if not dispatch.kernel_dtype(o.dtype):
        raise TypeError(f"dc.scan: x has dtype {o.dtype}, which kernels cannot compute with yet")
    with operator_errors("dc.scan", op, o.dtype):
        return _scan("dc.scan", op, o.buf if o.buf is not None else o.host, axis, exclusive, initial, o.acc, None,
                     vendor=False)


__all__ = ["SCAN_MIN", "cumsum", "flat_nonzero", "scan", "scan_flat"]
