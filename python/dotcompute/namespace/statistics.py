"""Array API 2024.12: statistics functions on Buffers (see docs/array-api.md).

``sum``/``prod``/``min``/``max``/``mean`` are the fused reductions of ``dotcompute.expr`` (one
kernel for ``dc.sum(a * b + c)``; numpy, lanes or thread paths on host memory; the tree kernels
on devices) under the standard's keyword signature; they keep dotcompute's older behaviour
(numpy in → numpy out, ``accelerator=``, and ``dc.min``/``dc.max`` as kernel math functions).
``std``/``var`` are a mean and a sum of squared deviations; ``cumulative_sum``/``_prod`` the
scans of ``dotcompute.ops`` with ``include_initial`` as a leading identity slab.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .. import expr as _expr
from .. import ops as _ops
from ..lang.builtins import MATH
from ..ops import klang as dc
from ..ops.reduce import ArrayMathFunction
from ..runtime import Buffer
from ._common import (
    KERNEL_NDIM,
    as_buffer,
    concrete,
    fill,
    host,
    kernel_ok,
    no_device_path,
    normalize_axes,
    normalize_axis,
    on_host,
    wrap,
)

__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

_NUMPY = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean}
_EXPR = {"sum": _expr.sum, "prod": _expr.prod, "min": _expr.min._reduction, "max": _expr.max._reduction,
         "mean": _expr.mean}


def _device_ok(x: Buffer) -> bool:
    return x.ndim == 0 and x.dtype.kind in "biuf" or kernel_ok(x, ndim=KERNEL_NDIM)


def _reduction(kind: str, x: Any, axis: Any, dtype: Any, keepdims: bool, accelerator: Any) -> Any:
    name = f"dc.{kind}"
    # only what was asked: the expression layer fuses a pending expression when no keyword is given
    kwargs: dict[str, Any] = {"keepdims": True} if keepdims else {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if not isinstance(x, Buffer) or accelerator not in (None, "auto"):
        # dotcompute's older form: numpy in → numpy out, on accelerator=
        return _EXPR[kind](x, axis, accelerator=accelerator, **kwargs)
    axes = normalize_axes(name, axis, x.ndim)
    if axis is not None and not axes and x.ndim:  # axis=(): the elements themselves (numpy's dtype rule)
        return _no_axes(kind, x, dtype)
    if on_host(x) and (x.ndim > KERNEL_NDIM or x.dtype.kind == "c"):
        return wrap(x.accelerator, _NUMPY[kind](host(x), axis=axes, **kwargs))
    # buffers the namespace's kernels do not take (complex, more dimensions) keep dc.sum's older path
    # (ops' reductions: docs/operations.md), which refuses what it cannot do itself
    return _EXPR[kind](x, None if axis is None else axes, **kwargs)


def _no_axes(kind: str, x: Buffer, dtype: Any) -> Buffer:
    """A reduction over no axis: each element converted to the result dtype."""
    extra = {} if kind in ("min", "max") else {"dtype": dtype}
    if on_host(x):
        return wrap(x.accelerator, _NUMPY[kind](host(x), axis=(), **extra))
    t = _NUMPY[kind](np.zeros((1,), x.dtype), axis=(), **extra).dtype
    out = x.accelerator.empty(x.shape, t)
    if out.size:
        out[...] = x
    return out


def sum(x: Buffer, /, axis: int | tuple[int, ...] | None = None, dtype: Any = None, *,  # noqa: A001
        keepdims: bool = False, accelerator: Any = "auto") -> Buffer:
    """Sum over ``axis`` (None: all); numpy's dtype (ints widen to int64/uint64) or ``dtype``."""
    return _reduction("sum", x, axis, dtype, keepdims, accelerator)


def prod(x: Buffer, /, axis: int | tuple[int, ...] | None = None, dtype: Any = None, *,
         keepdims: bool = False, accelerator: Any = "auto") -> Buffer:
    """Product over ``axis`` (None: all); numpy's dtype or ``dtype``."""
    return _reduction("prod", x, axis, dtype, keepdims, accelerator)


def mean(x: Buffer, /, axis: int | tuple[int, ...] | None = None, dtype: Any = None, *,
         keepdims: bool = False, accelerator: Any = "auto") -> Buffer:
    """Arithmetic mean over ``axis`` (NaN for an empty reduction, as numpy)."""
    return _reduction("mean", x, axis, dtype, keepdims, accelerator)


def _min(x: Buffer, /, axis: int | tuple[int, ...] | None = None, *, keepdims: bool = False,
         accelerator: Any = "auto") -> Buffer:
    return _reduction("min", x, axis, None, keepdims, accelerator)


def _max(x: Buffer, /, axis: int | tuple[int, ...] | None = None, *, keepdims: bool = False,
         accelerator: Any = "auto") -> Buffer:
    return _reduction("max", x, axis, None, keepdims, accelerator)


_min.__name__, _max.__name__ = "min", "max"
_min.__doc__ = "Smallest element over ``axis`` (NaN if any is NaN); in kernels, the elementwise minimum."
_max.__doc__ = "Largest element over ``axis`` (NaN if any is NaN); in kernels, the elementwise maximum."
# kernels resolve dc.min / dc.max by identity as math functions: keep them MathFunctions
min = ArrayMathFunction(MATH["min"], _min)  # noqa: A001
max = ArrayMathFunction(MATH["max"], _max)  # noqa: A001
# what inspect.signature (help(), the Array API suite) shows: the reduction's signature
min.__signature__ = inspect.signature(_min)  # type: ignore[attr-defined]
max.__signature__ = inspect.signature(_max)  # type: ignore[attr-defined]


def _moment(name: str, x: Buffer, axis: Any, correction: float, keepdims: bool, root: bool) -> Buffer:
    x = as_buffer(name, x)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{name}: x must have a floating-point dtype, got {x.dtype}")
    axes = normalize_axes(name, axis, x.ndim)
    acc = x.accelerator
    if on_host(x):
        fn = np.std if root else np.var
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(acc, np.asarray(fn(host(x), axis=axes, ddof=correction, keepdims=keepdims)))
    if not kernel_ok(x, ndim=x.ndim) or x.dtype.kind == "c":  # expressions take any number of dimensions
        raise no_device_path(name, acc, f"a {x.ndim}-d buffer of {x.dtype}")
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    m = _expr.mean(x, axes, keepdims=True)
    d = x - m
    # the squared deviations fuse into the reduction's input: over every axis (no keepdims) that is
    # the fused reduction's one kernel, which is asked for by axis=None; over some axes the
    # reduction reads them from memory (1M float32 std on PoCL: 16 ms with that pass, cpu:0 3.9)
    full = len(axes) == x.ndim and not keepdims
    s = _expr.sum(d * d) if full else _expr.sum(d * d, axes, keepdims=keepdims)
    denom = n - correction
    scale = (1.0 / denom) if denom > 0 else float("nan")
    out = s * x.dtype.type(scale) if s.ndim else wrap(acc, np.asarray(np.asarray(s) * x.dtype.type(scale)))
    if root:
        out = MATH["sqrt"](out) if out.ndim else wrap(acc, np.sqrt(np.asarray(out)))
    return concrete(out) if out.ndim else out


def var(x: Buffer, /, *, axis: int | tuple[int, ...] | None = None, correction: float = 0.0,
        keepdims: bool = False) -> Buffer:
    """Variance over ``axis``: sum of squared deviations / (N - correction)."""
    return _moment("dc.var", x, axis, correction, keepdims, False)


def std(x: Buffer, /, *, axis: int | tuple[int, ...] | None = None, correction: float = 0.0,
        keepdims: bool = False) -> Buffer:
    """Standard deviation over ``axis`` (the square root of ``var``)."""
    return _moment("dc.std", x, axis, correction, keepdims, True)


@dc.func
def _mul(a, b):  # noqa: ANN001,ANN202 -- generic over the dtype
    return a * b


def _cumulative(name: str, x: Any, axis: int | None, dtype: Any, include_initial: bool, product: bool) -> Buffer:
    x = as_buffer(name, x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis is required for arrays of more than one dimension")
        if x.ndim == 0:
            raise ValueError(f"{name}: a zero-dimensional array has no axis to scan")
        axis = 0
    ax = normalize_axis(name, axis, x.ndim)
    acc = x.accelerator
    fn = np.cumulative_prod if product else np.cumulative_sum
    t = np.dtype(dtype) if dtype is not None else fn(np.zeros((1,), x.dtype)).dtype
    if on_host(x):
        src = host(x)
        shape = x.shape[:ax] + (x.shape[ax] + int(include_initial),) + x.shape[ax + 1:]
        # numpy scans straight into the result Buffer (out=): no temporary, no second copy
        return fill(acc, shape, t, lambda v: fn(src, axis=ax, dtype=t, out=v, include_initial=include_initial))
    if x.ndim > KERNEL_NDIM and t.kind != "c" and t in _kernel_dtypes() and kernel_ok(x, ndim=x.ndim):
        # more dimensions than kernels index: the same scan along axis 1 of (outer, n, inner)
        from ._layout import alias, around_axis

        done = _cumulative(name, around_axis(concrete(x), ax), 1, t, include_initial, product)
        return alias(done, x.shape[:ax] + (done.shape[1],) + x.shape[ax + 1:])
    if not kernel_ok(x) or t.kind == "c" or t not in _kernel_dtypes():
        raise no_device_path(name, acc, f"a {x.ndim}-d buffer of {x.dtype}")
    if x.size == 0:
        res = acc.empty(x.shape, t)
    elif product:
        src = concrete(x if x.dtype == t else x.astype(t))
        res = _ops.scan(_mul, src, ax)
    else:
        res = _ops.cumsum(concrete(x), ax, t)
    if not include_initial:
        return res
    shape = x.shape[:ax] + (x.shape[ax] + 1,) + x.shape[ax + 1:]
    out = acc.empty(shape, t)
    head = (slice(None),) * ax
    out[head + (slice(0, 1),)] = 1 if product else 0  # the identity before the first element
    if x.shape[ax]:
        out[head + (slice(1, None),)] = res
    return out


def _kernel_dtypes() -> frozenset[np.dtype]:
    from ..expr.types import SUPPORTED

    return SUPPORTED


def cumulative_sum(x: Buffer, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Buffer:
    """Running sums along ``axis`` (optional for 1-D); ``include_initial`` prepends the zero."""
    return _cumulative("dc.cumulative_sum", x, axis, dtype, include_initial, False)


def cumulative_prod(x: Buffer, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Buffer:
    """Running products along ``axis`` (optional for 1-D); ``include_initial`` prepends the one."""
    return _cumulative("dc.cumulative_prod", x, axis, dtype, include_initial, True)
