"""Kernel arguments of vector, matrix and struct parameters: checks and the expanded argument list.

A ``dc.vec3`` scalar parameter is three float32 parameters in the IR (frontend/aggregates.py),
so a launch replaces the tuple or array given for it by its three numbers. A ``Buffer[dc.vec3]``
parameter is a float32 buffer of one more dimension; the launch checks the trailing extent,
which the native plan (that checks dtype and number of dimensions) cannot know. A
``Buffer[Particle]`` is passed as the structured array's bytes (a uint8 view of shape
``(n, itemsize)``), after checking that its dtype is exactly ``Particle.dtype``.

Everything here runs before anything is launched, and raises :class:`KernelTypeError` naming
the parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from .types import BufferType, ScalarType, elem_ndim
from .vectypes import StructType, aggregate_type, leaf_values


def check_scalar(kernel: str, param: str, t: Any, value: Any) -> list[Any]:
    """The leaves of ``value`` for the aggregate parameter ``param``."""
    try:
        return leaf_values(t, value, param)
    except (ValueError, TypeError) as e:
        raise KernelTypeError(f"{kernel}(): parameter {param!r} {e}") from None


def check_buffer(kernel: str, param: str, t: BufferType, a: Any) -> Any:
    """``a`` as the buffer the emitted code takes (a struct array as its bytes); raises if it does
    not hold ``t.elem`` elements."""
    elem = t.elem
    dtype = getattr(a, "dtype", None)
    shape = getattr(a, "shape", None)
    if dtype is None or shape is None:
        raise KernelTypeError(f"{kernel}(): parameter {param!r} expects a buffer of {elem.name}, "
                              f"got {type(a).__name__}")
    logical = t.ndim - elem_ndim(elem)
    if isinstance(elem, StructType):
        if dtype == elem.np_dtype:
            if len(shape) != logical:
                raise KernelTypeError(f"{kernel}(): parameter {param!r} expects {logical} dimension(s) of "
                                      f"{elem.name}, got {len(shape)}")
            if not isinstance(a, np.ndarray):
                raise KernelTypeError(f"{kernel}(): parameter {param!r}: a buffer of {elem.name} is passed as a "
                                      "numpy array (or as a uint8 dc.Buffer of shape (n, itemsize))")
            if not a.flags.c_contiguous:
                raise KernelTypeError(f"{kernel}(): parameter {param!r}: the {elem.name} array must be "
                                      "C-contiguous")
            return a.view(np.uint8).reshape((*shape, elem.size))
        if np.dtype(dtype) == np.uint8 and len(shape) == logical + 1 and shape[-1] == elem.size:
            return a  # the bytes already (a dc.Buffer made from a.view(np.uint8))
        if getattr(dtype, "names", None):
            raise KernelTypeError(f"{kernel}(): parameter {param!r} expects {elem.name}.dtype elements, got "
                                  f"another structured dtype {dtype} (the layout must match: make the array "
                                  f"with dtype={elem.name}.dtype)")
        raise KernelTypeError(f"{kernel}(): parameter {param!r} expects an array of {elem.name}.dtype, got {dtype}")
    want = elem.shape
    if np.dtype(dtype) != elem.dtype.np_dtype or len(shape) != t.ndim or tuple(shape[logical:]) != want:
        raise KernelTypeError(f"{kernel}(): parameter {param!r} expects a buffer of {elem.name}: a "
                              f"{elem.dtype} array of shape (n, {', '.join(map(str, want))})"
                              + ("" if logical == 1 else f" with {logical} leading dimensions")
                              + f", got a {np.dtype(dtype) if dtype is not None else '?'} array of shape "
                                f"{tuple(shape)}")
    return a


def complex_parts(kernel: str, param: str, t: ScalarType, value: Any) -> list[float]:
    """The real and imaginary parts of ``value`` for the complex scalar parameter ``param`` (a complex
    kernel parameter is launched as its two parts)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex, np.number)):
        raise KernelTypeError(f"{kernel}(): parameter {param!r} expects a {t} scalar (a complex or real number), "
                              f"got {type(value).__name__}")
    z = complex(value)
    return [z.real, z.imag]  # the launch rounds each part to the parameter's real type, as numpy's cast does


def expander(kernel: str, params: list[Any], decl_types: list[Any]) -> Callable[[tuple], tuple] | None:
    """A function from the Python arguments to the expanded ones the launch plan takes, checking
    the aggregate ones; None when the kernel has no aggregate parameter (the fast path)."""
    kinds: list[tuple[str, str, Any]] = []
    any_agg = False
    for name, t in decl_types:
        if aggregate_type(t) is not None:
            kinds.append(("scalar", name, t))
            any_agg = True
        elif isinstance(t, BufferType) and t.elem is not None:
            kinds.append(("buffer", name, t))
            any_agg = True
        elif isinstance(t, ScalarType) and t.is_complex:
            kinds.append(("complex", name, t))
            any_agg = True
        else:
            kinds.append(("plain", name, t))
    if not any_agg:
        return None

    def expand(args: tuple) -> tuple:
        out: list[Any] = []
        for (kind, name, t), a in zip(kinds, args, strict=True):
            if kind == "plain":
                out.append(a)
            elif kind == "scalar":
                out += check_scalar(kernel, name, t, a)
            elif kind == "complex":
                out += complex_parts(kernel, name, t, a)
            else:
                out.append(check_buffer(kernel, name, t, a))
        return tuple(out)

    return expand


__all__ = ["check_scalar", "check_buffer", "expander"]
