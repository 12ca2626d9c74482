"""Measured launch times per (kernel, argument dtypes, size class) and device, kept across processes.

The file lives in the cache folder (``<cache>/orchestrate/history-v1.json``), is small (a running
mean and counts per device, at most ``MAX_KEYS`` keys), versioned (another version is ignored) and
written atomically (temporary file + rename). A file that cannot be read or parsed is ignored and
replaced on the next save: a corrupt history costs a few exploration launches, never an error.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import math
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from .. import config
from ..runtime import cache_folder
from .safefile import read_json

log = logging.getLogger("dotcompute.orchestrate")

VERSION = 1
MAX_KEYS = 2000
_ALPHA = 0.3  # weight of a new sample in the running mean: recent behaviour counts more


def kernel_id(kernel: Any) -> str:
    """A name for ``kernel`` that is stable across processes (module + qualified name, or the
    hash of a RawKernel's source)."""
    fn = getattr(kernel, "pyfunc", None)
    if fn is not None:
        return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', kernel.name)}"
    source = getattr(kernel, "_source", "")
    return f"raw:{kernel.name}:{hashlib.sha1(source.encode()).hexdigest()[:12]}"


def size_class(global_size: tuple[int, ...]) -> int:
    """Work sizes within a factor of 4 share a class (0: 1-3 items, 1: 4-15, ...)."""
    return int(math.log2(max(1, math.prod(global_size)))) // 2


def history_key(kernel: Any, global_size: tuple[int, ...], args: tuple[Any, ...]) -> str:
    types = ",".join(str(a.dtype) if hasattr(a, "dtype") and hasattr(a, "shape") else type(a).__name__ for a in args)
    return f"{kernel_id(kernel)}|{types}|{size_class(global_size)}"


class History:
    """``{key: {device id: {"n": successes, "fail": failures, "ms": running mean}}}`` on disk."""

    def __init__(self, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._path = path
        self._data: dict[str, dict[str, dict[str, Any]]] | None = None
        self._dirty = False

    @property
    def path(self) -> Path | None:
        """The history file: in the folder the kernel cache really uses (None: memory only)."""
        if self._path is not None:
            return self._path
        folder = orchestrate_dir()
        return None if folder is None else folder / f"history-v{VERSION}.json"

    def reset(self, path: Path | None = None) -> None:
        """Forgets what was loaded (re-read on next use), optionally from another file."""
        with self._lock:
            self._path = path
            self._data = None
            self._dirty = False

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        if self._data is None:
            path = self.path
            self._data = {} if path is None else read(path)
        return self._data

    def entry(self, key: str) -> dict[str, dict[str, Any]]:
        """A copy of the per-device statistics of ``key``."""
        with self._lock:
            return {k: dict(v) for k, v in self._load().get(key, {}).items()}

    def record(self, key: str, acc_id: str, ms: float | None) -> None:
        """Adds one measured time (``None``: the launch failed on that device)."""
        with self._lock:
            data = self._load()
            if key not in data and len(data) >= MAX_KEYS:
                data.pop(next(iter(data)))  # the oldest key: the file stays small
            stats = data.setdefault(key, {}).setdefault(acc_id, {"n": 0, "fail": 0, "ms": None})
            if ms is None:
                stats["fail"] += 1
            else:
                stats["ms"] = ms if stats["ms"] is None else (1 - _ALPHA) * stats["ms"] + _ALPHA * ms
                stats["n"] += 1
            self._dirty = True

    def save(self) -> None:
        """Writes the file atomically if anything changed (errors are logged, never raised)."""
        with self._lock:
            if not self._dirty or self._data is None:
                return
            path = self.path
            if path is None:  # the kernel cache is in memory only: so is the history
                return
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=".history-", dir=path.parent)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"format": "dotcompute-history", "version": VERSION, "entries": self._data}, f)
                os.replace(tmp, path)
                self._dirty = False
            except OSError as e:
                log.debug("could not save the device history to %s: %s", path, e)


def _valid_stats(n: Any, fail: Any, ms: Any) -> bool:
    """Counts that are non-negative ints, and a mean that exists exactly when something was measured
    and is a finite time: "best" sorts devices by it, and a None or NaN there (a hand-edited or
    foreign file) broke that sort with a TypeError or chose at random."""
    counts_ok = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (n, fail))
    if not counts_ok:
        return False
    if ms is None:
        return n == 0
    return isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms) and ms >= 0


def orchestrate_dir() -> Path | None:
    """``<kernel cache folder>/orchestrate``: the folder the native kernel cache uses after its checks,
    so a cache folder it refused (group- or world-writable, someone else's) is not used for these
    files either. Without the native module (nothing can launch then): the configured folder."""
    try:
        folder = cache_folder()
    except ImportError:
        folder = config.cache_dir()
    return None if folder is None else folder / "orchestrate"


def read(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """The entries of a history file; {} when it is missing, corrupt or of another version."""
    try:
        raw = read_json(path)  # no FIFO hang, no huge read, no RecursionError: corrupt is corrupt
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        log.debug("ignoring the unreadable device history %s (it is replaced on the next save): %s", path, e)
        return {}
    if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("entries"), dict):
        log.debug("ignoring the device history %s: not a version-%d history file", path, VERSION)
        return {}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key, devices in raw["entries"].items():
        if not isinstance(devices, dict):
            continue
        clean = {}
        for acc_id, s in devices.items():
            if isinstance(s, dict) and _valid_stats(s.get("n"), s.get("fail"), s.get("ms")):
                clean[str(acc_id)] = {"n": s["n"], "fail": s["fail"], "ms": s["ms"]}
        if clean:
            out[str(key)] = clean
    return out


#: the process's history (``dc.orchestrate.history``)
history = History()
atexit.register(history.save)

__all__ = ["History", "MAX_KEYS", "VERSION", "history", "history_key", "kernel_id", "orchestrate_dir", "read",
           "size_class"]
