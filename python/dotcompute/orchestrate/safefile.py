"""Reading the small state files dotcompute keeps in the cache folder (device history, published
circuit-breaker states) without trusting what is there.

Someone (or something) may have put a FIFO, a device node, a symlink or a huge sparse file where
the file should be. ``open()`` of a FIFO blocks until a writer appears (forever), and reading a
huge file before parsing it exhausts memory. So: open with ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO
opens at once, a symlink is refused), check ``fstat`` says a regular file of at most ``max_bytes``
before reading a byte, read at most ``max_bytes + 1`` bytes, and parse JSON with the parser's
recursion failure turned into the same ``ValueError`` as any other corrupt content.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

#: the bound on a state file read here (the device history is capped at MAX_KEYS keys: well under it)
MAX_STATE_BYTES = 16 << 20


class UnsafeFileError(OSError):
    """The path is not a regular file of acceptable size (a FIFO, device, symlink, or too large)."""


def read_bytes(path: Path, max_bytes: int = MAX_STATE_BYTES) -> bytes:
    """The content of the regular file ``path``. Raises FileNotFoundError when it is missing and
    :class:`UnsafeFileError` (an OSError) when it is a symlink, not a regular file, or larger than
    ``max_bytes``; never blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafeFileError(e.errno, "a symbolic link, not followed", str(path)) from e
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(0, "not a regular file (a FIFO, device or folder?)", str(path))
        if st.st_size > max_bytes:
            raise UnsafeFileError(0, f"{st.st_size} bytes, over the limit of {max_bytes}", str(path))
        chunks: list[bytes] = []
        left = max_bytes + 1  # the file may grow after fstat: still never more than the limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise UnsafeFileError(0, f"grew over the limit of {max_bytes} bytes while read", str(path))
        return data
    finally:
        os.close(fd)


def read_json(path: Path, max_bytes: int = MAX_STATE_BYTES) -> Any:
    """``read_bytes`` then JSON: ValueError for content that is not JSON, not UTF-8, or nested too
    deeply for the parser (which raises RecursionError, a RuntimeError, that callers do not expect)."""
    data = read_bytes(path, max_bytes)
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError as e:
        raise ValueError(f"{path}: JSON nested too deeply to parse") from e


__all__ = ["MAX_STATE_BYTES", "UnsafeFileError", "read_bytes", "read_json"]
