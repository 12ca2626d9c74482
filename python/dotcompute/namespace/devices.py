"""Array API 2024.12: devices (see docs/array-api.md).

A device is an accelerator (``dc.Accelerator``) or its spec string (``"cpu:0"``, ``"cuda:0"``).
The default device of the creation functions is, in this order: the innermost
``with dc.default_device(...)`` block of the calling thread, ``DOTCOMPUTE_DEFAULT_DEVICE``, and
what ``dc.accelerator("auto")`` gives.
"""

from __future__ import annotations

from typing import Any

from ..runtime import Accelerator, Buffer

# current_default and resolve are also what the other namespace modules import from here
from ..runtime.default_device import current_default, default_device, resolve  # noqa: F401

__all__ = ["default_device", "to_device"]


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
