"""Array API 2024.12: the elementwise functions' named forms (see docs/array-api.md).

Each builds a lazy array expression (``dotcompute.expr``), so a chain of them is one generated
kernel. The standard's math functions that the kernel language already has (``dc.sqrt``,
``dc.exp``, ``dc.abs``, ``dc.maximum``, ``dc.round``, ...) stay those objects: they are callable on
Buffers and inside kernels alike, and a plain function here would hide them from kernels. What
generated kernels cannot spell yet (complex values, more than 3 dimensions) runs in numpy on the
buffers' own memory where that is host memory (cpu:0), and raises elsewhere.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from ..expr import build
from ..expr.build import apply, beyond_kernels, on_host, where
from ..lang.builtins import MATH
from ..runtime import Buffer

__all__ = ["add", "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
           "bitwise_xor", "clip", "divide", "equal", "floor_divide", "greater", "greater_equal", "imag", "less",
           "less_equal", "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "multiply",
           "negative", "nextafter", "not_equal", "positive", "real", "reciprocal", "remainder", "sign", "signbit",
           "square", "subtract"]


def _args(name: str, *args: Any) -> Any:
    """The arguments, with numpy scalars (what element reads give) as 0-d Buffers when no argument is a
    Buffer; TypeError when none is an array at all."""
    if any(isinstance(a, Buffer) for a in args):
        return args
    if not any(isinstance(a, np.generic) for a in args):
        raise TypeError(f"dc.{name}: at least one argument must be a dc.Buffer")
    from .devices import current_default

    acc = current_default()
    return tuple(acc.asarray(np.asarray(a)) if isinstance(a, np.generic) else a for a in args)


# The language's math functions take *args (one object serves kernels and Buffers); the standard's
# signatures, for inspect.signature and the conformance suite's signature checks
def _positional(*names: str) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])


_UNARY_MATH = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "conj", "cos", "cosh", "exp",
               "expm1", "floor", "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10", "round", "sin",
               "sinh", "sqrt", "tan", "tanh", "trunc")
for _name in _UNARY_MATH:
    MATH[_name].__signature__ = _positional("x")
for _name in ("atan2", "copysign", "hypot", "maximum", "minimum", "pow"):
    MATH[_name].__signature__ = _positional("x1", "x2")


def _binary(name: str, op: str, ufunc: np.ufunc) -> Any:
    def fn(x1: Buffer | int | float | complex, x2: Buffer | int | float | complex, /) -> Buffer:
        x1, x2 = _args(name, x1, x2)
        out = apply(op, ufunc, (x1, x2), f"dc.{name}")
        if out is NotImplemented:
            raise TypeError(f"dc.{name}: unsupported operands {type(x1).__name__} and {type(x2).__name__}")
        return out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``np.{ufunc.__name__}`` of two Buffers or a Buffer and a Python scalar."
    return fn


def _unary(name: str, op: str, ufunc: np.ufunc) -> Any:
    def fn(x: Buffer, /) -> Buffer:
        x, = _args(name, x)
        return apply(op, ufunc, (x,), f"dc.{name}")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``np.{ufunc.__name__}`` of a Buffer."
    return fn


add = _binary("add", "add", np.add)
subtract = _binary("subtract", "sub", np.subtract)
multiply = _binary("multiply", "mul", np.multiply)
divide = _binary("divide", "truediv", np.true_divide)
floor_divide = _binary("floor_divide", "floordiv", np.floor_divide)
remainder = _binary("remainder", "mod", np.remainder)
equal = _binary("equal", "eq", np.equal)
not_equal = _binary("not_equal", "ne", np.not_equal)
less = _binary("less", "lt", np.less)
less_equal = _binary("less_equal", "le", np.less_equal)
greater = _binary("greater", "gt", np.greater)
greater_equal = _binary("greater_equal", "ge", np.greater_equal)
bitwise_and = _binary("bitwise_and", "and", np.bitwise_and)
bitwise_or = _binary("bitwise_or", "or", np.bitwise_or)
bitwise_xor = _binary("bitwise_xor", "xor", np.bitwise_xor)
bitwise_left_shift = _binary("bitwise_left_shift", "lshift", np.left_shift)
bitwise_right_shift = _binary("bitwise_right_shift", "rshift", np.right_shift)
negative = _unary("negative", "neg", np.negative)
positive = _unary("positive", "pos", np.positive)
bitwise_invert = _unary("bitwise_invert", "invert", np.invert)


def _as_bool(name: str, x: Any) -> Any:
    if isinstance(x, Buffer):
        return x if x.dtype.kind == "b" else not_equal(x, 0)
    if isinstance(x, (bool, int, float)):
        return bool(x)
    raise TypeError(f"dc.{name}: expected a Buffer or a Python scalar, got {type(x).__name__}")


def logical_and(x1: Buffer | bool, x2: Buffer | bool, /) -> Buffer:
    """Elementwise logical AND (non-zero is true); a bool Buffer."""
    x1, x2 = _args("logical_and", x1, x2)
    return bitwise_and(_as_bool("logical_and", x1), _as_bool("logical_and", x2))


def logical_or(x1: Buffer | bool, x2: Buffer | bool, /) -> Buffer:
    """Elementwise logical OR (non-zero is true); a bool Buffer."""
    x1, x2 = _args("logical_or", x1, x2)
    return bitwise_or(_as_bool("logical_or", x1), _as_bool("logical_or", x2))


def logical_xor(x1: Buffer | bool, x2: Buffer | bool, /) -> Buffer:
    """Elementwise logical XOR (non-zero is true); a bool Buffer."""
    x1, x2 = _args("logical_xor", x1, x2)
    return bitwise_xor(_as_bool("logical_xor", x1), _as_bool("logical_xor", x2))


def logical_not(x: Buffer, /) -> Buffer:
    """Elementwise logical NOT (zero is true); a bool Buffer."""
    x, = _args("logical_not", x)
    return equal(_as_bool("logical_not", x), False)


def square(x: Buffer, /) -> Buffer:
    """``x * x`` in ``x``'s dtype."""
    x, = _args("square", x)
    return apply("mul", np.multiply, (x, x), "dc.square") if not beyond_kernels((x,)) else on_host(np.square, (x,))


def reciprocal(x: Buffer, /) -> Buffer:
    """``1 / x`` (floating dtypes: the result keeps ``x``'s)."""
    x, = _args("reciprocal", x)
    if beyond_kernels((x,)):
        return on_host(np.reciprocal, (x,))
    if x.dtype.kind not in "fc":
        raise TypeError(f"dc.reciprocal: x must have a floating-point dtype, got {x.dtype}")
    return divide(1.0, x)


def sign(x: Buffer, /) -> Buffer:
    """-1, 0 or 1 by the sign of each element (NaN stays NaN), in ``x``'s dtype."""
    x, = _args("sign", x)
    if beyond_kernels((x,)):
        return on_host(np.sign, (x,))
    if x.dtype.kind == "b":
        raise TypeError("dc.sign: x must have a numeric dtype, not bool")
    if x.dtype.kind == "u":
        return where(greater(x, 0), x.dtype.type(1), x.dtype.type(0))
    if x.dtype.kind == "c":
        # numpy 2: z / |z| (0 at 0)
        return where(equal(x, 0), x.dtype.type(0), divide(x, abs(x).astype(x.dtype)))
    one, zero = x.dtype.type(1), x.dtype.type(0)
    # -0.0 gives +0 (the standard's special case); NaN stays x
    return where(greater(x, 0), one, where(less(x, 0), -one, where(equal(x, 0), zero, x)))


def signbit(x: Buffer, /) -> Buffer:
    """Whether each element's sign bit is set (true for -0.0 and negative NaNs); floating dtypes only."""
    x, = _args("signbit", x)
    if beyond_kernels((x,)):
        return on_host(np.signbit, (x,))
    if x.dtype.kind != "f":
        raise TypeError(f"dc.signbit: x must have a real floating-point dtype, got {x.dtype}")
    return less(MATH["copysign"](x.dtype.type(1), x), 0)


def logaddexp(x1: Buffer | float, x2: Buffer | float, /) -> Buffer:
    """``log(exp(x1) + exp(x2))`` without overflow: ``max + log1p(exp(-|x1 - x2|))``."""
    x1, x2 = _args("logaddexp", x1, x2)
    if beyond_kernels((x1, x2)):
        return on_host(np.logaddexp, (x1, x2))
    big = build.maximum(x1, x2)
    if big.dtype.kind != "f":
        raise TypeError(f"dc.logaddexp: the arguments must be real floating-point, got {big.dtype}")
    ln2 = big.dtype.type(math.log(2.0))
    spread = MATH["log1p"](MATH["exp"](negative(abs(subtract(x1, x2)))))
    # equal arguments (both +inf too, where x1 - x2 is NaN): x1 + log(2)
    return where(equal(x1, x2), add(x1, ln2), add(big, spread))


def nextafter(x1: Buffer | float, x2: Buffer | float, /) -> Buffer:
    """The next representable value after ``x1`` towards ``x2``: numpy on host memory (cpu:0), one
    generated kernel elsewhere (the spacing of ``x1`` from its binade, no bit casts needed)."""
    x1, x2 = _args("nextafter", x1, x2)
    buffers = [a for a in (x1, x2) if isinstance(a, Buffer)]
    dtypes = {b.dtype for b in buffers}
    if len(dtypes) > 1 or any(d.kind != "f" for d in dtypes):
        raise TypeError(f"dc.nextafter: both arguments must have one real floating-point dtype, got {dtypes}")
    if all(b.host_visible for b in buffers):
        return on_host(np.nextafter, (x1, x2))
    t = buffers[0].dtype
    if t not in (np.float32, np.float64):
        raise TypeError(f"dc.nextafter: float32 or float64 arguments, got {t}")
    x1, x2 = (a if isinstance(a, Buffer) else t.type(a) for a in (x1, x2))
    if not isinstance(x1, Buffer):
        x1 = where(equal(x2, x2), x1, x1)  # x1 broadcast to x2's shape, on its device
    if not isinstance(x2, Buffer) and np.isnan(x2):
        return where(equal(x1, x1), t.type(np.nan), t.type(np.nan))
    return _nextafter_kernel(x1, x2, np.finfo(t))


def _nextafter_kernel(x1: Any, x2: Any, info: np.finfo) -> Buffer:
    """``nextafter`` as an expression: the binade's power of two ``p`` (log2, corrected by one step
    either way where log2 rounds), the spacing ``p * eps`` there (at least the smallest subnormal),
    half of it when stepping towards zero from an exact power of two."""
    t = info.dtype.type
    f, m = MATH, build
    ax = abs(x1)
    e = f["floor"](f["log2"](ax))
    e = where(greater(f["exp2"](e), ax), subtract(e, t(1)), e)  # exponents, not powers: 2**128 is inf
    e = where(less_equal(f["exp2"](add(e, t(1))), ax), add(e, t(1)), e)
    p = f["exp2"](e)
    tiny = t(info.smallest_subnormal)
    spacing = m.maximum(multiply(p, t(info.eps)), tiny)
    away = equal(greater(x2, x1), greater(x1, 0))  # moving away from zero
    down = where(equal(ax, p), m.maximum(multiply(spacing, t(0.5)), tiny), spacing)
    step = where(away, spacing, down)
    moved = where(greater(x1, 0), add(x1, where(away, step, negative(step))),
                  subtract(x1, where(away, step, negative(step))))
    nan = not_equal(x1, x1) | not_equal(x2, x2) if isinstance(x2, Buffer) else not_equal(x1, x1)
    out = where(f["isinf"](x1), f["copysign"](t(info.max), x1), moved)
    out = where(equal(x1, 0), f["copysign"](tiny, subtract(x2, x1)), out)
    out = where(equal(x1, x2), x2, out)
    return where(nan, t(np.nan), out)


def real(x: Buffer, /) -> Buffer:
    """The real part (of a real array: a copy of it)."""
    x, = _args("real", x)
    if x.dtype.kind != "c":
        return x.astype(x.dtype)
    return on_host(np.real, (x,)) if beyond_kernels((x,)) else build.complex_part(x, "real")


def imag(x: Buffer, /) -> Buffer:
    """The imaginary part (of a real array: zeros)."""
    x, = _args("imag", x)
    if x.dtype.kind == "c":
        return on_host(np.imag, (x,)) if beyond_kernels((x,)) else build.complex_part(x, "imag")
    return where(equal(x, x), x.dtype.type(0), x.dtype.type(0))


def clip(x: Buffer, /, min: Buffer | int | float | None = None,  # noqa: A002 -- the standard's names
         max: Buffer | int | float | None = None) -> Buffer:  # noqa: A002
    """``x`` limited to [min, max] elementwise (None leaves a side open), in ``x``'s dtype."""
    x, = _args("clip", x)
    if beyond_kernels((x, min, max)):
        return on_host(lambda a, lo, hi: np.clip(a, lo, hi).astype(a.dtype), (x, min, max))
    if min is None and max is None:
        return x.astype(x.dtype)
    out: Any = x
    if min is not None:
        out = where(less(out, min), _cast(min, x), out)
    if max is not None:
        out = where(greater(out, max), _cast(max, x), out)
    return out


def _cast(bound: Any, x: Buffer) -> Any:
    if isinstance(bound, Buffer):
        return bound.astype(x.dtype) if bound.dtype != x.dtype else bound
    return x.dtype.type(bound)
