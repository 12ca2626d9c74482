"""``acc.empty`` memory that nothing has written yet, for initcheck (docs/kernel-safety.md).

While the kernel checks are in use in the process (``active``: set by dotcompute.lang.check when a
kernel is declared with ``check=``, a launch passes ``check=``, or ``DOTCOMPUTE_CHECK`` is set), a
buffer from ``acc.empty`` is filled with a poison bit pattern and remembered (weakly). Whatever writes
an element later -- a kernel on any device, a copy, a host write, a fill -- replaces the pattern, so a
checked launch finds the elements never written by comparing its host copy with the pattern: nothing
on any write path has to report. Off (the default), ``acc.empty`` makes one attribute test.

The patterns are signalling NaNs with a payload no arithmetic produces (floats, complex) and 0xA5
bytes (integers of 4 or 8 bytes). Integers of 1 or 2 bytes and booleans are not tracked: any of their
values is a likely one to write.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..errors import DotComputeError

active = False
# id(buffer) -> a weak reference to it (not a WeakSet: a Buffer's == is element-wise)
FRESH: dict[int, weakref.ref[Any]] = {}

_FLOAT_POISON = {2: 0x7D2B, 4: 0x7FA5A5A5, 8: 0x7FF4A5A5A5A5A5A5}


def pattern(dtype: Any) -> np.ndarray | None:
    """One element's poison bytes for ``dtype``, or None when it is not tracked."""
    dt = np.dtype(dtype)
    if dt.kind == "f" and dt.itemsize in _FLOAT_POISON:
        word = np.array([_FLOAT_POISON[dt.itemsize]], dtype=f"<u{dt.itemsize}")
        return word.view(np.uint8).copy()
    if dt.kind == "c" and dt.itemsize // 2 in _FLOAT_POISON:
        half = pattern(np.dtype(f"f{dt.itemsize // 2}"))
        assert half is not None
        return np.concatenate([half, half])
    if dt.kind in "iu" and dt.itemsize >= 4:
        return np.full(dt.itemsize, 0xA5, np.uint8)
    return None


def mark(buf: Any) -> None:
    """``buf`` (just allocated) holds no written element: poison it and remember it."""
    p = pattern(buf.dtype)
    if p is None or buf.size == 0 or getattr(buf.accelerator, "_capture_stream", None) is not None:
        return  # (inside `with acc.graph():` no host write may happen: such buffers count as written)
    try:
        with buf.host() as h:
            h.reshape(-1).view(np.uint8).reshape(-1, p.size)[:] = p
    except DotComputeError:  # a device whose memory the host cannot write now: not followed
        return
    key = id(buf)
    FRESH[key] = weakref.ref(buf, lambda _ref, key=key: FRESH.pop(key, None))


def unwritten(buf: Any, host: np.ndarray) -> np.ndarray | None:
    """Per element of ``host`` (a copy of ``buf``'s elements): True where it still holds the poison, or
    None when ``buf`` is not tracked (or every element has been written since)."""
    ref = FRESH.get(id(buf))
    if ref is None or ref() is not buf:
        return None
    p = pattern(buf.dtype)
    if p is None:
        return None
    rows = np.ascontiguousarray(host).reshape(-1).view(np.uint8).reshape(-1, p.size)
    mask = (rows == p).all(axis=1)
    if not mask.any():
        FRESH.pop(id(buf), None)  # all written: never look again
        return None
    return mask


__all__ = ["active", "FRESH", "mark", "pattern", "unwritten"]
