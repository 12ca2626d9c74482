"""numpy functions → the namespace's functions, second half (the first is ``numpy_functions.py``):
searching, sorting, sets, comparisons, products, ``np.linalg`` and ``np.fft``. Importing this module
adds its entries to ``numpy_functions.FUNCTIONS``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..lang.builtins import MATH
from ..ops import fft as _fft
from ..ops import linalg as _linalg
from ..runtime import Buffer
from . import elementwise, indexing, linear, manipulation, searching, sets, sorting, statistics, utility
from .numpy_functions import _NO_VALUE, FUNCTIONS, Unsupported, _buf, _finish, _flat, _implements

__all__: list[str] = []


def _pair(a: Any, b: Any) -> tuple[Buffer, Buffer]:
    acc = a.accelerator if isinstance(a, Buffer) else getattr(b, "accelerator", None)
    return _buf(a, acc), _buf(b, acc)


# -- searching --------------------------------------------------------------------------------------------------
@_implements(np.where)
def _where(condition: Any, x: Any = _NO_VALUE, y: Any = _NO_VALUE) -> Any:
    if x is _NO_VALUE and y is _NO_VALUE:
        return searching.nonzero(_buf(condition, None))
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ValueError("np.where: either both or neither of x and y should be given")
    acc = next(v.accelerator for v in (condition, x, y) if isinstance(v, Buffer))
    cond = _buf(condition, acc)
    operands = [v if isinstance(v, (Buffer, int, float, complex, bool)) else _buf(v, acc) for v in (x, y)]
    return searching.where(cond, *operands)


@_implements(np.nonzero)
def _nonzero(a: Any) -> Any:
    return searching.nonzero(_buf(a, None))


@_implements(np.argwhere)
def _argwhere(a: Any) -> Any:
    x = _buf(a, None)
    if x.ndim == 0:
        raise Unsupported("a 0-d input")
    return manipulation.stack(list(searching.nonzero(x)), axis=1)


@_implements(np.flatnonzero)
def _flatnonzero(a: Any) -> Any:
    return searching.nonzero(_flat(_buf(a, None)))[0]


@_implements(np.take)
def _take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    if mode != "raise":
        raise Unsupported(f"mode={mode!r}")
    x = _buf(a, None)
    idx = _buf(indices, x.accelerator)
    if axis is None:
        x = _flat(x)
    if idx.ndim != 1:
        flat = indexing.take(x, _flat(idx), axis=axis or 0)
        ax = (axis or 0) % x.ndim
        shape = x.shape[:ax] + idx.shape + x.shape[ax + 1:]
        return _finish(manipulation.reshape(flat, shape), out, "np.take")
    return _finish(indexing.take(x, idx, axis=axis if axis is not None else 0), out, "np.take")


@_implements(np.take_along_axis)
def _take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    x = _buf(arr, None)
    idx = _buf(indices, x.accelerator)
    if axis is None:
        return indexing.take_along_axis(_flat(x), _flat(idx), axis=0)
    return indexing.take_along_axis(x, idx, axis=axis)


@_implements(np.searchsorted)
def _searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    x = _buf(a, None)
    values = _buf(v, x.accelerator)
    sort = None if sorter is None else _buf(sorter, x.accelerator)
    return searching.searchsorted(x, values, side=side, sorter=sort)


# -- sorting and sets -------------------------------------------------------------------------------------------
def _sort_like(name: str) -> Any:
    fn = getattr(sorting, name)

    def impl(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Any:
        if order is not None:
            raise Unsupported("order= (structured arrays)")
        x = _buf(a, None)
        if axis is None:
            x, axis = _flat(x), -1
        return fn(x, axis=axis, stable=True)  # always stable, which every kind= allows

    return impl


FUNCTIONS[np.sort] = _sort_like("sort")
FUNCTIONS[np.argsort] = _sort_like("argsort")


@_implements(np.unique)
def _unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
            axis: Any = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:  # noqa: A002 -- numpy's name
    if axis is not None or not equal_nan:
        raise Unsupported("axis=/equal_nan=False")
    x = _buf(ar, None)
    if not (return_index or return_inverse or return_counts):
        return sorting.sort(sets.unique_values(_flat(x)))
    values, first, inverse, counts = sets.unique_all(_flat(x))
    # numpy's unique is sorted; the namespace leaves the order open
    order = sorting.argsort(values)
    result = [indexing.take(values, order)]
    if return_index:
        result.append(indexing.take(first, order))
    if return_inverse:
        rank = sorting.argsort(order)  # the inverse permutation: old position → sorted position
        inv = indexing.take(rank, _flat(inverse))
        result.append(manipulation.reshape(inv, x.shape) if x.ndim > 1 else inv)
    if return_counts:
        result.append(indexing.take(counts, order))
    return tuple(result)


for _name in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
    if hasattr(np, _name):
        FUNCTIONS[getattr(np, _name)] = (lambda fn: lambda x: fn(_buf(x, None)))(getattr(sets, _name))


# -- elementwise helpers that numpy spells as functions ----------------------------------------------------------
@_implements(np.clip)
def _clip(a: Any, a_min: Any = _NO_VALUE, a_max: Any = _NO_VALUE, out: Any = None, *, min: Any = _NO_VALUE,  # noqa: A002
          max: Any = _NO_VALUE, **kwargs: Any) -> Any:  # noqa: A002 -- numpy's names
    if kwargs:
        raise Unsupported(f"keyword(s) {sorted(kwargs)}")
    lo = min if min is not _NO_VALUE else a_min
    hi = max if max is not _NO_VALUE else a_max
    x = _buf(a, None)

    def bound(v: Any) -> Any:
        if v is _NO_VALUE or v is None:
            return None
        return v if isinstance(v, (Buffer, int, float)) else _buf(v, x.accelerator)

    return _finish(elementwise.clip(x, min=bound(lo), max=bound(hi)), out, "np.clip")


@_implements(np.round, np.around)
def _round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    x = _buf(a, None)
    if decimals == 0:
        return _finish(MATH["round"](x), out, "np.round")
    if x.dtype.kind in "iub":
        raise Unsupported("decimals= of an integer array")
    # numpy's own method: scale, round half to even, scale back
    scale = 10.0 ** decimals
    return _finish(MATH["round"](x * scale) / scale, out, "np.round")


@_implements(np.isclose)
def _isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    x, y = _pair(a, b)
    if x.dtype.kind in "iub":
        x = x.astype(np.float64 if y.dtype != np.float32 else np.float32)
    if y.dtype.kind in "iub":
        y = y.astype(x.dtype)
    finite = MATH["isfinite"](x) & MATH["isfinite"](y)
    close = finite & (MATH["abs"](x - y) <= atol + rtol * MATH["abs"](y))
    result = close | (x == y)  # infinities of the same sign
    if equal_nan:
        result = result | (MATH["isnan"](x) & MATH["isnan"](y))
    return result


@_implements(np.allclose)
def _allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(utility.all(_isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


@_implements(np.array_equal)
def _array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    x, y = _pair(a1, a2)
    if x.shape != y.shape:
        return False
    same = x == y
    if equal_nan and x.dtype.kind in "fc":
        same = same | (MATH["isnan"](x) & MATH["isnan"](y))
    return bool(utility.all(same))


@_implements(np.array_equiv)
def _array_equiv(a1: Any, a2: Any) -> bool:
    x, y = _pair(a1, a2)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return bool(utility.all(x == y))


# -- products ---------------------------------------------------------------------------------------------------
@_implements(np.dot)
def _dot(a: Any, b: Any, out: Any = None) -> Any:
    x, y = _pair(a, b)
    if x.ndim == 0 or y.ndim == 0:
        result = x * y
    elif x.ndim == 1 and y.ndim == 1:
        result = statistics.sum(x * y)
    elif x.ndim <= 2 and y.ndim <= 2:
        result = linear.matmul(x, y)
    else:
        raise Unsupported("np.dot of arrays beyond 2 dimensions")
    return _finish(result, out, "np.dot")


@_implements(np.vdot)
def _vdot(a: Any, b: Any) -> Any:
    x, y = _pair(a, b)
    x = MATH["conj"](x) if x.dtype.kind == "c" else x
    return statistics.sum(_flat(x) * _flat(y))


@_implements(np.inner)
def _inner(a: Any, b: Any) -> Any:
    x, y = _pair(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return linear.tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 1]))


@_implements(np.outer)
def _outer(a: Any, b: Any, out: Any = None) -> Any:
    x, y = _pair(a, b)
    return _finish(manipulation.reshape(x, (x.size, 1)) * manipulation.reshape(y, (1, y.size)), out, "np.outer")


@_implements(np.tensordot)
def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    x, y = _pair(a, b)
    if not isinstance(axes, (int, np.integer)):
        first, second = axes
        first = [first] if isinstance(first, (int, np.integer)) else list(first)
        second = [second] if isinstance(second, (int, np.integer)) else list(second)
        axes = (first, second)
    return linear.tensordot(x, y, axes=axes)


@_implements(np.trace)
def _trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Any:
    x = _buf(a, None)
    x = manipulation.moveaxis(x, (axis1, axis2), (-2, -1)) if (axis1, axis2) != (x.ndim - 2, x.ndim - 1) else x
    return _finish(_linalg.trace(x, offset=offset, dtype=dtype), out, "np.trace")


@_implements(np.diagonal)
def _diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    x = _buf(a, None)
    x = manipulation.moveaxis(x, (axis1, axis2), (-2, -1)) if (axis1, axis2) != (x.ndim - 2, x.ndim - 1) else x
    return _linalg.diagonal(x, offset=offset)


@_implements(np.cross)
def _cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> Any:
    if (axisa, axisb, axisc) != (-1, -1, -1) or axis not in (None, -1):
        raise Unsupported("axisa=/axisb=/axisc=/axis=")
    x, y = _pair(a, b)
    if x.shape[-1] != 3 or y.shape[-1] != 3:
        raise Unsupported("vectors of 2 elements")
    return _linalg.cross(x, y)


# -- np.linalg --------------------------------------------------------------------------------------------------
def _one(name: str) -> Any:
    fn = getattr(_linalg, name)
    return lambda a, *args, **kw: fn(_buf(a, None), *args, **kw)


for _name in ("inv", "det", "slogdet", "eigvalsh", "svdvals", "matrix_transpose"):
    if hasattr(np.linalg, _name):
        FUNCTIONS[getattr(np.linalg, _name)] = _one(_name)


@_implements(np.linalg.solve)
def _solve(a: Any, b: Any) -> Any:
    return _linalg.solve(*_pair(a, b))


@_implements(np.linalg.matrix_power)
def _matrix_power(a: Any, n: int) -> Any:
    return _linalg.matrix_power(_buf(a, None), operator.index(n))


@_implements(np.linalg.eigh)
def _eigh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803 -- numpy's parameter name
    if UPLO != "L":
        raise Unsupported("UPLO='U'")
    return _linalg.eigh(_buf(a, None))


@_implements(np.linalg.svd)
def _svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    if hermitian:
        raise Unsupported("hermitian=True")
    x = _buf(a, None)
    return _linalg.svd(x, full_matrices=full_matrices) if compute_uv else _linalg.svdvals(x)


@_implements(np.linalg.qr)
def _qr(a: Any, mode: str = "reduced") -> Any:
    if mode not in ("reduced", "complete"):
        raise Unsupported(f"mode={mode!r}")
    return _linalg.qr(_buf(a, None), mode=mode)


@_implements(np.linalg.cholesky)
def _cholesky(a: Any, /, *, upper: bool = False) -> Any:
    return _linalg.cholesky(_buf(a, None), upper=upper)


@_implements(np.linalg.pinv)
def _pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NO_VALUE) -> Any:
    if hermitian:
        raise Unsupported("hermitian=")
    if rtol is _NO_VALUE:
        # numpy's cutoff (rcond, default 1e-15 of the largest singular value), not the standard's
        # max(M, N) * eps that dc.linalg.pinv uses: np.linalg.pinv(buf) gives numpy's answer
        rtol = 1e-15 if rcond is None else rcond
    elif rcond is not None:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return _linalg.pinv(_buf(a, None), rtol=rtol)


@_implements(np.linalg.matrix_rank)
def _matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:  # noqa: N803
    if tol is not None or hermitian:
        raise Unsupported("tol=/hermitian=")
    return _linalg.matrix_rank(_buf(A, None), rtol=rtol)


@_implements(np.linalg.norm)
def _norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002 -- numpy's name
    a = _buf(x, None)
    if axis is None and ord is None:
        return _linalg.vector_norm(a, keepdims=keepdims)  # the Frobenius norm is the 2-norm of the elements
    if isinstance(axis, (int, np.integer)) or (axis is None and a.ndim == 1):
        return _linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    axes = tuple(axis) if axis is not None else (-2, -1)
    if len(axes) == 2 and tuple(ax % a.ndim for ax in axes) == (a.ndim - 2, a.ndim - 1):
        return _linalg.matrix_norm(a, keepdims=keepdims, ord="fro" if ord is None else ord)
    raise Unsupported("these axes")


for _name in ("vector_norm", "matrix_norm", "vecdot", "tensordot", "outer", "cross", "trace", "diagonal"):
    if hasattr(np.linalg, _name):
        FUNCTIONS[getattr(np.linalg, _name)] = (lambda fn: lambda *a, **kw: fn(*_buf_all(a), **kw))(
            getattr(_linalg, _name))


def _buf_all(args: tuple[Any, ...]) -> list[Any]:
    acc = next((a.accelerator for a in args if isinstance(a, Buffer)), None)
    return [_buf(a, acc) if isinstance(a, (Buffer, np.ndarray, list)) else a for a in args]


# -- np.fft -----------------------------------------------------------------------------------------------------
def _fft1(name: str) -> Any:
    fn = getattr(_fft, name)

    def impl(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
        return _finish(fn(_buf(a, None), n=n, axis=axis, norm=norm or "backward"), out, f"np.fft.{name}")

    return impl


def _fftn(name: str, default_axes: Any) -> Any:
    fn = getattr(_fft, name)

    def impl(a: Any, s: Any = None, axes: Any = default_axes, norm: Any = None, out: Any = None) -> Any:
        result = fn(_buf(a, None), s=s, axes=axes, norm="backward" if norm is None else norm)
        return _finish(result, out, f"np.fft.{name}")

    return impl


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    FUNCTIONS[getattr(np.fft, _name)] = _fft1(_name)
for _name, _axes in (("fft2", (-2, -1)), ("ifft2", (-2, -1)), ("fftn", None), ("ifftn", None), ("rfftn", None),
                     ("irfftn", None)):
    FUNCTIONS[getattr(np.fft, _name)] = _fftn(_name, _axes)


@_implements(np.fft.fftshift)
def _fftshift(x: Any, axes: Any = None) -> Any:
    return _fft.fftshift(_buf(x, None), axes=axes)


@_implements(np.fft.ifftshift)
def _ifftshift(x: Any, axes: Any = None) -> Any:
    return _fft.ifftshift(_buf(x, None), axes=axes)

