"""Reductions: ``sum prod min max mean argmin argmax`` and ``reduce(op, x, ...)`` with a ``@dc.func``.

Full reductions of a Buffer give a 0-d Buffer on its accelerator (``float(s)``, ``s.item()``);
numpy in gives numpy out. Result dtypes follow numpy (int32 sum → int64, mean of ints → float64).
Paths (ops/dispatch.py): numpy on host-memory (CPU) buffers, the tree kernels of
reduce_kernels.py elsewhere or when forced, a numpy round trip for dtypes kernels lack. Large full
reductions of host-memory arrays use every core: sums and means of CPU-backend Buffers run the
lane-blocked kernel (``"lanes"``), the rest numpy on slices in Python threads (``"threads"``).
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..lang import DeviceFunction
from ..lang.builtins import MATH, MathFunction
from ..runtime import Buffer
from ..runtime.default_device import has_float64
from . import dispatch, host_threads
from . import klang as dc
from . import reduce_columns as rc
from . import reduce_kernels as rk
from .arrays import flat, normalize_axis, operand, result, shaped, split_axis

# name → (numpy function, kernel operator or None, whether an empty reduction has an identity)
_OPS: dict[str, tuple[Any, Any, bool]] = {
    "sum": (np.sum, rk.op_add, True),
    "prod": (np.prod, rk.op_mul, True),
    "min": (np.min, rk.op_min, False),
    "max": (np.max, rk.op_max, False),
    "mean": (np.mean, rk.op_add, True),
}


@cache
def _result_dtype(name: str, dtype: np.dtype) -> np.dtype:
    # cached: numpy's rule is asked once per (operation, dtype), not on every call
    fn = _OPS[name][0]
    return np.dtype(fn(np.zeros(1, dtype)).dtype)


def _axes(name: str, axis: Any, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    if isinstance(axis, tuple):
        axes = tuple(normalize_axis(name, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: duplicate value in axis {axis}")
        return axes
    return (normalize_axis(name, axis, ndim),)


def _kept(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> tuple[int, ...]:
    """numpy's keepdims shape: the reduced axes stay, with extent 1."""
    return tuple(1 if axes is None or i in axes else d for i, d in enumerate(shape))


#: Sizes from which the fast full reductions of host memory beat plain numpy (measured on a 2-core
#: AMD EPYC, bench/ops_bench.py --crossover): below, starting threads or a launch costs more than the
#: second core and the SIMD lanes save.
LANES_MIN = 1 << 20
THREADS_MIN = 1 << 22

#: The CPU backend runs a launch of at most this many work-items inline on the calling thread,
#: serially (cpp/backends/cpu/src/launch.h, kInlineItems: few items are usually little work). Each
#: item of the lanes kernel adds SUM_RUN elements, so its launches ask for more items than that (only
#: every ``spread``-th works, the others return at once), which puts them on the backend's thread
#: pool, every core, each contiguous chunk of items with its share of the runs.
CPU_INLINE_ITEMS = 16384

#: Elements per partial of min/max's lanes kernel on the CPU backend (floats): each work-item's
#: run ends in three horizontal folds of its vector accumulators and the partials are reduced again
#: (the tree over 16,384 partials 225 us, over 2,048 144), so runs longer than rk.RUN (1,024, which
#: argmin/argmax's first-index search keeps) cost less per element. dc.min of 16M float32 under
#: prefer("portable") against the default path (numpy in threads), 40 interleaved rounds, two
#: processes: 0.78/0.77x with runs of 1,024, 0.82/0.81 with 4,096, 0.84/0.81 with 8,192,
#: 0.85/0.82 with 16,384.
EXTREME_RUN_CPU = 8192

#: Accumulator dtypes the lanes kernel is used for: sums of the kernel dtypes into numpy's result
#: dtypes (int32 → int64, mean of ints → float64, ``dtype=float64``).
_LANES_ACC = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int64))


def _fast_full(name: str, op: Any, out_dtype: np.dtype, full: bool) -> tuple[str | None, bool]:
    """The fast path that applies to a reduction of all of ``op`` on host memory, and whether
    its size makes it worth taking by default."""
    if not full or op.size == 0 or not dispatch.host_cpu(op.acc):
        return None, False
    if (name in ("sum", "mean") and op.buf is not None and dispatch.kernel_dtype(op.dtype) and op.dtype != np.bool_
            and out_dtype in _LANES_ACC and (out_dtype.kind == "f" or op.dtype.kind != "f")):
        return "lanes", op.size >= LANES_MIN
    if op.dtype.kind in "iuf" and (name in ("min", "max", "argmin", "argmax") or out_dtype.kind in "iuf"):
        return "threads", op.size >= THREADS_MIN
    return None, False


def _lanes_full(name: str, buf: Buffer, out_dtype: np.dtype, shape: tuple[int, ...]) -> Buffer:
    """sum/mean of all of the CPU-backend ``buf`` by the lanes kernel, as a Buffer of ``shape`` (one
    element): one partial per run of ``rk.SUM_RUN`` elements on the backend's threads, then the
    partials by the same kernel until one is left (16M elements: 4,096 partials, then 1), and for a
    mean one division. Every launch is queued behind the first and nothing is waited for, as a GPU
    reduction returns: ``float()``/``.item()`` wait for the value (on 2 cores the Python between the
    launches competes with the kernel's threads more than it overlaps them). Each level is a
    pairwise sum with leaves of 128 elements (lanes_kernel's docstring; docs/operations.md measures it)."""
    acc = buf.accelerator
    x = flat(buf)
    count = x.size
    kernel = rk.lanes_kernel(out_dtype.type)
    spread = 0
    while True:
        runs = -(-x.size // rk.SUM_RUN)
        partial = acc.empty((runs,), out_dtype)
        # the first level is padded onto the thread pool with its runs spread evenly; the later
        # levels are 4,096 times smaller and run as they come
        spread = CPU_INLINE_ITEMS // runs + 1 if not spread else 1
        acc.launch(kernel, runs * spread, x, partial, spread)
        x = partial
        if runs == 1:
            break
    if name == "mean":
        acc.launch(rk.divide_kernel(out_dtype.type), 1, x, count)
    return shaped(x, shape)


def _reduce_named(name: str, x: Any, axis: Any, accelerator: Any, dtype: Any = None,
                  keepdims: bool = False) -> Any:
    op = operand(f"dc.{name}", x, accelerator)
    axes = _axes(f"dc.{name}", axis, len(op.shape))
    if dtype is not None:
        out_dtype = np.dtype(dtype)
        if out_dtype.kind not in "biufc":
            raise TypeError(f"dc.{name}: dtype {out_dtype} is not supported")
    else:
        out_dtype = _result_dtype(name, op.dtype)
    full = axes is None or set(axes) == set(range(len(op.shape)))
    fast, worth = _fast_full(name, op, out_dtype, full)
    path = dispatch.choose(name, op.acc, op.dtype, out_dtype, fast=fast, fast_worth=worth)
    if path in ("lanes", "threads"):
        shape = _kept(op.shape, None) if keepdims else ()
        if path == "lanes":
            return result(op, _lanes_full(name, op.buf, out_dtype, shape))
        value = host_threads.reduce_full(name, op.view(), out_dtype if dtype is not None or name == "mean"
                                         else None)
        return result(op, np.asarray(value, out_dtype).reshape(shape))
    if path in ("vendor", "host"):
        fn = _OPS[name][0]
        extra = {"dtype": out_dtype} if dtype is not None else {}
        value = np.asarray(fn(op.on_host(path), axis=axes, keepdims=keepdims, **extra))
        return result(op, value)
    kept = _kept(op.shape, axes)
    buf = op.device()
    if buf.ndim == 0:  # a 0-d array reduces like its one element
        buf, axes = flat(buf), None
    if axes is None:
        axes = tuple(range(buf.ndim))
    full = set(axes) == set(range(buf.ndim))
    count = 1
    if full and _lanes_on_device(name, buf, out_dtype):
        # a CPU-type device (PoCL): the lanes kernel's SIMD runs, then the tree over their partials
        count = buf.size
        x = flat(buf)
        if name in ("min", "max"):
            buf = _extreme_by_lanes(name == "min", x)
        else:
            runs = -(-x.size // rk.SUM_RUN)
            partial = buf.accelerator.empty((runs,), out_dtype)
            buf.accelerator.launch(rk.lanes_kernel(out_dtype.type), runs, x, partial, 1)
            buf = reduce_flat(rk.op_add, partial, 1, runs, 1, out_dtype, commutative=True)
        axes = ()
    for a in sorted(axes, reverse=True):  # one axis at a time, highest first, so the others keep their place
        count *= buf.shape[a] if buf.ndim else 1
        buf = _portable_axis(name, buf, a, out_dtype)
    if name == "mean":
        buf = _scale(buf, 1.0 / count if count else float("nan"))
    if keepdims:
        buf = shaped(flat(buf), kept)
    elif full and buf.ndim != 0:
        buf = shaped(flat(buf), ())
    return result(op, buf)


def _lanes_on_device(name: str, buf: Buffer, out_dtype: np.dtype) -> bool:
    """Whether the portable full reduction of ``buf`` uses a lanes kernel: on CPU-type devices, where a
    work-item's SIMD lanes beat the work-group tree (16M float32 on PoCL: sum 1.6 ms vs 2.3 ms, min
    1.4 ms vs 3.6 ms), for large sums, means, minima and maxima of the dtypes they are written for."""
    if buf.accelerator.type != "cpu" or buf.size < LANES_MIN or buf.dtype == np.bool_:
        return False
    if name in ("min", "max"):
        # PoCL vectorises the lanes' selects (16M float32: 2.0 ms, the tree 3.6; the raw-bits
        # kernel that floats now take there, _launch_extreme_lanes, is faster still); the CPU
        # backend's compiler keeps the NaN-aware ones scalar (11.9 ms, its tree kernel 9.1), so
        # there floats take the select-only kernel with its separate NaN check (16.5-19.9 ms against
        # the tree's 85-95 in one loaded run) and integers the tree
        if buf.accelerator.backend == "cpu":
            return buf.dtype.kind == "f" and dispatch.kernel_dtype(buf.dtype)
        return dispatch.kernel_dtype(buf.dtype)
    return (name in ("sum", "mean") and out_dtype in _LANES_ACC
            and (out_dtype.kind == "f" or buf.dtype.kind != "f"))


def _launch_extreme_lanes(smallest: bool, x: Buffer, partial: Buffer, run: int = rk.RUN) -> None:
    """The extremes of the flat ``x``'s runs of ``run`` elements into ``partial``: float32/float64
    by the kernel that folds their raw bits as integers (lanes_extreme_fast_kernel), on the CPU
    backend spread over its thread pool; else lanes_extreme_kernel (whose runs are always rk.RUN).
    PoCL's LLVM also vectorises integer min/max better than the lanes' float selects (one run,
    kernels alone, measured with the order-preserving integer keys this kernel first used: 1M
    float32 0.62 vs 1.17 ms, 16M 19.1 vs 29.3, float64 1.0 vs 1.8 and 29.9 vs 37.5)."""
    acc = x.accelerator
    t = x.dtype.type
    if x.dtype.kind == "f" and x.dtype.itemsize in (4, 8):
        runs = partial.size
        # runs * spread > CPU_INLINE_ITEMS: the CPU backend's thread pool; PoCL splits any launch
        spread = CPU_INLINE_ITEMS // runs + 1 if acc.backend == "cpu" else 1
        acc.launch(rk.lanes_extreme_fast_kernel(t, smallest), runs * spread, x, partial, spread, run)
    else:
        assert run == rk.RUN, run
        acc.launch(rk.lanes_extreme_kernel(t, smallest), partial.size, x, partial)


def _extreme_by_lanes(smallest: bool, x: Buffer) -> Buffer:
    """min (``smallest``) or max of all of the flat ``x`` on a CPU-type device (1 element): the
    lanes kernel's per-run extremes, then the tree over them."""
    t = x.dtype.type
    fast_cpu = x.accelerator.backend == "cpu" and x.dtype.kind == "f"
    run = EXTREME_RUN_CPU if fast_cpu else rk.RUN
    runs = -(-x.size // run)
    partial = x.accelerator.empty((runs,), t)
    _launch_extreme_lanes(smallest, x, partial, run)
    if np.dtype(t).kind == "f":
        op = rk.op_min if smallest else rk.op_max
    else:
        op = rk.op_min_int if smallest else rk.op_max_int
    return reduce_flat(op, partial, 1, runs, 1, t, commutative=True)


def _arg_by_lanes(smallest: bool, x: Buffer) -> Buffer:
    """argmin (``smallest``)/argmax of all of the flat ``x`` on the CPU backend: the per-run extremes
    by the lanes kernel, the first run holding the best of them (argmin/argmax of the extremes), then
    the first index in that run -- one pass over the array and a second over one run."""
    t = x.dtype.type
    runs = -(-x.size // rk.RUN)
    partial = x.accelerator.empty((runs,), t)
    _launch_extreme_lanes(smallest, x, partial)
    # the first run holding the extreme (or the first NaN) by the same search as short rows: one
    # program fewer to build than the extreme's reduction plus a search for it (three in all, not five)
    run = arg_by_search("argmin" if smallest else "argmax", partial, 1, runs, 1)
    out = x.accelerator.empty((1,), np.int64)
    x.accelerator.launch(rk.first_in_run_kernel(t), rk.WIDTH, x, partial, run, out, local_size=rk.WIDTH)
    return out


def _portable_axis(name: str, buf: Buffer, axis: int, out_dtype: np.dtype) -> Buffer:
    """Reduces one axis of ``buf`` with the tree/rows kernels; the result has that axis removed."""
    shape = buf.shape if buf.ndim else (1,)
    outer, n, inner = split_axis(shape, axis)
    out_shape = shape[:axis] + shape[axis + 1:]
    if n == 0:
        if not _OPS[name][2]:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        host = np.full(out_shape, 1 if name == "prod" else 0, out_dtype)
        return buf.accelerator.asarray(host)
    op = _OPS[name][1]
    if np.dtype(out_dtype).kind != "f":
        op = {rk.op_min: rk.op_min_int, rk.op_max: rk.op_max_int}.get(op, op)
    out = reduce_flat(op, flat(buf), outer, n, inner, out_dtype, commutative=True)
    return shaped(out, out_shape)


#: On CPU-type devices (PoCL) rows up to this long are folded by one work-item each (the rows kernel)
#: instead of the work-group tree: PoCL runs a whole work-group on one thread anyway, such a loop
#: takes tens of microseconds at most, and the rows kernel is the lighter program to build cold (the
#: first dc.sum of 1,000 float32 in a fresh process: about 1 s less of PoCL's LLVM than with the tree
#: kernel, bench/results/cold_compile.md). The lanes kernels' per-run partials of 16M elements
#: (4,096 for sums, 16,384 for min/max) take this path too, so one program serves every size up to
#: this and the second stage of the large ones.
ROWS_ON_CPU_MAX = 16384


def _rows_on_cpu_device(acc: Any, n: int) -> bool:
    return n <= ROWS_ON_CPU_MAX and acc.type == "cpu"


#: Reduced positions per work-item of the first pass over columns (inner > 1) on CPU devices:
#: 64 rows of a 1,024-column float32 matrix stay in L1 while 16 neighbouring items share each line
#: (16, 32, 64, 128 on PoCL for 1024²: 2.05, 1.56, 1.38, 1.93 ms).
COLUMN_CHUNK = 64


def reduce_flat(op: Any, x: Buffer, outer: int, n: int, inner: int, acc_dtype: Any,
                commutative: bool = False, strided: bool | None = None) -> Buffer:
    """The portable reduction of the flat ``x`` viewed as (outer, n, inner) over n → ``outer*inner`` values.

    ``op``: an associative ``@dc.func`` of two values; ``acc_dtype``: the accumulator and result dtype.
    Each element is converted to ``acc_dtype`` before it is combined. ``n`` must be at least 1.
    ``commutative``: the operator may also be reordered (the built-in ones), which lets the
    kernel read interleaved, coalesced elements (``strided``; by default on non-CPU devices).
    """
    acc = x.accelerator
    rows = outer * inner
    acc_t = np.dtype(acc_dtype).type
    out = acc.empty((rows,), acc_t)
    if rows == 0:
        return out
    if acc.type == "cpu" and commutative and inner >= rc.BLOCK:
        # columns (x.sum(axis=0)) on CPU devices: BLOCK columns per item (reduce_columns.py; PoCL 1024²
        # float32 1.6 -> 0.8 ms, 4096² 31 -> 11, (131072, 8) 5.2 -> 0.9), chunks of COLUMN_CHUNK rows
        # first where there are many, then the chunks' partials
        if n > 2 * COLUMN_CHUNK:
            partial = rc.fold_column_blocks(op, x, outer, n, inner, acc_t, COLUMN_CHUNK)
            return reduce_flat(op, partial, outer, -(-n // COLUMN_CHUNK), inner, acc_dtype, commutative, strided)
        return rc.fold_column_blocks(op, x, outer, n, inner, acc_t, n)
    if acc.type == "cpu" and inner >= 16 and n > 2 * COLUMN_CHUNK and commutative:
        # columns (x.sum(axis=0)): chunks of rows first, then the chunks' partials (COLUMN_CHUNK)
        chunks = -(-n // COLUMN_CHUNK)
        partial = acc.empty((outer * chunks * inner,), acc_t)
        acc.launch(rk.column_chunks_kernel(op, acc_t), partial.size, x, partial, n, inner, COLUMN_CHUNK)
        return reduce_flat(op, partial, outer, chunks, inner, acc_dtype, commutative, strided)
    if n <= 32 or rows >= 1024 or _rows_on_cpu_device(acc, n):
        acc.launch(rk.rows_kernel(op, acc_t), rows, x, out, n, inner)
        return out
    src, src_n, src_inner = x, n, inner
    while True:
        chunk, chunks = rk.plan(rows, src_n)
        dst = out if chunks == 1 else acc.empty((rows * chunks,), acc_t)
        # interleaved reads pay on GPUs (coalescing); CPU devices prefer each item's own contiguous run
        if not commutative:
            mode = rk.ORDERED
        elif strided is None:
            mode = rk.UNROLLED if acc.type == "cpu" else rk.STRIDED
        else:
            mode = rk.STRIDED if strided else rk.UNROLLED
        acc.launch(rk.tree_kernel(op, acc_t, mode), rows * chunks * rk.WIDTH, src, dst, src_n, src_inner,
                   chunk, chunks, local_size=rk.WIDTH)
        if chunks == 1:
            return out
        src, src_n, src_inner = dst, chunks, 1


@cache
def _scale_kernel(dtype: Any, factor_t: Any = dc.float64) -> Any:
    T = dtype  # noqa: N806

    @dc.kernel
    def scale(x: dc.Buffer, factor: factor_t):
        i = dc.global_id(0)
        if i < x.shape[0]:
            x[i] = T(x[i] * factor)

    return scale


def _scale(buf: Buffer, factor: float) -> Buffer:
    f = flat(buf)
    if f.size:
        # the factor in double where the device has it (Metal has no float64: float32 there)
        factor_t = dc.float64 if has_float64(buf.accelerator) else dc.float32
        buf.accelerator.launch(_scale_kernel(buf.dtype.type, factor_t), f.size, f, factor)
    return shaped(f, buf.shape)


# ------------------------------------------------------------------------------------ public API
def sum(x: Any, axis: Any = None, dtype: Any = None, *, keepdims: bool = False,  # noqa: A001
        accelerator: Any = "auto") -> Any:
    """Sum of the elements (over ``axis``), numpy's result dtype (or ``dtype``, the accumulator);
    a 0-d Buffer for a full reduction."""
    return _reduce_named("sum", x, axis, accelerator, dtype, keepdims)


def prod(x: Any, axis: Any = None, dtype: Any = None, *, keepdims: bool = False,
         accelerator: Any = "auto") -> Any:
    """Product of the elements (over ``axis``)."""
    return _reduce_named("prod", x, axis, accelerator, dtype, keepdims)


def amin(x: Any, axis: Any = None, *, keepdims: bool = False, accelerator: Any = "auto") -> Any:
    """Smallest element (over ``axis``); NaN if any is NaN, as numpy."""
    return _reduce_named("min", x, axis, accelerator, None, keepdims)


def amax(x: Any, axis: Any = None, *, keepdims: bool = False, accelerator: Any = "auto") -> Any:
    """Largest element (over ``axis``); NaN if any is NaN, as numpy."""
    return _reduce_named("max", x, axis, accelerator, None, keepdims)


def mean(x: Any, axis: Any = None, dtype: Any = None, *, keepdims: bool = False,
         accelerator: Any = "auto") -> Any:
    """Arithmetic mean (over ``axis``); float64 for integer input, as numpy (or ``dtype``)."""
    return _reduce_named("mean", x, axis, accelerator, dtype, keepdims)


def _arg(name: str, x: Any, axis: Any, accelerator: Any, keepdims: bool = False) -> Any:
    op = operand(f"dc.{name}", x, accelerator)
    ax = None if axis is None else normalize_axis(f"dc.{name}", axis, len(op.shape))
    if op.size == 0:
        if ax is None or op.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        # numpy: the rows along a non-empty axis of an empty array are none: an empty int64 result
        kept = _kept(op.shape, (ax,)) if keepdims else op.shape[:ax] + op.shape[ax + 1:]
        return result(op, np.zeros(kept, np.int64))
    fast, worth = _fast_full(name, op, np.dtype(np.int64), ax is None or len(op.shape) <= 1)
    path = dispatch.choose(name, op.acc, op.dtype, fast=fast, fast_worth=worth)
    if path == "threads":
        value = np.asarray(host_threads.reduce_full(name, op.view()), np.int64)
        return result(op, value.reshape(_kept(op.shape, None) if keepdims else ()))
    if path in ("vendor", "host"):
        fn = np.argmin if name == "argmin" else np.argmax
        return result(op, np.asarray(fn(op.on_host(path), axis=ax, keepdims=keepdims)))
    buf = op.device()
    shape = buf.shape if buf.ndim else (1,)
    if ax is None:
        outer, n, inner, out_shape = 1, op.size, 1, ()
    else:
        outer, n, inner = split_axis(shape, ax)
        out_shape = shape[:ax] + shape[ax + 1:]
    idx = arg_by_search(name, flat(buf), outer, n, inner)
    if keepdims:
        out_shape = _kept(op.shape, None if ax is None else (ax,))
    return result(op, shaped(idx, out_shape))


def arg_by_search(name: str, x: Buffer, outer: int, n: int, inner: int) -> Buffer:
    """argmin/argmax of each (outer, inner) row of the flat ``x`` along n (NaN: the first NaN, as
    numpy). CPU-type devices: chunks' (value, first index) pairs, then the pairs (_arg_chunked), for
    all but short rows; elsewhere the row's min/max by the fast reduction, then the first index
    holding it."""
    rows = outer * inner
    t = x.dtype.type
    if _arg_by_chunks(x, outer, n, inner):
        return _arg_chunked(name == "argmin", x, outer, n, inner)
    if n <= 32 or rows >= 1024 or _rows_on_cpu_device(x.accelerator, n):
        # short rows, or rows enough to fill the device: one work-item per row
        out = x.accelerator.empty((rows,), np.int64)
        x.accelerator.launch(_arg_rows_kernel(name == "argmin", t), rows, x, out, n, inner)
        return out
    if rows == 1 and _lanes_on_device("min", x, x.dtype):
        return _arg_by_lanes(name == "argmin", x)
    if np.dtype(t).kind == "f":
        op = rk.op_min if name == "argmin" else rk.op_max
    else:
        op = rk.op_min_int if name == "argmin" else rk.op_max_int
    target = reduce_flat(op, x, outer, n, inner, t, commutative=True)
    return _first_index(x, target, rows, n, inner)


@cache
def _arg_rows_kernel(smallest: bool, dtype: Any) -> Any:
    """``out[r]`` = the index along n of row r's first smallest (``smallest``) or largest element, or of
    its first NaN (numpy's rule), one work-item per row as ``rows_kernel`` reduces min/max. A work-group
    per row (the pair tree kernel) cost 256 work-items and 8 barriers for rows of 8 elements: 0.55 s for
    (100,000, 8) float32 on PoCL, where min took 6 ms."""
    T = dtype  # noqa: N806
    better = rk.less_nan_first if smallest else rk.greater_nan_first

    @dc.kernel
    def arg_rows(x: dc.Buffer, out: dc.Buffer[dc.int64], n: dc.int64, inner: dc.int64):
        r = dc.global_id(0)
        if r < out.shape[0]:
            o = r // inner
            j = r - o * inner
            base = o * n * inner + j
            v = T(x[base])
            w = dc.int64(0)
            for k in range(1, n):
                v2 = T(x[base + k * inner])
                if better(v2, v):
                    v = v2
                    w = k
            out[r] = w

    return arg_rows


def _arg_by_chunks(x: Buffer, outer: int, n: int, inner: int) -> bool:
    """Whether argmin/argmax of ``x`` as (outer, n, inner) take the chunked passes (rk.arg_chunks_kernel):
    on CPU-type devices, for integer and float dtypes, along contiguous rows longer than 32 (1024 rows
    of 1,024 float32 on PoCL: one item walking its row with a (value, index) branch per element took
    13x numpy's time) and along columns longer than two chunks (131,072 x 8: a work-group tree and a
    second search pass, 4x). All of a large array on the CPU backend keeps the lanes kernel, which is
    spread over that backend's thread pool (a launch of few items runs inline there)."""
    acc = x.accelerator
    # the kernels' integer keys: integers, float32 and float64 (float16 is not a kernel dtype)
    if (acc.type != "cpu" or x.dtype.kind not in "iuf" or not dispatch.kernel_dtype(x.dtype)
            or (x.dtype.kind == "f" and x.dtype.itemsize not in (4, 8))):
        return False
    if inner == 1:
        return n > 32 and not (outer == 1 and acc.backend == "cpu" and _lanes_on_device("min", x, x.dtype))
    return n > 2 * COLUMN_CHUNK


def column_arg_chunk(inner: int) -> int:
    """Positions per work-item of the arg pass down columns of ``inner`` (> 1) on CPU-type devices:
    COLUMN_CHUNK for wide ones (their lines stay in L1), longer chunks for narrow ones, where an
    item's fixed cost (three 64-bit divisions) weighs: (131,072, 8) float32 on PoCL, the kernel
    alone, 6.8 / 3.9 / 4.2 ms with chunks of 64 / 256 / 1,024; 1024² 5.8 / 7.6 / 13.6 ms."""
    return builtins.max(COLUMN_CHUNK, 4096 // inner)  # this module's max is dc.max


def _arg_chunked(smallest: bool, x: Buffer, outer: int, n: int, inner: int) -> Buffer:
    """argmin (``smallest``)/argmax along n of the flat ``x`` as (outer, n, inner) on a CPU-type device:
    each chunk's (value, first index) in one pass over the data, then, when a row has several chunks,
    one item per row over its chunks' pairs in order."""
    acc = x.accelerator
    t = x.dtype.type
    chunk = builtins.min(n, rk.ARG_RUN) if inner == 1 else column_arg_chunk(inner)  # not dc.min
    chunks = -(-n // chunk)
    vals = acc.empty((outer * chunks * inner,), t)
    idx = acc.empty((outer * chunks * inner,), np.int64)
    if inner == 1:
        acc.launch(rk.arg_chunks_kernel(t, smallest), vals.size, x, vals, idx, n, chunk)
    else:
        acc.launch(rk.arg_columns_kernel(t, smallest), vals.size, x, vals, idx, n, inner, chunk)
    if chunks == 1:
        return idx
    out = acc.empty((outer * inner,), np.int64)
    acc.launch(rk.arg_pairs_kernel(t, smallest), out.size, vals, idx, out, chunks, inner)
    return out


def _first_index(x: Buffer, target: Buffer, rows: int, n: int, inner: int) -> Buffer:
    """Per (outer, inner) row of the flat ``x``: the first index along n holding ``target[row]``."""
    acc = x.accelerator
    t = x.dtype.type
    chunk, chunks = rk.plan(rows, n)
    partial = acc.empty((rows * chunks,), np.int64)
    acc.launch(rk.first_index_kernel(t), rows * chunks * rk.WIDTH, x, target, partial, n, inner, chunk, chunks,
               local_size=rk.WIDTH)
    if chunks == 1:
        return partial
    return reduce_flat(rk.op_min_int, partial, rows, chunks, 1, np.int64, commutative=True)


def argmin(x: Any, axis: Any = None, *, keepdims: bool = False, accelerator: Any = "auto") -> Any:
    """Index of the smallest element (flat when ``axis`` is None); the first one on ties and NaN."""
    return _arg("argmin", x, axis, accelerator, keepdims)


def argmax(x: Any, axis: Any = None, *, keepdims: bool = False, accelerator: Any = "auto") -> Any:
    """Index of the largest element (flat when ``axis`` is None); the first one on ties and NaN."""
    return _arg("argmax", x, axis, accelerator, keepdims)


def check_operator(name: str, op: Any, arity: int) -> None:
    """A user operator must be a ``@dc.func`` of ``arity`` parameters: a KernelTypeError otherwise."""
    if not isinstance(op, DeviceFunction):
        hint = ""
        if isinstance(op, MathFunction):
            # the language's max/min ignore NaN inside kernels (C's fmax), numpy's propagate it: a
            # built-in is not taken as an operator; the named reductions are numpy's
            hint = (f" (dc.{op.name} is a built-in math function; for numpy's reduction call "
                    f"dc.{op.name}(x, axis=...), or write the operator as a @dc.func)")
        raise KernelTypeError(f"{name}: op must be a @dc.func device function of {arity} values, "
                              f"got {type(op).__name__}{hint}")
    params = inspect.signature(op.pyfunc).parameters
    if len(params) != arity:
        raise KernelTypeError(f"{name}: op {op.__name__!r} takes {len(params)} parameter(s); "
                              f"an operator combines exactly {arity} values")


@contextmanager
def operator_errors(name: str, op: Any, dtype: Any) -> Iterator[None]:
    """A KernelTypeError from compiling a kernel around the user's ``op`` (a parameter type that
    does not take the elements' dtype, a body that does not type-check) names the operation, the
    operator and where it is defined, not the library kernel that calls it."""
    try:
        yield
    except KernelTypeError as exc:
        if str(exc).startswith(name):
            raise
        try:
            where = f"{inspect.getsourcefile(op.pyfunc)}:{inspect.getsourcelines(op.pyfunc)[1]}"
        except (OSError, TypeError, AttributeError):  # a built-in math function has no Python source
            where = "a built-in function"
        detail = getattr(exc, "msg_only", None) or str(exc)
        raise KernelTypeError(f"{name}: op {getattr(op, '__name__', op)!r} ({where}) cannot combine "
                              f"{np.dtype(dtype)} values: {detail}", filename=where.rsplit(":", 1)[0]) from exc


@cache
def _initial_kernel(op: Any, dtype: Any) -> Any:
    T = dtype  # noqa: N806

    # the initial value travels in a one-element buffer of x's dtype: a float64 parameter would
    # round int64/uint64 values beyond 2**53
    @dc.kernel
    def apply_initial(x: dc.Buffer, initial: dc.Buffer):
        i = dc.global_id(0)
        if i < x.shape[0]:
            x[i] = op(T(initial[0]), x[i])

    return apply_initial


def reduce(op: Any, x: Any, axis: Any = None, initial: Any = None, *, accelerator: Any = "auto") -> Any:
    """Folds ``x`` (over ``axis``) with ``op``, an associative ``@dc.func`` of two values.

    ``initial`` is combined first (``op(initial, ...)``) and is the result of an empty reduction;
    without it an empty reduction is a ValueError. Always the portable kernel (a user operator has
    no vendor implementation). The result has ``x``'s dtype.
    """
    check_operator("dc.reduce", op, 2)
    o = operand("dc.reduce", x, accelerator)
    if not dispatch.kernel_dtype(o.dtype):
        raise TypeError(f"dc.reduce: x has dtype {o.dtype}, which kernels cannot compute with yet")
    axes = _axes("dc.reduce", axis, len(o.shape))
    dispatch.choose("reduce", o.acc, o.dtype, vendor=False)
    with operator_errors("dc.reduce", op, o.dtype):
        return _reduce_with(op, o, axes, initial)


def _reduce_with(op: Any, o: Any, axes: Any, initial: Any) -> Any:
    buf = o.device()
    if buf.ndim == 0:
        buf, axes = flat(buf), None
    if axes is None:
        axes = tuple(range(buf.ndim))
    full = set(axes) == set(range(buf.ndim))
    t = buf.dtype.type
    for a in sorted(axes, reverse=True):
        shape = buf.shape if buf.ndim else (1,)
        outer, n, inner = split_axis(shape, a)
        out_shape = shape[:a] + shape[a + 1:]
        if n == 0:
            if initial is None:
                raise ValueError("dc.reduce: zero-size reduction with no initial value")
            buf = o.acc.asarray(np.full(out_shape, initial, t))
            initial = None  # already in
            continue
        buf = shaped(reduce_flat(op, flat(buf), outer, n, inner, t), out_shape)
    if initial is not None:
        f = flat(buf)
        if f.size:
            o.acc.launch(_initial_kernel(op, t), f.size, f, o.acc.asarray(np.array([initial], t)))
        buf = shaped(f, buf.shape)
    if full and buf.ndim != 0:
        buf = shaped(flat(buf), ())
    return result(o, buf)


class ArrayMathFunction(MathFunction):
    """``dc.min`` / ``dc.max``: in kernels the elementwise math function (the frontend sees a
    MathFunction); called on one array, the reduction (``dc.min(x, axis=0)``); on two values,
    numpy's elementwise minimum/maximum, as before."""

    def __init__(self, base: MathFunction, reduction: Any) -> None:
        super().__init__(base.name, base.ir_name, base._host)
        self._reduction = reduction

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or (len(args) == 1 and (isinstance(args[0], (Buffer, np.ndarray, list, tuple)))):
            return self._reduction(*args, **kwargs)
        return super().__call__(*args)


min = ArrayMathFunction(MATH["min"], amin)  # noqa: A001
max = ArrayMathFunction(MATH["max"], amax)  # noqa: A001

__all__ = ["ArrayMathFunction", "amax", "amin", "arg_by_search", "argmax", "argmin", "check_operator",
           "max", "mean", "min", "operator_errors", "prod", "reduce", "reduce_flat", "sum"]

