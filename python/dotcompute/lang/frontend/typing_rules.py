"""Conversions between IR expressions under the language's type rules (docs/kernel-language.md)."""

from __future__ import annotations

import math

import numpy as np

from .. import ir
from ..types import BOOL, FLOAT16, FLOAT32, FLOAT64, ScalarType, fits, literal_type, promote, wrap_int


def is_weak(e: ir.Expr) -> bool:
    """A weak *literal*: a Python number whose value is known here (folded, adapts by value)."""
    return isinstance(e, ir.Const) and e.weak


def is_python_number(e: ir.Expr) -> bool:
    """Weak in promotion: a literal, or a run-time value that is a Python number when the kernel
    body runs as Python (ids, range() variables, len(), shape, math.floor(), int(), float(), ...)."""
    return bool(getattr(e, "weak", False))


def weak_meets(w: ScalarType, strong: ScalarType) -> ScalarType:
    """The type a weak run-time value of type ``w`` meets a strong ``strong`` in (NEP 50 by kind).

    A Python int or float takes a strong float's (or complex's) type: ``x[i] * i`` is float32 for a
    float32 ``x``; a Python float with a strong int gives float64. A Python int with a strong int
    keeps the wider of the two (numpy would take the strong side's width, and raise OverflowError for
    a value that does not fit it): such values are mostly indices, which must not wrap at 32 bits.
    """
    if strong.is_complex:
        if w.is_complex:
            return promote(w, strong)
        return strong
    if w.is_complex:
        if strong.is_float:
            return literal_type(1j, strong)
        return promote(w, strong)
    if strong.is_float and not strong.is_bool:
        return strong
    if w.is_float:  # a Python float with an int or bool: float64 (np.int8(1) * 2.5 is float64)
        return promote(FLOAT64, strong)
    return promote(w, strong)


def const_value(value: bool | int | float | complex, t: ScalarType) -> bool | int | float | complex:
    """``value`` converted to type ``t`` exactly as the generated code would."""
    if t.is_complex:
        with np.errstate(over="ignore"):
            return complex(t.np_dtype.type(value))
    if isinstance(value, complex):
        raise ValueError("a complex value has no real type")  # the frontend refuses this first
    if t.is_bool:
        return bool(value)
    if t.is_int:
        if isinstance(value, float):
            if math.isnan(value):
                return 0
            if math.isinf(value):
                value = 1 << 70 if value > 0 else -(1 << 70)
            lo, hi = (0, (1 << t.bits) - 1) if t.kind == "u" else (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1)
            return max(lo, min(hi, int(value)))  # saturating, like the emitted conversion
        return wrap_int(int(value), t)
    v = float(value) if not isinstance(value, int) or abs(value) < 1 << 1023 else math.inf
    if t in (FLOAT16, FLOAT32):
        with np.errstate(over="ignore"):
            v = float(t.np_dtype.type(v))
    return v


def convert(e: ir.Expr, t: ScalarType, loc: ir.Loc | None = None) -> ir.Expr:
    """An explicit conversion (a cast the user wrote, or a store into a buffer)."""
    if e.type == t and not is_weak(e):
        return e
    if isinstance(e, ir.Const):
        return ir.Const(value=const_value(e.value, t), type=t, loc=loc or e.loc)
    if t.is_bool:
        return truth(e)
    return ir.Cast(value=e, type=t, loc=loc or e.loc)


def truth(e: ir.Expr) -> ir.Expr:
    """Python's truth test as a bool expression."""
    if e.type == BOOL:
        if is_weak(e):
            return ir.Const(value=bool(e.value), type=BOOL, loc=e.loc)  # type: ignore[attr-defined]
        return e
    if isinstance(e, ir.Const):
        return ir.Const(value=bool(e.value), type=BOOL, loc=e.loc)
    zero = ir.Const(value=0j if e.type.is_complex else (0.0 if e.type.is_float else 0), type=e.type, loc=e.loc)
    return ir.Compare(op="NotEq", left=e, right=zero, type=BOOL, loc=e.loc)


def strengthen(e: ir.Expr) -> ir.Expr:
    """A weak literal with its default type (int → int64, float → float64, bool → bool)."""
    if is_weak(e):
        assert isinstance(e, ir.Const)
        return ir.Const(value=e.value, type=e.type, loc=e.loc)
    return e


def unify(a: ir.Expr, b: ir.Expr) -> ScalarType:
    """The common type of two operands, literals and other Python numbers adapting to the other side."""
    if is_weak(a) and not is_weak(b):
        return promote(literal_type(a.value, b.type), b.type)  # type: ignore[attr-defined]
    if is_weak(b) and not is_weak(a):
        return promote(a.type, literal_type(b.value, a.type))  # type: ignore[attr-defined]
    if is_python_number(a) and not is_python_number(b):
        return weak_meets(a.type, b.type)
    if is_python_number(b) and not is_python_number(a):
        return weak_meets(b.type, a.type)
    return promote(a.type, b.type)


def weakened(e: ir.Expr, *operands: ir.Expr) -> ir.Expr:
    """``e``, marked weak when every operand is a Python number (Python's result is one too)."""
    if operands and all(is_python_number(o) for o in operands) and not isinstance(e, ir.Const):
        e.weak = True
    return e


def implicit_ok(e: ir.Expr, t: ScalarType) -> str | None:
    """None when ``e`` may be assigned to a ``t`` without a cast, else the reason it may not."""
    if e.type == t:
        return None
    if e.type.is_complex and not t.is_complex:
        return f"a {e.type} value has no {t} (numpy would drop the imaginary part): take .real or abs()"
    if t.is_complex:
        return None  # any number widens to complex; complex128 into complex64 rounds, as float64 would
    if is_weak(e):
        v = e.value  # type: ignore[attr-defined]
        if isinstance(v, bool) or t.is_float:
            return None if not (t.is_bool and not isinstance(v, bool)) else f"{v!r} is not a bool"
        if isinstance(v, int):
            if t.is_int and fits(v, t):
                return None
            if t.is_bool:
                return f"{v!r} is not a bool"
            return f"the constant {v} does not fit in {t}"
        return f"a float constant cannot become {t} implicitly"
    if promote(e.type, t) == t and not (t.is_bool and not e.type.is_bool):
        return None
    # the kind is what must survive (docs: "without losing its kind"): int64 into an int32 or
    # uint32 variable wraps and float64 into float32 rounds, as an explicit cast would
    if (e.type.is_int and t.is_int) or (e.type.is_float and t.is_float):
        return None
    # int → float is a widening of kind whatever the widths (numpy promotes int32 with float32 to
    # float64, but storing an int32 into a float32 variable is still the assignment users mean)
    if e.type.is_int and t.is_float:
        return None
    return f"a {e.type} value cannot become {t} implicitly"


def common_type(values: list[ir.Expr]) -> ScalarType:
    """The type several values meet in (returns of a device function, range bounds)."""
    strong = [v.type for v in values if not is_weak(v)]
    if not strong:
        t = values[0].type
        for v in values[1:]:
            t = promote(t, v.type)
        return t
    t = strong[0]
    for s in strong[1:]:
        t = promote(t, s)
    for v in values:
        if is_weak(v):
            t = promote(t, literal_type(v.value, t))  # type: ignore[attr-defined]
    return t


__all__ = ["is_weak", "is_python_number", "weak_meets", "weakened", "const_value", "convert", "truth", "strengthen",
           "unify", "implicit_ok", "common_type"]
