"""Vendor libraries check themselves before dotcompute trusts them with a user's data.

cuBLAS, cuFFT, CLBlast and clFFT run on memory dotcompute hands them through native handles, with
leading dimensions, transposes, strides and directions mapped by our bindings; a wrong mapping, a
broken driver or a miscompiled library kernel would give wrong numbers silently. So the first use
of a routine (``gemm``, ``c2c`` FFTs of 1 or 2 axes) per device, library and dtype in a process
runs a small known problem through the vendor path and through the portable kernels and compares
them. On a mismatch the vendor path is off for that (device, library, routine, dtype) for the rest
of the process, one ``DotComputeWarning`` says which library, routine, device and how far off it
was, and the portable kernels run instead.

The verdict is kept in ``<kernel cache folder>/vendor/selfcheck.json`` under a key naming the
library file (path, size, modification time), the device and its driver, so a later process skips
the check and a cached "bad" verdict keeps the library off with the same warning; a new library or
driver is checked again. ``DOTCOMPUTE_VENDOR_SELFCHECK=0`` skips the check (and the cached verdicts).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..config import warn_user
from ..errors import DotComputeError
from ..runtime import Accelerator, cache_folder

#: ``0`` (or false/no/off) skips the self-check; read at each first use, not at import.
ENV = "DOTCOMPUTE_VENDOR_SELFCHECK"
#: the on-disk verdicts' format version: another version's file is ignored and replaced
VERSION = 1
_MAX_FILE_BYTES = 1 << 20  # a few hundred verdicts at most; anything larger is not ours

_log = logging.getLogger("dotcompute.ops")


def tolerance(dtype: np.dtype) -> float:
    """The largest error, relative to the result's largest magnitude, a correct library may show:
    the known problems are small (tens of terms per element), so a few hundred ulps is generous
    and a mapping error (wrong stride, transpose or sign) is off by order 1."""
    d = np.dtype(dtype)
    single = d in (np.dtype(np.float32), np.dtype(np.complex64))
    return 1e-4 if single else 1e-10


def enabled() -> bool:
    """Whether the self-check runs (``DOTCOMPUTE_VENDOR_SELFCHECK`` is not 0/false/no/off)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass(frozen=True)
class Verdict:
    ok: bool
    error: float  # the largest difference relative to the portable result's largest magnitude
    tolerance: float
    cached: bool = False  # read from the verdict file rather than computed in this process


#: how the warning names each library
NAMES = {"clblast": "CLBlast", "clfft": "clFFT", "cublas": "cuBLAS", "cufft": "cuFFT"}

_lock = threading.Lock()
_key_locks: dict[tuple[str, ...], threading.Lock] = {}
_verdicts: dict[tuple[str, ...], Verdict] = {}


def device_identity(acc: Accelerator) -> str:
    """The device and its driver as the verdict file names them: a new driver is checked again."""
    info = acc.info
    parts = [acc.id] + [str(info.get(k, "")) for k in ("name", "driver_version", "version", "compiler")]
    return "|".join(parts)


def verdict_file() -> Path | None:
    """``<kernel cache folder>/vendor/selfcheck.json``, or None when kernels are cached in memory only."""
    folder = cache_folder()
    return None if folder is None else folder / "vendor" / "selfcheck.json"


def _read_file(path: Path) -> dict[str, Any]:
    """The verdicts on disk; {} when missing, unsafe (not a regular file of this user's that only
    they can write: a planted "good" verdict would switch a library's check off) or corrupt."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_FILE_BYTES
                or (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o022):
            _log.debug("ignoring the vendor self-check verdicts %s: not a private regular file", path)
            return {}
        raw = json.loads(os.read(fd, _MAX_FILE_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    finally:
        os.close(fd)
    if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("verdicts"), dict):
        return {}
    return raw["verdicts"]


def _load(path: Path | None, key: str) -> Verdict | None:
    if path is None:
        return None
    entry = _read_file(path).get(key)
    if not isinstance(entry, dict):
        return None
    ok, error, tol = entry.get("ok"), entry.get("error"), entry.get("tolerance")
    if not isinstance(ok, bool) or not isinstance(error, (int, float)) or not isinstance(tol, (int, float)):
        return None
    return Verdict(ok, float(error), float(tol), cached=True)


def _save(path: Path | None, key: str, verdict: Verdict) -> None:
    """Adds the verdict to the file (read, update, write a temporary file, rename: atomic for
    readers; two processes saving at once may lose one verdict, which is then checked again)."""
    if path is None:
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        verdicts = _read_file(path)
        verdicts[key] = {"ok": verdict.ok, "error": verdict.error, "tolerance": verdict.tolerance}
        fd, tmp = tempfile.mkstemp(prefix=".selfcheck-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"format": "dotcompute-vendor-selfcheck", "version": VERSION, "verdicts": verdicts}, f)
        os.replace(tmp, path)
    except OSError as e:
        _log.debug("could not save the vendor self-check verdict to %s: %s", path, e)


def compare(vendor: np.ndarray, portable: np.ndarray, dtype: np.dtype) -> Verdict:
    """The verdict on two results of the same problem."""
    v = np.asarray(vendor).astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    p = np.asarray(portable).astype(v.dtype)
    tol = tolerance(dtype)
    if v.shape != p.shape:
        return Verdict(False, float("inf"), tol)
    scale = max(float(np.max(np.abs(p), initial=0.0)), 1.0)
    diff = np.abs(v - p)
    error = float("inf") if not np.all(np.isfinite(diff)) else float(np.max(diff, initial=0.0)) / scale
    return Verdict(error <= tol, error, tol)


def _warn(library: str, routine: str, acc: Accelerator, dtype: np.dtype, verdict: Verdict, path: Path | None) -> None:
    where = f"; the verdict is kept in {path}" if path is not None else ""
    library = NAMES.get(library, library)
    when = "an earlier process found" if verdict.cached else "its self-check found"
    warn_user(f"{library} {routine} ({np.dtype(dtype).name}) on {acc.id} ({acc.info.get('name', '')}, driver "
              f"{acc.info.get('driver_version', '?')}) gives wrong results: {when} a largest error of "
              f"{verdict.error:.3g} relative to the result's magnitude (tolerance {verdict.tolerance:.0e}) "
              f"against the portable kernels. {library} is not used for {routine} on {acc.id} in this process; "
              f"the portable kernels run instead{where} ({ENV}=0 skips the check)")


def trusted(library: str, routine: str, acc: Accelerator, dtype: np.dtype, library_identity: str,
            run_vendor: Callable[[], np.ndarray], run_portable: Callable[[], np.ndarray]) -> bool:
    """Whether ``library``'s ``routine`` may run for ``dtype`` on ``acc``: checked once per process
    (``run_vendor``/``run_portable``: the known problem, each returning the host result), and once
    per library file and driver across processes through the verdict file.

    An error raised by ``run_vendor`` (a library error status) propagates and nothing is decided;
    a portable path that cannot run the problem here decides nothing either (trusted, unchecked).
    """
    if not enabled():
        return True
    dt = np.dtype(dtype)
    key = (library, routine, acc.id, dt.str)
    known = _verdicts.get(key)
    if known is not None:
        return known.ok
    with _lock:
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # one check per key; other threads wait for its verdict
        known = _verdicts.get(key)
        if known is not None:
            return known.ok
        # a library whose file is unknown (not loaded through VendorLibrary) has no version to
        # key a verdict on: checked in every process, never cached
        path = verdict_file() if library_identity else None
        disk_key = f"{library}|{routine}|{dt.str}|{library_identity}|{device_identity(acc)}"
        verdict = _load(path, disk_key)
        if verdict is None:
            expected = None
            try:
                expected = run_portable()
            except DotComputeError as e:
                _log.debug("%s %s self-check on %s: the portable kernels cannot run it (%s); trusted unchecked",
                           library, routine, acc.id, e)
            if expected is None:
                return True
            verdict = compare(run_vendor(), expected, dt)
            _save(path, disk_key, verdict)
            _log.debug("%s %s (%s) self-check on %s: error %.3g, %s", library, routine, dt.name, acc.id,
                       verdict.error, "passed" if verdict.ok else "FAILED")
        _verdicts[key] = verdict
    if not verdict.ok:
        _warn(library, routine, acc, dt, verdict, path)
    return verdict.ok


def forget() -> None:
    """Forgets this process's verdicts (the file stays): the next use checks or reads again."""
    with _lock:
        _verdicts.clear()


__all__ = ["ENV", "NAMES", "VERSION", "Verdict", "compare", "device_identity", "enabled", "forget", "tolerance",
           "trusted", "verdict_file"]
