"""Building expressions: Buffer operators, math functions, ``where``/``clip``, ``astype``.

Each builder checks its operands now (dtypes, broadcasting, accelerators) and returns a pending
:class:`LazyBuffer`; nothing runs until the value is needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Buffer
from . import powers
from .complex_math import COMPLEX_MATH, COMPLEX_OPS
from .evaluate import run, store
from .lazy import LazyBuffer, Scalar
from .operands import accelerator_of, check_device_dtypes, has_float64, operand
from .types import SUPPORTED, check_dtype, loop_types

BINARY_UFUNCS: dict[str, np.ufunc] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal, "minimum": np.minimum, "maximum": np.maximum,
    "lshift": np.left_shift, "rshift": np.right_shift,
}
UNARY_UFUNCS: dict[str, np.ufunc] = {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
                                     "invert": np.invert}
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "and": "&", "or": "|", "xor": "^", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==",
           "ne": "!=", "neg": "unary -", "pos": "unary +", "abs": "abs()", "invert": "~",
           "minimum": "minimum", "maximum": "maximum", "lshift": "<<", "rshift": ">>"}


_COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of ``shapes`` (ValueError naming them when they do not broadcast). Equal
    shapes and 0-d operands, the usual cases, are answered without np.broadcast_shapes, which builds
    an array per shape (a few microseconds of every operator)."""
    first = shapes[0]
    if all(s == first or not s for s in shapes[1:]):
        return tuple(first)
    try:
        out = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " and ".join(str(s) for s in shapes)) from None
    return out


def _typed(x: Any, dtype: np.dtype) -> Any:
    """A weak Python scalar converted to the loop type (numpy's conversion)."""
    if isinstance(x, Scalar) and x.dtype is None:
        return Scalar(np.asarray(x.value).astype(dtype)[()].item(), dtype)
    return x


def _raw(x: Any) -> Any:
    """What numpy's type resolution sees for an operand: the Python number for weak scalars."""
    if isinstance(x, Scalar):
        return x.value if x.dtype is None else np.asarray(x.value, x.dtype)
    return x


def beyond_kernels(args: tuple[Any, ...]) -> bool:
    """Whether generated kernels cannot compute on ``args`` (complex values) while numpy can work on
    their memory in place (every buffer among them is host memory). Any number of dimensions is
    the kernels' (read by strides)."""
    buffers = [a for a in args if isinstance(a, Buffer)]
    if not buffers:
        return False
    if not (any(isinstance(a, (complex, np.complexfloating)) for a in args)
            or any(b.dtype.kind == "c" for b in buffers)):
        return False  # real values: the kernels' (asked first: it costs no broadcast)
    try:
        np.broadcast_shapes(*(b.shape for b in buffers))
    except ValueError:
        return False  # shapes that do not broadcast: the expression layer says so
    # the accelerator's property, not buf.host_visible: asking a pending buffer would evaluate it
    return all(b.accelerator.host_visible_memory for b in buffers)


def on_host(fn: Any, args: tuple[Any, ...]) -> Buffer:
    """``fn`` (a numpy function) of ``args`` on the host views of host-memory buffers, written into a
    new Buffer on their device: what generated kernels cannot spell yet (complex values, more than 3
    dimensions), on cpu:0 and Metal's shared memory only; never a copy of device memory."""
    acc = accelerator_of(*args)
    host = tuple(np.asarray(a) if isinstance(a, Buffer) else a for a in args)
    result = np.asarray(fn(*host))
    return acc.asarray(np.array(result, order="C"))


def _same_shape_operands(op: str, ufunc: np.ufunc, args: tuple[Any, ...], what: str, extra: Any) -> Any:
    """``apply`` for its commonest case, in a few checks: Buffers of one shape (not 0-d) on one
    accelerator, of real dtypes expressions take, and Python floats and ints (``2 * a + 1.5``). Each
    step apply would take is then an identity -- the shape is the Buffers', a number is weak and
    becomes the loop type -- but the loop types (numpy's, cached; they refuse an int out of range as
    numpy does) and the device's float64 check. Not for powers (apply's constant-exponent forms) or
    comparisons with an int (numpy compares those by value). None: not that case, apply decides."""
    acc = shape = None
    for a in args:
        if isinstance(a, Buffer):
            if acc is None:
                acc, shape = a.accelerator, a.shape
                if not shape:
                    return None
            if a.accelerator is not acc or a.shape != shape or a.dtype not in SUPPORTED:
                return None
        elif type(a) is int:
            if op in _COMPARISONS:
                return None
        elif type(a) is not float:
            return None
    if acc is None or op == "pow" or extra == "pow":
        return None
    ins, out = loop_types(ufunc, args, what)
    check_device_dtypes(acc, (*ins, out), what)
    ops = tuple(a if isinstance(a, Buffer) else _typed(Scalar(a, None), t) for a, t in zip(args, ins, strict=True))
    return LazyBuffer.pending(op, ops, ins, out, shape, acc, extra)


def apply(op: str, ufunc: np.ufunc, args: tuple[Any, ...], what: str, extra: Any = None) -> Any:
    """A pending elementwise ``op`` of ``args`` with numpy's loop types and broadcasting."""
    made = _same_shape_operands(op, ufunc, args, what, extra)
    if made is not None:
        return made
    acc = accelerator_of(*args)
    if acc is None:
        return NotImplemented
    if beyond_kernels(args) and (op != "math" or getattr(ufunc, "__name__", None) == _HOST_NAMES.get(extra)):
        if not all(isinstance(a, (Buffer, bool, int, float, complex, np.generic)) for a in args):
            return NotImplemented
        return on_host(ufunc, args)
    ops = [operand(a, acc) for a in args]
    if any(o is NotImplemented for o in ops):
        return NotImplemented
    try:
        ins, out = loop_types(ufunc, tuple(_raw(o) for o in ops), what)
    except OverflowError:
        if op not in _COMPARISONS:
            raise
        # numpy 2 compares with an out-of-range Python int by value (uint32 < -2 is all False):
        # compare in int64, where both sides are exact
        ops = [Scalar(o.value, np.dtype(np.int64)) if isinstance(o, Scalar) and o.dtype is None
               and type(o.value) is int else o for o in ops]
        ins, out = loop_types(ufunc, tuple(_raw(o) for o in ops), what)
    if any(t.kind == "c" for t in ins) and (op not in COMPLEX_OPS or op == "math" and extra not in COMPLEX_MATH):
        # numpy orders complex numbers lexicographically; the standard leaves it out, and so do kernels
        raise TypeError(f"{what} is not defined for complex operands in array expressions")
    shape = broadcast(*(o.shape for o in ops))
    check_device_dtypes(acc, (*ins, out), what)
    ops = [_typed(o, t) for o, t in zip(ops, ins, strict=True)]
    if op == "pow" and out.kind in "iu" and isinstance(ops[1], Scalar) and ops[1].value < 0:
        raise ValueError("Integers to negative integer powers are not allowed (as in numpy); "
                         "use a float base or exponent")
    if (op == "pow" or extra == "pow") and isinstance(ops[1], Scalar) and not isinstance(ops[0], Scalar):
        special = _constant_power(ops[0], ops[1].value, ins[0], out, shape, acc)
        if special is not None:
            return special
    return LazyBuffer.pending(op, tuple(ops), ins, out, shape, acc, extra)


def _constant_power(x: Any, exponent: Any, t: np.dtype, out: np.dtype, shape: tuple[int, ...], acc: Any) -> Any:
    """``x ** c`` for a constant ``c`` without ``pow``, where the result is bit for bit numpy's: numpy
    itself computes float ``x ** 2`` as ``x * x`` and ``x ** 0.5`` as ``sqrt(x)``; ``x ** 1``, ``** 0``
    and ``** -1`` (numpy 1's other fast cases) are exact as ``x``, ``1`` and ``1 / x``; integer powers
    are exact whatever the order of the (wrapping) multiplications. ``pow`` with a run-time exponent
    is 100x slower than a multiply on some OpenCL CPU drivers (PoCL). Other float integer exponents
    up to ``powers.MAX_EXPONENT`` in size are a product chain that carries its rounding errors and
    rounds once (within 1 ulp of ``pow``, not its bits; powers.py); other exponents keep ``pow``.
    None: not one of these."""
    if t.kind not in "iuf" or isinstance(exponent, bool):
        return None

    def node(op: str, args: tuple[Any, ...], extra: Any = None) -> LazyBuffer:
        return LazyBuffer.pending(op, args, (t,) * len(args), out, shape, acc, extra)  # power: t == out

    if exponent == 1:
        return node("pos", (x,))
    if exponent == 0:
        return LazyBuffer.pending("cast", (Scalar(np.ones((), out).item(), out),), (out,), out, shape, acc)
    if t.kind == "f":
        if exponent == 2:
            return node("mul", (x, x))
        if exponent == 0.5:
            return node("math", (x,), "sqrt")
        if exponent == -1:
            return node("truediv", (Scalar(np.ones((), t).item(), t), x))
        n, how = powers.takes(exponent), powers.method(t, has_float64(acc))
        if n is not None and how is not None:  # a product chain rounded once: within 1 ulp of pow's
            return node("ipow", (x,), (n, how))
        return None
    if not 2 <= exponent <= _MAX_INT_POWER:
        return None
    result, square, k = None, x, int(exponent)
    while k:  # square and multiply: x ** 5 = x * (x * x) ** 2, three multiplies
        if k & 1:
            result = square if result is None else node("mul", (result, square))
        k >>= 1
        if k:
            square = node("mul", (square, square))
    return result


_MAX_INT_POWER = 16


def binary(op: str, a: Any, b: Any) -> Any:
    return apply(op, BINARY_UFUNCS[op], (a, b), f"operator {SYMBOLS[op]}")


def unary(op: str, a: Any) -> Any:
    return apply(op, UNARY_UFUNCS[op], (a,), f"operator {SYMBOLS[op]}")


def inplace(op: str, a: Buffer, b: Any) -> Buffer:
    """``a op= b``: computed in ``a``'s dtype (numpy's same_kind rule) and written into ``a``'s memory."""
    value = binary(op, a, b)
    if value is NotImplemented:
        return NotImplemented
    if value.shape != a.shape:
        raise ValueError(f"in-place {SYMBOLS[op]}=: the result has shape {value.shape}, the buffer {a.shape} "
                         "(the right-hand side must broadcast to the buffer's shape)")
    if type(a) is LazyBuffer and a._op is not None:
        # a pending value gets its own memory first; the update then writes into it
        run([a])
    store(a, value, casting="same_kind")
    return a


def astype(buf: Buffer, dtype: Any) -> Buffer:
    dt = check_dtype(dtype, "astype")
    acc = buf.accelerator
    x = operand(buf, acc)
    if isinstance(x, Scalar):
        return acc.asarray(np.asarray(x.value, x.dtype).astype(dt))
    check_device_dtypes(acc, (x.dtype, dt), "astype")
    return LazyBuffer.pending("cast", (x,), (x.dtype,), dt, x.shape, acc)


def where(condition: Any, x: Any, y: Any) -> Any:
    """``dc.where(c, x, y)``: ``x`` where ``c`` is true, else ``y`` (numpy's ``where``, elementwise)."""
    acc = accelerator_of(condition, x, y)
    if acc is None:
        return np.where(condition, x, y)
    ops = [operand(v, acc) for v in (condition, x, y)]
    if any(o is NotImplemented for o in ops):
        raise TypeError("dc.where: condition, x and y must be Buffers, numpy arrays or numbers")
    raws = [_raw(o) for o in ops[1:]]
    out = np.result_type(*raws)
    check_dtype(out, "dc.where")
    shape = broadcast(*(o.shape for o in ops))
    loop = (np.dtype(bool), out, out)
    check_device_dtypes(acc, loop, "dc.where")
    ops = [_typed(o, t) for o, t in zip(ops, loop, strict=True)]
    return LazyBuffer.pending("where", tuple(ops), loop, out, shape, acc)


def complex_part(x: Buffer, part: str) -> Any:
    """``x.real`` or ``x.imag`` of a complex Buffer, elementwise and lazily (a real Buffer of its precision)."""
    acc = x.accelerator
    z = operand(x, acc)
    real = np.dtype(z.dtype.char.lower())  # complex64 → float32, complex128 → float64
    if isinstance(z, Scalar):
        return acc.asarray(np.asarray(getattr(np.asarray(z.value, z.dtype), part)))
    return LazyBuffer.pending("math", (z,), (z.dtype,), real, z.shape, acc, part)


def minimum(a: Any, b: Any) -> Any:
    return apply("minimum", np.minimum, (a, b), "dc.minimum")


def maximum(a: Any, b: Any) -> Any:
    return apply("maximum", np.maximum, (a, b), "dc.maximum")


def clip(x: Any, a_min: Any, a_max: Any) -> Any:
    """``dc.clip(x, lo, hi)``: ``minimum(maximum(x, lo), hi)``; None leaves that side open."""
    if not isinstance(x, Buffer) and not isinstance(a_min, Buffer) and not isinstance(a_max, Buffer):
        return np.clip(x, a_min, a_max)
    if a_min is None and a_max is None:
        raise ValueError("dc.clip: a_min and a_max cannot both be None")
    out = x if a_min is None else maximum(x, a_min)
    return out if a_max is None else minimum(out, a_max)


# dc.* math functions whose host function is the numpy ufunc of that name (math_call's others are aliases)
_HOST_NAMES = {"sqrt": "sqrt", "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
               "sinh": "sinh", "cosh": "cosh", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
               "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "expm1": "expm1", "log1p": "log1p",
               "log2": "log2", "log10": "log10", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
               "atan2": "arctan2", "hypot": "hypot", "copysign": "copysign", "isnan": "isnan", "isinf": "isinf",
               "isfinite": "isfinite", "conj": "conjugate", "exp2": "exp2", "fmod": "fmod", "cbrt": "cbrt",
               "arcsin": "arcsin", "arccos": "arccos", "arctan": "arctan", "arctan2": "arctan2", "pow": "power",
               "round": "rint", "rint": "rint"}
# rounding an integer (or bool) is the value itself, in its own dtype (numpy's rint/floor would give a float)
_ROUNDINGS = ("round", "rint", "floor", "ceil", "trunc")

# dc.* math functions → the numpy ufunc that decides their loop types
_MATH_UFUNC_ALIASES = {"min": np.minimum, "max": np.maximum, "abs": np.absolute, "round": np.rint,
                       "pow": np.power, "rsqrt": np.sqrt, "erf": np.sqrt, "erfc": np.sqrt, "lgamma": np.sqrt,
                       "tgamma": np.sqrt}


def math_call(fn: Any, args: tuple[Any, ...]) -> Any:
    """``dc.sqrt(buf)`` and the other ``dc.*`` math functions on Buffers: elementwise, lazily."""
    if not any(isinstance(a, Buffer) for a in args):
        return NotImplemented
    name = fn.name
    if name in ("min", "max", "minimum", "maximum"):
        if len(args) != 2:
            raise TypeError(f"dc.{name} on buffers takes two arguments, got {len(args)}")
        return apply("minimum" if name in ("min", "minimum") else "maximum",
                     np.minimum if name in ("min", "minimum") else np.maximum, args, f"dc.{name}")
    if name == "abs":
        return unary("abs", args[0])
    if name in _ROUNDINGS and len(args) == 1 and isinstance(args[0], Buffer) and args[0].dtype.kind in "biu":
        return astype(args[0], args[0].dtype)
    ufunc = _MATH_UFUNC_ALIASES.get(name) or getattr(fn, "_host", None)
    if not isinstance(ufunc, np.ufunc):
        raise TypeError(f"dc.{name} cannot be applied to buffers")
    if len(args) != ufunc.nin:
        raise TypeError(f"dc.{name} takes {ufunc.nin} argument(s), got {len(args)}")
    return apply("math", ufunc, args, f"dc.{name}", extra=name)


__all__ = ["complex_part", "binary", "unary", "inplace", "astype", "where", "minimum", "maximum", "clip", "math_call",
           "apply", "broadcast", "BINARY_UFUNCS", "UNARY_UFUNCS"]
