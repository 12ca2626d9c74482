"""The one door to ``dotcompute._native``.

The native runtime starts lazily in C++ on first use; before that happens the
package points it at its own plugin folder (``DOTCOMPUTE_PLUGIN_DIR``) and,
right after, hands it the plugins that other wheels declare through the
``dotcompute.backends`` entry-point group. Importing ``dotcompute`` does not
load the native module, so the kernel language can generate source on a
machine where the native part is not built.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .. import config

log = logging.getLogger("dotcompute.runtime")

ENTRY_POINT_GROUP = "dotcompute.backends"

_lock = threading.RLock()
_module: ModuleType | None = None


@dataclass(frozen=True)
class EntryPointFailure:
    """An entry point whose plugin path could not even be resolved in Python."""

    name: str
    value: str
    reason: str


_entry_point_failures: list[EntryPointFailure] = []


def package_dir() -> Path:
    """The folder the native files were installed into (``<site-packages>/dotcompute``).

    In an editable install the Python sources stay in the checkout while the
    built module, libdotcompute, the plugins and the CMake config live in
    site-packages, so this follows the native module, not ``__file__``.
    """
    spec = importlib.util.find_spec("dotcompute._native")
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parent
    return Path(__file__).resolve().parent.parent


def plugin_dir() -> Path:
    return package_dir() / "plugins"


def cmake_dir() -> Path:
    return package_dir() / "cmake" / "dotcompute"


def native() -> ModuleType:
    """The native module, with the runtime's plugin folders and entry points set up."""
    module = _module
    if module is not None:
        return module
    with _lock:
        if _module is None:
            _start()
        assert _module is not None
        return _module


def _start() -> None:
    global _module
    os.environ.setdefault("DOTCOMPUTE_PLUGIN_DIR", str(plugin_dir()))
    # The CUDA plugin cannot search Python's paths for the NVRTC wheel itself: hand it the file.
    from .. import cuda

    cuda.export_nvrtc_path()
    try:
        module = importlib.import_module("dotcompute._native")
    except ImportError as e:
        raise ImportError(
            f"the native part of dotcompute (dotcompute._native) could not be imported: {e}. "
            "Build it with `pip install .` (or `pip install --no-build-isolation -e .` in a checkout)."
        ) from e
    config.configure_logging()
    # before the backends are listed: PoCL reads POCL_CACHE_DIR once, when the ICD loader starts it
    from .opencl_cache import point_pocl_cache

    point_pocl_cache(module.cache_dir())
    _module = module
    _warn_about_cache(module)
    _load_entry_points(module)
    # Bad values of settings that have a fallback (DOTCOMPUTE_CPU_THREADS, _LOG, unknown names in
    # _BACKENDS) are warned about once, here, when the runtime starts.
    config.check_environment([b.name for b in module.backends()])
    if log.isEnabledFor(logging.DEBUG):  # DOTCOMPUTE_LOG=DEBUG: say which plugins loaded, and why not
        for b in module.backends():
            state = f"available, {b.device_count} device(s)" if b.available else f"unavailable: {b.reason}"
            log.debug("backend %s %s (%s) from %s", b.name, b.version or "?", state, b.library or b.manifest)


def _warn_about_cache(module: ModuleType) -> None:
    """Once per process: a refused (untrusted) cache folder, or a size bound that is not a number."""
    reason = module.cache_warning()
    if reason:
        config.warn_user(reason)
    bound = config.cache_max_bytes_is_bad()
    if bound is not None:
        config.warn_user(f"DOTCOMPUTE_CACHE_MAX_BYTES={bound!r} is not a whole number of bytes; the kernel cache "
                         f"keeps its default bound of {module.cache_max_bytes()} bytes")


def _load_entry_points(module: ModuleType) -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = ep.load()
            if callable(target):
                target = target()
            path = os.fspath(target)
        except Exception as e:  # a broken third-party wheel must not break dotcompute
            reason = f"entry point {ep.name} = {ep.value} failed: {type(e).__name__}: {e}"
            log.warning("%s", reason)
            _entry_point_failures.append(EntryPointFailure(ep.name, ep.value, reason))
            continue
        try:
            module.load_plugin(path)
        except Exception as e:
            reason = f"entry point {ep.name} = {ep.value}: plugin {path} could not be loaded: {e}"
            log.warning("%s", reason)
            _entry_point_failures.append(EntryPointFailure(ep.name, ep.value, reason))


def entry_point_failures() -> list[EntryPointFailure]:
    native()
    return list(_entry_point_failures)


__all__ = ["ENTRY_POINT_GROUP", "EntryPointFailure", "cmake_dir", "entry_point_failures", "native",
           "package_dir", "plugin_dir"]
