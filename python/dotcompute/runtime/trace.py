"""The low-level record hook that ``dc.profile()`` fills.

The runtime's launch, copy and compile paths check ``trace.active`` (one module
attribute load: near zero cost when it is None) and, only while a profiler is
open, hand it what happened. The profiler lives in a higher layer
(``dotcompute.profile``), so this layer only knows the small protocol below;
the orchestration layer writes its decisions (device choice, fallback, retry,
circuit-breaker changes) through :func:`note`.

Recorder protocol (every method is optional to call, none may raise)::

    launch(kernel, acc, global_size, local_size, nbytes, stream, t0_ns, t1_ns, ev0, ev1)
    transfer(direction, nbytes, acc, t0_ns, t1_ns)          # direction: "h2d", "d2h", "d2d"
    compile(acc, entry, t0_ns, t1_ns, cache)                 # cache: "memory", "disk", "miss"
    note(kind, t_ns, attrs)                                  # orchestration decisions

Times are ``time.perf_counter_ns()``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

#: the open profiler's recorder, or None (the common case)
active: Any = None

now = time.perf_counter_ns


def set_active(recorder: Any) -> Any:
    """Installs ``recorder`` (None: none) and returns the previous one, so profiles can nest."""
    global active
    previous = active
    active = recorder
    return previous


def arg_bytes(args: tuple[Any, ...]) -> int:
    """Bytes of the buffer and array arguments of a launch."""
    total = 0
    for a in args:
        if isinstance(a, np.ndarray):
            total += a.nbytes
        else:
            n = getattr(a, "_native", None)
            if n is not None and hasattr(a, "nbytes"):
                total += a.nbytes
    return total


def traced_launch(recorder: Any, name: str, runner: Any, acc: Any, gsize: tuple[int, ...],
                  lsize: tuple[int, ...] | None, args: tuple[Any, ...], stream: Any) -> None:
    """Runs ``runner(acc, gsize, lsize, args, stream)`` bracketed by two events on its stream, and
    records it (device time is read from the events when the profile closes, not here)."""
    s = stream if stream is not None else acc.default_stream
    ev0 = ev1 = None
    if getattr(acc, "_capture_stream", None) is None:  # events would become part of a captured graph
        try:
            ev0 = s.record()
        except Exception:  # a stream that cannot record: host time only
            ev0 = None
    t0 = now()
    runner(acc, gsize, lsize, args, stream)  # a launch that raises is not recorded: it did not run
    t1 = now()
    if ev0 is not None:
        try:
            ev1 = s.record()
        except Exception:
            ev0 = None
    recorder.launch(name, acc, gsize, lsize, arg_bytes(args), s, t0, t1, ev0, ev1)


def note(kind: str, **attrs: Any) -> None:
    """Tells the open profiler (if any) about an orchestration decision."""
    recorder = active
    if recorder is not None:
        recorder.note(kind, now(), attrs)


__all__ = ["active", "arg_bytes", "note", "now", "set_active", "traced_launch"]
