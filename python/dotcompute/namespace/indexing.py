"""Array API 2024.12: indexing functions (take, take_along_axis) on Buffers (see docs/array-api.md).

On devices whose memory is not host memory the gather kernels of ``_kernels`` read the elements;
out-of-range indices are an IndexError there too (checked by two device reductions of the
indices, so a kernel never reads outside the buffer).
"""

from __future__ import annotations

import numpy as np

from ..runtime import Buffer
from . import _kernels
from ._common import as_buffer, concrete, fill, host, kernel_ok, no_device_path, normalize_axis, on_host, same_device
from ._layout import copies_ok

__all__ = ["take", "take_along_axis"]


def _check_indices(name: str, idx: Buffer, n: int) -> None:
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {idx.dtype}")
    if idx.size == 0:
        return
    from ..expr import max as _max
    from ..expr import min as _min
    from ..expr import sum as _sum

    # one fused kernel counts the indices out of range (the comparisons never reach memory) and one
    # number comes back; separate min and max reductions of int64 were the portable tree kernel
    # twice on PoCL (15 ms of a 1-D take of 256K indices, cpu:0's whole take 0.5 ms)
    outside = (idx >= n) if idx.dtype.kind == "u" else (idx < -n) | (idx >= n)
    if int(_sum(outside)) == 0:
        return
    lo, hi = int(_min(idx)), int(_max(idx))  # the error path: which index to name
    if lo < -n or hi >= n:
        bad = lo if lo < -n else hi
        raise IndexError(f"{name}: index {bad} is out of bounds for an axis of size {n}")


def take(x: Buffer, indices: Buffer, /, *, axis: int | None = None) -> Buffer:
    """The elements of ``x`` at ``indices`` (1-D integers) along ``axis`` (optional for 1-D ``x``)."""
    x = as_buffer("dc.take", x)
    idx = as_buffer("dc.take", indices, x.accelerator)
    acc = same_device("dc.take", x, idx)
    if idx.ndim != 1:
        raise ValueError(f"dc.take: indices must be 1-D, got shape {idx.shape}")
    if axis is None:
        if x.ndim != 1:
            raise ValueError("dc.take: axis is required for arrays of more than one dimension")
        ax = 0
    else:
        ax = normalize_axis("dc.take", axis, x.ndim)
    n = x.shape[ax]
    if on_host(x):
        src, where = host(x), host(idx)
        if where.dtype.kind not in "iu":
            raise TypeError(f"dc.take: indices must be integers, got {where.dtype}")
        shape = x.shape[:ax] + (idx.size,) + x.shape[ax + 1:]
        if x.ndim == 1:
            return fill(acc, shape, x.dtype, lambda v: _take_1d_into(v, src, where, n))
        if where.size and (where.min() < -n or where.max() >= n):
            bad = where.min() if where.min() < -n else where.max()
            raise IndexError(f"dc.take: index {bad} is out of bounds for an axis of size {n}")
        # checked above, so mode="wrap" (in-range negatives count from the end, as "raise" does):
        # numpy buffers out= in mode="raise", a second copy of the result
        return fill(acc, shape, x.dtype, lambda v: np.take(src, where, axis=ax, out=v, mode="wrap"))
    _check_indices("dc.take", idx, n)
    if not copies_ok(x) or not kernel_ok(idx):
        raise no_device_path("dc.take", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    return _kernels.take_flat(concrete(x), concrete(idx), ax)


def take_along_axis(x: Buffer, indices: Buffer, /, *, axis: int = -1) -> Buffer:
    """``x`` read at ``indices`` along ``axis`` (indices broadcast with ``x`` on the other axes)."""
    x = as_buffer("dc.take_along_axis", x)
    idx = as_buffer("dc.take_along_axis", indices, x.accelerator)
    acc = same_device("dc.take_along_axis", x, idx)
    if idx.ndim != x.ndim:
        raise ValueError(f"dc.take_along_axis: indices have {idx.ndim} dimension(s), x has {x.ndim}")
    ax = normalize_axis("dc.take_along_axis", axis, x.ndim)
    if on_host(x):
        src, where = host(x), host(idx)
        if where.dtype.kind not in "iu":
            raise TypeError(f"dc.take_along_axis: indices must be integers, got {where.dtype}")
        shape = np.broadcast_shapes(src.shape[:ax] + (1,) + src.shape[ax + 1:],
                                    where.shape[:ax] + (1,) + where.shape[ax + 1:])
        shape = shape[:ax] + (where.shape[ax],) + shape[ax + 1:]
        return fill(acc, shape, x.dtype, lambda v: _along_into(v, src, where, ax))
    _check_indices("dc.take_along_axis", idx, x.shape[ax])
    if not copies_ok(x) or not kernel_ok(idx):
        raise no_device_path("dc.take_along_axis", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    # broadcast both to one shape outside the axis (numpy's rule), then one gather kernel
    from .manipulation import broadcast_to

    other = np.broadcast_shapes(x.shape[:ax] + (1,) + x.shape[ax + 1:], idx.shape[:ax] + (1,) + idx.shape[ax + 1:])
    xs = other[:ax] + (x.shape[ax],) + other[ax + 1:]
    ids = other[:ax] + (idx.shape[ax],) + other[ax + 1:]
    xb = x if x.shape == xs else broadcast_to(x, xs)
    ib = idx if idx.shape == ids else broadcast_to(idx, ids)
    return _kernels.take_along(concrete(xb), concrete(ib), ax)


_BLOCK = 1 << 16  # result elements per block of the host gathers: a block's temporary stays in cache


def _along_into(out: np.ndarray, src: np.ndarray, where: np.ndarray, ax: int) -> None:
    """``out[...] = np.take_along_axis(src, where, axis=ax)``, block by block along another axis
    (or the axis itself when there is no other) so numpy's temporary result stays in cache and
    is written once into the result instead of copied afterwards as a whole."""
    other = next((d for d in range(out.ndim) if d != ax and out.shape[d] > 1), None)
    if other is None or out.size == 0:
        out[...] = np.take_along_axis(src, where, axis=ax)
        return
    step = max(1, _BLOCK * out.shape[other] // out.size)
    for i in range(0, out.shape[other], step):
        part = (slice(None),) * other + (slice(i, i + step),)
        s = src if src.shape[other] == 1 else src[part]
        w = where if where.shape[other] == 1 else where[part]
        out[part] = np.take_along_axis(s, w, axis=ax)


def _take_1d_into(out: np.ndarray, src: np.ndarray, where: np.ndarray, n: int) -> None:
    """``out[...] = src[where]`` for 1-d ``src``, a block of indices at a time: each block is
    checked (its min and max while it is in cache, so the indices are read from memory once)
    and gathered straight into its part of ``out``."""
    for i0 in range(0, where.size, _BLOCK):
        part = where[i0:i0 + _BLOCK]
        lo, hi = part.min(), part.max()
        if lo < -n or hi >= n:
            raise IndexError(f"dc.take: index {lo if lo < -n else hi} is out of bounds for an axis of size {n}")
        # checked, so mode="wrap" (in-range negatives count from the end, as "raise" does): numpy
        # buffers out= in mode="raise", a second copy
        np.take(src, part, out=out[i0:i0 + _BLOCK], mode="wrap")
