"""``kernel.precompile(accelerators=None, signatures=None, wait=True)``: compile ahead of time.

Every (accelerator, signature) pair is specialised, emitted and compiled through the kernel cache
on a thread pool (compilers run without the GIL), so the first launch finds the binary in memory
(this process) or on disk (a later one). ``wait=False`` returns a ``concurrent.futures.Future``
at once: compile in the background while the program sets up.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..lang import Kernel
from ..lang.compile_options import compile_options
from ..runtime import Accelerator, RawKernel, accelerator, compile_source, devices

log = logging.getLogger("dotcompute.orchestrate")


def precompile(kernel: Any, accelerators: Sequence[Any] | Any = None, signatures: Sequence[Any] | None = None,
               wait: bool = True) -> list[tuple[str, str]] | Future:
    """Compiles ``kernel`` for ``accelerators`` (default: every device) and ``signatures`` (each one a
    list with an entry per parameter, as ``kernel.source(signature=...)`` takes; default: the
    annotated or default types). Returns ``[(accelerator id, entry point), ...]``, or a Future of it."""
    accs = _accelerators(kernel, accelerators)
    jobs = [(acc, sig) for acc in accs for sig in _signatures(kernel, signatures)]
    pool = ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1)),
                              thread_name_prefix="dotcompute-precompile")
    futures = [pool.submit(_one, kernel, acc, sig) for acc, sig in jobs]
    pool.shutdown(wait=False)

    def gather() -> list[tuple[str, str]]:
        return [f.result() for f in futures]

    if wait:
        return gather()
    done: Future = Future()

    def finish(_: Any) -> None:
        if all(f.done() for f in futures) and not done.done():
            try:
                done.set_result(gather())
            except BaseException as e:  # the first compile error, as .result() raises it
                done.set_exception(e)
    for f in futures:
        f.add_done_callback(finish)
    if not futures:  # nothing to compile (no device of a raw kernel's backend): done at once, not never
        done.set_result([])
    return done


def _one(kernel: Any, acc: Accelerator, signature: Any) -> tuple[str, str]:
    if isinstance(kernel, RawKernel):
        kernel.compile(acc)
        return acc.id, kernel.name
    types = kernel.types_for(signature)
    emitted = kernel.specialize(types).emit(acc.backend)
    compile_source(acc, emitted.text, emitted.entry, compile_options(kernel, acc.backend))
    log.debug("precompiled %s for %s", emitted.entry, acc.id)
    return acc.id, emitted.entry


def _accelerators(kernel: Any, accelerators: Any) -> list[Accelerator]:
    if not isinstance(kernel, (Kernel, RawKernel)):
        raise TypeError(f"precompile needs a @dc.kernel or dc.RawKernel, not {type(kernel).__name__}")
    if accelerators is None:
        found = devices()
        return [d for d in found if d.backend == kernel.backend] if isinstance(kernel, RawKernel) else found
    if isinstance(accelerators, (str, Accelerator)):
        accelerators = [accelerators]
    return [accelerator(a) for a in accelerators]


def _signatures(kernel: Any, signatures: Any) -> list[Any]:
    """``signatures`` is a list of signatures, each a list or tuple with an entry per parameter. One
    signature given on its own (``signatures=("float32", ...)``) or a string would otherwise be taken
    apart entry by entry, character by character, into "the signature has 7 entries" errors."""
    if signatures is None:
        return [None]
    what = "precompile(signatures=...)"
    if isinstance(signatures, (str, bytes)) or not isinstance(signatures, Sequence):
        raise TypeError(f"{what} takes a list of signatures, each a tuple with one entry per parameter, "
                        f"not {type(signatures).__name__} {signatures!r}")
    for sig in signatures:
        if isinstance(sig, (str, bytes)) or not isinstance(sig, Sequence):
            raise TypeError(f"{what}: each signature is a tuple with one entry per parameter of "
                            f"{getattr(kernel, 'name', '?')!r}, not {type(sig).__name__} {sig!r} "
                            f"(one signature on its own goes in a list: signatures=[(...)])")
    return list(signatures)


def install() -> None:
    """Gives ``Kernel`` and ``RawKernel`` their ``precompile`` method (they live in lower layers, which
    must not import this one: the method is registered from here)."""
    def method(self: Any, accelerators: Any = None, signatures: Sequence[Any] | None = None,
               wait: bool = True) -> list[tuple[str, str]] | Future:
        return precompile(self, accelerators, signatures, wait)

    method.__doc__ = precompile.__doc__
    method.__name__ = "precompile"
    for cls in (Kernel, RawKernel):
        if "precompile" not in cls.__dict__:
            cls.precompile = method  # type: ignore[attr-defined]


__all__ = ["install", "precompile"]
