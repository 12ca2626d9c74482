"""Run-time compilation through the kernel cache: ``compile_source``."""

from __future__ import annotations

import logging
from typing import Any

from . import trace as _trace
from .accelerator import Accelerator
from .native import native
from .registry import accelerator as _accelerator

log = logging.getLogger("dotcompute.compile")


def compile_source(acc: Accelerator | str, source: str, entry: str, options: str = "") -> Any:
    """Compiles ``source`` for ``acc`` (through the memory and disk kernel cache) and returns ``entry``.

    The result is the native kernel: ``kernel.plan([ParamSpec(...), ...], raw=False)``
    gives the launch plan whose ``launch(global_size, local_size, args, stream,
    shared_bytes=0)`` validates, packs and enqueues in C++. The GIL is released
    while the compiler runs. Raises :class:`dotcompute.CompilationError` with
    the compiler's ``log`` and the ``source``.
    """
    if not isinstance(source, str) or not isinstance(entry, str) or not isinstance(options, str):
        raise TypeError("compile_source(acc, source: str, entry: str, options: str = '')")
    if not entry:
        raise ValueError("compile_source: entry (the kernel function's name) is empty")
    acc = _accelerator(acc)
    recorder = _trace.active
    if recorder is None and not log.isEnabledFor(logging.DEBUG):
        return acc._native.compile(source, entry, options)
    # Observed (a profile is open or DEBUG logging is on): the cache counters before and after
    # say where the binary came from.
    before = native().cache_stats()
    t0 = _trace.now()
    kernel = acc._native.compile(source, entry, options)
    t1 = _trace.now()
    cache = _cache_outcome(before, native().cache_stats())
    log.debug("compiled %s for %s in %.2f ms (cache: %s)", entry, acc.id, (t1 - t0) / 1e6, cache)
    if recorder is not None:
        recorder.compile(acc, entry, t0, t1, cache)
    return kernel


def _cache_outcome(before: dict[str, int], after: dict[str, int]) -> str:
    """"memory", "disk" or "miss" (compiled), from which kernel-cache counter moved."""
    if after.get("misses", 0) > before.get("misses", 0):
        return "miss"
    if after.get("disk_hits", 0) > before.get("disk_hits", 0):
        return "disk"
    return "memory"


__all__ = ["compile_source"]
