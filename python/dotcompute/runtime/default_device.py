"""The default device: where functions that create arrays put them when ``device=`` is not given.

In this order: the innermost ``with dc.default_device(...)`` block of the calling thread,
``DOTCOMPUTE_DEFAULT_DEVICE``, and what ``dc.accelerator("auto")`` gives. It lives in the runtime
(not in the namespace room that exports ``dc.default_device``) because operations below the
namespace — ``dc.fft.fftfreq``, ``dc.random`` — make arrays too and must follow the same block.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import config
from .accelerator import Accelerator
from .registry import accelerator

_local = threading.local()


def _stack() -> list[Accelerator]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current_default() -> Accelerator:
    """The device used when ``device=`` is not given."""
    stack = _stack()
    if stack:
        return stack[-1]
    spec = config.default_device()
    return accelerator(spec if spec is not None else "auto")


def resolve(device: Any, name: str = "device") -> Accelerator:
    """A ``device=`` argument as an Accelerator (None: the default device)."""
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
    """``with dc.default_device("cpu:0"): ...``: the default device inside the block (this thread
    only; blocks nest)."""
    acc = resolve(device, "dc.default_device")
    stack = _stack()
    stack.append(acc)
    try:
        yield acc
    finally:
        stack.pop()


def has_float64(acc: Accelerator) -> bool:
    """Whether kernels on ``acc`` can use float64 (Metal's MSL has no double)."""
    return acc.backend != "metal"


def default_float(acc: Accelerator) -> np.dtype:
    """The Array API's default real floating dtype on ``acc``: float64, float32 where there is no float64."""
    return np.dtype(np.float64 if has_float64(acc) else np.float32)
