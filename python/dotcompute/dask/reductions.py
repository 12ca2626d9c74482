"""``sum``, ``min``, ``max``, ``mean`` of Dask arrays: ``dc.sum``/``dc.min``/``dc.max`` per block on the
worker's accelerator, then Dask's tree reduction of the per-block partials.

The partials are tiny (one value per block and kept index), so they are combined with numpy on the
host: a device round trip for them would cost more than it saves.
"""

from __future__ import annotations

import math
from typing import Any

import dask.array as da
import numpy as np

from .. import ops
from .placement import check_spec, pinned

_DC = {"sum": ops.sum, "min": ops.min, "max": ops.max}
_NP = {"sum": np.sum, "min": np.min, "max": np.max}


def _axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise ValueError(f"dcd.{name}: axis {a!r} is out of range for a {ndim}-d array")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"dcd.{name}: duplicate value in axis {axis!r}")
    return tuple(sorted(out))


def _chunk(block: np.ndarray, axis: tuple[int, ...], keepdims: bool, op: str, accelerator: Any, **_: Any) -> Any:
    """One block's partial result, reduced by dotcompute on this process's device."""
    if block.size == 0 or 0 in block.shape:
        return _empty_safe(op, block, axis, keepdims)
    acc = accelerator if accelerator is not None else (pinned() or "auto")
    value = np.asarray(_DC[op](np.ascontiguousarray(block), axis=axis, accelerator=acc))
    if keepdims:
        value = value.reshape(tuple(1 if d in axis else n for d, n in enumerate(block.shape)))
    return value


def _identity(op: str, dtype: np.dtype) -> Any:
    """The value that leaves ``op``'s result unchanged: the dtype's lowest for max, highest for min."""
    if dtype.kind in "fc":  # complex numbers order by real part first, as in numpy
        return -np.inf if op == "max" else np.inf
    if dtype.kind == "b":
        return op == "min"
    info = np.iinfo(dtype)
    return info.min if op == "max" else info.max


def _empty_safe(op: str, block: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> Any:
    """numpy's reduction, except that min/max of a block with nothing along the reduced axes gives
    the op's identity: an empty chunk of a non-empty array (chunks ``(5, 0, 5)``, a filtered array)
    must not fail the whole reduction with numpy's "zero-size array" error. (A reduction of a wholly
    empty axis is refused when the graph is built, as numpy refuses it.)"""
    if op in ("min", "max") and any(block.shape[a] == 0 for a in axis):
        shape = tuple(1 if d in axis else n for d, n in enumerate(block.shape) if keepdims or d not in axis)
        return np.full(shape, _identity(op, block.dtype), block.dtype)
    return _NP[op](block, axis=axis, keepdims=keepdims)


def _combine(parts: np.ndarray, axis: tuple[int, ...], keepdims: bool, op: str, **_: Any) -> Any:
    return _empty_safe(op, parts, axis, keepdims)


def _ones(block: np.ndarray) -> np.ndarray:
    return np.ones(block.shape, np.int64)


def _reduce(op: str, x: Any, axis: Any, keepdims: bool, split_every: Any, accelerator: Any) -> Any:
    if isinstance(x, np.ndarray):
        x = da.asarray(x)
    if not isinstance(x, da.Array):
        raise TypeError(f"dcd.{op}: x must be a Dask array (or a numpy array), not {type(x).__name__}")
    axes = _axes(op, axis, x.ndim)
    if accelerator is not None and not isinstance(accelerator, str):
        if not hasattr(accelerator, "id"):
            raise TypeError(f"dcd.{op}: accelerator must be None, a spec such as 'cpu', or a dc.Accelerator, "
                            f"not {accelerator!r}")
        accelerator = accelerator.id  # resolved on the worker
    elif isinstance(accelerator, str):
        check_spec(accelerator)
    dtype = np.dtype(_NP[op](np.zeros(1, x.dtype)).dtype)
    if op in ("min", "max") and any(x.shape[a] == 0 for a in axes) and math.prod(
            n for d, n in enumerate(x.shape) if d not in axes):
        # numpy raises this eagerly; here it is raised when the graph is built, not in a worker
        raise ValueError(f"dcd.{op}: zero-size array to reduction operation {op} which has no identity "
                         f"(axis {axis!r} of shape {x.shape} is empty)")
    return da.reduction(x, _chunk_for(op, accelerator), _combine_for(op), axis=axes, keepdims=keepdims,
                        dtype=dtype, split_every=split_every, combine=_combine_for(op), name=f"dc-{op}",
                        meta=np.empty((0,) * (x.ndim if keepdims else x.ndim - len(axes)), dtype))


class _chunk_for:
    """The chunk function for ``op`` (a class, not a closure, so it pickles by reference)."""

    def __init__(self, op: str, accelerator: Any) -> None:
        self.op, self.accelerator = op, accelerator

    def __call__(self, block: np.ndarray, axis: tuple[int, ...], keepdims: bool, **kw: Any) -> Any:
        return _chunk(block, axis, keepdims, self.op, self.accelerator)


class _combine_for:
    def __init__(self, op: str) -> None:
        self.op = op

    def __call__(self, parts: np.ndarray, axis: tuple[int, ...], keepdims: bool, **kw: Any) -> Any:
        return _combine(parts, axis, keepdims, self.op)


def sum(x: Any, axis: Any = None, *, keepdims: bool = False, split_every: Any = None,  # noqa: A001
        accelerator: Any = None) -> Any:
    """The sum over ``axis`` (numpy's result dtype: integer sums in 64 bits), lazily, as a Dask array."""
    return _reduce("sum", x, axis, keepdims, split_every, accelerator)


def min(x: Any, axis: Any = None, *, keepdims: bool = False, split_every: Any = None,  # noqa: A001
        accelerator: Any = None) -> Any:
    """The minimum over ``axis`` (NaN propagates, as in numpy)."""
    return _reduce("min", x, axis, keepdims, split_every, accelerator)


def max(x: Any, axis: Any = None, *, keepdims: bool = False, split_every: Any = None,  # noqa: A001
        accelerator: Any = None) -> Any:
    """The maximum over ``axis`` (NaN propagates, as in numpy)."""
    return _reduce("max", x, axis, keepdims, split_every, accelerator)


def mean(x: Any, axis: Any = None, *, keepdims: bool = False, split_every: Any = None,
         accelerator: Any = None) -> Any:
    """The mean over ``axis``: the dotcompute sum divided by the count (float64 for integers, as numpy)."""
    if isinstance(x, np.ndarray):
        x = da.asarray(x)
    if not isinstance(x, da.Array):
        raise TypeError(f"dcd.mean: x must be a Dask array (or a numpy array), not {type(x).__name__}")
    axes = _axes("mean", axis, x.ndim)
    dtype = np.dtype(np.mean(np.zeros(1, x.dtype)).dtype)
    count = math.prod(x.shape[a] for a in axes)
    if x.dtype == np.float16:
        x = x.astype(np.float32)  # numpy's mean of float16 accumulates in float32 (a float16 sum overflows at 65504)
    total = _reduce("sum", x, axes, keepdims, split_every, accelerator)
    if math.isnan(count):
        # unknown chunk sizes (x[x > 0]): the count is known only when computed (it was NaN, and so
        # was the mean)
        ones = x.map_blocks(_ones, dtype=np.int64, meta=np.empty((0,) * x.ndim, np.int64))
        counts = da.sum(ones, axis=axes, keepdims=keepdims, split_every=split_every)
        return (total / counts).astype(dtype)
    return (total / count).astype(dtype) if count else (total * np.nan).astype(dtype)
