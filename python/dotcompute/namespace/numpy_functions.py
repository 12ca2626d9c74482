"""numpy functions → the namespace's functions, for ``Buffer.__array_function__`` (protocols.py).

Each entry takes numpy's signature and calls the Array API function on the Buffers' device.
Arguments that numpy accepts and the namespace has no translation for raise :class:`Unsupported`;
the dispatcher then runs numpy on host memory or raises a TypeError (protocols.py).
The searching, sorting, set, comparison, ``linalg`` and ``fft`` entries are in
``numpy_functions_more.py``. Non-Buffer arrays among the operands (lists, numpy arrays) are
uploaded to the Buffers' device: that is a copy of host data the caller gave, never of device data.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..lang.builtins import MATH
from ..runtime import Buffer
from . import (
    creation,
    datatypes,
    elementwise,
    indexing,
    linear,
    manipulation,
    searching,
    sets,
    sorting,
    statistics,
    utility,
)

_MODULES = (creation, datatypes, elementwise, indexing, linear, manipulation, searching, sets, sorting, statistics,
            utility)


class Unsupported(Exception):  # noqa: N818 -- a signal inside the dispatcher, never seen by users
    """An argument the translation does not cover (the message names it)."""


def ns(name: str) -> Any:
    """The namespace's function ``name`` (``dc.<name>``), or None."""
    for module in _MODULES:
        if name in module.__all__:
            return getattr(module, name)
    return MATH.get(name)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}


def _implements(*funcs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        for f in funcs:
            if f is not None:
                FUNCTIONS[f] = impl
        return impl

    return register


# -- helpers ----------------------------------------------------------------------------------------------------
def _device(*values: Any) -> Any:
    for v in values:
        if isinstance(v, Buffer):
            return v.accelerator
        if isinstance(v, (list, tuple)):
            acc = _device(*v)
            if acc is not None:
                return acc
    return None


def _buf(x: Any, acc: Any) -> Buffer:
    """``x`` as a Buffer on ``acc`` (numpy arrays, lists and scalars uploaded)."""
    if isinstance(x, Buffer):
        return x
    return creation.asarray(np.asarray(x), device=acc)


def _bufs(xs: Any) -> list[Buffer]:
    xs = list(xs)
    acc = _device(*xs)
    return [_buf(x, acc) for x in xs]


def _none(what: str, *values: Any) -> None:
    """Unsupported unless each value is None (numpy's default for those keywords)."""
    if any(v is not None for v in values):
        raise Unsupported(what)


def _finish(result: Any, out: Any, what: str) -> Any:
    if out is None:
        return result
    if not isinstance(out, Buffer):
        raise Unsupported("out= that is not a Buffer")
    if out.shape != result.shape:
        raise ValueError(f"{what}: out= has shape {out.shape}, the result {result.shape}")
    out[...] = result
    return out


def _axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def _flat(x: Buffer) -> Buffer:
    return x if x.ndim == 1 else manipulation.reshape(x, (-1,))


_NO_VALUE = getattr(np, "_NoValue", None)


def _kd(keepdims: Any) -> bool:
    return False if keepdims is _NO_VALUE else bool(keepdims)


def _given(v: Any) -> bool:
    return v is not None and v is not _NO_VALUE


# -- reductions and statistics ----------------------------------------------------------------------------------
def _reduction(name: str, with_dtype: bool) -> Callable[..., Any]:
    fn = ns(name)

    def impl(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False,
             initial: Any = None, where: Any = True) -> Any:
        if _given(initial) or (where is not True and where is not _NO_VALUE):
            raise Unsupported("initial=/where=")
        x = _buf(a, None)
        kd = _kd(keepdims)
        if with_dtype:
            result = fn(x, axis=_axis(axis), dtype=dtype, keepdims=kd)
        else:
            result = fn(x if dtype is None else x.astype(dtype), axis=_axis(axis), keepdims=kd)
        return _finish(result, out, f"np.{name}")

    return impl


FUNCTIONS[np.sum] = _reduction("sum", True)
FUNCTIONS[np.prod] = _reduction("prod", True)
FUNCTIONS[np.min] = FUNCTIONS[np.amin] = _reduction("min", False)
FUNCTIONS[np.max] = FUNCTIONS[np.amax] = _reduction("max", False)


@_implements(np.mean)
def _mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False, *,
          where: Any = True) -> Any:
    if where is not True and where is not _NO_VALUE:
        raise Unsupported("where=")
    x = _buf(a, None)
    result = statistics.mean(x, axis=_axis(axis), dtype=dtype, keepdims=_kd(keepdims))
    return _finish(result, out, "np.mean")


def _spread(name: str) -> Callable[..., Any]:
    fn = ns(name)

    def impl(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: Any = False, *,
             where: Any = True, mean: Any = None, correction: Any = None) -> Any:
        if (where is not True and where is not _NO_VALUE) or _given(mean):
            raise Unsupported("where=/mean=")
        x = _buf(a, None)
        if dtype is not None:
            x = x.astype(dtype)
        corr = correction if _given(correction) else ddof
        return _finish(fn(x, axis=_axis(axis), correction=corr, keepdims=_kd(keepdims)), out, f"np.{name}")

    return impl


FUNCTIONS[np.std] = _spread("std")
FUNCTIONS[np.var] = _spread("var")


def _bool_reduction(name: str) -> Callable[..., Any]:
    fn = ns(name)

    def impl(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False, *, where: Any = True) -> Any:
        if where is not True and where is not _NO_VALUE:
            raise Unsupported("where=")
        return _finish(fn(_buf(a, None), axis=_axis(axis), keepdims=_kd(keepdims)), out, f"np.{name}")

    return impl


FUNCTIONS[np.all] = _bool_reduction("all")
FUNCTIONS[np.any] = _bool_reduction("any")


def _arg_reduction(name: str) -> Callable[..., Any]:
    fn = ns(name)

    def impl(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = False) -> Any:
        return _finish(fn(_buf(a, None), axis=axis, keepdims=_kd(keepdims)), out, f"np.{name}")

    return impl


FUNCTIONS[np.argmin] = _arg_reduction("argmin")
FUNCTIONS[np.argmax] = _arg_reduction("argmax")


def _scan(name: str) -> Callable[..., Any]:
    fn = ns(name)

    def impl(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        x = _buf(a, None)
        if axis is None:  # numpy's cumsum/cumprod flatten
            x = _flat(x)
        return _finish(fn(x, axis=axis if x.ndim > 1 else None, dtype=dtype), out, f"np.{name}")

    return impl


FUNCTIONS[np.cumsum] = _scan("cumulative_sum")
FUNCTIONS[np.cumprod] = _scan("cumulative_prod")


@_implements(getattr(np, "cumulative_sum", None))
def _cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                    include_initial: bool = False) -> Any:
    result = statistics.cumulative_sum(_buf(x, None), axis=axis, dtype=dtype, include_initial=include_initial)
    return _finish(result, out, "np.cumulative_sum")


@_implements(getattr(np, "cumulative_prod", None))
def _cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                     include_initial: bool = False) -> Any:
    result = statistics.cumulative_prod(_buf(x, None), axis=axis, dtype=dtype, include_initial=include_initial)
    return _finish(result, out, "np.cumulative_prod")


@_implements(np.count_nonzero)
def _count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return searching.count_nonzero(_buf(a, None), axis=_axis(axis), keepdims=keepdims)


@_implements(np.ptp)
def _ptp(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False) -> Any:
    x = _buf(a, None)
    kd = _kd(keepdims)
    return _finish(statistics.max(x, axis=_axis(axis), keepdims=kd) - statistics.min(x, axis=_axis(axis), keepdims=kd),
                   out, "np.ptp")


@_implements(np.average)
def _average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: Any = False) -> Any:
    x = _buf(a, None)
    kd = _kd(keepdims)
    if weights is None:
        avg = statistics.mean(x, axis=_axis(axis), keepdims=kd)
        scale = creation.full_like(avg, x.size // max(avg.size, 1), dtype=avg.dtype)
    else:
        w = _buf(weights, x.accelerator)
        if w.shape != x.shape:
            raise Unsupported("weights of another shape than a")
        scale = statistics.sum(w, axis=_axis(axis), keepdims=kd)
        avg = statistics.sum(x * w, axis=_axis(axis), keepdims=kd) / scale
    return (avg, scale) if returned else avg


# -- manipulation -----------------------------------------------------------------------------------------------
@_implements(np.concatenate, getattr(np, "concat", None))
def _concatenate(arrays: Any, /, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                 casting: str = "same_kind") -> Any:
    xs = _bufs(arrays)
    if dtype is not None:
        xs = [x.astype(dtype) for x in xs]
    return _finish(manipulation.concat(xs, axis=axis), out, "np.concatenate")


@_implements(np.stack)
def _stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    xs = _bufs(arrays)
    if dtype is not None:
        xs = [x.astype(dtype) for x in xs]
    return _finish(manipulation.stack(xs, axis=axis), out, "np.stack")


def _at_least(x: Buffer, ndim: int) -> Buffer:
    if x.ndim >= ndim:
        return x
    if ndim == 2:
        return manipulation.reshape(x, (1, x.size) if x.ndim == 1 else (1, 1))
    return manipulation.reshape(x, (1,))


@_implements(np.atleast_1d)
def _atleast_1d(*arys: Any) -> Any:
    xs = [_at_least(x, 1) for x in _bufs(arys)]
    return xs[0] if len(xs) == 1 else tuple(xs)


@_implements(np.atleast_2d)
def _atleast_2d(*arys: Any) -> Any:
    xs = [_at_least(x, 2) for x in _bufs(arys)]
    return xs[0] if len(xs) == 1 else tuple(xs)


@_implements(np.vstack)
def _vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    return _concatenate([_at_least(x, 2) for x in _bufs(tup)], axis=0, dtype=dtype)


@_implements(np.hstack)
def _hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    xs = [_at_least(x, 1) for x in _bufs(tup)]
    return _concatenate(xs, axis=0 if xs[0].ndim == 1 else 1, dtype=dtype)


@_implements(np.column_stack)
def _column_stack(tup: Any) -> Any:
    xs = _bufs(tup)
    return manipulation.concat([manipulation.reshape(x, (x.size, 1)) if x.ndim < 2 else x for x in xs], axis=1)


@_implements(np.reshape)
def _reshape(a: Any, /, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: Any = None) -> Any:
    if order != "C":
        raise Unsupported(f"order={order!r}")
    shape = newshape if shape is None else shape
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)
    return manipulation.reshape(_buf(a, None), shape, copy=copy)


@_implements(np.ravel)
def _ravel(a: Any, order: str = "C") -> Any:
    if order not in ("C", "K", "A"):
        raise Unsupported(f"order={order!r}")
    return manipulation.reshape(_buf(a, None), (-1,))


@_implements(np.transpose, getattr(np, "permute_dims", None))
def _transpose(a: Any, axes: Any = None) -> Any:
    x = _buf(a, None)
    return manipulation.permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else tuple(axes))


@_implements(np.swapaxes)
def _swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    x = _buf(a, None)
    axes = list(range(x.ndim))
    i, j = axis1 % max(x.ndim, 1), axis2 % max(x.ndim, 1)
    axes[i], axes[j] = axes[j], axes[i]
    return manipulation.permute_dims(x, tuple(axes))


@_implements(getattr(np, "matrix_transpose", None))
def _matrix_transpose(x: Any, /) -> Any:
    return linear.matrix_transpose(_buf(x, None))


@_implements(np.moveaxis)
def _moveaxis(a: Any, source: Any, destination: Any) -> Any:
    return manipulation.moveaxis(_buf(a, None), _axis(source), _axis(destination))


@_implements(np.squeeze)
def _squeeze(a: Any, axis: Any = None) -> Any:
    x = _buf(a, None)
    if axis is None:
        axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
        if not axis:
            return x
    return manipulation.squeeze(x, _axis(axis))


@_implements(np.expand_dims)
def _expand_dims(a: Any, axis: Any) -> Any:
    x = _buf(a, None)
    if not isinstance(axis, (tuple, list)):
        return manipulation.expand_dims(x, axis=axis)
    ndim = x.ndim + len(axis)
    where = sorted(ax % ndim for ax in axis)
    shape = iter(x.shape)
    return manipulation.reshape(x, tuple(1 if i in where else next(shape) for i in range(ndim)))


@_implements(np.flip)
def _flip(m: Any, axis: Any = None) -> Any:
    return manipulation.flip(_buf(m, None), axis=_axis(axis))


@_implements(np.fliplr)
def _fliplr(m: Any) -> Any:
    return manipulation.flip(_buf(m, None), axis=1)


@_implements(np.flipud)
def _flipud(m: Any) -> Any:
    return manipulation.flip(_buf(m, None), axis=0)


@_implements(np.roll)
def _roll(a: Any, shift: Any, axis: Any = None) -> Any:
    return manipulation.roll(_buf(a, None), _axis(shift), axis=_axis(axis))


@_implements(np.repeat)
def _repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    x = _buf(a, None)
    if not isinstance(repeats, (int, np.integer)):
        repeats = _buf(repeats, x.accelerator)
    return manipulation.repeat(x, repeats, axis=axis)


@_implements(np.tile)
def _tile(A: Any, reps: Any) -> Any:  # noqa: N803 -- numpy's parameter name
    reps = (operator.index(reps),) if not isinstance(reps, (tuple, list)) else tuple(reps)
    return manipulation.tile(_buf(A, None), reps)


@_implements(np.broadcast_to)
def _broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)
    return manipulation.broadcast_to(_buf(array, None), shape)


@_implements(np.broadcast_arrays)
def _broadcast_arrays(*args: Any, subok: bool = False) -> Any:
    return tuple(manipulation.broadcast_arrays(*_bufs(args)))


def _split(name: str, ary: Any, indices_or_sections: Any, axis: int, even: bool) -> list[Buffer]:
    x = _buf(ary, None)
    ax = axis % max(x.ndim, 1)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        parts = int(indices_or_sections)
        if parts <= 0:
            raise ValueError(f"{name}: the number of sections must be larger than 0")
        if even and n % parts:
            raise ValueError(f"{name}: array split does not result in an equal division")
        size, extra = divmod(n, parts)
        bounds = [0]
        for i in range(parts):
            bounds.append(bounds[-1] + size + (1 if i < extra else 0))
    else:
        bounds = [0, *(int(i) for i in indices_or_sections), n]
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        key = (slice(None),) * ax + (slice(lo, hi),)
        pieces.append(indexing_take_slice(x, key))
    return pieces


def indexing_take_slice(x: Buffer, key: tuple[Any, ...]) -> Buffer:
    """``x[key]`` for a tuple of slices, as a new Buffer (a copy made on the device)."""
    view = x[key]
    return view.astype(x.dtype)


@_implements(np.split)
def _np_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> Any:
    return _split("np.split", ary, indices_or_sections, axis, even=True)


@_implements(np.array_split)
def _array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> Any:
    return _split("np.array_split", ary, indices_or_sections, axis, even=False)


@_implements(getattr(np, "unstack", None))
def _unstack(x: Any, /, *, axis: int = 0) -> Any:
    return tuple(manipulation.unstack(_buf(x, None), axis=axis))


@_implements(np.copy)
def _copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    x = _buf(a, None)
    return datatypes.astype(x, x.dtype, copy=True)


@_implements(getattr(np, "astype", None))
def _astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    _none("device=", device)
    return datatypes.astype(_buf(x, None), dtype, copy=copy)


def _made_like(name: str, prototype: Any, fill: tuple[Any, ...], dtype: Any, order: str, shape: Any,
               device: Any) -> Any:
    if order not in ("K", "A", "C"):
        raise Unsupported(f"order={order!r}")
    x = _buf(prototype, None)
    acc = x.accelerator if device is None else device
    if shape is None:
        return ns(name)(x, *fill, dtype=dtype, device=acc)
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)
    return ns(name[: -len("_like")])(shape, *fill, dtype=dtype or x.dtype, device=acc)


def _like(name: str) -> Callable[..., Any]:
    # numpy's zeros_like/ones_like/empty_like(prototype, dtype, order, subok, shape, *, device)
    def impl(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None, *,
             device: Any = None) -> Any:
        return _made_like(name, prototype, (), dtype, order, shape, device)

    return impl


@_implements(np.full_like)
def _full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None,
               *, device: Any = None) -> Any:
    return _made_like("full_like", a, (fill_value,), dtype, order, shape, device)


for _fname in ("zeros_like", "ones_like", "empty_like"):
    FUNCTIONS[getattr(np, _fname)] = _like(_fname)


@_implements(np.real)
def _real(val: Any) -> Any:
    x = _buf(val, None)
    return elementwise.real(x) if x.dtype.kind == "c" else x


@_implements(np.imag)
def _imag(val: Any) -> Any:
    x = _buf(val, None)
    return elementwise.imag(x) if x.dtype.kind == "c" else creation.zeros_like(x)


@_implements(np.tril)
def _tril(m: Any, k: int = 0) -> Any:
    return creation.tril(_buf(m, None), k=k)


@_implements(np.triu)
def _triu(m: Any, k: int = 0) -> Any:
    return creation.triu(_buf(m, None), k=k)


@_implements(np.meshgrid)
def _meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> Any:
    if sparse:
        raise Unsupported("sparse=True")
    return tuple(creation.meshgrid(*_bufs(xi), indexing=indexing))


@_implements(np.diff)
def _diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = _NO_VALUE, append: Any = _NO_VALUE) -> Any:
    x = _buf(a, None)

    def edge(v: Any) -> Any:
        if v is _NO_VALUE:
            return None
        if isinstance(v, Buffer):
            return v
        arr = np.asarray(v)
        if arr.ndim == 0:  # numpy broadcasts a scalar to the input's shape, one long along the axis
            shape = list(x.shape)
            shape[axis % x.ndim] = 1
            return creation.full(tuple(shape), arr.item(), dtype=arr.dtype, device=x.accelerator)
        return _buf(arr, x.accelerator)

    return utility.diff(x, axis=axis, n=n, prepend=edge(prepend), append=edge(append))


@_implements(np.result_type)
def _result_type(*arrays_and_dtypes: Any) -> Any:
    return np.result_type(*(a.dtype if isinstance(a, Buffer) else a for a in arrays_and_dtypes))


@_implements(np.can_cast)
def _can_cast(from_: Any, to: Any, casting: str = "safe") -> Any:
    return np.can_cast(from_.dtype if isinstance(from_, Buffer) else from_, to, casting=casting)


@_implements(np.shape)
def _shape(a: Any) -> tuple[int, ...]:
    return tuple(a.shape)


@_implements(np.ndim)
def _ndim(a: Any) -> int:
    return int(a.ndim)


@_implements(np.size)
def _size(a: Any, axis: Any = None) -> int:
    return int(a.size) if axis is None else int(a.shape[axis])

