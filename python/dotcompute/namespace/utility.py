"""Array API 2024.12: utility functions (all, any, diff) on Buffers (see docs/array-api.md).

On devices ``all``/``any`` count the zero (non-zero) elements with the fused sum of
``dotcompute.expr``; ``diff`` is the difference of two shifted views, one generated kernel per order.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import expr as _expr
from ..runtime import Buffer
from ._common import (
    as_buffer,
    device_copy,
    host,
    kernel_ok,
    no_device_path,
    normalize_axes,
    normalize_axis,
    on_host,
    same_device,
    wrap,
)

__all__ = ["all", "any", "diff"]


def _truth(name: str, x: Buffer, axis: Any, keepdims: bool, every: bool) -> Buffer:
    x = as_buffer(name, x)
    axes = normalize_axes(name, axis, x.ndim)
    acc = x.accelerator
    if on_host(x):
        fn = np.all if every else np.any
        return wrap(acc, np.asarray(fn(host(x), axis=axes, keepdims=keepdims)))
    if x.ndim == 0:  # one element: its truth, through a 1-element buffer (kernels have no 0-d ones)
        from .manipulation import reshape

        return _truth(name, reshape(x, (1,)), None, False, every)
    if not kernel_ok(x, ndim=x.ndim):  # expressions and their reductions take any number of dimensions
        raise no_device_path(name, acc, f"a {x.ndim}-d buffer of {x.dtype}")
    if not axes:  # no axis reduced: each element's truth
        return device_copy(acc, x != 0, x.shape, np.bool_)
    # all: no element is zero; any: some element is not
    count = _expr.sum((x == 0) if every else (x != 0), axes, dtype=np.int64, keepdims=keepdims)
    if count.ndim == 0:
        return wrap(acc, np.asarray((int(count) == 0) if every else (int(count) != 0)))
    return device_copy(acc, (count == 0) if every else (count != 0), count.shape, np.bool_)


def all(x: Buffer, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Buffer:  # noqa: A001
    """Whether every element over ``axis`` is true (non-zero; NaN is true)."""
    return _truth("dc.all", x, axis, keepdims, True)


def any(x: Buffer, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Buffer:  # noqa: A001
    """Whether some element over ``axis`` is true (non-zero; NaN is true)."""
    return _truth("dc.any", x, axis, keepdims, False)


def diff(x: Buffer, /, *, axis: int = -1, n: int = 1, prepend: Buffer | None = None,
         append: Buffer | None = None) -> Buffer:
    """The ``n``-th forward difference along ``axis`` (bool: not-equal), after ``prepend``/``append``."""
    x = as_buffer("dc.diff", x)
    if x.ndim == 0:
        raise ValueError("dc.diff: a zero-dimensional array has no axis to difference")
    ax = normalize_axis("dc.diff", axis, x.ndim)
    if n < 0:
        raise ValueError(f"dc.diff: order n must be non-negative, got {n}")
    parts = [as_buffer("dc.diff", p, x.accelerator) for p in (prepend, x, append) if p is not None]
    acc = same_device("dc.diff", *parts)
    if all_on_host(parts):
        pre = None if prepend is None else host(parts[0])
        app = None if append is None else host(parts[-1])
        extra = {k: v for k, v in (("prepend", pre), ("append", app)) if v is not None}
        return wrap(acc, np.diff(host(x), n=n, axis=ax, **extra))
    if not kernel_ok(*parts):
        raise no_device_path("dc.diff", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    from .manipulation import concat

    cur = concat(parts, axis=ax) if len(parts) > 1 else x
    head = (slice(None),) * ax
    for _ in range(n):
        length = cur.shape[ax]
        if length == 0:
            break
        later, earlier = cur[head + (slice(1, None),)], cur[head + (slice(None, length - 1),)]
        shape = cur.shape[:ax] + (length - 1,) + cur.shape[ax + 1:]
        value = (later != earlier) if cur.dtype == np.bool_ else later - earlier
        cur = device_copy(acc, value, shape, cur.dtype)
    return cur if cur is not x else device_copy(acc, x, x.shape, x.dtype)


def all_on_host(bufs: list[Buffer]) -> bool:
    # the module's own ``all`` shadows the builtin here
    return builtins.all(on_host(b) for b in bufs)
