"""``dc.launch(kernel, global_size, *args, local_size=None, accelerator=None, stream=None)``."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from .errors import DotComputeError, LaunchError
from .runtime import array_hooks as _array_hooks
from .runtime import layer_hooks as _layer_hooks
from .runtime import trace as _trace
from .runtime.array_hooks import HOOKS as _ARRAY_HOOKS
from .runtime.fast_launch import attempt as _fast_attempt


class LaunchSizeTypeError(LaunchError, TypeError):
    """``global_size``/``local_size`` of the wrong type (also a ``TypeError``, as numpy users expect)."""


class LaunchSizeValueError(LaunchError, ValueError):
    """``global_size``/``local_size`` with a bad value (also a ``ValueError``)."""


# Extents travel to the native layer as int64: a larger one used to escape as pybind11's "Unable to cast
# Python instance" RuntimeError; and the work-items of all dimensions together must fit 64 bits (PoCL
# silently ran nothing for (2**40, 2**40, 2**40)).
_MAX_EXTENT = 2**63 - 1
_MAX_ITEMS = 2**64


def _sizes(value: Any, what: str) -> tuple[int, ...]:
    # fast paths for the common spellings; everything else is checked below with messages
    if type(value) is int and 0 < value <= _MAX_EXTENT:
        return (value,)
    if type(value) is tuple and 1 <= len(value) <= 3 and all(type(v) is int and 0 < v <= _MAX_EXTENT
                                                             for v in value):
        if len(value) > 1 and _product(value) >= _MAX_ITEMS:
            raise LaunchSizeValueError(f"{what} {value} has more than 2**64 work-items in all")
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        items: tuple[Any, ...] = (value,)
    elif isinstance(value, (tuple, list)):
        items = tuple(value)
    else:
        raise LaunchSizeTypeError(f"{what} must be a positive int or a tuple of 1 to 3 positive ints, "
                          f"not {type(value).__name__}")
    if not 1 <= len(items) <= 3:
        raise LaunchSizeValueError(f"{what} must have 1 to 3 dimensions, got {len(items)}: {value!r}")
    out = []
    for d, v in enumerate(items):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise LaunchSizeTypeError(f"{what}[{d}] must be an int, not {type(v).__name__} ({v!r})")
        if v <= 0:
            raise LaunchSizeValueError(f"{what}[{d}] must be positive, got {v}")
        if v > _MAX_EXTENT:
            raise LaunchSizeValueError(f"{what}[{d}] = {v} is too large (at most 2**63 - 1)")
        out.append(int(v))
    if len(out) > 1 and _product(out) >= _MAX_ITEMS:
        raise LaunchSizeValueError(f"{what} {tuple(out)} has more than 2**64 work-items in all")
    return tuple(out)


def _product(values: Any) -> int:
    n = 1
    for v in values:
        n *= v
    return n


_runtime: Any = None
# the module (dotcompute.runtime.accelerator names a function there): its fork state is read per launch
_accelerator_module = importlib.import_module(".runtime.accelerator", __package__)
_Accelerator = _accelerator_module.Accelerator


def _rt() -> Any:
    global _runtime
    if _runtime is None:
        from . import runtime

        _runtime = runtime
    return _runtime


def _resolve_accelerator(accelerator: Any, stream: Any, args: tuple[Any, ...]) -> Any:
    rt = _rt()
    Buffer = rt.Buffer
    if accelerator is not None:
        return accelerator if type(accelerator) is rt.Accelerator else rt.accelerator(accelerator)
    if stream is not None:
        acc = getattr(stream, "accelerator", None)
        if acc is not None:
            return acc
    for a in args:
        if isinstance(a, Buffer):
            return a.accelerator
    return rt.accelerator("auto")


def launch(kernel: Any, global_size: Any, *args: Any, local_size: Any = None, accelerator: Any = None,
           stream: Any = None, fallback: Any = None, retries: int = 0, check: Any = None) -> None:
    """Run ``kernel`` over ``global_size`` work-items with ``args``.

    ``global_size``/``local_size``: an int or a tuple of 1 to 3 positive ints (``local_size`` None lets
    the backend choose). The accelerator is ``accelerator`` if given, else the stream's, else the
    first ``dc.Buffer`` argument's, else ``dc.accelerator("auto")``. Launches on a stream are
    asynchronous; a launch given numpy arrays returns with the results in them.

    ``accelerator="best"`` / ``"gpu"``, ``fallback=`` and ``retries=`` are handled by the orchestration
    layer (``dotcompute.orchestrate``, see docs/orchestration.md).

    ``check="memcheck,racecheck,synccheck,initcheck"`` (or ``"all"``; ``"...:warn"`` logs instead of
    raising ``dc.KernelCheckError``) first runs the kernel instrumented on the host (docs/kernel-safety.md).
    """
    if type(accelerator) is _Accelerator and fallback is None and not retries and check is None:  # the hot path
        if (local_size is None and stream is None and not _accelerator_module.inherited_by_fork
                and _fast_attempt(accelerator, kernel, global_size, args)):
            return  # a cached kernel with plain arguments: one native call (runtime/fast_launch.py)
        launch_on(accelerator, kernel, global_size, args, local_size, stream)
        return
    if type(accelerator) is str and accelerator.strip().lower() in _CHOSEN:
        accelerator = accelerator.strip().lower()  # specs are case-insensitive ("GPU", "Best")
    if fallback is not None or retries or (type(accelerator) is str and accelerator in _CHOSEN):
        if check is not None:
            raise LaunchError("check= runs one launch on a chosen device; it cannot be combined with "
                              "accelerator='best'/'gpu', fallback= or retries=")
        if _orchestrated is None:
            raise LaunchError("accelerator='best'/'gpu', fallback= and retries= need dotcompute.orchestrate "
                              "(import dotcompute loads it)")
        _orchestrated(kernel, global_size, args, local_size, accelerator, stream, fallback, retries)
        return
    acc = _resolve_accelerator(accelerator, stream, args)
    launch_on(acc, kernel, global_size, args, local_size, stream, check)


def _checked_runner(kernel: Any, check: Any) -> Any:
    make = getattr(kernel, "_dc_checked", None)
    if make is None:
        if not hasattr(kernel, "_dc_launch"):
            raise TypeError(f"dc.launch needs a @dc.kernel or dc.RawKernel, not {type(kernel).__name__}")
        raise DotComputeError(f"check={check!r}: kernel {getattr(kernel, 'name', kernel)!r} is a raw kernel, and raw "
                              "kernels support none of the checks yet (memcheck, racecheck, synccheck and initcheck "
                              "run on @dc.kernel kernels; see docs/kernel-safety.md)")
    return make(check)


def launch_on(acc: Any, kernel: Any, global_size: Any, args: tuple[Any, ...], local_size: Any = None,
              stream: Any = None, check: Any = None) -> None:
    """``launch`` once the accelerator is known (``Accelerator.launch`` comes straight here)."""
    if _accelerator_module.inherited_by_fork:  # a forked child: fail instead of hanging (see there)
        _accelerator_module.refuse_after_fork(acc.id)
    if _array_hooks.lazy_made:  # set once an array expression exists: until then nothing can be pending
        before = _ARRAY_HOOKS.get("before_launch")
        if before is not None:  # array expressions: lazy arguments run, pending readers of the arguments first
            before(kernel, args)
    try:
        runner = kernel._dc_launch if check is None else _checked_runner(kernel, check)
    except AttributeError:
        raise TypeError(f"dc.launch needs a @dc.kernel or dc.RawKernel, not {type(kernel).__name__}") from None
    if type(global_size) is int and 0 < global_size <= _MAX_EXTENT:  # _sizes' first case, without the call
        gsize: tuple[int, ...] = (global_size,)
    else:
        gsize = _sizes(global_size, "global_size")
    lsize = None
    if local_size is not None:
        lsize = _sizes(local_size, "local_size")
        if len(lsize) != len(gsize):
            raise LaunchSizeValueError(f"local_size {lsize} must have as many dimensions as global_size {gsize}")
    if stream is None:
        stream = acc._capture_stream  # set inside ``with acc.graph():``, else None
    elif getattr(stream, "accelerator", None) is not acc:
        owner = getattr(stream, "accelerator", None)
        if owner is None:
            raise TypeError(f"stream must be a dc.Stream (from acc.stream()), not {type(stream).__name__}")
        raise LaunchError(f"the stream belongs to {owner.id} but the launch is on {acc.id}")
    recorder = _trace.active
    try:  # free unless something is raised (zero-cost exception handling)
        if recorder is None:
            runner(acc, gsize, lsize, args, stream)
        else:
            _trace.traced_launch(recorder, kernel.name, runner, acc, gsize, lsize, args, stream)
    except DotComputeError as e:
        if e.accelerator is None:  # say where it came from (DotComputeError.accelerator)
            e.accelerator = acc.id
        raise


# The orchestration layer sits above this module: it registers its launch entry here at import
# (a hook in the lower layer, so no import goes upward). Signature:
# (kernel, global_size, args, local_size, accelerator, stream, fallback, retries) -> None
_orchestrated: Any = None
_CHOSEN = frozenset(("best", "gpu"))  # accelerator specs that the orchestration layer resolves per launch


def set_orchestrated_launch(fn: Any) -> None:
    """Installs the handler of ``accelerator="best"/"gpu"``, ``fallback=`` and ``retries=``."""
    global _orchestrated
    _orchestrated = fn


# The runtime's acc.launch() calls these through its hook table (it must not import this module).
_layer_hooks.provide(launch=launch, launch_on=launch_on)

__all__ = ["launch", "launch_on", "set_orchestrated_launch"]
