"""numpy on slices of one host array in a pool of Python threads: full reductions of large
host-memory arrays on every core.

numpy's reductions run on one core, but release the GIL while they loop, so slices of one array
reduce in parallel in plain Python threads; the per-slice results are combined here. numpy's own
SIMD loops do the work, so each slice has numpy's accuracy (pairwise summation within a slice,
the slices' sums then added pairwise) and numpy's NaN rules (min/max propagate NaN; argmin/argmax
give the first NaN).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import config

ALIGN = 64  # slice boundaries on multiples of 64 elements: whole cache lines and SIMD blocks

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def workers() -> int:
    """How many slices: the CPUs this process may run on (``DOTCOMPUTE_CPU_THREADS`` if set, as
    the CPU backend)."""
    threads = config.cpu_threads()  # read and checked in one place (a bad value keeps the default)
    if threads is not None:
        return threads
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None or _pool._max_workers < n:  # noqa: SLF001 -- grow once if the count rose
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="dotcompute-ops")
        return _pool


def bounds(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` slices of ``range(n)``, boundaries on multiples of ALIGN (the last takes the rest)."""
    step = -(-n // parts)
    step = -(-step // ALIGN) * ALIGN
    return [(lo, min(lo + step, n)) for lo in range(0, n, step)]


def map_slices(fn: Callable[[np.ndarray], Any], x: np.ndarray, parts: int | None = None) -> tuple[list[Any], list[int]]:
    """``fn`` of each slice of the flat ``x`` (the first in the calling thread), and the slices' starts."""
    flat = x.reshape(-1)
    sl = bounds(flat.size, parts or workers())
    if len(sl) == 1:
        return [fn(flat)], [0]
    futures = [_executor(len(sl) - 1).submit(fn, flat[lo:hi]) for lo, hi in sl[1:]]
    first = fn(flat[sl[0][0]:sl[0][1]])
    return [first] + [f.result() for f in futures], [lo for lo, _ in sl]


def reduce_full(name: str, x: np.ndarray, out_dtype: np.dtype | None = None) -> Any:
    """``sum prod min max mean argmin argmax`` of all of ``x`` (non-empty), as numpy gives it."""
    if name in ("argmin", "argmax"):
        arg = np.argmin if name == "argmin" else np.argmax
        results, starts = map_slices(lambda s: (arg(s), s), x)
        values = np.array([s[i] for i, s in results])
        best = int(arg(values))  # numpy's rule over the slices' winners: first on ties, first NaN
        return np.int64(starts[best] + int(results[best][0]))
    if name in ("min", "max"):
        fn = np.min if name == "min" else np.max
        parts, _ = map_slices(fn, x)
        return fn(np.array(parts))  # NaN in any slice propagates
    kw = {} if out_dtype is None else {"dtype": out_dtype}
    if name == "prod":
        parts, _ = map_slices(lambda s: np.multiply.reduce(s, **kw), x)
        return np.multiply.reduce(np.array(parts))
    parts, _ = map_slices(lambda s: np.add.reduce(s, **kw), x)
    total = np.add.reduce(np.array(parts))
    if name == "mean":
        return (np.asarray(total) / x.size).astype(out_dtype or total.dtype)[()]
    return total


__all__ = ["ALIGN", "bounds", "map_slices", "reduce_full", "workers"]
