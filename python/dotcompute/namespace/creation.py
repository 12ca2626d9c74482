"""Array API 2024.12: creation functions (see docs/array-api.md).

Every result is a new Buffer on ``device`` (default: ``devices.current_default()``). Constant
fills run on the device (``acc.zeros``, the generated fill kernel of ``out[...] = v``); values
that come from the host (``asarray`` of Python data, ``arange``/``linspace``/``eye``, which are
computed from their few scalar parameters) are made in host memory and uploaded once; on cpu:0
that host memory is the buffer itself (written in place through ``buf.host()``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..expr.types import SUPPORTED
from ..runtime import Accelerator, Buffer
from . import _kernels, _layout
from ._common import concrete, host, on_host
from .datatypes import dtype_of
from .devices import resolve, to_device
from .info import has_float64

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "full", "full_like", "linspace",
           "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]

_PY_SCALARS = (bool, int, float, complex)


def _dtype(name: str, dtype: Any) -> np.dtype | None:
    return None if dtype is None else dtype_of(name, dtype)


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    try:
        dims = tuple(operator.index(d) for d in items)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{name}: negative dimensions are not allowed, got {dims}")
    return dims


def _default_float(acc: Accelerator, dt: np.dtype) -> np.dtype:
    """A dtype numpy defaulted to float64/complex128, narrowed where ``acc`` has no float64 (Metal)."""
    if has_float64(acc):
        return dt
    return {np.dtype(np.float64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.complex64)}.get(dt, dt)


def _check_device_dtype(name: str, acc: Accelerator, dt: np.dtype) -> None:
    if not has_float64(acc) and dt in (np.dtype(np.float64), np.dtype(np.complex128)):
        raise TypeError(f"{name}: {acc.id} has no {dt} (see dc.__array_namespace_info__().dtypes(device=...))")


def _upload(acc: Accelerator, array: np.ndarray) -> Buffer:
    array = np.asarray(array)
    return acc.asarray(array if array.flags.c_contiguous else np.array(array, order="C"))


def asarray(obj: Any, /, *, dtype: Any = None, device: Accelerator | str | None = None,
            copy: bool | None = None) -> Buffer:
    """``obj`` (a Buffer, a Python scalar, nested sequences, anything with ``__array__`` or the buffer
    protocol) as a Buffer. A Buffer on ``device`` with ``dtype`` is returned as it is unless
    ``copy=True``; ``copy=False`` raises ValueError where a copy is needed."""
    dt = _dtype("dc.asarray", dtype)
    if isinstance(obj, Buffer):
        acc = obj.accelerator if device is None else resolve(device, "dc.asarray")
        same = acc is obj.accelerator and (dt is None or dt == obj.dtype)
        if same and not copy:
            return obj
        if copy is False:
            raise ValueError("dc.asarray: copy=False, but a copy is needed (another device or dtype)")
        out = obj if acc is obj.accelerator else to_device(obj, acc)
        if dt is not None and dt != out.dtype or out is obj:
            out = out.astype(dt if dt is not None else out.dtype)
        return concrete(out)
    acc = resolve(device, "dc.asarray")
    if copy is False:
        raise ValueError(f"dc.asarray: copy=False, but a {type(obj).__name__} is copied to make a Buffer")
    if isinstance(obj, _PY_SCALARS) and not isinstance(obj, np.generic) and dt is not None:
        _check_scalar_fits(obj, dt)
    try:
        array = np.asarray(obj) if dt is None else np.asarray(obj, dtype=dt)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"dc.asarray: cannot make an array of {type(obj).__name__}: {exc}") from None
    if array.dtype.kind not in "biufc":
        raise TypeError(f"dc.asarray: {array.dtype} is not an Array API dtype")
    if dt is None and not isinstance(obj, np.ndarray):
        array = array.astype(_default_float(acc, array.dtype), copy=False)
    _check_device_dtype("dc.asarray", acc, array.dtype)
    return _upload(acc, array)


def _check_scalar_fits(value: Any, dt: np.dtype) -> None:
    if dt.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OverflowError(f"dc.asarray: Python integer {value} out of bounds for {dt}")


def empty(shape: int | tuple[int, ...], *, dtype: Any = None, device: Accelerator | str | None = None) -> Buffer:
    acc = resolve(device, "dc.empty")
    dt = _dtype("dc.empty", dtype) or _default_float(acc, np.dtype(np.float64))
    _check_device_dtype("dc.empty", acc, dt)
    return acc.empty(_shape("dc.empty", shape), dt)


def zeros(shape: int | tuple[int, ...], *, dtype: Any = None, device: Accelerator | str | None = None) -> Buffer:
    acc = resolve(device, "dc.zeros")
    dt = _dtype("dc.zeros", dtype) or _default_float(acc, np.dtype(np.float64))
    _check_device_dtype("dc.zeros", acc, dt)
    return acc.zeros(_shape("dc.zeros", shape), dt)  # all-zero bytes are 0 in every dtype


def _fill_dtype(acc: Accelerator, value: Any) -> np.dtype:
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(value, (float, np.floating)):
        return _default_float(acc, np.dtype(np.float64))
    if isinstance(value, (complex, np.complexfloating)):
        return _default_float(acc, np.dtype(np.complex128))
    raise TypeError(f"dc.full: fill_value must be a bool, int, float or complex, got {type(value).__name__}")


def full(shape: int | tuple[int, ...], fill_value: bool | int | float | complex, *, dtype: Any = None,
         device: Accelerator | str | None = None) -> Buffer:
    """A new Buffer of ``shape`` with every element ``fill_value`` (numpy's conversion)."""
    acc = resolve(device, "dc.full")
    if isinstance(fill_value, Buffer):
        fill_value = fill_value.item()
    dt = _dtype("dc.full", dtype) or _fill_dtype(acc, fill_value)
    _check_device_dtype("dc.full", acc, dt)
    dims = _shape("dc.full", shape)
    value = np.asarray(fill_value).astype(dt)[()]
    out = acc.empty(dims, dt)
    if out.size:
        if out.host_visible or dt.kind == "c" or len(dims) > 3:
            with out.host() as view:  # host memory (or what kernels cannot write yet): filled in place
                view[...] = value
        else:
            out[...] = value  # the generated fill kernel, on the device
    return out


def ones(shape: int | tuple[int, ...], *, dtype: Any = None, device: Accelerator | str | None = None) -> Buffer:
    acc = resolve(device, "dc.ones")
    dt = _dtype("dc.ones", dtype) or _default_float(acc, np.dtype(np.float64))
    return full(shape, True if dt.kind == "b" else 1, dtype=dt, device=acc)


def _like(name: str, x: Buffer, dtype: Any, device: Any) -> tuple[tuple[int, ...], np.dtype, Accelerator]:
    if not isinstance(x, Buffer):
        raise TypeError(f"{name}: x must be a dc.Buffer, got {type(x).__name__}")
    return x.shape, _dtype(name, dtype) or x.dtype, x.accelerator if device is None else resolve(device, name)


def empty_like(x: Buffer, /, *, dtype: Any = None, device: Accelerator | str | None = None) -> Buffer:
    shape, dt, acc = _like("dc.empty_like", x, dtype, device)
    return empty(shape, dtype=dt, device=acc)


def zeros_like(x: Buffer, /, *, dtype: Any = None, device: Accelerator | str | None = None) -> Buffer:
    shape, dt, acc = _like("dc.zeros_like", x, dtype, device)
    return zeros(shape, dtype=dt, device=acc)


def ones_like(x: Buffer, /, *, dtype: Any = None, device: Accelerator | str | None = None) -> Buffer:
    shape, dt, acc = _like("dc.ones_like", x, dtype, device)
    return ones(shape, dtype=dt, device=acc)


def full_like(x: Buffer, /, fill_value: bool | int | float | complex, *, dtype: Any = None,
              device: Accelerator | str | None = None) -> Buffer:
    shape, dt, acc = _like("dc.full_like", x, dtype, device)
    return full(shape, fill_value, dtype=dt, device=acc)


def _host_made(name: str, acc: Accelerator, array: np.ndarray) -> Buffer:
    _check_device_dtype(name, acc, array.dtype)
    return _upload(acc, array)


def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *, dtype: Any = None,
           device: Accelerator | str | None = None) -> Buffer:
    """Evenly spaced values in [start, stop) (numpy's ``arange``)."""
    acc = resolve(device, "dc.arange")
    dt = _dtype("dc.arange", dtype)
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("dc.arange: step must not be 0")
    if acc.host_visible_memory and dt is not None and dt.kind in "iu" and dt != np.uint64 and all(
            isinstance(v, (int, np.integer)) for v in (start, stop, step)) and _fits(dt, start, stop, step):
        # integers on host memory: written block by block straight into the buffer (no temporary
        # of the whole length and no second copy; exact, so the values are numpy's)
        count = len(range(int(start), int(stop), int(step)))
        _check_device_dtype("dc.arange", acc, dt)
        base = _BASE[:count] * int(step) if step != 1 else _BASE[:count]  # one block's offsets, made once
        return _blocked(acc, count, dt, lambda v, i0: np.add(base[: len(v)], int(start) + i0 * int(step),
                                                              out=v, dtype=dt, casting="unsafe"))
    if not acc.host_visible_memory and dt is not None and dt in _DEVICE_INTS and all(
            isinstance(v, (int, np.integer)) for v in (start, stop, step)) and _fits(dt, start, stop, step):
        # integers on a device: computed there, one kernel, nothing uploaded
        out = acc.empty((len(range(int(start), int(stop), int(step))),), dt)
        _kernels.launch(acc, _kernels.int_range, out.size, out, int(start), int(step))
        return out
    values = np.arange(start, stop, step, dtype=dt)
    if dt is None:
        values = values.astype(_default_float(acc, values.dtype), copy=False)
    return _host_made("dc.arange", acc, values)


def _fits(dt: np.dtype, start: int, stop: int, step: int) -> bool:
    """Whether every value of the integer range is a ``dt`` (else numpy's own arange decides)."""
    values = range(int(start), int(stop), int(step))
    info = np.iinfo(dt)
    return not values or info.min <= min(values[0], values[-1]) and max(values[0], values[-1]) <= info.max


_DEVICE_INTS = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32))  # what int_range stores exactly
_BLOCK = 1 << 15  # elements per block of the blocked host fills: a block and its source stay in cache
_BASE = np.arange(_BLOCK, dtype=np.int64)


def _blocked(acc: Accelerator, count: int, dt: np.dtype, write: Any) -> Buffer:
    """A new 1-d host-memory Buffer of ``count`` elements, ``write(block_view, first_index)`` filling
    each block of ``_BLOCK`` elements in place."""
    out = acc.empty((count,), dt)
    if count:
        with out.host() as view:
            for i0 in range(0, count, _BLOCK):
                write(view[i0:i0 + _BLOCK], i0)
    return out


def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *, dtype: Any = None,
             device: Accelerator | str | None = None, endpoint: bool = True) -> Buffer:
    """``num`` evenly spaced values from start to stop (numpy's ``linspace``)."""
    acc = resolve(device, "dc.linspace")
    dt = _dtype("dc.linspace", dtype)
    if dt is None:
        is_complex = isinstance(start, complex) or isinstance(stop, complex)
        dt = _default_float(acc, np.dtype(np.complex128 if is_complex else np.float64))
    if operator.index(num) < 0:
        raise ValueError(f"dc.linspace: num must be non-negative, got {num}")
    div = num - 1 if endpoint else num
    reals = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in (start, stop))
    if acc.host_visible_memory and reals and dt.kind == "f" and div > 0 and num > 1:
        # numpy's arithmetic (float64: i * step + start, the last value stop when endpoint), block
        # by block into the buffer: no temporaries of the whole length, no second copy
        step = (float(stop) - float(start)) / div
        if step != 0:
            _check_device_dtype("dc.linspace", acc, dt)
            lo = float(start)

            def write(v: np.ndarray, i0: int) -> None:
                block = np.arange(i0, i0 + len(v), dtype=np.float64)
                block *= step
                block += lo
                v[...] = block

            out = _blocked(acc, num, dt, write)
            if endpoint:
                with out.host() as view:
                    view[-1] = stop
            return out
    return _host_made("dc.linspace", acc, np.linspace(start, stop, num, endpoint=endpoint, dtype=dt))


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Accelerator | str | None = None) -> Buffer:
    acc = resolve(device, "dc.eye")
    dt = _dtype("dc.eye", dtype) or _default_float(acc, np.dtype(np.float64))
    if acc.host_visible_memory or dt in SUPPORTED and dt.kind in "iuf":
        _check_device_dtype("dc.eye", acc, dt)
        cols = n_rows if n_cols is None else operator.index(n_cols)
        rows, k = operator.index(n_rows), operator.index(k)
        if rows < 0 or cols < 0:
            raise ValueError(f"dc.eye: negative dimensions are not allowed, got ({rows}, {cols})")
        out = acc.zeros((rows, cols), dt)  # zeros on the buffer's memory, then the diagonal in place
        if out.size and -rows < k < cols:
            first, count = max(k, -k * cols), min(rows + min(k, 0), cols - max(k, 0))
            if acc.host_visible_memory:
                with out.host() as view:
                    view.reshape(-1)[first::cols + 1][:count] = 1
            else:  # on the device: one kernel writes the diagonal, nothing uploaded
                _kernels.launch(acc, _kernels.diagonal_ones, count, _layout.flat(out), dt.type(1), first, cols + 1,
                                count)
        return out
    return _host_made("dc.eye", acc, np.eye(n_rows, n_cols, k=k, dtype=dt))


def meshgrid(*arrays: Buffer, indexing: str = "xy") -> list[Buffer]:
    """Coordinate matrices from 1-D Buffers (numpy's ``meshgrid``; ``indexing`` 'xy' or 'ij')."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"dc.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return []
    from ._common import same_device

    for a in arrays:
        if not isinstance(a, Buffer):
            raise TypeError(f"dc.meshgrid: arrays must be dc.Buffers, got {type(a).__name__}")
    acc = same_device("dc.meshgrid", *arrays)
    if len({a.dtype for a in arrays}) > 1:
        raise ValueError("dc.meshgrid: the arrays must have one dtype")
    grids = np.meshgrid(*(host(a) if on_host(a) else np.empty(a.shape, a.dtype) for a in arrays), indexing=indexing)
    if all(on_host(a) for a in arrays):
        return [_upload(acc, g) for g in grids]
    from .manipulation import broadcast_to, reshape

    shape = grids[0].shape
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) > 1 else i
        dims = [1] * len(shape)
        dims[axis] = a.size
        out.append(concrete(broadcast_to(reshape(a, tuple(dims)), shape)))
    return out


def _triangle(name: str, x: Buffer, k: int, upper: bool) -> Buffer:
    if not isinstance(x, Buffer):
        raise TypeError(f"{name}: x must be a dc.Buffer, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{name}: x must have at least 2 dimensions, got shape {x.shape}")
    if on_host(x):
        src = host(x)
        return _upload(x.accelerator, np.triu(src, k) if upper else np.tril(src, k))
    from ..expr.build import where

    rows, cols = x.shape[-2:]
    keep = np.triu(np.ones((rows, cols), bool), k) if upper else np.tril(np.ones((rows, cols), bool), k)
    mask = _upload(x.accelerator, keep)  # depends only on the shape: made on the host, uploaded once
    return concrete(where(mask, x, np.zeros((), x.dtype)[()]))


def tril(x: Buffer, /, *, k: int = 0) -> Buffer:
    """The lower triangle of the last two axes (elements above the k-th diagonal are zero)."""
    return _triangle("dc.tril", x, k, upper=False)


def triu(x: Buffer, /, *, k: int = 0) -> Buffer:
    """The upper triangle of the last two axes (elements below the k-th diagonal are zero)."""
    return _triangle("dc.triu", x, k, upper=True)

