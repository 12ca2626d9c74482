"""``x ** n`` for a small constant integer ``n`` on floats, without ``pow``: the lines of one element.

``pow`` with a run-time exponent costs ~150 ns per element on some OpenCL CPU drivers (PoCL; its
``pown`` too), 100x a multiply, and ~25 ns in the CPU backend's libm. A plain product chain
``x * x * x`` rounds at every step (up to ~n/2 ulp from the exact power) where numpy's ``pow``
rounds once, so the chain here carries its rounding errors along and rounds once at the end:

- float32 on a device with float64: the product (or its reciprocal) in float64, converted to float32
  once. The float64 chain's error (at most n - 2 roundings of 2**-53) is far below float32's
  half-ulp, so the result is float32's correctly rounded power except where the exact value lies
  within ~2**-50 relative of a rounding tie: at most 1 ulp from numpy. float64 cannot overflow or
  underflow where float32 does not (|x| ** 8 < 2**1024 for every finite float32 x).
- float64 (and float32 where the device has no float64, Metal): a double-word product chain
  ``(h, l)`` whose ``l`` holds what each rounded product ``h`` lost, found exactly with Dekker's
  two-product (Veltkamp's splitting of each factor into halves whose products are exact). Dekker's
  rather than ``fma(a, b, -a*b)``: it needs only ``+ - *``, which every backend (CPU, CUDA, OpenCL,
  Metal) rounds as IEEE 754 says with contraction off (expressions' default), so the result is the
  same bits on each, and no device falls back to a software ``fma``. The sum ``h + l`` is rounded
  once: within 1 ulp of the exact power (typically the correctly rounded value), numpy's ``pow``
  being within 1 ulp as well. Negative ``n``: the reciprocal ``1/x`` first, as a double-word
  ``q + ql`` (its remainder ``1 - q*x`` is exact), then the same chain, so ``x ** -n`` underflows
  and overflows where the exact value does (the reciprocal of an overflowed ``x ** n`` would not).

Range: the chain multiplies by the base at each step, so for ``|n| <= MAX_EXPONENT`` every factor
that gets split is below ``2**(emax * 7 / 8)`` whenever the result is finite, far from where the
splitting constant would overflow it. An infinite, NaN or zero ``h`` (overflow, infinite or NaN
operands, underflow) is the result itself: numpy's value, sign included. Near the underflow
threshold the error terms are themselves subnormal and inexact, so a subnormal result may be 1 ulp
(2**-1074) from the correctly rounded one. With ``@dc.fuse(fastmath=True)`` the compiler may
reassociate the splitting away; only the default (IEEE) mode promises the above.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: |n| up to this is a product chain; larger exponents keep ``pow`` (the chain's cost grows with n)
MAX_EXPONENT = 8

#: Veltkamp's splitting constant 2**ceil(p/2) + 1 for a p-bit significand
_SPLIT = {np.dtype(np.float64): 134217729.0, np.dtype(np.float32): 4097.0}
#: stored significand bits (the exponent field's shift) by type name
_MANT = {"float64": 52, "float32": 23}


def method(dtype: np.dtype, has_float64: bool) -> str | None:
    """How ``x ** n`` is computed for ``dtype``: "wide" (float32 via float64), "split" (double-word
    chain) or None (keep ``pow``: float16 and other types)."""
    if dtype == np.float32:
        return "wide" if has_float64 else "split"
    if dtype == np.float64:
        return "split"
    return None


def takes(exponent: Any) -> int | None:
    """The exponent as an int when it is an integral number with 2 < |n| <= MAX_EXPONENT or n == -2
    (2, 1, 0 and -1 have their own exact forms), else None."""
    if isinstance(exponent, (bool, np.bool_)) or not isinstance(exponent, (int, float, np.integer, np.floating)):
        return None
    value = float(exponent)
    if not value.is_integer() or abs(value) > MAX_EXPONENT:
        return None
    n = int(value)
    return n if (abs(n) > 2 or n == -2) else None


class _Lines:
    """Appends ``name = T(expr)`` lines to a codegen Program (its ``tmp``/``lines``)."""

    def __init__(self, prog: Any, type_name: str) -> None:
        self.prog, self.T = prog, type_name

    def let(self, expr: str) -> str:
        name = self.prog.tmp()
        self.prog.lines.append(f"{name} = {self.T}({expr})")
        return name

    def num(self, value: float) -> str:
        return f"{self.T}({value!r})"


def _split(e: _Lines, a: str, c: str) -> tuple[str, str]:
    """Veltkamp: a = hi + lo exactly, each with at most half the significand's bits."""
    t = e.let(f"{c} * {a}")
    hi = e.let(f"{t} - {e.let(f'{t} - {a}')}")
    return hi, e.let(f"{a} - {hi}")


def _two_product(e: _Lines, a: str, ah: str, al: str, b: str, bh: str, bl: str) -> tuple[str, str]:
    """Dekker: p = fl(a*b) and err = a*b - p exactly (every partial product of halves is exact)."""
    p = e.let(f"{a} * {b}")
    err = e.let(f"(({ah} * {bh} - {p}) + {ah} * {bl} + {al} * {bh}) + {al} * {bl}")
    return p, err


def emit(prog: Any, x: str, dtype: np.dtype, n: int, how: str, type_names: dict[np.dtype, str]) -> str:
    """The expression (of ``dtype``) for ``x ** n``, ``x`` already of ``dtype``; the lines computing
    its parts are appended to ``prog``."""
    if how == "wide":
        w = _Lines(prog, type_names[np.dtype(np.float64)])
        xd = w.let(x)
        h = xd
        for _ in range(abs(n) - 1):
            h = w.let(f"{h} * {xd}")
        return h if n > 0 else f"{w.num(1.0)} / {h}"
    e = _Lines(prog, type_names[dtype])
    c = _SPLIT[dtype]
    # the base b (+ bl): x, or for n < 0 the reciprocal 1/x = q + ql, whose remainder 1 - q*x is
    # exact (q*x lies within an ulp of 1) and ql = (1 - q*x)/x ~ (1 - q*x) * q
    b, bl = (x, None) if n > 0 else (e.let(f"{e.num(1.0)} / {x}"), None)
    bh, blo = _split(e, b, e.num(c))
    if n < 0:
        xh, xl = _split(e, x, e.num(c))
        p, err = _two_product(e, b, bh, blo, x, xh, xl)
        bl = e.let(f"(({e.num(1.0)} - {p}) - {err}) * {b}")
    h, lo = b, bl
    for step in range(abs(n) - 1):
        hh, hl = (bh, blo) if step == 0 else _split(e, h, e.num(c))
        p, err = _two_product(e, h, hh, hl, b, bh, blo)
        # (h + lo) * (b + bl) = p + (err + lo*b + h*bl) + lo*bl, the last below the sum's rounding
        terms = f"{lo} * {b} + {err}" if lo is not None else err
        if bl is not None:
            terms = f"{terms} + {h} * {bl}"
        h, lo = p, e.let(terms)
    # an infinite or NaN error term (h overflowed, or an infinite or zero operand) counts as 0: h alone
    # is then the result; copysign keeps h's sign (the exact product's) where h + lo is a zero, -0
    # included. The test is integer arithmetic on lo's bits (exponent field all ones: (e + 1) >> width
    # is 1, else 0), not a compare and select: PoCL's SLP pass packed the chain into 2-wide vectors
    # ahead of any select and then could not vectorise across work-items (3-7x slower)
    it, width = ("int64", 11) if e.T == "float64" else ("int32", 8)
    bits, special = prog.tmp(), prog.tmp()
    prog.lines.append(f"{bits} = {it}(bitcast({lo}, {it}))")
    prog.lines.append(f"{special} = {it}(((({bits} >> {_MANT[e.T]}) & {(1 << width) - 1}) + 1) >> {width})")
    kept = e.let(f"bitcast({it}({bits} & ~(-{special})), {e.T})")
    return f"m_copysign({e.T}({h} + {kept}), {h})"


__all__ = ["MAX_EXPONENT", "emit", "method", "takes"]
