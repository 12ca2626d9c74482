"""Array API 2024.12: sorting functions on Buffers (see docs/array-api.md).

Ascending sorts are ``dotcompute.ops``' sort/argsort (stable, NaN last; numpy on host memory,
radix/merge sort kernels on devices; its dispatch and ``prefer()`` apply), numpy in place for
host-memory buffers the kernels do not take (more than 3 dimensions; complex is refused).
``descending=True`` keeps stability: the input reversed
along the axis is sorted stably and the result reversed back, so equal elements keep their
original order (and NaN, the largest, comes first, as in numpy's ``-np.sort(-x)`` idiom).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops as _ops
from ..runtime import Buffer
from ._common import as_buffer, concrete, fill, host, kernel_ok, no_device_path, normalize_axis, on_device, on_host
from ._layout import alias, around_axis

__all__ = ["argsort", "sort"]


def _check(name: str, x: Buffer, axis: int) -> int:
    if x.ndim == 0:
        raise np.exceptions.AxisError(axis, 0, name)  # numpy's error (a ValueError and an IndexError)
    return normalize_axis(name, axis, x.ndim)


def _older_form(x: Any, axis: Any, descending: bool, accelerator: Any) -> bool:
    """dotcompute's older dc.sort/dc.argsort calls: numpy in → numpy out, accelerator=, axis=None."""
    if isinstance(x, Buffer) and accelerator in (None, "auto") and axis is not None:
        return False
    if descending:
        raise ValueError("dc.sort/dc.argsort: descending=True needs a dc.Buffer and an int axis")
    return True


def sort(x: Buffer, /, axis: int = -1, *, descending: bool = False, stable: bool = True,
         accelerator: Any = "auto") -> Buffer:
    """A sorted copy of ``x`` along ``axis`` (always stable; NaN last, first when descending)."""
    if _older_form(x, axis, descending, accelerator):
        return _ops.sort(x, axis, accelerator=accelerator)
    x = as_buffer("dc.sort", x)
    ax = _check("dc.sort", x, axis)
    acc = x.accelerator
    if x.dtype.kind == "c" and not descending:
        # the standard leaves complex order unspecified; numpy's (real part, then imaginary) is ops'
        return _ops.sort(x, ax)
    if not kernel_ok(x) and on_host(x):  # more dimensions or dtypes than kernels take: numpy in place
        src = host(x)

        def write(v: np.ndarray) -> None:
            v[...] = src
            v.sort(axis=ax, kind="stable")
            if descending:
                v[...] = np.flip(v, axis=ax).copy()

        return fill(acc, x.shape, x.dtype, write)
    if not kernel_ok(x) and kernel_ok(x, ndim=x.ndim):  # more dimensions: along axis 1 of (outer, n, inner)
        if x.size == 0:
            return acc.empty(x.shape, x.dtype)
        done = sort(around_axis(concrete(x), ax), axis=1, descending=descending)
        return alias(done, x.shape)
    if not kernel_ok(x):
        raise no_device_path("dc.sort", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    with on_device(x):
        res = _ops.sort(x, ax)
    if descending:
        from .manipulation import flip

        res = flip(res, axis=ax)
    return res


def argsort(x: Buffer, /, axis: int = -1, *, descending: bool = False, stable: bool = True,
            accelerator: Any = "auto") -> Buffer:
    """The int64 indices that sort ``x`` along ``axis`` (stable: ties keep their order)."""
    if _older_form(x, axis, descending, accelerator):
        return _ops.argsort(x, axis, accelerator=accelerator)
    x = as_buffer("dc.argsort", x)
    ax = _check("dc.argsort", x, axis)
    acc = x.accelerator
    if x.dtype.kind == "c" and not descending:  # numpy's complex order, as sort
        return _ops.argsort(x, ax)
    n = x.shape[ax]
    if not kernel_ok(x) and on_host(x):
        src = host(x)
        if not descending:
            return fill(acc, x.shape, np.int64, lambda v: v.__setitem__(..., np.argsort(src, axis=ax, kind="stable")))
        # stable descending: sort the reversed input stably, then reverse and map positions back
        rev = np.argsort(np.flip(src, axis=ax), axis=ax, kind="stable")
        return fill(acc, x.shape, np.int64, lambda v: v.__setitem__(..., n - 1 - np.flip(rev, axis=ax)))
    if not kernel_ok(x) and kernel_ok(x, ndim=x.ndim):  # more dimensions: along axis 1 of (outer, n, inner)
        if x.size == 0:
            return acc.empty(x.shape, np.int64)
        return alias(argsort(around_axis(concrete(x), ax), axis=1, descending=descending), x.shape)
    if not kernel_ok(x):
        raise no_device_path("dc.argsort", acc, f"a {x.ndim}-d buffer of {x.dtype}")
    if not descending:
        with on_device(x):
            return _ops.argsort(x, ax)
    from .manipulation import flip

    with on_device(x):
        rev = flip(_ops.argsort(flip(x, axis=ax), ax), axis=ax)
    out = acc.empty(x.shape, np.int64)
    if out.size:
        out[...] = (n - 1) - rev
    return out
