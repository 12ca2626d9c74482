"""Array API 2024.12: data type functions (see docs/array-api.md).

The dtypes are numpy's (``dc.float32 is np.float32``), and so are the rules: numpy 2's type
promotion with Python scalars weak (NEP 50), its casting table, its ``finfo``/``iinfo``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]


def dtype_of(name: str, x: Any) -> np.dtype:
    """The dtype named by ``x`` (a dtype, a scalar type, or an array's dtype); TypeError otherwise."""
    if isinstance(x, Buffer):
        return x.dtype
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        raise TypeError(f"{name}: expected a dtype or an array, got the Python {type(x).__name__} {x!r}")
    try:
        dt = np.dtype(x.dtype if hasattr(x, "dtype") and not isinstance(x, type) else x)
    except TypeError:
        raise TypeError(f"{name}: {x!r} is not a dtype") from None
    if dt.kind not in "biufc":
        raise TypeError(f"{name}: {dt} is not an Array API dtype")
    return dt


@dataclass(frozen=True)
class FInfo:
    """``dc.finfo``'s answer: the standard's fields as Python floats (numpy's are numpy scalars)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class IInfo:
    """``dc.iinfo``'s answer."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> FInfo:  # noqa: A002 -- the standard's parameter name
    """Machine limits of a floating (or complex: its real part's) dtype or array."""
    dt = dtype_of("dc.finfo", type)
    if dt.kind not in "fc":
        raise TypeError(f"dc.finfo: {dt} is not a floating-point dtype (use dc.iinfo)")
    f = np.finfo(dt)
    return FInfo(int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), np.dtype(f.dtype))


def iinfo(type: Any, /) -> IInfo:  # noqa: A002 -- the standard's parameter name
    """Limits of an integer dtype or array."""
    dt = dtype_of("dc.iinfo", type)
    if dt.kind not in "iu":
        raise TypeError(f"dc.iinfo: {dt} is not an integer dtype (use dc.finfo)")
    i = np.iinfo(dt)
    return IInfo(int(i.bits), int(i.max), int(i.min), dt)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of the standard's kind names ('bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric'), or a tuple of those."""
    if isinstance(dtype, Buffer):
        raise TypeError("dc.isdtype: dtype must be a dtype, not an array (pass x.dtype)")
    return bool(np.isdtype(dtype_of("dc.isdtype", dtype), kind))


def _operand(x: Any) -> Any:
    # Python scalars stay Python scalars: numpy 2's result_type treats them as weak (NEP 50)
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return x
    return dtype_of("dc.result_type", x)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype numpy 2 gives an operation on these arrays, dtypes and (weak) Python scalars."""
    if not arrays_and_dtypes:
        raise ValueError("dc.result_type: at least one array or dtype is required")
    ops = [_operand(x) for x in arrays_and_dtypes]
    if all(not isinstance(o, np.dtype) for o in ops):
        raise ValueError("dc.result_type: at least one array or dtype is required (Python scalars alone have "
                         "no dtype)")
    return np.result_type(*ops)


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (a dtype or array) converts to ``to`` safely (numpy's 'safe' casting)."""
    return bool(np.can_cast(dtype_of("dc.can_cast", from_), dtype_of("dc.can_cast", to), casting="safe"))


def astype(x: Buffer, dtype: Any, /, *, copy: bool = True, device: Accelerator | str | None = None) -> Buffer:
    """``x`` converted to ``dtype`` (numpy's unsafe cast), on ``device`` (default: ``x``'s)."""
    if not isinstance(x, Buffer):
        raise TypeError(f"dc.astype: x must be a dc.Buffer, got {type(x).__name__}")
    dt = dtype_of("dc.astype", dtype)
    if device is not None:
        from .devices import to_device

        x = to_device(x, device)
    if dt == x.dtype and not copy:
        return x
    if dt.kind == "c" or x.dtype.kind == "c":
        return _complex_astype(x, dt)
    return x.astype(dt)  # a new (lazily computed) buffer, also when the dtype is the same


def _complex_astype(x: Buffer, dt: np.dtype) -> Buffer:
    """A conversion to or between complex dtypes: numpy on host memory (cpu:0), the generated cast
    kernel on other devices."""
    from ._common import host, on_host, wrap

    if dt.kind != "c" and x.dtype.kind == "c":
        raise TypeError(f"dc.astype: casting {x.dtype} to {dt} would drop the imaginary part; use dc.real first")
    if not on_host(x):
        return x.astype(dt)
    return wrap(x.accelerator, host(x).astype(dt))
