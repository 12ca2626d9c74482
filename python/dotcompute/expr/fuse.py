"""``@dc.fuse``: a numpy-style function of arrays and scalars → one kernel per argument signature.

The first call with a signature (each array argument's dtype and shape, each other argument's
value) *traces* the function: it runs with the array arguments as Buffers, so its body builds
one lazy graph, and its results are computed together by ONE generated kernel (results of
different shapes: one kernel per shape). What ran is recorded; later calls with the same
signature do not run the Python function again: they allocate the outputs and launch the
recorded kernels with the new arrays. A function whose trace had to evaluate something on the
way (a reduction, ``float(x)``, a branch on data) cannot be replayed and is traced on every call
(its kernels are still compiled only once). numpy arrays in → numpy arrays out; Buffers in →
Buffers out.

Like every expression, the kernels compute numpy's arithmetic bit for bit by default (no ``a*b+c``
fused into one rounding). ``@dc.fuse(contract=True)`` and ``@dc.fuse(fastmath=True)`` compile the
kernels of the function's trace with ``@dc.kernel``'s options of those names (lang/compile_options.py).
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import Buffer
from ..runtime import accelerator as _accelerator
from .codegen import STATS, launch, math_mode
from .evaluate import concrete, run
from .lazy import LazyBuffer

_SCALARS = (bool, int, float, np.generic)


class _Replay:
    """The launches one trace made, with the argument Buffers as slots to fill."""

    def __init__(self, records: list, arg_ids: dict[int, int], shape: tuple, is_tuple: bool) -> None:
        self.launches = []
        for kernel, gsize, specs, arguments in records:
            slots = tuple(("arg", arg_ids[id(a)]) if isinstance(a, Buffer) and id(a) in arg_ids else ("const", a)
                          for a in arguments)
            self.launches.append((kernel, gsize, specs, slots))
        self.shape = shape  # per result: (launch number, output number)
        self.is_tuple = is_tuple

    def __call__(self, acc: Any, buffers: list[Any]) -> Any:
        produced = []
        for kernel, gsize, specs, slots in self.launches:
            outs = [acc.empty(s if s else (1,), t) if kernel is not None else acc.empty(s, t) for s, t in specs]
            if kernel is not None:
                args = [buffers[v] if k == "arg" else v for k, v in slots]
                launch(acc, kernel, gsize if gsize else (1,), *outs, *args)
                STATS["values_written"] += len(outs)
            produced.append([LazyBuffer.scalar(o, t, acc) if s == () else o for o, (s, t) in zip(outs, specs,
                                                                                                  strict=True)])
        results = [produced[i][j] for i, j in self.shape]
        return tuple(results) if self.is_tuple else results[0]


class FusedFunction:
    """The callable ``@dc.fuse`` returns."""

    def __init__(self, fn: Callable[..., Any], accelerator: Any = "auto", fastmath: bool = False,
                 contract: bool = False) -> None:
        if not callable(fn):
            raise TypeError(f"@dc.fuse decorates a function, not {fn!r}")
        for name, value in (("fastmath", fastmath), ("contract", contract)):
            if not isinstance(value, bool):
                raise TypeError(f"@dc.fuse({name}=...) must be True or False, not {value!r}")
        self.fn = fn
        self.accelerator = accelerator
        self.fastmath = fastmath
        self.contract = contract
        self._replays: dict[tuple, _Replay | None] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # keywords become the positions they name, so a signature is one argument tuple
            try:
                bound_args = inspect.signature(self.fn).bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{self.fn.__name__}(): {exc}") from None
            bound_args.apply_defaults()
            if bound_args.kwargs:
                raise TypeError(f"{self.fn.__name__}(): @dc.fuse functions take positional arguments, "
                                f"not {sorted(bound_args.kwargs)} as keywords only")
            args = bound_args.args
        buffers = [a for a in args if isinstance(a, Buffer)]
        if buffers:
            acc = buffers[0].accelerator
        else:
            acc = _accelerator(self.accelerator) if isinstance(self.accelerator, str) else self.accelerator
        numpy_out = not buffers
        bound = [self._bind(a, acc) for a in args]
        key = self._signature(bound)
        replay = self._replays.get(key, False) if key is not None else None
        if replay:
            result = replay(acc, bound)  # the recorded kernels were built in this function's math mode
        else:
            with math_mode(self.fastmath, self.contract):
                result = self._trace(bound, key, acc)
        if numpy_out:
            result = tuple(_host(o) for o in result) if isinstance(result, tuple) else _host(result)
        return result

    @staticmethod
    def _bind(a: Any, acc: Any) -> Any:
        if isinstance(a, Buffer):
            return concrete(a)  # pending or view arguments get memory of their own first
        if isinstance(a, (np.ndarray, list)):
            arr = np.asarray(a)
            return acc.asarray(arr) if arr.ndim else arr[()]
        return a

    @staticmethod
    def _signature(bound: list[Any]) -> tuple | None:
        key: list[Any] = []
        for a in bound:
            if isinstance(a, Buffer):
                key.append(("buffer", a.dtype.str, a.shape))
            elif isinstance(a, _SCALARS):
                key.append(("scalar", type(a), a.item() if isinstance(a, np.generic) else a))
            else:
                return None  # anything else: trace every call
        return tuple(key)

    def _trace(self, bound: list[Any], key: tuple | None, acc: Any) -> Any:
        launches_before = STATS["launches"]
        result = self.fn(*bound)
        traced_cleanly = STATS["launches"] == launches_before  # nothing was evaluated on the way
        is_tuple = isinstance(result, tuple)
        outs = list(result) if is_tuple else [result]
        groups: dict[tuple[int, ...], list[LazyBuffer]] = {}
        for o in outs:
            if type(o) is LazyBuffer and o._op is not None:
                group = groups.setdefault(o.shape, [])
                if all(o is not g for g in group):
                    group.append(o)
            else:
                traced_cleanly = False  # results that are not fresh expressions are not replayed
        records: list = []
        for group in groups.values():
            run(group, extras=False, record=records)  # the function's locals are gone: only its results
        if key is not None:
            with self._lock:
                if traced_cleanly and len(records) == len(groups):
                    where = [(i, j) for o in outs for i, g in enumerate(groups.values())
                             for j, q in enumerate(g) if o is q]  # by identity: == builds an expression
                    arg_ids = {id(b): i for i, b in enumerate(bound) if isinstance(b, Buffer)}
                    self._replays[key] = _Replay(records, arg_ids, tuple(where), is_tuple)
                else:
                    self._replays[key] = None
        return result

    def __repr__(self) -> str:
        return f"<dc.fuse {getattr(self.fn, '__name__', self.fn)!r}>"


def _host(x: Any) -> Any:
    if isinstance(x, Buffer):
        arr = np.asarray(x)
        return arr[()] if arr.ndim == 0 else arr
    return x


def fuse(fn: Callable[..., Any] | None = None, *, accelerator: Any = "auto", fastmath: bool = False,
         contract: bool = False) -> Any:
    """``@dc.fuse`` or ``@dc.fuse(accelerator="opencl", fastmath=True)``: see the module docstring."""
    if fn is None:
        return lambda f: FusedFunction(f, accelerator, fastmath, contract)
    return FusedFunction(fn, accelerator, fastmath, contract)


__all__ = ["fuse", "FusedFunction"]
