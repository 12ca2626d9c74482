"""numpy's dispatch protocols on Buffers: ``np.sin(buf)``, ``np.add(a, b, out=c)``,
``np.sum(buf, axis=0)``, ``np.concatenate([a, b])`` return Buffers on the Buffer's device.

``Buffer.__array_ufunc__`` and ``Buffer.__array_function__`` (runtime/array_hooks.py) look up the
hooks this module installs. A numpy ufunc or function that this namespace implements runs as the
``dc`` function (a lazy, fused expression for the elementwise ones); numpy's keyword arguments are
translated (``out=``, ``axis=``, ``keepdims=``, ``ddof=``, ...). What has no translation:

- every Buffer in host memory (``cpu:0``, Metal's shared storage): numpy runs on the buffers' own
  memory (no copy in) and array results come back as new Buffers on that device (``out=`` Buffers
  are written in place);
- a Buffer on another device: a ``TypeError`` naming the function and the device. dotcompute never
  copies device data to the host behind the caller's back; ``np.asarray(buf)`` is the explicit copy.

A call that involves another library's array type (neither a Buffer nor a numpy array) returns
``NotImplemented``, so that type's own protocol decides, as numpy's protocols ask.
The table of numpy functions is in ``numpy_functions.py``.
"""

from __future__ import annotations

import math
from contextlib import ExitStack
from typing import Any

import numpy as np

from ..lang.builtins import MATH
from ..runtime import Buffer
from ..runtime.array_hooks import install
from . import elementwise, linear, numpy_functions_more, statistics
from ._common import on_host
from .numpy_functions import FUNCTIONS, Unsupported, ns

__all__: list[str] = []  # nothing at the top level: this module only installs Buffer's hooks

# numpy ufunc names (``ufunc.__name__``) whose dotcompute function has another name
_UFUNC_ALIASES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
                  "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2", "conjugate": "conj",
                  "invert": "bitwise_invert", "bitwise_not": "bitwise_invert", "left_shift": "bitwise_left_shift",
                  "right_shift": "bitwise_right_shift", "power": "pow", "true_divide": "divide", "mod": "remainder"}


def _namespace_function(name: str) -> Any:
    for module in (elementwise, linear, statistics):
        if name in module.__all__:
            return getattr(module, name)
    return MATH.get(name)


def _degrees(x: Any) -> Any:
    return elementwise.multiply(x, 180.0 / math.pi)


def _radians(x: Any) -> Any:
    return elementwise.multiply(x, math.pi / 180.0)


def _float_power(x1: Any, x2: Any) -> Any:
    # numpy's float_power computes in float64 (complex128 for complex operands)
    wide = np.complex128 if any(getattr(x, "dtype", np.dtype(float)).kind == "c" for x in (x1, x2)) else np.float64
    return MATH["pow"](*(x.astype(wide) if isinstance(x, Buffer) else x for x in (x1, x2)))


def _divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    return elementwise.floor_divide(x1, x2), elementwise.remainder(x1, x2)


# numpy ufuncs that the namespace spells as a short expression of its own functions
_COMPOSED = {"degrees": _degrees, "rad2deg": _degrees, "radians": _radians, "deg2rad": _radians,
             "float_power": _float_power, "divmod": _divmod}

# ufunc.reduce / ufunc.accumulate → the namespace's reduction / scan
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
           "logical_or": "any"}
_ACCUMULATE = {"add": "cumulative_sum", "multiply": "cumulative_prod"}


def ufunc_function(ufunc: np.ufunc) -> Any:
    """The dotcompute function that computes ``ufunc`` on Buffers, or None."""
    name = ufunc.__name__
    if name in _COMPOSED:
        return _COMPOSED[name]
    return _namespace_function(_UFUNC_ALIASES.get(name, name))


def mapped_ufuncs() -> list[str]:
    """The names of numpy's ufuncs that run as dotcompute functions (docs/array-api.md lists them)."""
    return sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc) and ufunc_function(getattr(np, n)))


# -- operands ---------------------------------------------------------------------------------------------------
def _walk(value: Any) -> list[Any]:
    """Every object inside ``value`` (lists, tuples and dicts opened), depth first."""
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _walk(item)]
    if isinstance(value, dict):
        return [v for item in value.values() for v in _walk(item)]
    return [value]


def foreign(values: Any) -> bool:
    """Whether another library's array type (with its own numpy protocol) takes part: it decides."""
    for v in _walk(values):
        if isinstance(v, (Buffer, np.ndarray)) or type(v).__module__.startswith("numpy"):
            continue
        if hasattr(type(v), "__array_ufunc__") or hasattr(type(v), "__array_function__"):
            return True
    return False


def _to_host(value: Any) -> Any:
    if isinstance(value, Buffer):
        return np.asarray(value)  # host memory: a view of the buffer's own memory, no copy
    if isinstance(value, list):
        return [_to_host(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_host(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_host(v) for k, v in value.items()}
    return value


def _to_device(acc: Any, value: Any) -> Any:
    """numpy's results back as Buffers on ``acc`` (named tuples keep their type)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        return acc.asarray(np.ascontiguousarray(value))
    if isinstance(value, list):
        return [_to_device(acc, v) for v in value]
    if isinstance(value, tuple):
        items = [_to_device(acc, v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def host_fallback(what: str, reason: str, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Runs ``call`` (numpy) on the host views of the Buffers in ``args``/``kwargs`` when every one
    is in host memory on one device; else the TypeError that names the function and the device."""
    buffers = [v for v in _walk((args, kwargs)) if isinstance(v, Buffer)]
    away = [b for b in buffers if not on_host(b)]
    if away:
        raise TypeError(f"{what} on a buffer on {away[0].accelerator.id}: {reason}, and dotcompute does not copy "
                        "device data to the host silently; copy it explicitly with np.asarray(buf) (or "
                        "buf.to_device('cpu:0')) and call numpy on that")
    accs = {id(b.accelerator): b.accelerator for b in buffers}
    if len(accs) > 1:
        a, b = list(accs.values())[:2]
        raise ValueError(f"{what}: arrays on two devices, {a.id} and {b.id}; move one with x.to_device(...) first")
    acc = buffers[0].accelerator
    outs = kwargs.get("out")
    out_tuple = outs if isinstance(outs, tuple) else (outs,)
    host_kwargs = _to_host({k: v for k, v in kwargs.items() if k != "out"})
    with ExitStack() as stack:
        if outs is not None:
            # out= Buffers are written through host() views: pending expressions that read them run first
            views = tuple(stack.enter_context(o.host()) if isinstance(o, Buffer) else o for o in out_tuple)
            host_kwargs["out"] = views if isinstance(outs, tuple) else views[0]
        result = call(*_to_host(args), **host_kwargs)
    if outs is not None and any(isinstance(o, Buffer) for o in out_tuple):
        return outs
    return _to_device(acc, result)


# -- __array_ufunc__ --------------------------------------------------------------------------------------------
_CALL_KWARGS = {"out", "dtype", "where", "casting", "order", "subok"}


def _write_out(what: str, result: Any, out: tuple[Any, ...]) -> Any:
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(out):
        raise ValueError(f"{what}: {len(results)} result(s) but {len(out)} out= array(s)")
    for r, o in zip(results, out, strict=True):
        if not isinstance(o, Buffer):
            raise Unsupported("out= is not a Buffer")
        rt = r.dtype if isinstance(r, Buffer) else np.asarray(r).dtype
        if not np.can_cast(rt, o.dtype, casting="same_kind"):
            raise TypeError(f"{what}: cannot write the {rt} result into out= of dtype {o.dtype} "
                            "(numpy's same_kind casting rule)")
        o[...] = r
    return out[0] if len(out) == 1 else out


def _operand_type(x: Any) -> Any:
    """What ``ufunc.resolve_dtypes`` takes for an operand: a dtype, or a Python scalar's type (weak)."""
    if isinstance(x, Buffer):
        return x.dtype
    if isinstance(x, (bool, int, float, complex)):
        return type(x)
    return np.asarray(x).dtype


def _ufunc_call(ufunc: np.ufunc, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    fn = ufunc_function(ufunc)
    if fn is None:
        raise Unsupported("dotcompute has no function for this ufunc")
    unknown = set(kwargs) - _CALL_KWARGS
    if unknown:
        raise Unsupported(f"keyword(s) {sorted(unknown)}")
    if kwargs.get("where", True) is not True:
        raise Unsupported("where= (a mask)")
    if kwargs.get("casting", "same_kind") != "same_kind" or kwargs.get("order", "K") != "K":
        raise Unsupported("casting=/order=")
    if not any(isinstance(x, Buffer) for x in inputs):
        raise Unsupported("a Buffer only as out=")
    dtype = kwargs.get("dtype")
    if dtype is not None:
        # numpy's dtype= picks the loop (the result dtype); numpy itself says which input dtypes that
        # loop takes (np.greater(..., dtype=bool) compares floats), and the operands are converted to those
        dtype = np.dtype(dtype)
        try:
            loop = ufunc.resolve_dtypes(tuple(_operand_type(x) for x in inputs) + (None,) * ufunc.nout,
                                        signature=(None,) * ufunc.nin + (dtype,) * ufunc.nout)
        except (TypeError, ValueError) as exc:
            raise Unsupported(f"dtype={dtype} ({exc})") from None
        inputs = tuple(x.astype(t) if isinstance(x, Buffer) and x.dtype != t else x
                       for x, t in zip(inputs, loop[:ufunc.nin], strict=True))
    result = fn(*inputs)
    if dtype is not None and isinstance(result, Buffer) and result.dtype != dtype:
        raise Unsupported(f"dtype={dtype} for a loop with {result.dtype} results")
    out = kwargs.get("out")
    if out is None:
        return result
    return _write_out(f"np.{ufunc.__name__}", result, out if isinstance(out, tuple) else (out,))


def _ufunc_reduce(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    table = _REDUCE if method == "reduce" else _ACCUMULATE
    name = table.get(ufunc.__name__)
    if name is None or len(inputs) != 1 or not isinstance(inputs[0], Buffer):
        raise Unsupported(f"ufunc.{method} of this ufunc")
    (x,) = inputs
    allowed = {"axis", "dtype", "out", "keepdims"} if method == "reduce" else {"axis", "dtype", "out"}
    unknown = set(kwargs) - allowed
    if unknown:
        raise Unsupported(f"keyword(s) {sorted(unknown)}")
    axis = kwargs.get("axis", 0)  # numpy's ufunc.reduce/accumulate default to the first axis
    dtype = kwargs.get("dtype")
    fn = ns(name)
    if method == "reduce":
        keep = bool(kwargs.get("keepdims", False))
        if name in ("all", "any", "min", "max"):
            result = fn(x if dtype is None else x.astype(dtype), axis=axis, keepdims=keep)
        else:
            result = fn(x, axis=axis, dtype=dtype, keepdims=keep)
    else:
        result = fn(x, axis=axis if x.ndim > 1 else None, dtype=dtype)
    out = kwargs.get("out")
    if out is None:
        return result
    return _write_out(f"np.{ufunc.__name__}.{method}", result, out if isinstance(out, tuple) else (out,))


def _ufunc_outer(ufunc: np.ufunc, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if len(inputs) != 2 or not all(isinstance(x, Buffer) for x in inputs):
        raise Unsupported("outer of non-Buffer operands")
    a, b = inputs
    a = a.reshape(a.shape + (1,) * b.ndim)
    return _ufunc_call(ufunc, (a, b), kwargs)


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``Buffer.__array_ufunc__``: see the module's docstring."""
    if foreign((inputs, kwargs.get("out"))):
        return NotImplemented
    what = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    try:
        if method == "__call__":
            return _ufunc_call(ufunc, inputs, kwargs)
        if method in ("reduce", "accumulate"):
            return _ufunc_reduce(ufunc, method, inputs, kwargs)
        if method == "outer":
            return _ufunc_outer(ufunc, inputs, kwargs)
        reason = f"ufunc.{method} has no dotcompute implementation"
    except Unsupported as why:
        reason = f"{why} has no dotcompute implementation"
    return host_fallback(what, reason, getattr(ufunc, method), inputs, kwargs)


# -- __array_function__ -----------------------------------------------------------------------------------------
def array_function(func: Any, types: tuple[type, ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``Buffer.__array_function__``: see the module's docstring."""
    if not all(issubclass(t, (Buffer, np.ndarray)) for t in types):
        return NotImplemented
    name = f"np.{getattr(func, '__qualname__', func.__name__)}"
    module = getattr(func, "__module__", "") or ""
    if module.startswith("numpy.linalg") or module.startswith("numpy.fft"):
        name = f"np.{module.split('.')[1]}.{func.__name__}"
    impl = FUNCTIONS.get(func)
    if impl is None:
        reason = "it has no dotcompute implementation"
    else:
        try:
            return impl(*args, **kwargs)
        except Unsupported as why:
            reason = f"{why} has no dotcompute implementation"
    return host_fallback(name, reason, func, args, kwargs)


numpy_functions_more  # noqa: B018 -- imported for its entries in FUNCTIONS
install(ufunc=array_ufunc, array_function=array_function)
