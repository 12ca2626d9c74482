"""The Python-side names of the kernel language: ``dc.global_id``, ``dc.barrier``, ``dc.shared``,
the atomics and ``dc.*`` math.

They are markers: the frontend recognises them by identity when it resolves a name in a
kernel. Called from ordinary Python, the work-item builtins raise (they have no meaning
outside a launch), while the math functions compute with numpy so helpers can be tested
on the host.
"""

from __future__ import annotations

import builtins as _py
import math
from typing import Any

import numpy as np

builtins_min, builtins_max, builtins_abs = _py.min, _py.max, _py.abs


class Builtin:
    """A kernel-only function. ``kind`` is what the frontend dispatches on."""

    def __init__(self, name: str, kind: str, doc: str) -> None:
        self.name = name
        self.kind = kind
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"dc.{self.name}() can only be called inside a @dc.kernel or @dc.func")

    def __repr__(self) -> str:
        return f"<dotcompute builtin {self.name}>"


def _id(name: str, what: str) -> Builtin:
    return Builtin(name, "id", f"{name}(dim): {what} of the calling work-item along dimension dim (0, 1 or 2).")


global_id = _id("global_id", "the global index")
local_id = _id("local_id", "the index within its work-group")
group_id = _id("group_id", "the index of the work-group")
global_size = _id("global_size", "the launch's global size")
local_size = _id("local_size", "the work-group size")
num_groups = _id("num_groups", "the number of work-groups")

barrier = Builtin("barrier", "barrier",
                  "barrier(): every work-item of the group waits here; memory written before is visible after.")
grid_barrier = Builtin("grid_barrier", "barrier",
                       "grid_barrier(): every work-item of the whole launch waits here (CUDA: a cooperative "
                       "launch and cooperative_groups' grid sync); memory written before is visible after.")
shared = Builtin("shared", "shared",
                 "shared(shape, dtype): a work-group array, declared at the top level of a kernel.")


def _subgroup(name: str, doc: str) -> Builtin:
    return Builtin(name, "subgroup", doc)


subgroup_size = _subgroup("subgroup_size", "subgroup_size(): the sub-group width of the device (int64).")
subgroup_local_id = _subgroup("subgroup_local_id", "subgroup_local_id(): this item's lane in its sub-group.")
subgroup_id = _subgroup("subgroup_id", "subgroup_id(): the index of this item's sub-group in its work-group.")
subgroup_count = _subgroup("subgroup_count", "subgroup_count(): the number of items in this item's sub-group "
                                             "(the width, or fewer in a work-group's last, partial sub-group).")
subgroup_sum = _subgroup("subgroup_sum", "subgroup_sum(x): the sum of x over the sub-group.")
subgroup_min = _subgroup("subgroup_min", "subgroup_min(x): the minimum of x over the sub-group.")
subgroup_max = _subgroup("subgroup_max", "subgroup_max(x): the maximum of x over the sub-group.")
subgroup_shuffle = _subgroup("subgroup_shuffle", "subgroup_shuffle(x, lane): x of the item at lane `lane` "
                                                 "of this sub-group.")
subgroup_exclusive_sum = _subgroup("subgroup_exclusive_sum", "subgroup_exclusive_sum(x): the sum of x over the "
                                   "items of lower lanes of the sub-group (0 at lane 0).")
SUBGROUP = {b: b.name[len("subgroup_"):] for b in (subgroup_size, subgroup_local_id, subgroup_id, subgroup_count,
                                                   subgroup_sum, subgroup_min, subgroup_max, subgroup_shuffle,
                                                   subgroup_exclusive_sum)}


def _atomic(op: str, doc: str) -> Builtin:
    return Builtin(f"atomic_{op}", "atomic", doc)


atomic_add = _atomic("add", "atomic_add(buf, index, value): buf[index] += value atomically; returns the old value.")
atomic_sub = _atomic("sub", "atomic_sub(buf, index, value): buf[index] -= value atomically; returns the old value.")
atomic_min = _atomic("min", "atomic_min(buf, index, value): buf[index] = min(buf[index], value); returns the old.")
atomic_max = _atomic("max", "atomic_max(buf, index, value): buf[index] = max(buf[index], value); returns the old.")
atomic_exchange = _atomic("exchange", "atomic_exchange(buf, index, value): store value; returns the old value.")
atomic_cas = _atomic("cas", "atomic_cas(buf, index, compare, value): store value if buf[index] == compare; "
                            "returns the old value.")



class BitCast(Builtin):
    """``dc.bitcast(x, dtype)``: the bits of ``x`` read as ``dtype`` of the same size (int32, uint32,
    float32; int64, uint64, float64), like numpy's ``.view``, CUDA's ``__float_as_uint``, OpenCL's
    ``as_uint`` and MSL's ``as_type``. On the host it is numpy's view of the value."""

    def __call__(self, x: Any, dtype: Any) -> Any:
        arr = np.asarray(x)
        if arr.dtype.itemsize != np.dtype(dtype).itemsize:
            raise ValueError(f"dc.bitcast: x is {arr.dtype} ({arr.dtype.itemsize} bytes) and dtype is "
                             f"{np.dtype(dtype)} ({np.dtype(dtype).itemsize} bytes); they must have one size")
        return arr.view(dtype)[()]


bitcast = BitCast("bitcast", "bitcast", BitCast.__doc__ or "")

ATOMICS = {b: b.name[len("atomic_"):] for b in (atomic_add, atomic_sub, atomic_min, atomic_max,
                                                  atomic_exchange, atomic_cas)}
IDS = {b: b.name for b in (global_id, local_id, group_id, global_size, local_size, num_groups)}


#: ``[fn(math_function, args)]`` once dotcompute.expr is imported: applies a math function to
#: Buffers outside kernels (NotImplemented for other arguments, which keep the numpy host path)
ARRAY_CALL: list[Any] = []


class MathFunction:
    """A ``dc.*`` math function: the IR name it lowers to, and a host implementation."""

    def __init__(self, name: str, ir_name: str, host: Any) -> None:
        self.name = name
        self.ir_name = ir_name
        self._host = host
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = f"{name}(...): lowers to the target's {ir_name}; on the host it calls numpy."

    def __call__(self, *args: Any) -> Any:
        if ARRAY_CALL:  # Buffers: an elementwise array expression (dotcompute.expr fills the hook in)
            out = ARRAY_CALL[0](self, args)
            if out is not NotImplemented:
                return out
        return self._host(*args)

    def __repr__(self) -> str:
        return f"<dotcompute math function {self.name}>"


def _rsqrt(x: Any) -> Any:
    return 1.0 / np.sqrt(x)


def _erf(x: Any) -> Any:
    return np.vectorize(math.erf)(x)[()]


def _erfc(x: Any) -> Any:
    return np.vectorize(math.erfc)(x)[()]


def _lgamma(x: Any) -> Any:
    return np.vectorize(math.lgamma)(x)[()]


def _tgamma(x: Any) -> Any:
    return np.vectorize(math.gamma)(x)[()]


def _host_min(*args: Any) -> Any:
    # like Python's min for numbers and iterables, numpy's minimum for arrays
    if len(args) == 2 and any(isinstance(a, np.ndarray) for a in args):
        return np.minimum(*args)
    return builtins_min(*args)


def _host_max(*args: Any) -> Any:
    if len(args) == 2 and any(isinstance(a, np.ndarray) for a in args):
        return np.maximum(*args)
    return builtins_max(*args)


def _host_abs(x: Any) -> Any:
    return np.abs(x) if isinstance(x, np.ndarray) else builtins_abs(x)


def _host_round(x: Any, *ndigits: Any) -> Any:
    # `from dotcompute import *` must not break Python's round(x, 2)
    return np.rint(x) if isinstance(x, np.ndarray) else _py.round(x, *ndigits)


def _host_pow(a: Any, b: Any, *mod: Any) -> Any:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.power(a, b)
    return _py.pow(a, b, *mod)


_HOST = {
    "sqrt": np.sqrt, "rsqrt": _rsqrt, "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "erf": _erf, "erfc": _erfc, "lgamma": _lgamma, "tgamma": _tgamma,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": _host_round, "fabs": np.fabs,
    "atan2": np.arctan2, "pow": _host_pow, "hypot": np.hypot, "fmod": np.fmod, "copysign": np.copysign,
    "fmin": np.fmin, "fmax": np.fmax, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "min": _host_min, "max": _host_max, "abs": _host_abs, "conj": np.conjugate,
}

MATH: dict[str, MathFunction] = {name: MathFunction(name, name, fn) for name, fn in _HOST.items()}
# numpy-style aliases
MATH["arcsin"] = MathFunction("arcsin", "asin", np.arcsin)
MATH["arccos"] = MathFunction("arccos", "acos", np.arccos)
MATH["arctan"] = MathFunction("arctan", "atan", np.arctan)
MATH["arctan2"] = MathFunction("arctan2", "atan2", np.arctan2)
MATH["minimum"] = MathFunction("minimum", "min", np.minimum)
MATH["maximum"] = MathFunction("maximum", "max", np.maximum)
MATH["rint"] = MathFunction("rint", "round", np.rint)

#: What ``dotcompute`` re-exports at top level (``dc.sqrt``, ``dc.global_id``, ...).
EXPORTS: dict[str, Any] = {
    **{b.name: b for b in IDS}, "barrier": barrier, "grid_barrier": grid_barrier, "shared": shared,
    **{b.name: b for b in ATOMICS}, **{b.name: b for b in SUBGROUP}, **MATH, "bitcast": bitcast,
}

globals().update(MATH)

__all__ = ["Builtin", "MathFunction", "ATOMICS", "IDS", "MATH", "EXPORTS", "global_id", "local_id", "group_id",
           "global_size", "local_size", "num_groups", "barrier", "grid_barrier", "shared", "atomic_add", "atomic_sub",
           "atomic_min", "atomic_max", "atomic_exchange", "atomic_cas", "SUBGROUP", "subgroup_size",
           "subgroup_local_id", "subgroup_id", "subgroup_count", "subgroup_sum", "subgroup_min", "subgroup_max",
           "subgroup_shuffle", "subgroup_exclusive_sum", "BitCast", "bitcast"]
