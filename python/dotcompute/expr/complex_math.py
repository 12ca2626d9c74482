"""Complex elementwise math in generated kernels, spelled with the kernel language's complex values.

The language computes complex ``+ - * /``, ``==``/``!=``, ``abs``, ``conj``, ``exp`` and ``sqrt`` and
reads ``z.real``/``z.imag``; everything else numpy defines for complex numbers (``log``, the
trigonometric and hyperbolic functions and their inverses, ``expm1``, ``log1p``, ``power``, the
classification functions, rounding) is written here from real functions of the two parts, with
the textbook identities (``log z = log|z| + i arg z``, ``sin(x + iy) = sin x cosh y + i cos x
sinh y``, ``asinh z = log(z + sqrt(z² + 1))``, ``asin z = -i asinh(iz)``, ...). Where an identity
overflows or cancels in a range numpy handles (``tanh`` of a large real part, ``log1p`` and
``expm1`` near zero, ``asinh`` of a negative real part) the formula switches to the stable form.
Values agree with numpy to rounding for finite inputs; special values (infinities and NaN in one
part) follow the identities, which is not always numpy's C99 Annex G choice (docs/array-api.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

C_INF = math.inf  # named in generated kernel source (codegen.namespace)
C_NAN = math.nan

#: the math functions (the expression's ``extra`` name) with a complex spelling here
COMPLEX_MATH = frozenset({"sqrt", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
                          "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin",
                          "arccos", "arctan", "isnan", "isinf", "isfinite", "conj", "pow", "round", "rint",
                          "real", "imag"})
#: operators defined on complex operands (numpy's ordering comparisons and min/max are not the standard's)
COMPLEX_OPS = frozenset({"add", "sub", "mul", "truediv", "eq", "ne", "neg", "pos", "abs", "cast", "where", "pow",
                         "math"})


class _Emit:
    """Writes the lines of one complex computation into a program (``tmp``/``lines`` of codegen.Program)."""

    def __init__(self, prog: Any, ctype: np.dtype, names: dict[np.dtype, str]) -> None:
        self.prog = prog
        self.C = names[ctype]
        self.R = names[np.dtype(ctype.char.lower())]  # complex64 → float32 ('F' → 'f'), complex128 → float64

    def let(self, expr: str) -> str:
        name = self.prog.tmp()
        self.prog.lines.append(f"{name} = {expr}")
        return name

    def r(self, value: float) -> str:
        if math.isinf(value):
            return f"{self.R}({'-' if value < 0 else ''}C_INF)"
        if math.isnan(value):
            return f"{self.R}(C_NAN)"
        return f"{self.R}({value!r})"

    def special(self, rules: list[tuple[str, str, str]], general: str) -> str:
        """``general`` unless one of ``rules`` (condition, real part, imaginary part) applies, the
        first that does: the C99 Annex G values where the identities give 0 * inf or inf - inf."""
        out = general
        for cond, re, im in reversed(rules):
            out = self.let(f"{self.make(re, im)} if ({cond}) else {out}")
        return out

    def make(self, re: str, im: str) -> str:
        return self.let(f"{self.C}({self.R}({re}), {self.R}({im}))")

    def parts(self, z: str) -> tuple[str, str]:
        return self.let(f"{z}.real"), self.let(f"{z}.imag")

    # --- the functions, each returning the variable holding the complex (or bool) result
    def exp(self, z: str) -> str:
        x, y = self.parts(z)
        inf, nan, zero = self.r(math.inf), self.r(math.nan), self.r(0.0)
        fin = f"m_isfinite({y})"
        return self.special([(f"{x} == -{inf} and not {fin}", zero, zero),
                             (f"{x} == {inf} and not {fin}", inf, nan),
                             (f"{y} == {zero}", f"m_exp({x})", y)], self.let(f"m_exp({z})"))

    def sqrt(self, z: str) -> str:
        x, y = self.parts(z)
        inf, nan, zero = self.r(math.inf), self.r(math.nan), self.r(0.0)
        return self.special([(f"m_isinf({y})", inf, y),
                             (f"{x} == -{inf} and m_isnan({y})", nan, inf),
                             (f"{x} == -{inf}", zero, f"m_copysign({inf}, {y})"),
                             (f"{x} == {inf} and m_isnan({y})", inf, nan),
                             (f"{x} == {inf}", inf, f"m_copysign({zero}, {y})")], self.let(f"m_sqrt({z})"))

    def log(self, z: str) -> str:
        x, y = self.parts(z)
        return self.make(f"m_log(abs({z}))", f"m_atan2({y}, {x})")

    def log1p(self, z: str) -> str:
        # |1 + z|² = 1 + (2x + x² + y²): log1p keeps the digits of small z that log(|1 + z|) loses
        x, y = self.parts(z)
        small = f"abs({x}) < {self.r(0.5)} and abs({y}) < {self.r(0.5)}"
        re = (f"{self.r(0.5)} * m_log1p({x} * ({self.r(2.0)} + {x}) + {y} * {y}) if ({small}) "
              f"else m_log(abs({self.C}({x} + {self.r(1.0)}, {y})))")
        return self.make(re, f"m_atan2({y}, {x} + {self.r(1.0)})")

    def scaled_log(self, z: str, factor: float) -> str:
        w = self.log(z)
        x, y = self.parts(w)
        return self.make(f"{x} * {self.r(factor)}", f"{y} * {self.r(factor)}")

    def expm1(self, z: str) -> str:
        # Re: e^x cos y - 1 = expm1(x) cos y - 2 sin²(y/2), exact near 0 where e^x cos y - 1 cancels
        x, y = self.parts(z)
        s = self.let(f"m_sin({y} * {self.r(0.5)})")
        inf, nan, zero = self.r(math.inf), self.r(math.nan), self.r(0.0)
        general = self.make(f"m_expm1({x}) * m_cos({y}) - {self.r(2.0)} * {s} * {s}", f"m_exp({x}) * m_sin({y})")
        return self.special([(f"{x} == -{inf} and not m_isfinite({y})", self.r(-1.0), zero),
                             (f"{x} == {inf} and not m_isfinite({y})", inf, nan),
                             (f"{y} == {zero}", f"m_expm1({x})", y)], general)

    def exp2(self, z: str) -> str:
        x, y = self.parts(z)
        return self.let(f"m_exp({self.make(f'{x} * {self.r(math.log(2.0))}', f'{y} * {self.r(math.log(2.0))}')})")

    def sin(self, z: str) -> str:
        x, y = self.parts(z)
        return self.make(f"m_sin({x}) * m_cosh({y})", f"m_cos({x}) * m_sinh({y})")

    def cos(self, z: str) -> str:
        x, y = self.parts(z)
        return self.make(f"m_cos({x}) * m_cosh({y})", f"-(m_sin({x}) * m_sinh({y}))")

    def sinh(self, z: str) -> str:
        x, y = self.parts(z)
        nan, zero = self.r(math.nan), self.r(0.0)
        general = self.make(f"m_sinh({x}) * m_cos({y})", f"m_cosh({x}) * m_sin({y})")
        return self.special([(f"m_isinf({x}) and not m_isfinite({y})", x, nan),
                             (f"{y} == {zero}", f"m_sinh({x})", y),
                             (f"{x} == {zero}", x, f"m_sin({y})")], general)

    def cosh(self, z: str) -> str:
        x, y = self.parts(z)
        inf, nan, zero = self.r(math.inf), self.r(math.nan), self.r(0.0)
        general = self.make(f"m_cosh({x}) * m_cos({y})", f"m_sinh({x}) * m_sin({y})")
        return self.special([(f"m_isinf({x}) and not m_isfinite({y})", inf, nan),
                             (f"{y} == {zero}", f"m_cosh({x})", f"{y} * m_copysign({self.r(1.0)}, {x})"),
                             (f"{x} == {zero} and not m_isfinite({y})", nan, x)], general)

    def tanh(self, z: str) -> str:
        # (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); past |x| = 20 tanh is ±1 to every digit of
        # float64 and cosh 2x would overflow: ±1 + i·0 with the sign of sin 2y
        x, y = self.parts(z)
        d = self.let(f"m_cosh({self.r(2.0)} * {x}) + m_cos({self.r(2.0)} * {y})")
        big = f"abs({x}) > {self.r(20.0)}"
        re = f"m_copysign({self.r(1.0)}, {x}) if ({big}) else m_sinh({self.r(2.0)} * {x}) / {d}"
        im = (f"m_copysign({self.r(0.0)}, m_sin({self.r(2.0)} * {y})) if ({big}) "
              f"else m_sin({self.r(2.0)} * {y}) / {d}")
        nan, zero = self.r(math.nan), self.r(0.0)
        return self.special([(f"{y} == {zero}", f"m_tanh({x})", y),
                             (f"{x} == {zero} and not m_isfinite({y})", x, nan),
                             (f"m_isfinite({x}) and not m_isfinite({y})", nan, nan)], self.make(re, im))

    def _rotated(self, fn: Callable[[str], str], z: str) -> str:
        """-i f(iz): how tan, asin and atan come from tanh, asinh and atanh."""
        x, y = self.parts(z)
        w = fn(self.make(f"-{y}", x))
        a, b = self.parts(w)
        return self.make(b, f"-{a}")

    def tan(self, z: str) -> str:
        return self._rotated(self.tanh, z)

    def asinh(self, z: str) -> str:
        # log(z + sqrt(z² + 1)) on the half plane x >= 0 (no cancellation); asinh is odd
        x, _ = self.parts(z)
        neg = self.let(f"{x} < {self.r(0.0)}")
        w = self.let(f"-{z} if {neg} else {z}")
        one = self.make(self.r(1.0), self.r(0.0))
        wx, wy = self.parts(w)
        inf, zero = self.r(math.inf), self.r(0.0)
        v = self.special([(f"m_isinf({wx}) or m_isinf({wy})", inf, f"m_atan2({wy}, {wx})"),
                          (f"{wy} == {zero}", f"m_asinh({wx})", wy)],
                         self.log(self.let(f"{w} + m_sqrt({w} * {w} + {one})")))
        return self.let(f"-{v} if {neg} else {v}")

    def acosh(self, z: str) -> str:
        one = self.make(self.r(1.0), self.r(0.0))
        x, y = self.parts(z)
        inf, nan, zero = self.r(math.inf), self.r(math.nan), self.r(0.0)
        return self.special([(f"m_isinf({x}) or m_isinf({y})", inf, f"m_atan2({y}, {x})"),
                             (f"{x} == {zero} and m_isnan({y})", nan, self.r(math.pi / 2))],
                            self.log(self.let(f"{z} + m_sqrt({z} + {one}) * m_sqrt({z} - {one})")))

    def atanh(self, z: str) -> str:
        one = self.make(self.r(1.0), self.r(0.0))
        a = self.log(self.let(f"{one} + {z}"))
        zx, zy = self.parts(z)
        b = self.log(self.make(f"{self.r(1.0)} - {zx}", f"-{zy}"))  # 1 - (x + 0j) keeps Im = -0
        d = self.let(f"{a} - {b}")
        dx, dy = self.parts(d)
        x, y = self.parts(z)
        nan, zero, half_pi = self.r(math.nan), self.r(0.0), self.r(math.pi / 2)
        return self.special([(f"m_isinf({x}) and m_isnan({y})", f"m_copysign({zero}, {x})", nan),
                             (f"m_isinf({x}) or m_isinf({y})", f"m_copysign({zero}, {x})",
                              f"m_copysign({half_pi}, {y})"),
                             (f"{x} == {zero} and m_isnan({y})", x, nan)],
                            self.make(f"{dx} * {self.r(0.5)}", f"{dy} * {self.r(0.5)}"))

    def asin(self, z: str) -> str:
        return self._rotated(self.asinh, z)

    def acos(self, z: str) -> str:
        # π/2 - asin z; the imaginary part has the opposite sign of Im z (also at Im z = ±0)
        x, y = self.parts(z)
        ax, ay = self.parts(self.asin(z))
        inf, nan, zero, half_pi = self.r(math.inf), self.r(math.nan), self.r(0.0), self.r(math.pi / 2)
        return self.special([(f"(m_isinf({x}) or m_isinf({y})) and (m_isnan({x}) or m_isnan({y}))", nan,
                              f"m_copysign({inf}, -{y})"),
                             (f"m_isinf({x}) or m_isinf({y})", f"m_atan2(abs({y}), {x})", f"m_copysign({inf}, -{y})"),
                             (f"{x} == {zero} and m_isnan({y})", half_pi, nan)],
                            self.make(f"{half_pi} - {ax}", f"m_copysign(abs({ay}), -{y})"))

    def atan(self, z: str) -> str:
        return self._rotated(self.atanh, z)

    def power(self, a: str, b: str) -> str:
        # exp(b log a); a ** 0 is 1 (also for a = 0 and NaN, as numpy), 0 ** b is 0 for Re b > 0
        zero = self.make(self.r(0.0), self.r(0.0))
        one = self.make(self.r(1.0), self.r(0.0))
        general = self.let(f"m_exp({b} * {self.log(a)})")
        bx, _ = self.parts(b)
        return self.let(f"{one} if {b} == {zero} else ({zero} if ({a} == {zero} and {bx} > {self.r(0.0)}) "
                        f"else {general})")


def emit(prog: Any, name: str, args: list[str], ctype: np.dtype, names: dict[np.dtype, str]) -> str:
    """The expression for math function ``name`` of the complex operands ``args`` (already of
    ``ctype``), lines for its intermediate values appended to ``prog``."""
    e = _Emit(prog, ctype, names)
    z = args[0]
    if name == "exp":
        return e.exp(z)
    if name == "sqrt":
        return e.sqrt(z)
    if name == "conj":
        return f"m_conj({z})"
    if name in ("real", "imag"):
        return f"{z}.{name}"
    if name in ("round", "rint"):
        x, y = e.parts(z)
        return e.make(f"m_{name}({x})", f"m_{name}({y})")
    if name in ("isnan", "isinf"):
        x, y = e.parts(z)
        return f"m_{name}({x}) or m_{name}({y})"
    if name == "isfinite":
        x, y = e.parts(z)
        return f"m_isfinite({x}) and m_isfinite({y})"
    if name == "log2":
        return e.scaled_log(z, 1.0 / math.log(2.0))
    if name == "log10":
        return e.scaled_log(z, 1.0 / math.log(10.0))
    if name == "pow":
        return e.power(args[0], args[1])
    fn = {"arcsin": "asin", "arccos": "acos", "arctan": "atan"}.get(name, name)
    return getattr(e, fn)(z)


__all__ = ["COMPLEX_MATH", "COMPLEX_OPS", "C_INF", "C_NAN", "emit"]
