"""Run-time compilation through the kernel cache: ``compile_source``."""

from __future__ import annotations

from typing import Any

from .accelerator import Accelerator
from .registry import accelerator as _accelerator


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
    return _accelerator(acc)._native.compile(source, entry, options)


__all__ = ["compile_source"]
