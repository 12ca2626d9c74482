"""One pipeline stage: what it runs, on which accelerator, and which buffers it reads and writes.

Everything about a stage is checked when it is added, so that a mistake (an argument that does not
fit the kernel, an unknown error strategy) surfaces at ``p.add`` rather than halfway through a run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..launch import _sizes
from ..runtime import Accelerator, Buffer, RawKernel
from ..runtime import accelerator as _accelerator

STRATEGIES = ("abort", "skip", "continue", "retry", "fallback")

# kinds of stage: a @dc.kernel, a dc.RawKernel, a callable that enqueues device work, a host step
KERNEL, RAW, CALL, HOST = "kernel", "raw", "call", "host"


@dataclass(eq=False)
class Access:
    """One buffer a stage touches: the object, the name it has there, and how it is used."""

    obj: Any
    param: str
    read: bool
    write: bool


@dataclass(eq=False)
class Stage:
    name: str
    kind: str
    fn: Any
    args: tuple[Any, ...]
    accelerator: Accelerator | None  # None only for host stages
    on_error: str
    retries: int
    after: tuple[str, ...]
    global_size: tuple[int, ...] | None = None
    local_size: tuple[int, ...] | None = None
    accesses: list[Access] = field(default_factory=list)
    takes_stream: bool = False  # CALL stages: fn accepts ``stream=`` and enqueues its work there
    written_args: tuple[int, ...] = ()  # positions of the arguments the stage writes


def is_tracked(obj: Any) -> bool:
    """Objects whose hazards a pipeline tracks: device buffers and numpy arrays, by identity."""
    return isinstance(obj, (Buffer, np.ndarray))


def check_strategy(on_error: Any, retries: Any, kind: str) -> tuple[str, int]:
    if on_error not in STRATEGIES:
        raise ValueError(f"on_error must be one of {', '.join(map(repr, STRATEGIES))}, got {on_error!r}")
    if retries is None:
        retries = 1 if on_error == "retry" else 0
    if isinstance(retries, bool) or not isinstance(retries, (int, np.integer)) or retries < 0:
        raise ValueError(f"retries must be an int >= 0, got {retries!r}")
    if on_error == "retry" and retries == 0:
        raise ValueError("on_error='retry' needs retries >= 1 (how many more attempts to make)")
    if on_error == "fallback" and kind == HOST:
        raise ValueError("on_error='fallback' runs a device stage on the CPU; a host step has nothing to fall "
                         "back to (use 'retry', 'skip', 'continue' or 'abort')")
    return on_error, int(retries)


def check_after(after: Any) -> tuple[str, ...]:
    if after is None:
        return ()
    if isinstance(after, str):
        return (after,)
    try:
        names = tuple(after)
    except TypeError:
        raise TypeError(f"after must be a stage name or a list of stage names, got {type(after).__name__}") from None
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"after must hold stage names (str), got {n!r}")
    return names


def resolve_accelerator(spec: Any, default: Accelerator | None, args: Iterable[Any]) -> Accelerator:
    """The stage's own ``accelerator=``, else the pipeline's, else the first buffer argument's, else auto."""
    if spec is not None:
        return spec if isinstance(spec, Accelerator) else _accelerator(spec)
    if default is not None:
        return default
    for a in args:
        if isinstance(a, Buffer):
            return a.accelerator
    return _accelerator("auto")


def declared_accesses(args: tuple[Any, ...], reads: Any, writes: Any, stage: str) -> list[Access]:
    """``reads=``/``writes=`` given: they are the whole truth about what the stage touches."""
    out: dict[int, Access] = {}
    for what, objs in (("reads", reads), ("writes", writes)):
        if objs is None:
            continue
        if is_tracked(objs):
            objs = [objs]
        elif isinstance(objs, (str, bytes)) or not hasattr(objs, "__iter__"):
            # else `for obj in objs` would fail with a bare "'int' object is not iterable"
            raise TypeError(f"stage {stage!r}: {what}= must be a dc.Buffer, a numpy array or a list of them, "
                            f"got {type(objs).__name__}")
        for obj in objs:
            if not is_tracked(obj):
                raise TypeError(f"stage {stage!r}: {what}= must hold dc.Buffers or numpy arrays, "
                                f"got {type(obj).__name__}")
            acc = out.get(id(obj))
            if acc is None:
                acc = out[id(obj)] = Access(obj, _arg_name(args, obj), False, False)
            if what == "reads":
                acc.read = True
            else:
                acc.write = True
    return list(out.values())


def _arg_name(args: tuple[Any, ...], obj: Any) -> str:
    for i, a in enumerate(args):
        if a is obj:
            return f"arg{i}"
    return "buffer"


def every_buffer(args: tuple[Any, ...], names: list[str] | None = None) -> list[Access]:
    """Raw kernels, callables and host steps say nothing about their buffers: each is read and written."""
    out: list[Access] = []
    seen: set[int] = set()
    for i, a in enumerate(args):
        if is_tracked(a) and id(a) not in seen:
            seen.add(id(a))
            out.append(Access(a, names[i] if names and i < len(names) else f"arg{i}", True, True))
    return out


def kernel_accesses(kernel: Any, args: tuple[Any, ...]) -> list[Access]:
    """The kernel language's access analysis: exactly what the kernel body reads and writes.

    Specialising for ``args`` is also the argument check a launch makes, so a mismatch raises the
    same ``dc.KernelTypeError`` here, at ``add`` time.
    """
    types = kernel.types_from_args(args)
    module = kernel.specialize(types).module
    merged: dict[int, Access] = {}
    order: list[Access] = []
    for p in module.kernel.params:
        if not p.is_buffer:
            continue
        obj = args[p.index]
        if not is_tracked(obj) or not (p.read or p.written):
            continue
        acc = merged.get(id(obj))
        if acc is None:  # one buffer passed for two parameters: one access with both uses
            acc = merged[id(obj)] = Access(obj, p.py_name, False, False)
            order.append(acc)
        acc.read = acc.read or p.read
        acc.write = acc.write or p.written
    return order


def param_names(fn: Callable[..., Any]) -> list[str] | None:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None


def accepts_stream(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get("stream")
    return p is not None and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)


def check_raw_args(name: str, args: tuple[Any, ...]) -> None:
    for i, a in enumerate(args):
        if is_tracked(a) or isinstance(a, (bool, int, float, np.generic)):
            continue
        raise TypeError(f"stage {name!r}: RawKernel argument {i} must be a dc.Buffer, a numpy array or a "
                        f"number, got {type(a).__name__}")


def make_device_stage(fn: Any, args: tuple[Any, ...], *, name: str, global_size: Any, local_size: Any,
                      accelerator: Accelerator, on_error: str, retries: int, after: tuple[str, ...],
                      reads: Any, writes: Any) -> Stage:
    """A ``@dc.kernel`` or ``dc.RawKernel`` stage (``global_size`` given) or a device callable."""
    if hasattr(fn, "_dc_launch"):
        gsize = _sizes(global_size, "global_size")
        lsize = None
        if local_size is not None:
            lsize = _sizes(local_size, "local_size")
            if len(lsize) != len(gsize):
                raise ValueError(f"stage {name!r}: local_size {lsize} must have as many dimensions as "
                                 f"global_size {gsize}")
        kind = RAW if isinstance(fn, RawKernel) else KERNEL
        if kind == KERNEL:
            analysed = kernel_accesses(fn, args)  # raises KernelTypeError for mismatched args
        else:
            check_raw_args(name, args)
            analysed = every_buffer(args)
        declared = reads is not None or writes is not None
        accesses = declared_accesses(args, reads, writes, name) if declared else analysed
        stage = Stage(name, kind, fn, args, accelerator, on_error, retries, after, gsize, lsize, accesses)
    else:
        if local_size is not None:
            raise ValueError(f"stage {name!r}: local_size is for kernels; a callable stage launches its own work")
        declared = reads is not None or writes is not None
        accesses = declared_accesses(args, reads, writes, name) if declared else every_buffer(args, param_names(fn))
        stage = Stage(name, CALL, fn, args, accelerator, on_error, retries, after, accesses=accesses,
                      takes_stream=accepts_stream(fn))
    stage.written_args = _written_positions(args, stage.accesses)
    return stage


def make_host_stage(fn: Callable[..., Any], args: tuple[Any, ...], *, name: str, on_error: str, retries: int,
                    after: tuple[str, ...], reads: Any, writes: Any) -> Stage:
    declared = reads is not None or writes is not None
    accesses = declared_accesses(args, reads, writes, name) if declared else every_buffer(args, param_names(fn))
    stage = Stage(name, HOST, fn, args, None, on_error, retries, after, accesses=accesses)
    stage.written_args = _written_positions(args, accesses)
    return stage


def _written_positions(args: tuple[Any, ...], accesses: list[Access]) -> tuple[int, ...]:
    written = {id(a.obj) for a in accesses if a.write}
    return tuple(i for i, a in enumerate(args) if id(a) in written)


def default_name(fn: Any) -> str:
    name = getattr(fn, "name", None)
    if not isinstance(name, str):
        name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or name == "<lambda>":
        name = "stage"
    return name
