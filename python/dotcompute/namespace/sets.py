"""Array API 2024.12: set functions on Buffers (see docs/array-api.md).

On devices: a stable argsort of the flattened input (``dotcompute.ops``), the sorted values
gathered, a flag where each run of equal values starts (NaN never equals NaN, so each NaN is its
own value, as in numpy 2's ``unique_*``), a prefix sum of the flags numbering the runs, and
scatter kernels writing each run's value, first index, count and every element's run number.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import ops as _ops
from ..ops import arrays
from ..runtime import Accelerator, Buffer
from . import _kernels
from ._common import as_buffer, concrete, fill, host, kernel_ok, no_device_path, on_device, on_host, wrap

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Buffer
    indices: Buffer
    inverse_indices: Buffer
    counts: Buffer


class UniqueCountsResult(NamedTuple):
    values: Buffer
    counts: Buffer


class UniqueInverseResult(NamedTuple):
    values: Buffer
    inverse_indices: Buffer


def _device_unique(name: str, x: Buffer, want_inverse: bool) -> tuple[Buffer, Buffer, Buffer | None, Buffer]:
    """(values, first indices, inverse (flat) or None, counts), all on x's device."""
    acc = x.accelerator
    if not kernel_ok(x) and x.ndim != 0:
        raise no_device_path(name, acc, f"a {x.ndim}-d buffer of {x.dtype}")
    if x.ndim == 0:
        from .manipulation import reshape

        x = reshape(x, (1,))
    flat = arrays.flat(concrete(x))
    n = flat.size
    if n == 0:
        empty = acc.empty((0,), np.int64)
        return acc.empty((0,), x.dtype), empty, (empty if want_inverse else None), acc.empty((0,), np.int64)
    with on_device(flat):  # the sort stays on the device (ops would copy to the host on PoCL)
        perm = _ops.argsort(flat)
    s = _kernels.take_flat(flat, perm, 0)
    flags = acc.empty((n,), np.int64)
    acc.launch(_kernels.run_starts, n, s, flags)
    pos = _ops.cumsum(flags)
    k = int(np.asarray(pos[n - 1]))  # how many distinct values: the result's length
    values = acc.empty((k,), x.dtype)
    first = acc.empty((k,), np.int64)
    starts = acc.empty((k,), np.int64)
    acc.launch(_kernels.scatter_runs, n, s, perm, flags, pos, values, first, starts)
    counts = acc.empty((k,), np.int64)
    acc.launch(_kernels.run_counts, k, starts, counts, n)
    inverse = None
    if want_inverse:
        inverse = acc.empty((n,), np.int64)
        acc.launch(_kernels.scatter_inverse, n, perm, pos, inverse)
    return values, first, inverse, counts


def _dense_ints(src: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """Integers whose values span at most about twice their count, as offsets from the smallest
    (intp), with the smallest and the span; None otherwise (numpy's sort decides then)."""
    if src.dtype.kind not in "iu" or src.dtype == np.uint64 or src.size == 0:
        return None
    lo, hi = int(src.min()), int(src.max())
    span = hi - lo + 1
    if span > 2 * src.size + 1024:
        return None
    return np.subtract(src.reshape(-1), lo, dtype=np.intp), lo, span


def _host_unique_dense(acc: Accelerator, x: Buffer, want_first: bool,
                       want_inverse: bool = True) -> tuple[Buffer | None, ...] | None:
    """(values, first indices or None, inverse or None, counts) of dense integers by counting
    (np.bincount), sorted as numpy's unique_counts/unique_inverse/unique_all give them, without
    numpy's sort or hash of the whole input; None where the values are not dense integers."""
    src = host(x)
    dense = _dense_ints(src)
    if dense is None:
        return None
    offsets, lo, span = dense
    counts = np.bincount(offsets, minlength=span)
    present = counts > 0
    rank = np.cumsum(present) - 1  # each value's position among the distinct ones
    kept = np.flatnonzero(present)
    values = wrap(acc, (kept + lo).astype(x.dtype))
    first = None
    if want_first:
        earliest = np.full(span, offsets.size, np.int64)
        np.minimum.at(earliest, offsets, np.arange(offsets.size, dtype=np.int64))
        first = wrap(acc, earliest[kept])
    inverse = None
    if want_inverse:
        inverse = fill(acc, x.shape, np.int64, lambda v: np.take(rank, offsets, out=v.reshape(-1)))
    return values, first, inverse, wrap(acc, counts[kept].astype(np.int64))


def _shaped_inverse(inv: Buffer, shape: tuple[int, ...]) -> Buffer:
    if inv.shape == shape:
        return inv
    from .manipulation import reshape

    return reshape(inv, shape)


def unique_all(x: Buffer, /) -> UniqueAllResult:
    """Distinct values (sorted), the first index of each, each element's value number, and counts."""
    x = as_buffer("dc.unique_all", x)
    acc = x.accelerator
    if on_host(x):
        dense = _host_unique_dense(acc, x, True)
        if dense is not None:
            return UniqueAllResult(*dense)
        r = np.unique_all(host(x))
        return UniqueAllResult(wrap(acc, r.values), wrap(acc, r.indices.astype(np.int64)),
                               wrap(acc, r.inverse_indices.astype(np.int64).reshape(x.shape)),
                               wrap(acc, r.counts.astype(np.int64)))
    values, first, inverse, counts = _device_unique("dc.unique_all", x, True)
    assert inverse is not None
    return UniqueAllResult(values, first, _shaped_inverse(inverse, x.shape), counts)


def unique_counts(x: Buffer, /) -> UniqueCountsResult:
    """Distinct values (sorted) and how often each occurs."""
    x = as_buffer("dc.unique_counts", x)
    acc = x.accelerator
    if on_host(x):
        dense = _host_unique_dense(acc, x, False, False)
        if dense is not None:
            return UniqueCountsResult(dense[0], dense[3])
        r = np.unique_counts(host(x))
        return UniqueCountsResult(wrap(acc, r.values), wrap(acc, r.counts.astype(np.int64)))
    values, _, _, counts = _device_unique("dc.unique_counts", x, False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Buffer, /) -> UniqueInverseResult:
    """Distinct values (sorted) and, for each element of ``x``, the position of its value."""
    x = as_buffer("dc.unique_inverse", x)
    acc = x.accelerator
    if on_host(x):
        dense = _host_unique_dense(acc, x, False)
        if dense is not None:
            return UniqueInverseResult(dense[0], dense[2])
        r = np.unique_inverse(host(x))
        return UniqueInverseResult(wrap(acc, r.values), wrap(acc, r.inverse_indices.astype(np.int64).reshape(x.shape)))
    values, _, inverse, _ = _device_unique("dc.unique_inverse", x, True)
    assert inverse is not None
    return UniqueInverseResult(values, _shaped_inverse(inverse, x.shape))


def unique_values(x: Buffer, /) -> Buffer:
    """The distinct values of ``x``, sorted (each NaN is distinct)."""
    x = as_buffer("dc.unique_values", x)
    if on_host(x):
        dense = _host_unique_dense(x.accelerator, x, False, False)  # sorted, as on the devices
        if dense is not None:
            return dense[0]
        return wrap(x.accelerator, np.unique_values(host(x)))
    return _device_unique("dc.unique_values", x, False)[0]
