"""The kernel cache as ``dotcompute info`` and ``dotcompute cache clear`` see it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .native import native
from .opencl_cache import clear_pocl_cache


def cache_folder() -> Path | None:
    """The folder the kernel cache really uses: ``DOTCOMPUTE_CACHE_DIR`` (or the default), or the
    private fallback when that folder was refused (other users can write it, it is not a folder...),
    or None when kernels are cached in memory only. Other files dotcompute keeps beside its kernels
    (the device history, circuit-breaker states) belong here too, not in a refused folder."""
    folder = native().cache_dir()
    return Path(folder) if folder else None


def cache_info() -> dict[str, Any]:
    """Folder, size bound (``DOTCOMPUTE_CACHE_MAX_BYTES``), entries and bytes on disk, this process's hits
    and misses, and ``warning``: why the configured folder was refused ("" when it is used)."""
    n = native()
    info: dict[str, Any] = {"dir": n.cache_dir(), "max_bytes": n.cache_max_bytes(), "warning": n.cache_warning()}
    info.update(n.cache_stats())
    return info


def cache_clear() -> dict[str, Any]:
    """Removes every cached kernel, in memory and on disk (PoCL's cache in our folder too); returns what
    was there before."""
    before = cache_info()
    native().cache_clear()
    # PoCL's work-group functions cached beside our binaries (runtime/opencl_cache.py) go too
    clear_pocl_cache(before.get("dir"))
    # and the launch index's records (lang/launch_index.py), which name binaries by their source
    index = Path(before["dir"]) / "launch-index" if before.get("dir") else None
    if index is not None and index.is_dir() and not index.is_symlink():
        for record in index.glob("*.json"):
            record.unlink(missing_ok=True)
    return before


__all__ = ["cache_clear", "cache_folder", "cache_info"]
