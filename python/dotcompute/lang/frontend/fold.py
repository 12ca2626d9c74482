"""Constant folding of literal-only expressions with Python's own semantics.

Only *weak* constants (Python literals and captured Python numbers) are folded, so the
result is exactly what Python computes; the typed result then follows the literal rules.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "TrueDiv": operator.truediv,
    "FloorDiv": operator.floordiv, "Mod": operator.mod, "Pow": operator.pow,
    "LShift": operator.lshift, "RShift": operator.rshift, "BitAnd": operator.and_,
    "BitOr": operator.or_, "BitXor": operator.xor,
}

_CMPOPS: dict[str, Callable[[Any, Any], bool]] = {
    "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
    "Gt": operator.gt, "GtE": operator.ge,
}


class FoldError(Exception):
    """Python itself refuses the constant expression (division by zero, a float shift, ...)."""


def _check(value: Any) -> Any:
    if isinstance(value, complex):
        raise FoldError("the constant expression gives a complex number")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 1 << 64:
        raise FoldError(f"the constant {value} does not fit in 64 bits")
    return value


def binop(op: str, a: Any, b: Any) -> Any:
    if op in ("LShift", "RShift") and isinstance(b, int) and b > 64:
        raise FoldError(f"shift count {b} is too large for a constant")
    if op == "Pow" and isinstance(b, int) and not isinstance(b, bool) and b > 256 and isinstance(a, int):
        raise FoldError("the constant power is too large")
    try:
        value = _BINOPS[op](a, b)
        # complex constants fold to complex (1 + 2j); only a real expression turning complex is refused
        return value if isinstance(a, complex) or isinstance(b, complex) else _check(value)
    except (ZeroDivisionError, OverflowError, TypeError, ValueError) as e:
        raise FoldError(str(e)) from None


def compare(op: str, a: Any, b: Any) -> bool:
    try:
        return bool(_CMPOPS[op](a, b))
    except TypeError as e:  # 1j < 2j
        raise FoldError(str(e)) from None


def unary(op: str, a: Any) -> Any:
    try:
        if op == "USub":
            return -a if isinstance(a, complex) else _check(-a)
        if op == "UAdd":
            return +a
        if op == "Not":
            return not a
        if op == "Invert":
            if isinstance(a, float):
                raise FoldError("bad operand type for unary ~: 'float'")
            return ~a
    except TypeError as e:
        raise FoldError(str(e)) from None
    raise FoldError(f"unknown unary operator {op}")


def math_call(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return _check(fn(*args))
    except (ValueError, OverflowError, ZeroDivisionError, TypeError) as e:
        raise FoldError(f"{getattr(fn, '__name__', fn)}{args}: {e}") from None


def is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex))

__all__ = ["FoldError", "binop", "compare", "unary", "math_call"]
