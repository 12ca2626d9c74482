"""The Array API 2024.12 ``linalg`` extension with numpy 2's semantics, on Buffers and numpy arrays.

Paths: numpy.linalg (LAPACK, OpenBLAS) on host-memory buffers (cpu:0) and numpy input, zero-copy;
the kernels of kernels.py and portable_decomp.py on device buffers (and on cpu:0 under
``dc.ops.prefer("portable")``) for real float32/float64 (integers are computed in float64, as numpy
does; complex too for vecdot, eigh, svd, qr, slogdet, cholesky, solve, inv, det and what builds on
them). Functions and dtypes with no device kernel yet raise :class:`NoDevicePath` (a
NotImplementedError) naming the function and the device: data never silently makes a round trip
to the host.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from ...runtime import Buffer
from .. import dispatch
from ..arrays import Operand, flat, normalize_axis, operand, result, shaped
from ..matmul import matmul as _matmul
from ..reduce import sum as _sum
from ..sort_kernels import move_axis_kernel
from . import kernels as lk
from . import portable_decomp as pd

LinAlgError = np.linalg.LinAlgError


class NoDevicePath(NotImplementedError):  # noqa: N818 -- reads as what it is, like LinAlgError
    """A dc.linalg function (or dtype) that has no kernel for a device buffer yet."""


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any  # noqa: N815 -- the standard's field names
    R: Any  # noqa: N815


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any  # noqa: N815
    S: Any  # noqa: N815
    Vh: Any  # noqa: N815


# ---------------------------------------------------------------------------------------- helpers
def _op(name: str, x: Any, what: str = "x", acc: Any = "auto") -> Operand:
    return operand(f"dc.linalg.{name}", x, acc, what)


def _host(*ops: Operand) -> bool:
    """numpy.linalg applies: numpy input, or host-memory buffers unless the portable kernels are forced."""
    if all(o.is_numpy for o in ops):
        return True
    return all(dispatch.host_cpu(o.acc) for o in ops) and dispatch.preferred() != "portable"


def _wrap(o: Operand, value: Any) -> Any:
    if isinstance(value, tuple):
        return type(value)(*(_wrap(o, v) for v in value))
    if isinstance(value, Buffer):
        return result(o, value)
    value = np.asarray(value)
    return result(o, np.ascontiguousarray(value) if value.ndim else value)


def _no_device(name: str, o: Operand, what: str = "") -> NoDevicePath:
    return NoDevicePath(f"dc.linalg.{name}{what} has no implementation on {o.acc.id} yet (device buffers); copy "
                        "the data to cpu:0 explicitly for LAPACK there (docs/operations.md lists what runs where)")


def _pair(name: str, a: Any, b: Any) -> tuple[Operand, Operand]:
    if not isinstance(a, Buffer) and isinstance(b, Buffer):
        ob = _op(name, b, "x2")
        return _op(name, a, "x1", ob.acc), ob
    oa = _op(name, a, "x1")
    ob = _op(name, b, "x2", oa.acc if oa.buf is not None else "auto")
    if oa.acc is not ob.acc:
        raise ValueError(f"dc.linalg.{name}: x1 is on {oa.acc.id} and x2 on {ob.acc.id}")
    return oa, ob


def _square(name: str, o: Operand) -> int:
    if len(o.shape) < 2 or o.shape[-1] != o.shape[-2]:
        raise LinAlgError(f"dc.linalg.{name}: x must be a stack of square matrices, got shape {o.shape}")
    return o.shape[-1]


def _float_dtype(name: str, o: Operand) -> np.dtype:
    """The dtype a factorization computes in on a device (numpy's: integers and bool in float64)."""
    if o.dtype.kind == "c" or o.dtype == np.float16:
        raise _no_device(name, o, f" for {o.dtype}")
    return o.dtype if o.dtype.kind == "f" else np.dtype(np.float64)


def _factor_dtype(name: str, o: Operand) -> np.dtype:
    """The dtype cholesky/LU compute in on a device: complex64/complex128 as they are (Hermitian
    Cholesky, complex pivoting), else what ``_float_dtype`` gives."""
    return o.dtype if o.dtype in (np.complex64, np.complex128) else _float_dtype(name, o)


def _flat_as(o: Operand, dtype: np.dtype) -> Buffer:
    """A new flat device copy of the operand in ``dtype`` (the factorizations work in place on it)."""
    src = flat(o.device())
    out = o.acc.empty((src.size,), dtype)
    if out.size:
        o.acc.launch(lk.cast, out.size, src, out)
    return out


def _move_last(buf: Buffer, shape: tuple[int, ...], axis: int) -> Buffer:
    """The flat copy of ``buf`` (of ``shape``) with ``axis`` moved last, on the device."""
    f = flat(buf)
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    if inner == 1 or f.size == 0:
        return f
    out = buf.accelerator.empty((f.size,), buf.dtype)
    buf.accelerator.launch(move_axis_kernel(), f.size, f, out, shape[axis], inner, 1)
    return out


def _check_info(name: str, info: Buffer, what: str) -> None:
    # one int per matrix: the only download a factorization makes, to raise numpy's error
    if info.size and info.numpy().any():
        raise LinAlgError(f"dc.linalg.{name}: {what}")


# ------------------------------------------------------------------------------- simple functions
def matmul(x1: Any, x2: Any, /) -> Any:
    """``x1 @ x2`` (dc.matmul; stacks of more than one batch axis are flattened to one when equal)."""
    a, b = _pair("matmul", x1, x2)
    if _host(a, b):
        return _wrap(a if not a.is_numpy else b, np.matmul(a.view(), b.view()))
    if len(a.shape) > 3 and a.shape[:-2] == b.shape[:-2]:
        batch = int(np.prod(a.shape[:-2], dtype=np.int64))
        prod = _matmul(shaped(flat(a.device()), (batch, *a.shape[-2:])),
                       shaped(flat(b.device()), (batch, *b.shape[-2:])))
        return shaped(flat(prod), a.shape[:-2] + prod.shape[-2:])
    if len(a.shape) > 3 or len(b.shape) > 3:
        raise _no_device("matmul", a, f" for shapes {a.shape} and {b.shape} (up to 3-D, or equal batch axes)")
    return _matmul(a.device(), b.device())


def matrix_transpose(x: Any, /) -> Any:
    """The last two axes swapped."""
    o = _op("matrix_transpose", x)
    if len(o.shape) < 2:
        raise ValueError(f"dc.linalg.matrix_transpose: x must have at least 2 dimensions, got shape {o.shape}")
    if _host(o):
        return _wrap(o, np.matrix_transpose(o.view()))
    shape = o.shape[:-2] + (o.shape[-1], o.shape[-2])
    return shaped(_move_last(o.device(), o.shape[:-2] + (o.shape[-2], o.shape[-1]), len(o.shape) - 2), shape)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The ``offset`` diagonal of each matrix of the stack."""
    o = _op("diagonal", x)
    if len(o.shape) < 2:
        raise ValueError(f"dc.linalg.diagonal: x must have at least 2 dimensions, got shape {o.shape}")
    offset = operator.index(offset)
    if _host(o):
        return _wrap(o, np.linalg.diagonal(o.view(), offset=offset))
    rows, cols = o.shape[-2:]
    r0, c0 = max(-offset, 0), max(offset, 0)
    dlen = max(0, min(rows - r0, cols - c0))
    out = o.acc.empty((int(np.prod(o.shape[:-2], dtype=np.int64)) * dlen,), o.dtype)
    if out.size:
        o.acc.launch(lk.diagonal, out.size, flat(o.device()), out, rows, cols, r0, c0, dlen)
    return shaped(out, o.shape[:-2] + (dlen,))


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The sum of the ``offset`` diagonal of each matrix (numpy's sum dtypes, or ``dtype``)."""
    o = _op("trace", x)
    if _host(o):
        if len(o.shape) < 2:
            raise ValueError(f"dc.linalg.trace: x must have at least 2 dimensions, got shape {o.shape}")
        return _wrap(o, np.linalg.trace(o.view(), offset=offset, dtype=dtype))
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two vectors."""
    a, b = _pair("outer", x1, x2)
    if len(a.shape) != 1 or len(b.shape) != 1:
        raise ValueError(f"dc.linalg.outer: x1 and x2 must be 1-D, got shapes {a.shape} and {b.shape}")
    if _host(a, b):
        return _wrap(a if not a.is_numpy else b, np.outer(a.view(), b.view()))
    dt = np.result_type(a.dtype, b.dtype)
    out = a.acc.empty((a.shape[0] * b.shape[0],), dt)
    if out.size:
        a.acc.launch(lk.outer, out.size, a.device(), b.device(), out, b.shape[0])
    return shaped(out, (a.shape[0], b.shape[0]))


def _broadcast(o: Operand, shape: tuple[int, ...], dtype: np.dtype) -> Buffer:
    """The flat device copy of the operand broadcast to ``shape`` in ``dtype`` (as is when it fits)."""
    src = o.device()
    if src.dtype != dtype:
        src = _flat_as(o, dtype)
    if tuple(o.shape) == tuple(shape):
        return flat(src)
    nd = len(shape)
    own = (1,) * (nd - len(o.shape)) + tuple(o.shape)
    strides, step = [0] * nd, 1
    for d in range(nd - 1, -1, -1):
        strides[d] = 0 if own[d] == 1 else step
        step *= own[d]
    out = o.acc.empty((int(np.prod(shape, dtype=np.int64)),), dtype)
    if out.size:
        dims = o.acc.asarray(np.array(shape, np.int64))  # a few ints of metadata, not data
        o.acc.launch(lk.broadcast_copy, out.size, flat(src), out, dims, o.acc.asarray(np.array(strides, np.int64)),
                     nd)
    return out


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-element vectors along ``axis``."""
    a, b = _pair("cross", x1, x2)
    nd = max(len(a.shape), len(b.shape))
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"dc.linalg.cross: shapes {a.shape} and {b.shape} do not broadcast") from None
    ax = normalize_axis("dc.linalg.cross", axis, nd)
    if a.shape[ax - nd] != 3 or b.shape[ax - nd] != 3:
        raise ValueError(f"dc.linalg.cross: axis {axis} must have size 3, got shapes {a.shape} and {b.shape}")
    if _host(a, b):
        return _wrap(a if not a.is_numpy else b, np.linalg.cross(a.view(), b.view(), axis=axis))
    dt = np.result_type(a.dtype, b.dtype)
    fa = _move_last(_broadcast(a, shape, dt), shape, ax)
    fb = _move_last(_broadcast(b, shape, dt), shape, ax)
    out = a.acc.empty((fa.size,), dt)
    if out.size:
        a.acc.launch(lk.cross3, out.size, fa, fb, out)
    if ax == nd - 1:
        return shaped(out, shape)
    back = a.acc.empty((out.size,), dt)
    inner = int(np.prod(shape[ax + 1:], dtype=np.int64))
    a.acc.launch(move_axis_kernel(), out.size, out, back, 3, inner, 0)
    return shaped(back, shape)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``sum(conj(x1) * x2)`` along ``axis``."""
    a, b = _pair("vecdot", x1, x2)
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"dc.linalg.vecdot: shapes {a.shape} and {b.shape} do not broadcast") from None
    if not shape:
        raise ValueError("dc.linalg.vecdot: x1 and x2 must have at least one dimension")
    ax = normalize_axis("dc.linalg.vecdot", axis, len(shape))
    if a.shape[ax - len(shape)] != b.shape[ax - len(shape)]:
        raise ValueError(f"dc.linalg.vecdot: axis {axis} differs in size: shapes {a.shape} and {b.shape}")
    if _host(a, b):
        return _wrap(a if not a.is_numpy else b, np.linalg.vecdot(a.view(), b.view(), axis=axis))
    dt = np.result_type(a.dtype, b.dtype)
    if dt == np.bool_:
        raise _no_device("vecdot", a, f" for {dt}")
    fa = _move_last(_broadcast(a, shape, dt), shape, ax)
    fb = _move_last(_broadcast(b, shape, dt), shape, ax)
    out_shape = shape[:ax] + shape[ax + 1:]
    out = a.acc.zeros((int(np.prod(out_shape, dtype=np.int64)),), dt)
    if out.size:
        a.acc.launch(lk.rowdot_conj if dt.kind == "c" else lk.rowdot, out.size, fa, fb, out, shape[ax])
    return shaped(out, out_shape)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    """Sums of products over ``axes`` (an int: the last of x1 with the first of x2), through matmul."""
    a, b = _pair("tensordot", x1, x2)
    if _host(a, b):
        return _wrap(a if not a.is_numpy else b, np.tensordot(a.view(), b.view(), axes=axes))
    if isinstance(axes, (int, np.integer)):
        k = int(axes)
        if k < 0:
            raise ValueError(f"dc.linalg.tensordot: axes must be non-negative, got {axes}")
        ax1 = tuple(range(len(a.shape) - k, len(a.shape)))
        ax2 = tuple(range(k))
    else:
        ax1, ax2 = (tuple(operator.index(v) % max(len(s), 1) for v in ([t] if np.isscalar(t) else t))
                    for t, s in zip(axes, (a.shape, b.shape), strict=True))
    if len(ax1) != len(ax2) or any(a.shape[i] != b.shape[j] for i, j in zip(ax1, ax2, strict=True)):
        raise ValueError(f"dc.linalg.tensordot: shape mismatch for sum over {axes} of {a.shape} and {b.shape}")
    k = len(ax1)
    if ax1 != tuple(range(len(a.shape) - k, len(a.shape))) or ax2 != tuple(range(k)):
        raise _no_device("tensordot", a, f" with axes {axes} (the last of x1 against the first of x2 run there)")
    m = int(np.prod(a.shape[:len(a.shape) - k], dtype=np.int64))
    kk = int(np.prod(a.shape[len(a.shape) - k:], dtype=np.int64))
    n = int(np.prod(b.shape[k:], dtype=np.int64))
    prod = _matmul(shaped(flat(a.device()), (m, kk)), shaped(flat(b.device()), (kk, n)))
    return shaped(flat(prod), a.shape[:len(a.shape) - k] + b.shape[k:])


# ----------------------------------------------------------------------------------------- norms
_NORM_KIND = {2: 0, 1: 1, np.inf: 2, -np.inf: 3, 0: 4}


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    """The vector ``ord``-norm over ``axis`` (None: every element; a tuple: those axes together)."""
    o = _op("vector_norm", x)
    if _host(o):
        return _wrap(o, np.linalg.vector_norm(o.view(), axis=axis, keepdims=keepdims, ord=ord))
    nd = len(o.shape)
    axes = tuple(range(nd)) if axis is None else (axis,) if np.isscalar(axis) else tuple(axis)
    axes = tuple(sorted(normalize_axis("dc.linalg.vector_norm", v, nd) for v in axes))
    if axes != tuple(range(nd - len(axes), nd)):
        # the trailing axes of a C-contiguous buffer are rows; one other axis is moved last first
        if len(axes) != 1:
            raise _no_device("vector_norm", o, f" over axes {axis} (trailing axes or one axis run there)")
    dt = _float_dtype("vector_norm", o)
    src = _flat_as(o, dt) if o.dtype != dt else o.device()
    if len(axes) == 1 and axes[0] != nd - 1:
        src = _move_last(src, o.shape, axes[0])
    n = int(np.prod([o.shape[v] for v in axes], dtype=np.int64))
    kept = tuple(1 if i in axes else s for i, s in enumerate(o.shape))
    out_shape = kept if keepdims else tuple(s for i, s in enumerate(o.shape) if i not in axes)
    p = float(ord)
    kind = _NORM_KIND.get(p, 5)
    out = o.acc.zeros((int(np.prod(out_shape, dtype=np.int64)),), dt)
    if out.size:
        o.acc.launch(lk.rownorm, out.size, flat(src), out, n, kind, dt.type(p))
    return shaped(out, out_shape)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """The matrix ``ord``-norm of each matrix of the stack."""
    o = _op("matrix_norm", x)
    if len(o.shape) < 2:
        raise ValueError(f"dc.linalg.matrix_norm: x must have at least 2 dimensions, got shape {o.shape}")
    if _host(o):
        return _wrap(o, np.linalg.matrix_norm(o.view(), keepdims=keepdims, ord=ord))
    if ord in (2, -2, "nuc"):
        # from the singular values: the largest, the smallest, their sum (rownorm's kinds 2, 3, 1)
        k = min(o.shape[-2:])
        sv = flat(_svd("matrix_norm", o, "none")[1])
        out = o.acc.zeros((_batches(o),), sv.dtype)
        if out.size and k:
            o.acc.launch(lk.rownorm, out.size, sv, out, k, {2: 2, -2: 3, "nuc": 1}[ord], sv.dtype.type(1))
        return shaped(out, o.shape[:-2] + ((1, 1) if keepdims else ()))
    if ord != "fro":
        raise _no_device("matrix_norm", o, f" with ord={ord!r} ('fro', 2, -2 and 'nuc' run there)")
    return vector_norm(x, axis=(-2, -1), keepdims=keepdims, ord=2)


# ------------------------------------------------------------------------------ factorizations
def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    """The Cholesky factor L (``upper=True``: L^H) of each Hermitian positive-definite matrix."""
    o = _op("cholesky", x)
    n = _square("cholesky", o)
    if _host(o):
        return _wrap(o, np.linalg.cholesky(o.view(), upper=upper))
    dt = _factor_dtype("cholesky", o)
    a = _flat_as(o, dt)
    batches = a.size // (n * n) if n else 0
    info = o.acc.zeros((batches,), np.int32)
    if batches:
        o.acc.launch(lk.cholesky, batches, a, info, n)
    _check_info("cholesky", info, "Matrix is not positive definite")
    if upper and dt.kind == "c" and a.size:  # L^H: the conjugate transpose, one kernel
        up = o.acc.empty((a.size,), dt)
        o.acc.launch(lk.conj_transpose, a.size, a, up, n)
        return shaped(up, o.shape)
    low = shaped(a, o.shape)
    return matrix_transpose(low) if upper else low


def _lu(name: str, o: Operand, rhs: Buffer | None, m: int) -> tuple[Buffer, Buffer, Buffer, Buffer, int]:
    n = _square(name, o)
    dt = _factor_dtype(name, o)
    a = _flat_as(o, dt)
    batches = a.size // (n * n) if n else int(np.prod(o.shape[:-2], dtype=np.int64))
    b = rhs if rhs is not None else o.acc.empty((0,), dt)
    info = o.acc.zeros((batches,), np.int32)
    det = o.acc.empty((batches,), dt)
    if batches:
        o.acc.launch(lk.lu_solve, batches, a, b, info, det, n, m)
    return a, b, info, det, batches


def solve(x1: Any, x2: Any, /) -> Any:
    """X with ``x1 @ X == x2`` (x2 a stack of matrices, or of vectors when it is 1-D)."""
    a, b = _pair("solve", x1, x2)
    n = _square("solve", a)
    vec = len(b.shape) == 1
    if vec and b.shape[0] != n or not vec and (len(b.shape) < 2 or b.shape[-2] != n):
        raise ValueError(f"dc.linalg.solve: x2 of shape {b.shape} does not fit x1 of shape {a.shape}")
    if _host(a, b):
        return _wrap(a if not a.is_numpy else b, np.linalg.solve(a.view(), b.view()))
    if not vec and b.shape[:-2] != a.shape[:-2]:
        raise _no_device("solve", a, f" with broadcast batches ({a.shape} and {b.shape})")
    dt = np.result_type(_factor_dtype("solve", a), _factor_dtype("solve", b))
    bo = Operand(b.acc, None, b.device())
    rhs = _flat_as(bo, dt)
    if a.dtype != dt:
        a = Operand(a.acc, None, shaped(_flat_as(a, dt), a.shape) if a.shape else a.device())
    m = 1 if vec else b.shape[-1]
    _, x, info, _, _ = _lu("solve", a, rhs, m)
    _check_info("solve", info, "Singular matrix")
    return shaped(x, b.shape)


def inv(x: Any, /) -> Any:
    """The inverse of each square matrix."""
    o = _op("inv", x)
    n = _square("inv", o)
    if _host(o):
        return _wrap(o, np.linalg.inv(o.view()))
    dt = _factor_dtype("inv", o)
    batches = int(np.prod(o.shape[:-2], dtype=np.int64))
    eye = np.broadcast_to(np.eye(n, dtype=dt), (batches, n, n)).reshape(-1)
    rhs = o.acc.asarray(np.ascontiguousarray(eye))  # the identity's constant is built where it is needed
    _, x, info, _, _ = _lu("inv", o, rhs, n)
    _check_info("inv", info, "Singular matrix")
    return shaped(x, o.shape)


def det(x: Any, /) -> Any:
    """The determinant of each square matrix (0 for singular ones)."""
    o = _op("det", x)
    _square("det", o)
    if _host(o):
        return _wrap(o, np.linalg.det(o.view()))
    _, _, _, d, _ = _lu("det", o, None, 0)
    return shaped(d, o.shape[:-2])


def slogdet(x: Any, /) -> SlogdetResult:
    """(sign, log |det|) of each square matrix."""
    o = _op("slogdet", x)
    _square("slogdet", o)
    if _host(o):
        return _wrap(o, SlogdetResult(*np.linalg.slogdet(o.view())))
    n = o.shape[-1]
    # complex too: sign is then the pivots' phase product (complex), logabsdet real, as numpy
    a = _flat_as(o, o.dtype if o.dtype in (np.complex64, np.complex128) else _float_dtype("slogdet", o))
    sign, logdet = pd.slogdet(a, _batches(o), n)
    return SlogdetResult(shaped(sign, o.shape[:-2]), shaped(logdet, o.shape[:-2]))


def matrix_power(x: Any, n: int, /) -> Any:
    """x to the integer power ``n`` by repeated squaring (negative: of the inverse)."""
    o = _op("matrix_power", x)
    k = _square("matrix_power", o)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"dc.linalg.matrix_power: n must be an integer, got {n!r}") from None
    if _host(o):
        return _wrap(o, np.linalg.matrix_power(o.view(), n))
    base = inv(x) if n < 0 else o.device()
    n = abs(n)
    if n == 0:
        eye = np.broadcast_to(np.eye(k, dtype=o.dtype), o.shape)
        return o.acc.asarray(np.ascontiguousarray(eye))
    out = None
    while n:
        if n & 1:
            out = base if out is None else matmul(out, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return out


def _lapack_only(name: str, fn: Any, x: Any, **kw: Any) -> Any:
    o = _op(name, x)
    if _host(o):
        return _wrap(o, fn(o.view(), **kw))
    return None


def _batches(o: Operand) -> int:
    return int(np.prod(o.shape[:-2], dtype=np.int64))


def _eigh(name: str, x: Any) -> tuple[Operand, Buffer, Buffer]:
    o = _op(name, x)
    n = _square(name, o)
    dt = o.dtype if o.dtype in (np.complex64, np.complex128) else _float_dtype(name, o)
    w, v = pd.eigh(_flat_as(o, dt), _batches(o), n)
    return o, shaped(w, o.shape[:-1]), shaped(v, o.shape)


def eigh(x: Any, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each symmetric/Hermitian matrix.

    Only the lower triangle is read (numpy's default), on devices too (cyclic Jacobi)."""
    _square("eigh", _op("eigh", x))
    got = _lapack_only("eigh", lambda v: EighResult(*np.linalg.eigh(v)), x)
    return got if got is not None else EighResult(*_eigh("eigh", x)[1:])


def eigvalsh(x: Any, /) -> Any:
    """Eigenvalues (ascending) of each symmetric/Hermitian matrix."""
    _square("eigvalsh", _op("eigvalsh", x))
    got = _lapack_only("eigvalsh", np.linalg.eigvalsh, x)
    return got if got is not None else _eigh("eigvalsh", x)[1]


def qr(x: Any, /, *, mode: str = "reduced") -> QRResult:
    """Q and R with ``x = Q @ R`` (mode "reduced" or "complete")."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"dc.linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    got = _lapack_only("qr", lambda v: QRResult(*np.linalg.qr(v, mode=mode)), x)
    if got is not None:
        return got
    o = _op("qr", x)
    if len(o.shape) < 2:
        raise LinAlgError(f"dc.linalg.qr: x must have at least 2 dimensions, got shape {o.shape}")
    m, n = o.shape[-2:]
    kq = m if mode == "complete" else min(m, n)
    dt = o.dtype if o.dtype in (np.complex64, np.complex128) else _float_dtype("qr", o)
    q, r = pd.qr(_flat_as(o, dt), _batches(o), m, n, kq)
    return QRResult(shaped(q, o.shape[:-2] + (m, kq)), shaped(r, o.shape[:-2] + (kq, n)))


def _svd(name: str, o: Operand, ku: str) -> tuple[Buffer | None, Buffer, Buffer | None]:
    """U, S, Vh on the device; ``ku``: "none" (S only), "reduced" or "full"."""
    if len(o.shape) < 2:
        raise LinAlgError(f"dc.linalg.{name}: x must have at least 2 dimensions, got shape {o.shape}")
    # the one-sided Jacobi kernel takes complex too (S real, U and Vh complex, as numpy)
    dt = o.dtype if o.dtype in (np.complex64, np.complex128) else _float_dtype(name, o)
    m, n = o.shape[-2:]
    batch = o.shape[:-2]
    tall = m >= n
    if not tall:  # the kernel wants m >= n: the SVD of x^T, whose U and Vh swap and transpose back
        o = Operand(o.acc, None, matrix_transpose(o.device()))
        m, n = n, m
    cols = {"none": 0, "reduced": n, "full": m}[ku]
    u, s, vh = pd.svd(_flat_as(o, dt), _batches(o), m, n, cols)
    s = shaped(s, batch + (n,))
    if ku == "none":
        return None, s, None
    u, vh = shaped(u, batch + (m, cols)), shaped(vh, batch + (n, n))
    if tall:
        return u, s, vh
    return matrix_transpose(vh), s, matrix_transpose(u)


def svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    """U, S, Vh with ``x = U @ diag(S) @ Vh``."""
    got = _lapack_only("svd", lambda v: SVDResult(*np.linalg.svd(v, full_matrices=full_matrices)), x)
    if got is not None:
        return got
    return SVDResult(*_svd("svd", _op("svd", x), "full" if full_matrices else "reduced"))


def svdvals(x: Any, /) -> Any:
    """The singular values of each matrix, descending."""
    got = _lapack_only("svdvals", np.linalg.svdvals, x)
    return got if got is not None else _svd("svdvals", _op("svdvals", x), "none")[1]


def _rtol(name: str, o: Operand, rtol: Any, s: Buffer) -> Buffer:
    """The per-matrix cutoff rtol * max(S) on the device; rtol's default is numpy's max(M, N) * eps."""
    batch = o.shape[:-2]
    if rtol is None:
        rtol = max(o.shape[-2:]) * np.finfo(s.dtype).eps
    try:
        per = np.broadcast_to(np.asarray(rtol, dtype=s.dtype), batch)
    except ValueError:
        raise ValueError(f"dc.linalg.{name}: rtol of shape {np.shape(rtol)} does not broadcast to the stack "
                         f"{batch}") from None
    k = min(o.shape[-2:])
    return pd.cutoffs(flat(s), o.acc.asarray(np.ascontiguousarray(per).reshape(-1)), _batches(o), k)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse (singular values below ``rtol * max`` dropped)."""
    if isinstance(rtol, Buffer):
        rtol = rtol.numpy()
    got = _lapack_only("pinv", lambda v: np.linalg.pinv(v, rtol=rtol), x)
    if got is not None:
        return got
    o = _op("pinv", x)
    u, s, vh = _svd("pinv", o, "reduced")
    m, n = o.shape[-2:]
    out = pd.pinv(flat(u), flat(s), flat(vh), _rtol("pinv", o, rtol, s), _batches(o), m, n)
    return shaped(out, o.shape[:-2] + (n, m))


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    """The number of singular values above ``rtol * max``."""
    if isinstance(rtol, Buffer):
        rtol = rtol.numpy()
    got = _lapack_only("matrix_rank", lambda v: np.linalg.matrix_rank(v, rtol=rtol), x)
    if got is not None:
        return got
    o = _op("matrix_rank", x)
    _, s, _ = _svd("matrix_rank", o, "none")
    k = min(o.shape[-2:])
    return shaped(pd.rank(flat(s), _rtol("matrix_rank", o, rtol, s), _batches(o), k), o.shape[:-2])


__all__ = ["EighResult", "LinAlgError", "NoDevicePath", "QRResult", "SVDResult", "SlogdetResult", "cholesky",
           "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
           "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "trace", "vecdot", "vector_norm"]
