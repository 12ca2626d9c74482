"""Turning what users write (Buffers, numpy arrays, Python and numpy scalars) into expression operands."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..runtime import Buffer
from .lazy import LazyBuffer, Scalar
from .types import check_dtype


def accelerator_of(*xs: Any) -> Any:
    """The accelerator the Buffers among ``xs`` share (ValueError naming both when they differ)."""
    acc = None
    for x in xs:
        if isinstance(x, Buffer):
            a = x.accelerator
            if acc is None:
                acc = a
            elif a is not acc and a.id != acc.id:
                raise ValueError(f"operands are on different accelerators: {acc.id} and {a.id} "
                                 "(move one with buf.copy_to_device(acc) or acc.asarray(buf.numpy()))")
    return acc


_FP64: dict[str, bool] = {}


def has_float64(acc: Any) -> bool:
    """Whether ``acc`` computes with float64 (Metal does not)."""
    has = _FP64.get(acc.id)
    if has is None:
        info = acc.info
        has = _FP64[acc.id] = "fp64" in (info.get("features") or ()) or bool(info.get("fp64"))
    return has


def check_device_dtypes(acc: Any, dtypes: Any, what: str) -> None:
    """TypeError naming the backend when ``acc`` cannot compute with one of ``dtypes`` (float64
    on a device without fp64, e.g. Metal)."""
    if not has_float64(acc) and any(np.dtype(t) in (np.float64, np.complex128) for t in dtypes):
        raise TypeError(f"{what}: {acc.id} ({acc.backend} backend) has no float64 arithmetic; "
                        "use float32 buffers (x.astype(dc.float32)) there")


def _check_fits(x: bool | int | float, dt: np.dtype) -> None:
    """numpy 2's rules for a Python number stored into an integer buffer (``b[i] = x``): an int out
    of the dtype's range is an OverflowError, a NaN a ValueError, an infinity an OverflowError
    (a conversion would wrap or be undefined: a silently wrong element)."""
    if dt.kind not in "iu" or isinstance(x, bool):
        return
    if isinstance(x, int):
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python integer {x} out of bounds for {dt}")
    elif math.isnan(x):
        raise ValueError(f"cannot convert float NaN to integer ({dt})")
    elif math.isinf(x):
        raise OverflowError(f"cannot convert float infinity to integer ({dt})")


def operand(x: Any, acc: Any, dtype: Any = None) -> Any:
    """``x`` as an operand on ``acc``: a Buffer (0-d buffers become strong scalars), a Scalar (Python
    numbers stay weak: their ``value`` is the Python number and dtype None), or NotImplemented.

    ``dtype``: the type a bare Python number or list takes (assignment into a buffer of that type).
    """
    if isinstance(x, Buffer):
        check_dtype(x.dtype, "operand")
        if x.ndim == 0 and not (type(x) is LazyBuffer and (x._op is not None or x._backing is not None)):
            return Scalar(np.asarray(x)[()].item(), x.dtype)
        return x
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        if dtype is not None and isinstance(x, complex):
            dt = check_dtype(dtype, "value")
            if dt.kind != "c":
                raise TypeError(f"cannot store the complex number {x!r} into a {dt} buffer (numpy would drop the "
                                "imaginary part); take .real or abs()")
            return Scalar(np.asarray(x).astype(dt)[()].item(), dt)
        if dtype is not None:
            dt = check_dtype(dtype, "value")
            _check_fits(x, dt)
            return Scalar(np.asarray(x).astype(dt)[()].item() if not isinstance(x, bool) or dt.kind == "b"
                          else dt.type(x).item(), dt)
        return Scalar(x, None)  # weak: the loop type decides
    if isinstance(x, np.generic):
        dt = check_dtype(x.dtype, "operand")
        return Scalar(x.item(), dt)
    if isinstance(x, (np.ndarray, list, tuple)):
        arr = np.asarray(x) if isinstance(x, np.ndarray) or dtype is None else np.asarray(x, dtype=dtype)
        check_dtype(arr.dtype, "operand")
        if arr.ndim == 0:
            return Scalar(arr[()].item(), arr.dtype)
        if acc is None:
            return NotImplemented
        return acc.asarray(np.ascontiguousarray(arr))
    return NotImplemented


__all__ = ["operand", "accelerator_of", "check_device_dtypes"]
