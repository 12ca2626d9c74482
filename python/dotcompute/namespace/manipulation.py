"""Array API 2024.12: manipulation functions on Buffers (see docs/array-api.md).

Host-visible buffers (cpu:0): numpy on the zero-copy host view, written straight into the new
Buffer. Other devices: generated copy kernels (``out[...] = view``) and the gather kernel of
``_kernels``, for buffers of 1 to 3 dimensions, the kernels' limit.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..expr.lazy import LazyBuffer, View
from ..expr.views import reshaped
from ..runtime import Buffer
from . import _kernels, _layout
from ._common import (
    as_buffer,
    device_copy,
    fill,
    host,
    no_device_path,
    normalize_axis,
    on_host,
    same_device,
)

__all__ = ["broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims",
           "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack"]


def _shape_of(name: str, shape: Any) -> tuple[int, ...]:
    try:
        dims = tuple(operator.index(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a tuple of ints, got {shape!r}") from None
    return dims


def _reshaped(x: Buffer, shape: tuple[int, ...]) -> Buffer:
    """A copy of ``x`` in ``shape`` (same size) on its device."""
    acc = x.accelerator
    if on_host(x):
        src = host(x)
        return fill(acc, shape, x.dtype, lambda v: v.__setitem__(..., src.reshape(shape)))
    if _layout.takes(x):
        # any number of dimensions: a copy between the two buffers' 1-d forms (namespace/_layout.py)
        return _layout.reshape_copy(x, shape)
    raise no_device_path("dc.reshape", acc, f"a {x.ndim}-d buffer reshaped to {shape}")


def reshape(x: Buffer, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Buffer:
    """``x``'s elements in ``shape`` (C order; one extent may be -1). As numpy's, the result is a
    view on ``x``'s memory where that is possible (a buffer, a contiguous view: expr/views.py),
    else (``copy=True``, a strided view, a 0-d or empty buffer) a new buffer; ``copy=False``
    raises ValueError where a copy is needed."""
    x = as_buffer("dc.reshape", x)
    dims = list(_shape_of("dc.reshape", shape))
    if dims.count(-1) > 1:
        raise ValueError("dc.reshape: only one extent can be -1")
    known = math.prod(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or x.size % known:
            raise ValueError(f"dc.reshape: cannot reshape an array of size {x.size} into shape {tuple(dims)}")
        dims[dims.index(-1)] = x.size // known
    if any(d < 0 for d in dims) or math.prod(dims) != x.size:
        raise ValueError(f"dc.reshape: cannot reshape an array of shape {x.shape} into shape {tuple(dims)}")
    if copy is not True:
        same = reshaped(x, tuple(dims))  # no copy: the same memory in the new shape (numpy's view)
        if same is not None:
            return same
        if copy is False:
            raise ValueError(f"dc.reshape: copy=False, but a {x.shape} buffer cannot be seen as {tuple(dims)} "
                             "without a copy (a strided view, a 0-d or an empty buffer, or on OpenCL a view "
                             "that starts inside its buffer)")
    return _reshaped(x, tuple(dims))


def expand_dims(x: Buffer, /, axis: int = 0) -> Buffer:
    """``x`` with a new axis of length 1 at ``axis`` (-x.ndim-1 <= axis <= x.ndim)."""
    x = as_buffer("dc.expand_dims", x)
    a = normalize_axis("dc.expand_dims", axis, x.ndim + 1)
    return _reshaped(x, x.shape[:a] + (1,) + x.shape[a:])


def squeeze(x: Buffer, /, axis: int | tuple[int, ...]) -> Buffer:
    """``x`` without the named axes, each of which must have length 1."""
    x = as_buffer("dc.squeeze", x)
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = {normalize_axis("dc.squeeze", a, x.ndim) for a in items}
    if len(axes) != len(items):
        raise ValueError(f"dc.squeeze: repeated axis in {axis!r}")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"dc.squeeze: axis {a} has length {x.shape[a]}, not 1")
    return _reshaped(x, tuple(n for d, n in enumerate(x.shape) if d not in axes))


def broadcast_to(x: Buffer, /, shape: tuple[int, ...]) -> Buffer:
    """``x`` broadcast to ``shape`` (numpy's rules), as a new buffer."""
    x = as_buffer("dc.broadcast_to", x)
    shape = _shape_of("dc.broadcast_to", shape)
    np.broadcast_shapes(x.shape, shape)  # numpy's ValueError for shapes that do not broadcast
    if np.broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"dc.broadcast_to: cannot broadcast an array of shape {x.shape} to {shape}")
    acc = x.accelerator
    if on_host(x):
        src = host(x)
        return fill(acc, shape, x.dtype, lambda v: v.__setitem__(..., src))
    if _layout.takes(x):
        # any number of dimensions: those that broadcast alike merge (namespace/_layout.py)
        out = _layout.broadcast_copy(acc, x, shape)
        if out is not None:
            return out
    raise no_device_path("dc.broadcast_to", acc, f"a {x.ndim}-d buffer broadcast to {shape}")


def broadcast_arrays(*arrays: Buffer) -> list[Buffer]:
    """Each array broadcast to their common shape."""
    bufs = [as_buffer("dc.broadcast_arrays", a) for a in arrays]
    if not bufs:
        return []
    same_device("dc.broadcast_arrays", *bufs)
    shape = np.broadcast_shapes(*(b.shape for b in bufs))
    return [broadcast_to(b, shape) for b in bufs]


def _result_dtype(name: str, bufs: Sequence[Buffer]) -> np.dtype:
    try:
        return np.result_type(*(b.dtype for b in bufs))
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from None


def concat(arrays: tuple[Buffer, ...] | list[Buffer], /, *, axis: int | None = 0) -> Buffer:
    """The arrays joined along ``axis`` (None: flattened first); numpy's result dtype."""
    bufs = [as_buffer("dc.concat", a) for a in arrays]
    if not bufs:
        raise ValueError("dc.concat: need at least one array")
    acc = same_device("dc.concat", *bufs)
    dtype = _result_dtype("dc.concat", bufs)
    if axis is None:
        bufs = [b if b.ndim == 1 else _reshaped(b, (b.size,)) for b in bufs]
        ax = 0
    else:
        if any(b.ndim == 0 for b in bufs):
            raise ValueError("dc.concat: zero-dimensional arrays cannot be concatenated")
        ax = normalize_axis("dc.concat", axis, bufs[0].ndim)
    first = bufs[0].shape
    for b in bufs[1:]:
        if b.ndim != len(first) or any(n != m for d, (n, m) in enumerate(zip(b.shape, first, strict=True))
                                       if d != ax):
            raise ValueError(f"dc.concat: shapes {first} and {b.shape} do not match outside axis {ax}")
    shape = first[:ax] + (sum(b.shape[ax] for b in bufs),) + first[ax + 1:]
    if all(on_host(b) for b in bufs):
        views = [host(b) for b in bufs]
        return fill(acc, shape, dtype, lambda v: np.concatenate(views, axis=ax, out=v, casting="unsafe"))
    # any number of dimensions: each piece is one `out[..., a:b, ...] = piece` store, which the
    # expression layer indexes by strides past 3-d
    if not (all(_layout.takes(b) for b in bufs) and dtype in _kernel_dtypes()):
        raise no_device_path("dc.concat", acc, f"arrays of dtype {dtype} and {len(shape)} dimension(s)")
    out = acc.empty(shape, dtype)
    start = 0
    for b in bufs:  # one generated copy kernel per piece, into its slice of the result
        n = b.shape[ax]
        if n and b.size:
            out[(slice(None),) * ax + (slice(start, start + n),)] = b
        start += n
    return out


def _kernel_dtypes() -> frozenset[np.dtype]:
    from ..expr.types import EXPR_DTYPES

    return EXPR_DTYPES


def stack(arrays: tuple[Buffer, ...] | list[Buffer], /, *, axis: int = 0) -> Buffer:
    """The arrays (all of one shape) joined along a new axis."""
    bufs = [as_buffer("dc.stack", a) for a in arrays]
    if not bufs:
        raise ValueError("dc.stack: need at least one array")
    acc = same_device("dc.stack", *bufs)
    shape0 = bufs[0].shape
    for b in bufs[1:]:
        if b.shape != shape0:
            raise ValueError(f"dc.stack: all arrays need one shape, got {shape0} and {b.shape}")
    ax = normalize_axis("dc.stack", axis, len(shape0) + 1)
    dtype = _result_dtype("dc.stack", bufs)
    if all(on_host(b) for b in bufs):
        views = [host(b) for b in bufs]
        shape = shape0[:ax] + (len(bufs),) + shape0[ax:]
        return fill(acc, shape, dtype, lambda v: np.stack(views, axis=ax, out=v, casting="unsafe"))
    return concat([expand_dims(b, axis=ax) for b in bufs], axis=ax)


def unstack(x: Buffer, /, *, axis: int = 0) -> tuple[Buffer, ...]:
    """The slices of ``x`` along ``axis``, as separate arrays."""
    x = as_buffer("dc.unstack", x)
    if x.ndim == 0:
        raise ValueError("dc.unstack: a zero-dimensional array has no axis to unstack")
    ax = normalize_axis("dc.unstack", axis, x.ndim)
    acc = x.accelerator
    rest = x.shape[:ax] + x.shape[ax + 1:]
    if on_host(x):
        src = host(x)
        return tuple(fill(acc, rest, x.dtype, lambda v, i=i: v.__setitem__(..., np.take(src, i, axis=ax)))
                     for i in range(x.shape[ax]))
    if not _layout.copies_ok(x):
        raise no_device_path("dc.unstack", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    if not rest:  # 0-d pieces: each element through a one-element buffer (kernels have no 0-d ones)
        return tuple(_reshaped(device_copy(acc, x[i:i + 1], (1,), x.dtype), ()) for i in range(x.shape[0]))
    return tuple(device_copy(acc, x[(slice(None),) * ax + (i,)], rest, x.dtype) for i in range(x.shape[ax]))


_BLOCK = 1 << 15  # result elements per block of the host repeat: a block stays in cache


def _take_index(name: str, x: Buffer, idx: np.ndarray, axis: int) -> Buffer:
    """``x`` gathered along ``axis`` by host-computed positions (a permutation or a shift: the
    positions are computed, the data stays on the device)."""
    acc = x.accelerator
    if on_host(x):
        src = host(x)
        shape = x.shape[:axis] + (len(idx),) + x.shape[axis + 1:]
        return fill(acc, shape, x.dtype, lambda v: np.take(src, idx, axis=axis, out=v))
    if not _layout.copies_ok(x):
        raise no_device_path(name, acc, f"a {x.ndim}-d buffer of {x.dtype}")
    return _kernels.take_flat(x, _kernels.index_buffer(acc, idx), axis)


def _shifted(name: str, x: Buffer, m: int, axis: int, div: int, shift: int) -> Buffer:
    """``x`` gathered along ``axis`` into ``m`` positions, position j reading ``(j // div + shift) % n``
    (roll, repeat by one count, tile): on devices the positions are computed in the kernel."""
    n = x.shape[axis]
    if on_host(x) or m == 0 or not _layout.copies_ok(x):
        return _take_index(name, x, (np.arange(m) // div + shift) % max(n, 1), axis)
    return _kernels.gather_shifted(x, m, axis, div, shift)


def flip(x: Buffer, /, *, axis: int | tuple[int, ...] | None = None) -> Buffer:
    """``x`` with the order of elements reversed along ``axis`` (None: every axis)."""
    x = as_buffer("dc.flip", x)
    items = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    axes = sorted({normalize_axis("dc.flip", a, x.ndim) for a in items})
    acc = x.accelerator
    key = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))
    if 1 <= x.ndim <= 3 and x.size:
        # numpy's flip is a view; so is this one (a strided window on x's memory, expr/indexing.py),
        # evaluated where it is used: no copy now, on every device
        return x[key]
    if on_host(x):
        src = host(x)
        return fill(acc, x.shape, x.dtype, lambda v: v.__setitem__(..., src[key]))
    if x.ndim == 0 or x.size == 0:
        return _reshaped(x, x.shape)
    raise no_device_path("dc.flip", acc, f"a {x.ndim}-d buffer of {x.dtype}")


def roll(x: Buffer, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Buffer:
    """``x`` shifted circularly by ``shift`` along ``axis`` (None: the flattened array)."""
    x = as_buffer("dc.roll", x)
    acc = x.accelerator
    if axis is None and on_host(x) and not isinstance(shift, tuple):
        src = host(x).reshape(-1)
        return fill(acc, x.shape, x.dtype, lambda v: _roll_into(v.reshape(-1), src, {0: operator.index(shift)}))
    if axis is None:
        if isinstance(shift, tuple):
            raise ValueError("dc.roll: shift must be an int when axis is None")
        flat = _reshaped(x, (x.size,))
        n = x.size
        rolled = flat if n == 0 else _shifted("dc.roll", flat, n, 0, 1, -operator.index(shift) % n)
        return _reshaped(rolled, x.shape)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"dc.roll: {len(shifts)} shift(s) for {len(axes)} axes")
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes, strict=True):
        d = normalize_axis("dc.roll", a, x.ndim)
        total[d] = total.get(d, 0) + operator.index(s)
    if on_host(x):
        src = host(x)
        return fill(acc, x.shape, x.dtype, lambda v: _roll_into(v, src, total))
    out = x
    for d, s in total.items():
        n = x.shape[d]
        if n:
            out = _shifted("dc.roll", out, n, d, 1, -s % n)
    return out if out is not x else _reshaped(x, x.shape)


def _roll_into(out: np.ndarray, src: np.ndarray, shifts: dict[int, int]) -> None:
    """``out[...] = np.roll(src, ...)`` without numpy's temporary: per rolled axis the two pieces
    (the tail moved to the front, the head to the back) are written straight into ``out``."""
    pieces: list[list[tuple[slice, slice]]] = []
    for d in range(src.ndim):
        n = src.shape[d]
        s = shifts.get(d, 0) % n if n else 0
        pieces.append([(slice(None), slice(None))] if s == 0 else
                      [(slice(n - s, None), slice(0, s)), (slice(0, n - s), slice(s, None))])
    for combo in itertools.product(*pieces):
        out[tuple(dst for _, dst in combo)] = src[tuple(part for part, _ in combo)]


def permute_dims(x: Buffer, /, axes: tuple[int, ...]) -> Buffer:
    """``x`` with its axes in the order ``axes`` (a permutation of 0..ndim-1)."""
    x = as_buffer("dc.permute_dims", x)
    perm = tuple(normalize_axis("dc.permute_dims", a, x.ndim) for a in axes)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"dc.permute_dims: axes {axes!r} is not a permutation of the {x.ndim} axes")
    acc = x.accelerator
    shape = tuple(x.shape[a] for a in perm)
    if on_host(x):
        src = host(x)
        return fill(acc, shape, x.dtype, lambda v: v.__setitem__(..., np.transpose(src, perm)))
    if x.size == 0 or perm == tuple(range(x.ndim)):
        return _reshaped(x, shape)
    if not _layout.takes(x):  # any number of dimensions: the copy reads the view by strides
        raise no_device_path("dc.permute_dims", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    # a view whose base dimension d is read by result dimension where[d]: reading it is the copy kernel
    from ..expr.indexing import _base_and_index

    base, index = _base_and_index(x)
    where = {p: d for d, p in enumerate(perm)}
    moved = tuple(e if e[0] == "fix" else ("map", where[e[1]], e[2], e[3]) for e in index)
    return device_copy(acc, LazyBuffer.view(View(base, moved), shape, acc), shape, x.dtype)


def moveaxis(x: Buffer, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Buffer:
    """``x`` with the ``source`` axes moved to ``destination`` (the others keep their order)."""
    x = as_buffer("dc.moveaxis", x)
    src = source if isinstance(source, tuple) else (source,)
    dst = destination if isinstance(destination, tuple) else (destination,)
    if len(src) != len(dst):
        raise ValueError("dc.moveaxis: source and destination need the same number of axes")
    src = tuple(normalize_axis("dc.moveaxis", a, x.ndim) for a in src)
    dst = tuple(normalize_axis("dc.moveaxis", a, x.ndim) for a in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("dc.moveaxis: repeated axis")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def repeat(x: Buffer, repeats: int | Buffer, /, *, axis: int | None = None) -> Buffer:
    """Each element repeated ``repeats`` times along ``axis`` (None: the flattened array)."""
    x = as_buffer("dc.repeat", x)
    if axis is None:
        x = _reshaped(x, (x.size,))
        ax = 0
    else:
        ax = normalize_axis("dc.repeat", axis, x.ndim)
    n = x.shape[ax] if x.ndim else 1
    if isinstance(repeats, Buffer):
        if repeats.dtype.kind not in "iu":
            raise TypeError(f"dc.repeat: repeats must be integers, got {repeats.dtype}")
        counts = np.asarray(repeats).reshape(-1)  # the counts decide the result's shape: read them
    else:
        counts = np.asarray(operator.index(repeats) if not isinstance(repeats, (list, tuple)) else repeats)
    if counts.ndim > 1 or (counts.ndim == 1 and counts.size not in (1, n)):
        raise ValueError(f"dc.repeat: {counts.size} repeat counts for an axis of length {n}")
    if (counts < 0).any():
        raise ValueError("dc.repeat: repeat counts must be non-negative")
    if on_host(x) and counts.size == 1 and x.ndim:
        r = int(counts.reshape(-1)[0])
        src = host(x)
        shape = x.shape[:ax] + (n * r,) + x.shape[ax + 1:]
        # numpy's repeat, a block of the axis at a time, each written straight into the result while
        # it is in cache (no temporary of the whole result, no second pass over it)
        step = max(1, _BLOCK * n // max(1, x.size))
        head = (slice(None),) * ax

        def write(v: np.ndarray) -> None:
            for i in range(0, n, step):
                v[head + (slice(i * r, (i + step) * r),)] = np.repeat(src[head + (slice(i, i + step),)], r, axis=ax)

        return fill(x.accelerator, shape, x.dtype, write)
    if counts.size == 1 and x.ndim:  # one count: positions j // r, computed where the data is
        r = int(counts.reshape(-1)[0])
        return _shifted("dc.repeat", x, n * r, ax, max(r, 1), 0)
    return _take_index("dc.repeat", x, np.repeat(np.arange(n), np.broadcast_to(counts, (n,))), ax)


def tile(x: Buffer, repetitions: tuple[int, ...], /) -> Buffer:
    """``x`` repeated ``repetitions[d]`` times along each axis (numpy's tile)."""
    x = as_buffer("dc.tile", x)
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError("dc.tile: repetitions must be non-negative")
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    out = _reshaped(x, (1,) * (nd - x.ndim) + x.shape) if nd != x.ndim or nd == 0 else x
    if on_host(out):
        src = host(out)
        shape = tuple(n * r for n, r in zip(out.shape, reps, strict=True))
        # the result seen as (r0, n0, r1, n1, ...) is x broadcast along every r axis: one write
        split = tuple(k for n, r in zip(out.shape, reps, strict=True) for k in (r, n))
        spread = src.reshape(tuple(k for n in out.shape for k in (1, n)))
        return fill(x.accelerator, shape, x.dtype, lambda v: v.reshape(split).__setitem__(..., spread))
    for d, r in enumerate(reps):
        if r != 1:
            out = _shifted("dc.tile", out, out.shape[d] * r, d, 1, 0)
    return out if out is not x else _reshaped(x, x.shape)
