"""Profiling: ``dc.profile()`` and its exporters (summary, JSON, Chrome trace, OpenTelemetry, plot).

The runtime writes into the record hook of ``dotcompute.runtime.trace`` only while a profile is
open. ``DOTCOMPUTE_PROFILE=trace.json`` opens one for the whole program and writes its Chrome
trace at exit. See docs/profiling.md.
"""

from __future__ import annotations

import atexit
import logging
from pathlib import Path

from .. import config
from .records import CompileRecord, LaunchRecord, NoteRecord, TransferRecord
from .session import KernelStats, Profile, profile, write_report

log = logging.getLogger("dotcompute.profile")

_program_profile: Profile | None = None


def _write_program_profile(prof: Profile, path: Path) -> None:
    try:
        prof.stop()
        prof.to_chrome_trace(path)
        log.info("wrote the DOTCOMPUTE_PROFILE trace (%d launches) to %s", len(prof.launches), path)
    except Exception as e:  # at exit: say why, never turn a finished program into a failure
        # an OSError from session._write already names the path and what to fix: say it once
        reason = e.strerror if isinstance(e, OSError) and e.strerror else f"could not write {path}: {e}"
        logging.getLogger("dotcompute.profile").warning("DOTCOMPUTE_PROFILE: %s", reason)


def start_from_environment() -> Profile | None:
    """Opens the whole-program profile when ``DOTCOMPUTE_PROFILE`` is set (once per process)."""
    global _program_profile
    path = config.profile_path()
    if path is None or _program_profile is not None:
        return _program_profile
    _program_profile = Profile().start()
    atexit.register(_write_program_profile, _program_profile, path)
    return _program_profile


start_from_environment()

__all__ = ["CompileRecord", "KernelStats", "LaunchRecord", "NoteRecord", "Profile", "TransferRecord", "profile",
           "start_from_environment", "write_report"]
