"""Retries of transient errors, and a per-device circuit breaker.

Small public-internal helpers: the launch options (``retries=``, ``fallback=``, ``"best"``) use
them, and so may other layers (``dc.Pipeline``'s retry strategy).
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..errors import (
    BackendUnavailableError,
    CompilationError,
    DotComputeError,
    LaunchError,
    OutOfMemoryError,
    PluginError,
)
from ..runtime import trace
from .history import orchestrate_dir
from .safefile import read_json

log = logging.getLogger("dotcompute.orchestrate")
T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """Whether retrying the same work can help: ``exc.transient`` of a DotComputeError, else False."""
    return isinstance(exc, DotComputeError) and bool(getattr(exc, "transient", False))


def is_device_failure(exc: BaseException) -> bool:
    """A failure of the device or its toolchain (out of memory, compile, launch, unavailable backend,
    broken plugin), as opposed to a mistake in the call (wrong argument types or sizes), which
    another device would reject too."""
    if isinstance(exc, (TypeError, ValueError, IndexError)):
        return False  # KernelTypeError, launch-size errors, malformed specs, debug bounds checks
    return isinstance(exc, (OutOfMemoryError, CompilationError, LaunchError, BackendUnavailableError, PluginError))


def tag(exc: BaseException, acc_id: str | None) -> None:
    """Fills in ``exc.accelerator`` (where the error came from) when the raiser did not."""
    if isinstance(exc, DotComputeError) and acc_id is not None and getattr(exc, "accelerator", None) is None:
        try:
            exc.accelerator = acc_id
        except AttributeError:
            pass


def run_with_retries(fn: Callable[[], T], retries: int, *, what: str = "launch", acc_id: str | None = None,
                     backoff_s: float = 0.005, on_retry: Callable[[int, BaseException], None] | None = None) -> T:
    """Calls ``fn()``; on a transient error retries up to ``retries`` more times, sleeping
    ``backoff_s * 2**attempt`` (capped at 0.5 s) between tries. ``on_retry(attempt, exc)`` runs before
    each retry (e.g. to trim a memory pool). Non-transient errors and the last failure propagate."""
    retries = check_retries(retries)
    attempt = 0
    while True:
        try:
            return fn()
        except DotComputeError as exc:
            tag(exc, acc_id)
            if attempt >= retries or not is_transient(exc):
                raise
            attempt += 1
            log.debug("retrying %s on %s (attempt %d of %d) after a transient %s: %s", what, acc_id or "?",
                      attempt, retries, type(exc).__name__, exc)
            trace.note("retry", what=what, accelerator=acc_id, attempt=attempt, error=type(exc).__name__)
            if on_retry is not None:
                on_retry(attempt, exc)
            time.sleep(min(0.5, backoff_s * (2 ** (attempt - 1))))


def check_retries(retries: Any) -> int:
    """``retries`` as a non-negative int, or a TypeError/ValueError naming the parameter."""
    # numpy integers count as ints (as for every other count in the API); bools and floats do not
    if isinstance(retries, (bool, np.bool_)) or not isinstance(retries, (int, np.integer)):
        raise TypeError(f"retries must be a non-negative int, not {type(retries).__name__} ({retries!r})")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    return int(retries)


@dataclass
class BreakerState:
    """One device's breaker: ``state`` is "closed" (work flows), "open" (refused until ``open_until``,
    a ``time.monotonic()`` value) or "half-open" (one trial allowed)."""

    accelerator: str
    state: str = "closed"
    failures: int = 0
    open_until: float = 0.0
    opened: int = 0  # how many times it has opened


class CircuitBreakers:
    """Per-device circuit breakers: ``threshold`` consecutive device failures open a device's breaker
    for ``cooldown_s``; then one trial is let through (half-open): success closes it, failure
    reopens it."""

    def __init__(self, threshold: int = 3, cooldown_s: float = 30.0) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, BreakerState] = {}
        self.threshold = 3
        self.cooldown_s = 30.0
        self.configure(threshold, cooldown_s)  # the same checks as later changes

    def configure(self, threshold: int | None = None, cooldown_s: float | None = None) -> None:
        """Changes the thresholds (for every device)."""
        if threshold is not None:
            if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
                raise ValueError(f"threshold must be an int >= 1, got {threshold!r}")
            self.threshold = threshold
        if cooldown_s is not None:
            # NaN compares False with everything: a NaN cool-down never ended (the breaker never half-opened)
            if isinstance(cooldown_s, bool) or not isinstance(cooldown_s, (int, float)) \
                    or not math.isfinite(cooldown_s) or cooldown_s < 0:
                raise ValueError(f"cooldown_s must be a finite number of seconds >= 0, got {cooldown_s!r}")
            self.cooldown_s = float(cooldown_s)

    def _get(self, acc_id: str) -> BreakerState:
        state = self._states.get(acc_id)
        if state is None:
            state = self._states.setdefault(acc_id, BreakerState(acc_id))
        return state

    def allows(self, acc_id: str) -> bool:
        """Whether work may go to ``acc_id`` now (an open breaker past its cool-down turns half-open)."""
        with self._lock:
            s = self._get(acc_id)
            if s.state == "open" and time.monotonic() >= s.open_until:
                s.state = "half-open"
                self._changed(s)
            return s.state != "open"

    def success(self, acc_id: str) -> None:
        with self._lock:
            s = self._get(acc_id)
            s.failures = 0
            if s.state != "closed":
                s.state = "closed"
                self._changed(s)

    def failure(self, acc_id: str, exc: BaseException) -> None:
        """Counts a device failure (mistakes in the call are not the device's fault: not counted)."""
        if not is_device_failure(exc):
            return
        with self._lock:
            s = self._get(acc_id)
            s.failures += 1
            if s.state == "half-open" or (s.state == "closed" and s.failures >= self.threshold):
                s.state = "open"
                s.opened += 1
                s.open_until = time.monotonic() + self.cooldown_s
                self._changed(s, exc)

    def reset(self, acc_id: str | None = None) -> None:
        """Closes one device's breaker (or all) and forgets its failures."""
        with self._lock:
            if acc_id is None:
                self._states.clear()
            else:
                self._states.pop(acc_id, None)

    def states(self) -> dict[str, BreakerState]:
        """A copy of every device's breaker state."""
        with self._lock:
            return {k: BreakerState(**vars(v)) for k, v in self._states.items()}

    def _changed(self, s: BreakerState, exc: BaseException | None = None) -> None:
        why = f" after {s.failures} failures ({type(exc).__name__}: {exc})" if exc is not None else ""
        level = logging.WARNING if s.state == "open" else logging.INFO
        log.log(level, "circuit breaker of %s is now %s%s", s.accelerator, s.state, why)
        trace.note("breaker", accelerator=s.accelerator, state=s.state, failures=s.failures)
        publish(self._states)


def state_dir() -> Path | None:
    """Where running processes publish their breaker states for ``dotcompute info`` (None: the kernel
    cache is in memory only, so nothing is published)."""
    folder = orchestrate_dir()
    return None if folder is None else folder / "breakers"


def publish(states: dict[str, BreakerState]) -> None:
    """Writes this process's breaker states (on every change, which is rare) to
    ``<cache>/orchestrate/breakers/<pid>.json``, so ``dotcompute info`` can show them during a run.
    Best effort: a read-only cache folder only loses the display."""
    now_wall, now_mono = time.time(), time.monotonic()
    doc = {"pid": os.getpid(), "argv": sys.argv[:3], "written": now_wall,
           "breakers": {k: {"state": v.state, "failures": v.failures, "opened": v.opened,
                            "open_until": now_wall + (v.open_until - now_mono) if v.state == "open" else None}
                        for k, v in states.items()}}
    try:
        folder = state_dir()
        if folder is None:
            return
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".breakers-", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        os.replace(tmp, folder / f"{os.getpid()}.json")
        if not _published:
            _published.append(True)
            atexit.register(_unpublish)
    except OSError as e:
        log.debug("could not publish the circuit-breaker states: %s", e)


_published: list[bool] = []


def _unpublish() -> None:
    try:
        folder = state_dir()
        if folder is not None:
            (folder / f"{os.getpid()}.json").unlink(missing_ok=True)
    except (OSError, ImportError):
        pass


def published(problems: list[str] | None = None) -> list[dict[str, Any]]:
    """The breaker states published by processes still running (stale files are removed). A file
    that is not a well-formed state document (hand-edited, truncated, a FIFO, huge) is skipped and
    described in ``problems`` when a list is given: ``dotcompute info`` reports it and goes on."""
    out = []
    try:
        folder = state_dir()
        files = [] if folder is None else sorted(folder.glob("*.json"))
    except OSError:
        return []
    for f in files:
        try:
            doc = _check_published(read_json(f, _MAX_PUBLISHED_BYTES))
        except FileNotFoundError:
            continue  # its process ended between the listing and the read
        except (OSError, ValueError) as e:
            if problems is not None:
                problems.append(f"circuit-breaker state file {f} is not usable (ignored): {e}")
            continue
        if not _alive(doc["pid"]):
            f.unlink(missing_ok=True)
            continue
        out.append(doc)
    return out


# one process's breakers: a few hundred bytes per device
_MAX_PUBLISHED_BYTES = 1 << 20
_STATES = ("closed", "open", "half-open")


def _check_published(doc: Any) -> dict[str, Any]:
    """``doc`` if it has the shape ``publish`` writes (what ``dotcompute info`` reads), else ValueError."""
    def count(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if not isinstance(doc, dict) or not count(doc.get("pid")) or not isinstance(doc.get("breakers"), dict):
        raise ValueError("not a breaker state document (needs an int 'pid' and a 'breakers' object)")
    for acc, b in doc["breakers"].items():
        until = b.get("open_until") if isinstance(b, dict) else None
        if not (isinstance(b, dict) and b.get("state") in _STATES and count(b.get("failures"))
                and count(b.get("opened")) and (until is None or (isinstance(until, (int, float))
                                                                  and not isinstance(until, bool)
                                                                  and math.isfinite(until)))):
            raise ValueError(f"malformed state of {acc!r}: {b!r:.80}")
    return doc


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


#: the process's breakers (``dc.orchestrate.breakers``)
breakers = CircuitBreakers()


class CircuitOpenError(BackendUnavailableError):
    """Work was refused because the device's circuit breaker is open (transient: it closes again)."""

    transient = True


__all__ = ["BreakerState", "CircuitBreakers", "CircuitOpenError", "breakers", "check_retries", "is_device_failure",
           "is_transient", "publish", "published", "run_with_retries", "state_dir", "tag"]
