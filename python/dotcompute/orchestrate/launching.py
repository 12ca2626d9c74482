"""The orchestrated launch: ``dc.launch(..., accelerator="best"/"gpu", fallback=..., retries=N)``.

Registered into ``dotcompute.launch`` at import (that module sits below this one), so plain
launches keep their short path and only launches that ask for these options come here.
"""

from __future__ import annotations

import logging
import time
import weakref
from typing import Any

from .. import config
from ..errors import DotComputeError, OutOfMemoryError
from ..launch import (  # by name: dc.launch shadows the module
    _resolve_accelerator,
    _sizes,
    launch_on,
    set_orchestrated_launch,
)
from ..runtime import Accelerator, Buffer, RawKernel, accelerator, trace
from . import choose as _choose
from .history import history, history_key
from .resilience import CircuitOpenError, breakers, check_retries, is_device_failure, run_with_retries, tag

log = logging.getLogger("dotcompute.orchestrate")

# kernels (by identity, weakly: a kernel defined again warns again) -> failed devices already warned about
_warned: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def forget_warnings() -> None:
    """Makes the next fallback of every kernel warn again (tests; long-running services after a fix)."""
    _warned.clear()


def orchestrated_launch(kernel: Any, global_size: Any, args: tuple[Any, ...], local_size: Any, spec: Any,
                        stream: Any, fallback: Any, retries: int) -> None:
    """``dc.launch`` with ``accelerator="best"/"gpu"``, ``fallback=`` and/or ``retries=``."""
    retries = check_retries(retries)
    fb = _fallback_device(fallback)
    name = getattr(kernel, "name", type(kernel).__name__)
    try:
        if spec in ("best", "gpu") and stream is None and not _has_buffers(args):
            _launch_best(kernel, global_size, args, local_size, spec, retries)
            return
        if spec in ("best", "gpu"):
            acc = _pinned(spec, stream, args)
        else:
            acc = _resolve_accelerator(spec, stream, args)
        if not breakers.allows(acc.id):
            refused = CircuitOpenError(f"{acc.id}: its circuit breaker is open after repeated failures; work "
                                       "goes elsewhere until the cool-down ends", reason="circuit breaker open")
            tag(refused, acc.id)
            raise refused
        try:
            _run(acc, kernel, global_size, args, local_size, stream, retries)
        except DotComputeError as e:
            breakers.failure(acc.id, e)
            raise
        breakers.success(acc.id)
    except DotComputeError as e:
        if fb is None or not is_device_failure(e):
            raise
        failed = getattr(e, "accelerator", None) or str(spec)
        if failed == fb.id:
            raise
        run_fallback(kernel, global_size, args, local_size, fb, e, failed, name)


def _run(acc: Accelerator, kernel: Any, global_size: Any, args: tuple[Any, ...], local_size: Any, stream: Any,
         retries: int) -> None:
    def once() -> None:
        launch_on(acc, kernel, global_size, args, local_size, stream)

    run_with_retries(once, retries, what=f"launch of {getattr(kernel, 'name', '?')}", acc_id=acc.id,
                     on_retry=_trim_on_oom(acc))


def _trim_on_oom(acc: Accelerator) -> Any:
    def on_retry(attempt: int, exc: BaseException) -> None:
        if isinstance(exc, OutOfMemoryError):
            acc.synchronize()  # finished work frees its blocks back to the pool ...
            acc.memory.trim()  # ... and the pool gives them back to the device
    return on_retry


def _launch_best(kernel: Any, global_size: Any, args: tuple[Any, ...], local_size: Any, spec: str,
                 retries: int) -> None:
    gsize = _sizes(global_size, "global_size")
    key = history_key(kernel, gsize, args)
    tried: list[str] = []
    last: DotComputeError | None = None
    while True:
        cands = _choose.candidates(spec, exclude=tried)
        if isinstance(kernel, RawKernel):  # hand-written source runs on its own backend only
            cands = [d for d in cands if d.backend == kernel.backend]
        if not cands:
            if last is not None:
                raise last
            raise CircuitOpenError(f"accelerator={spec!r}: every candidate device has an open circuit breaker",
                                   reason="circuit breakers open")
        acc, reason = _choose.choose(key, cands, history.entry(key))
        log.debug("%s: %s chose %s: %s", key, spec, acc.id, reason)
        trace.note("choice", kernel=getattr(kernel, "name", "?"), accelerator=acc.id, reason=reason, key=key)
        measure = not _choose.first_use(key, acc.id)
        t0 = time.perf_counter()
        try:
            _run(acc, kernel, gsize, args, local_size, None, retries)
            acc.synchronize()
        except DotComputeError as e:
            breakers.failure(acc.id, e)
            if not is_device_failure(e):
                raise
            history.record(key, acc.id, None)
            history.save()
            log.debug("%s: %s failed on %s (%s: %s); trying another device", key, spec, acc.id,
                      type(e).__name__, e)
            tried.append(acc.id)
            last = e
            continue
        breakers.success(acc.id)
        if measure:
            history.record(key, acc.id, (time.perf_counter() - t0) * 1e3)
            if history.entry(key)[acc.id]["n"] <= _choose.EXPLORE:
                history.save()  # exploration results are worth keeping at once; later ones at exit
        return


def run_fallback(kernel: Any, global_size: Any, args: tuple[Any, ...], local_size: Any, fb: Accelerator,
                 error: DotComputeError, failed: str, name: str) -> None:
    """Reruns a failed launch on ``fb``, from the host copies of its arguments, warning once per
    (kernel, failed device). Buffers of another device are not moved: the original error is raised
    with a note saying why."""
    stranded = [i for i, a in enumerate(args) if isinstance(a, Buffer) and a.accelerator is not fb]
    if stranded:
        error.add_note(f"fallback to {fb.id} not attempted: argument(s) {stranded} are dc.Buffers on "
                       f"{args[stranded[0]].accelerator.id}; fallback reruns launches whose arguments are numpy "
                       f"arrays (or buffers of {fb.id})")
        raise error
    why = f"{type(error).__name__}: {error}".splitlines()[0]
    try:
        seen = _warned.setdefault(kernel, set())
    except TypeError:  # an object that cannot be weakly referenced: warn every time rather than never
        seen = set()
    if failed not in seen:
        seen.add(failed)
        # pointed at the user's dc.launch / acc.launch line (a fixed stacklevel named launch.py)
        config.warn_user(f"kernel {name!r} failed on {failed} ({why}); running it on {fb.id} instead")
    log.info("kernel %s failed on %s (%s); falling back to %s", name, failed, why, fb.id)
    trace.note("fallback", kernel=name, accelerator=failed, to=fb.id, error=type(error).__name__)
    try:
        launch_on(fb, kernel, global_size, args, local_size, None)
    except DotComputeError as e2:
        tag(e2, fb.id)
        raise e2 from error


def _fallback_device(fallback: Any) -> Accelerator | None:
    if fallback is None:
        return None
    if not isinstance(fallback, (str, Accelerator)):
        raise TypeError(f"fallback must be an accelerator spec such as 'cpu' or a dc.Accelerator, "
                        f"not {type(fallback).__name__}")
    if fallback in ("best", "gpu"):
        raise ValueError(f"fallback must name one device ('cpu', 'opencl:0', ...), not {fallback!r}")
    return accelerator(fallback)


def _has_buffers(args: tuple[Any, ...]) -> bool:
    return any(isinstance(a, Buffer) for a in args)


def _pinned(spec: str, stream: Any, args: tuple[Any, ...]) -> Accelerator:
    """"best"/"gpu" with a stream or buffer arguments: the work already lives on a device."""
    acc = _resolve_accelerator(None, stream, args)
    log.debug("%s: using %s, where the stream or buffer arguments live", spec, acc.id)
    trace.note("choice", accelerator=acc.id, reason="stream or buffer arguments live there")
    return acc


def install() -> None:
    """Registers :func:`orchestrated_launch` with ``dotcompute.launch``."""
    set_orchestrated_launch(orchestrated_launch)


__all__ = ["forget_warnings", "install", "orchestrated_launch", "run_fallback"]
