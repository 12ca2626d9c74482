"""Array API 2024.12: devices (see docs/array-api.md).

A device is an accelerator (``dc.Accelerator``) or its spec string (``"cpu:0"``, ``"cuda:0"``).
The default device of the creation functions is, in this order: the innermost
``with dc.default_device(...)`` block of the calling thread, ``DOTCOMPUTE_DEFAULT_DEVICE``, and
what ``dc.accelerator("auto")`` gives.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import config
from ..runtime import Accelerator, Buffer, accelerator

__all__ = ["default_device", "to_device"]

_local = threading.local()


def _stack() -> list[Accelerator]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current_default() -> Accelerator:
    """The device the creation functions use when ``device=`` is not given."""
    stack = _stack()
    if stack:
        return stack[-1]
    spec = config.default_device()
    return accelerator(spec if spec is not None else "auto")


def resolve(device: Any, name: str = "device") -> Accelerator:
    """``device=`` of an Array API function as an Accelerator (None: the default device)."""
    if device is None:
        return current_default()
    if isinstance(device, Accelerator):
        return device
    if isinstance(device, str):
        return accelerator(device)
    raise TypeError(f"{name}: expected a dc.Accelerator or an accelerator spec such as 'cpu:0', "
                    f"got {type(device).__name__}")


@contextmanager
def default_device(device: Accelerator | str) -> Iterator[Accelerator]:
    """``with dc.default_device("cpu:0"): ...``: the creation functions' default device inside the
    block (this thread only; blocks nest)."""
    acc = resolve(device, "dc.default_device")
    stack = _stack()
    stack.append(acc)
    try:
        yield acc
    finally:
        stack.pop()


def to_device(x: Buffer, device: Accelerator | str, /, *, stream: Any = None) -> Buffer:
    """``x`` on ``device``: ``x`` itself when it is already there, else a copy (device to device
    where the backends allow it, else through the host: moving data is what was asked for)."""
    acc = resolve(device, "to_device")
    if stream is not None:
        raise ValueError("to_device: stream= is not supported (copies run on the devices' default streams)")
    if x.accelerator is acc:
        return x
    src = _concrete(x)
    if src.accelerator.backend == "cuda" and acc.backend == "cuda":
        return src.copy_to_device(acc)
    return acc.asarray(src.numpy())


def _concrete(x: Buffer) -> Buffer:
    from ..expr.evaluate import concrete

    return concrete(x)
