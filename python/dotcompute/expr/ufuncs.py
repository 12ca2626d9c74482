"""numpy ufuncs on Buffers (``np.sqrt(buf)``, ``np_array * buf``): lazy expressions, like the operators."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lang.builtins import MATH
from ..runtime import Buffer
from .build import BINARY_UFUNCS, UNARY_UFUNCS, apply, math_call

_BY_UFUNC = {u: op for op, u in {**BINARY_UFUNCS, **UNARY_UFUNCS}.items()}
_MATH_NAMES = {np.sqrt: "sqrt", np.exp: "exp", np.log: "log", np.sin: "sin", np.cos: "cos", np.tan: "tan",
               np.tanh: "tanh", np.exp2: "exp2", np.log2: "log2", np.log10: "log10", np.floor: "floor",
               np.ceil: "ceil", np.trunc: "trunc", np.arctan2: "atan2", np.hypot: "hypot", np.fabs: "fabs",
               np.isnan: "isnan", np.isinf: "isinf", np.isfinite: "isfinite", np.fmin: "fmin", np.fmax: "fmax"}


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if method == "__call__" and not kwargs:
        op = _BY_UFUNC.get(ufunc)
        if op is not None:
            return apply(op, ufunc, inputs, f"np.{ufunc.__name__}")
        name = _MATH_NAMES.get(ufunc)
        if name is not None:
            return math_call(MATH[name], inputs)
    # anything else runs in numpy on host copies, as before buffers had operators
    host = tuple(np.asarray(x) if isinstance(x, Buffer) else x for x in inputs)
    if "out" in kwargs:
        outs = kwargs["out"] if isinstance(kwargs["out"], tuple) else (kwargs["out"],)
        if any(isinstance(o, Buffer) for o in outs):
            raise TypeError(f"np.{ufunc.__name__}(..., out=buffer) is not supported; assign the result: "
                            "out[...] = expression")
    return getattr(ufunc, method)(*host, **kwargs)


__all__ = ["array_ufunc"]
