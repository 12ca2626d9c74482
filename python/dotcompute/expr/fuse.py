"""``@dc.fuse``: a numpy-style function of arrays and scalars → one kernel per argument signature.

The function is called with the arguments as Buffers, so its body builds one lazy expression
graph (nothing runs while it executes); the results are then computed together by ONE
generated kernel (results of different shapes: one kernel per shape). The kernel is compiled
once per signature (argument dtypes, dimensionalities, broadcasting pattern) and cached in
memory and on disk; later calls only rebuild the small graph in Python (microseconds) and
launch. numpy arrays in → numpy arrays out; Buffers in → Buffers out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import Buffer
from ..runtime import accelerator as _accelerator
from .evaluate import run
from .lazy import LazyBuffer


class FusedFunction:
    """The callable ``@dc.fuse`` returns."""

    def __init__(self, fn: Callable[..., Any], accelerator: Any = "auto") -> None:
        if not callable(fn):
            raise TypeError(f"@dc.fuse decorates a function, not {fn!r}")
        self.fn = fn
        self.accelerator = accelerator
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        buffers = [a for a in (*args, *kwargs.values()) if isinstance(a, Buffer)]
        if buffers:
            acc = buffers[0].accelerator
        else:
            acc = _accelerator(self.accelerator) if isinstance(self.accelerator, str) else self.accelerator
        numpy_out = not buffers

        def upload(a: Any) -> Any:
            if isinstance(a, (np.ndarray, list)) and not isinstance(a, Buffer):
                arr = np.asarray(a)
                return acc.asarray(arr) if arr.ndim else arr[()]
            return a

        result = self.fn(*(upload(a) for a in args), **{k: upload(v) for k, v in kwargs.items()})
        outs = list(result) if isinstance(result, tuple) else [result]
        by_shape: dict[tuple[int, ...], list[LazyBuffer]] = {}
        for o in outs:
            if type(o) is LazyBuffer and o._op is not None:
                group = by_shape.setdefault(o.shape, [])
                if all(o is not g for g in group):
                    group.append(o)
        for group in by_shape.values():
            run(group, extras=False)  # the function's locals are gone: only its results are kept
        if numpy_out:
            outs = [_host(o) for o in outs]
        return tuple(outs) if isinstance(result, tuple) else outs[0]

    def __repr__(self) -> str:
        return f"<dc.fuse {getattr(self.fn, '__name__', self.fn)!r}>"


def _host(x: Any) -> Any:
    if isinstance(x, Buffer):
        arr = np.asarray(x)
        return arr[()] if arr.ndim == 0 else arr
    return x


def fuse(fn: Callable[..., Any] | None = None, *, accelerator: Any = "auto") -> Any:
    """``@dc.fuse`` or ``@dc.fuse(accelerator="opencl")``: see the module docstring."""
    if fn is None:
        return lambda f: FusedFunction(f, accelerator)
    return FusedFunction(fn, accelerator)


__all__ = ["fuse", "FusedFunction"]
