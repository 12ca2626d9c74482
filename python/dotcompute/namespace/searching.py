"""Array API 2024.12: searching functions on Buffers (see docs/array-api.md).

argmin/argmax/count_nonzero reduce with the operations of ``dotcompute.ops`` on devices;
``nonzero`` marks, prefix-sums (``ops.cumsum``) and scatters the coordinates; ``searchsorted``
is one binary search per value (``_kernels.search_sorted``, NaN sorted last as numpy does).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .. import expr as _expr
from .. import ops as _ops
from ..ops import arrays
from ..ops.scan import flat_nonzero
from ..runtime import Buffer
from . import _kernels
from ._common import (
    as_buffer,
    concrete,
    fill,
    host,
    kernel_ok,
    no_device_path,
    normalize_axes,
    normalize_axis,
    on_host,
    same_device,
    wrap,
)

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]


def _arg(kind: str, x: Any, axis: int | None, keepdims: bool, accelerator: Any) -> Any:
    name = f"dc.{kind}"
    fn = _expr.argmax if kind == "argmax" else _expr.argmin
    extra: dict[str, Any] = {"keepdims": True} if keepdims else {}  # no keyword: a pending expression fuses
    if not isinstance(x, Buffer) or accelerator not in (None, "auto"):
        return fn(x, axis, accelerator=accelerator, **extra)  # dotcompute's older form: numpy in, numpy out
    if axis is not None:
        axis = normalize_axis(name, axis, x.ndim)
    if x.size == 0 and (axis is None or x.shape[axis] == 0):  # numpy: over a non-empty axis, an empty result
        raise ValueError(f"{name}: attempt to get {kind} of an empty sequence")
    if kernel_ok(x) or x.ndim == 0 and x.dtype.kind in "biuf":
        return fn(x, axis, **extra)  # numpy/threads on host memory, the search kernels on devices
    if on_host(x):
        npfn = np.argmax if kind == "argmax" else np.argmin
        return wrap(x.accelerator, npfn(host(x), axis=axis, keepdims=keepdims))
    return fn(x, axis, **extra)  # dc.argmin's older path (ops), which refuses what it cannot do itself


def _expr_reshape(x: Buffer, shape: tuple[int, ...]) -> Buffer:
    from .manipulation import reshape

    return reshape(x, shape)


def argmax(x: Buffer, /, axis: int | None = None, *, keepdims: bool = False, accelerator: Any = "auto") -> Buffer:
    """Index of the first maximum (NaN counts as the maximum), int64; axis None: of the flattened array."""
    return _arg("argmax", x, axis, keepdims, accelerator)


def argmin(x: Buffer, /, axis: int | None = None, *, keepdims: bool = False, accelerator: Any = "auto") -> Buffer:
    """Index of the first minimum (NaN counts as the minimum), int64; axis None: of the flattened array."""
    return _arg("argmin", x, axis, keepdims, accelerator)


def count_nonzero(x: Buffer, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Buffer:
    """How many elements are not zero (NaN counts), int64, over ``axis``."""
    x = as_buffer("dc.count_nonzero", x)
    axes = normalize_axes("dc.count_nonzero", axis, x.ndim)
    acc = x.accelerator
    if on_host(x):
        src = host(x)
        flags = src if src.dtype == np.bool_ else src != 0  # numpy counts bools far faster than other dtypes
        return wrap(acc, np.asarray(np.count_nonzero(flags, axis=axes, keepdims=keepdims), dtype=np.int64))
    if not kernel_ok(x, ndim=x.ndim):  # an expression's axis reduction: any number of dimensions
        raise no_device_path("dc.count_nonzero", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    if len(axes) == x.ndim and not keepdims and x.ndim:
        # over every axis: the comparison fuses into the expression layer's one reduction kernel
        # (asked for by axis=None, no keywords; numpy's sum of bools is int64 already) instead of
        # being written to memory for ops' reduction (1M float32 on PoCL: 2.5-7x cpu:0 that way)
        return _expr.sum(x != 0)
    return _expr.sum(x != 0, axes, dtype=np.int64, keepdims=keepdims)


def nonzero(x: Buffer, /) -> tuple[Buffer, ...]:
    """The coordinates of the non-zero elements, one int64 array per axis, in C order."""
    x = as_buffer("dc.nonzero", x)
    if x.ndim == 0:
        raise ValueError("dc.nonzero: zero-dimensional arrays have no coordinates (the standard leaves it out)")
    acc = x.accelerator
    if on_host(x):
        # numpy's nonzero is far faster on bools than on other dtypes: flags first (NaN is not
        # zero, -0.0 is, as numpy counts them)
        src = host(x)
        flags = src if src.dtype == np.bool_ else src != 0
        if x.ndim == 1:
            return (_flatnonzero_into(acc, flags),)
        return tuple(wrap(acc, c.astype(np.int64, copy=False)) for c in np.nonzero(flags))
    if not kernel_ok(x, ndim=64):  # the kernels read x flat: any number of dimensions
        raise no_device_path("dc.nonzero", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    if x.size == 0:
        return tuple(acc.empty((0,), np.int64) for _ in range(x.ndim))
    flat = arrays.flat(concrete(x))
    if acc.type == "cpu":  # CPU-type OpenCL devices: the flat positions counted, then written, by runs
        where = flat_nonzero(flat)
        if x.ndim == 1:
            return (where,)
        coords, stride = [], x.size
        for n in x.shape:
            stride //= n
            c = acc.empty((where.size,), np.int64)
            if where.size:
                acc.launch(_kernels.unravel_positions, where.size, where, c, stride, n)
            coords.append(c)
        return tuple(coords)
    flags = acc.empty((x.size,), np.int64)
    acc.launch(_kernels.nonzero_flags, x.size, flat, flags)
    pos = _ops.cumsum(flags)  # 1-based rank of each selected element
    count = int(np.asarray(pos[x.size - 1]))  # the result's length: one number back
    out = []
    stride = x.size
    for n in x.shape:
        stride //= n
        coords = acc.empty((count,), np.int64)
        if count and x.ndim == 1:
            acc.launch(_kernels.scatter_index, x.size, flags, pos, coords)
        elif count:
            acc.launch(_kernels.scatter_coords, x.size, flags, pos, coords, stride, n)
        out.append(coords)
    return tuple(out)


_BLOCK = 1 << 16  # elements per block of the host nonzero: a block's positions stay in cache


def _flatnonzero_into(acc: Any, src: np.ndarray) -> Buffer:
    """``np.flatnonzero(src)`` (1-d bools) written block by block straight into a new Buffer of its
    length (counted first): numpy's result array is never made whole and copied."""
    out = acc.empty((int(np.count_nonzero(src)),), np.int64)
    if out.size:
        with out.host() as view:
            at = 0
            for i0 in range(0, src.size, _BLOCK):
                found = np.flatnonzero(src[i0:i0 + _BLOCK])
                np.add(found, i0, out=view[at:at + found.size])
                at += found.size
    return out


def searchsorted(x1: Buffer, x2: Buffer, /, *, side: Literal["left", "right"] = "left",
                 sorter: Buffer | None = None) -> Buffer:
    """Where each value of ``x2`` goes in the sorted 1-D ``x1`` (or ``x1`` read in ``sorter`` order)."""
    x1 = as_buffer("dc.searchsorted", x1)
    x2 = as_buffer("dc.searchsorted", x2, x1.accelerator)
    acc = same_device("dc.searchsorted", x1, x2)
    if x1.ndim != 1:
        raise ValueError(f"dc.searchsorted: x1 must be 1-D, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"dc.searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        sorter = as_buffer("dc.searchsorted", sorter, acc)
        same_device("dc.searchsorted", x1, sorter)
    if on_host(x1) and on_host(x2):
        srt = None if sorter is None else host(sorter)
        a, v = host(x1), host(x2)
        if v.ndim == 0:
            return wrap(acc, np.asarray(np.searchsorted(a, v, side=side, sorter=srt), dtype=np.int64))

        def write(out: np.ndarray) -> None:  # a block of values at a time, straight into the result
            flat, where = v.reshape(-1), out.reshape(-1)
            for i0 in range(0, flat.size, _BLOCK):
                where[i0:i0 + _BLOCK] = np.searchsorted(a, flat[i0:i0 + _BLOCK], side=side, sorter=srt)

        return fill(acc, v.shape, np.int64, write)
    t = np.result_type(x1.dtype, x2.dtype)
    if not (kernel_ok(x1) and (x2.ndim == 0 or kernel_ok(x2))) or t.kind == "c":
        raise no_device_path("dc.searchsorted", acc, f"arrays of {x1.dtype} and {x2.dtype}")
    if sorter is not None:
        from .indexing import take

        x1 = take(x1, sorter)
    a = concrete(x1 if x1.dtype == t else x1.astype(t))
    v = concrete(x2 if x2.dtype == t else x2.astype(t))
    out = acc.empty((max(v.size, 1) if v.ndim == 0 else v.size,), np.int64)
    vf = arrays.flat(v) if v.ndim else None
    if vf is None:
        from .manipulation import reshape

        vf = reshape(v, (1,))
    if out.size:
        acc.launch(_kernels.search_sorted, out.size, a, vf, out, int(side == "right"))
    return arrays.shaped(out, x2.shape) if x2.ndim else _expr_reshape(out, ())


def where(condition: Buffer, x1: Any, x2: Any, /) -> Any:
    """``x1`` where ``condition`` is true, else ``x2`` (broadcast; numpy's result type; Python
    scalars are weak). Fused into the expression that uses it, on every device."""
    return _expr.where(condition, x1, x2)
