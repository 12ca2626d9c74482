"""Result types of array expressions: numpy 2's rules (NEP 50), for the dtypes kernels compute with.

numpy itself is the reference: a ufunc's ``resolve_dtypes`` gives the loop a numpy call would
pick (Python scalars passed as their type are "weak", as NEP 50 says), so promotion here is
numpy's by construction, not a copy of its tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import KERNEL_DTYPES

# the dtypes the code generator spells (codegen.CAST_NAMES) and kernels compute with
_GENERATED = tuple(np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                          "uint64", "float16", "float32", "float64", "complex64", "complex128"))
#: what array expressions compute with (complex through expr/complex_math.py)
EXPR_DTYPES: frozenset[np.dtype] = frozenset(d for d in _GENERATED if d in KERNEL_DTYPES)
#: the real dtypes: what the namespace's own device kernels (gathers, sorts, scans) and the
#: element-by-element store and copy kernels of host memory take
SUPPORTED: frozenset[np.dtype] = frozenset(d for d in EXPR_DTYPES if d.kind != "c")
_NAMES = ", ".join(str(d) for d in _GENERATED if d in EXPR_DTYPES)


def check_dtype(dtype: Any, what: str) -> np.dtype:
    """``dtype`` as a numpy dtype, or TypeError naming ``what`` when kernels cannot compute with it."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what}: {dtype!r} is not a dtype") from None
    if dt not in EXPR_DTYPES:
        raise TypeError(f"{what}: dtype {dt} is not supported by array expressions (supported: {_NAMES})")
    return dt


def operand_type(x: Any) -> Any:
    """What ``resolve_dtypes`` takes for an operand: a dtype, or ``int``/``float`` for weak Python scalars."""
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(x, int):
        return int
    if isinstance(x, float):
        return float
    if isinstance(x, complex):
        return complex
    return x.dtype


def loop_types(ufunc: np.ufunc, operands: tuple[Any, ...], what: str) -> tuple[tuple[np.dtype, ...], np.dtype]:
    """(the dtypes the operands are converted to, the result dtype) of ``ufunc`` on ``operands``."""
    types = tuple(operand_type(x) for x in operands)
    ins, out = _resolved(ufunc, types, what)
    # numpy 2 refuses a Python int that does not fit the loop type (uint32 + -1, int32 + 2**40)
    for x, t in zip(operands, ins, strict=True):
        if type(x) is int and t.kind in "iu":
            info = np.iinfo(t)
            if not info.min <= x <= info.max:
                raise OverflowError(f"{what}: Python integer {x} out of bounds for {t}")
    return ins, out


#: (ufunc, operand types) -> numpy's loop: every operator of an expression asks, with few distinct
#: questions; resolving and checking them took most of an operator's ~10 us.
_LOOPS: dict[tuple[Any, ...], tuple[tuple[np.dtype, ...], np.dtype]] = {}


def _resolved(ufunc: np.ufunc, types: tuple[Any, ...], what: str) -> tuple[tuple[np.dtype, ...], np.dtype]:
    key = (ufunc, *types)
    hit = _LOOPS.get(key)
    if hit is not None:
        return hit
    try:
        resolved = ufunc.resolve_dtypes((*types, None))
    except TypeError as e:  # numpy's UFuncTypeError / _UFuncNoLoopError are TypeErrors
        names = ", ".join(getattr(t, "__name__", str(t)) for t in types)
        raise TypeError(f"{what} is not defined for ({names}): {e}") from None
    ins, out = tuple(resolved[:-1]), resolved[-1]
    for t in (*ins, out):
        check_dtype(t, what)
    if len(_LOOPS) < 4096:  # (ufunc, dtypes) pairs are few; a bound all the same
        _LOOPS[key] = (ins, out)
    return ins, out


def result_dtype_of_cast(dtype: Any) -> np.dtype:
    return check_dtype(dtype, "astype")


__all__ = ["EXPR_DTYPES", "SUPPORTED", "check_dtype", "loop_types", "operand_type", "result_dtype_of_cast"]
