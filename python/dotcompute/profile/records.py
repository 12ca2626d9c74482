"""What a profile holds: one record per launch, transfer, compile and orchestration decision.

:class:`Recorder` implements the protocol of ``dotcompute.runtime.trace``: the runtime calls it
on every launch, copy and compile while a profile is open. It keeps raw values (event pairs,
``perf_counter_ns`` stamps) and turns them into records once, when the profile closes, so the
cost inside a profile is a few object allocations per launch.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class LaunchRecord:
    """One kernel launch. Times in ms; ``start_ms`` is from the profile's start (host clock)."""

    kernel: str
    accelerator: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    bytes: int
    stream: str
    start_ms: float
    host_ms: float  # time the launch call took on the host (packing, staging, enqueue)
    device_ms: float | None  # between events recorded before and after it on its stream; None if unknown

    @property
    def duration_ms(self) -> float:
        """Device time when known, else host time."""
        return self.device_ms if self.device_ms is not None else self.host_ms


@dataclass
class TransferRecord:
    """One copy between host and device (``direction``: "h2d", "d2h" or "d2d")."""

    direction: str
    bytes: int
    accelerator: str
    start_ms: float
    duration_ms: float


@dataclass
class CompileRecord:
    """One compile through the kernel cache (``cache``: "memory", "disk" or "miss")."""

    entry: str
    accelerator: str
    cache: str
    start_ms: float
    duration_ms: float


@dataclass
class NoteRecord:
    """An orchestration decision: ``kind`` is "choice", "fallback", "retry" or "breaker"."""

    kind: str
    start_ms: float
    attrs: dict[str, Any] = field(default_factory=dict)


# every this many launches, the finished ones give their events back (see Recorder._settle)
_SETTLE_EVERY = 1024


class Recorder:
    """Collects raw launch/transfer/compile/note tuples from the runtime (thread-safe appends)."""

    def __init__(self, t0_ns: int) -> None:
        self.t0_ns = t0_ns
        self._lock = threading.Lock()
        self._launches: list[list[Any]] = []
        self._unsettled = 0  # launches before this index hold no events any more
        self.transfers: list[TransferRecord] = []
        self.compiles: list[CompileRecord] = []
        self.notes: list[NoteRecord] = []
        self._streams: dict[int, str] = {}

    def _ms(self, t_ns: int) -> float:
        return (t_ns - self.t0_ns) / 1e6

    # -- the runtime.trace protocol ------------------------------------------------------------
    def launch(self, name: str, acc: Any, gsize: tuple[int, ...], lsize: tuple[int, ...] | None, nbytes: int,
               stream: Any, t0: int, t1: int, ev0: Any, ev1: Any) -> None:
        # list.append is atomic under the GIL; the stream label is computed here because the
        # stream object may be gone by the time the profile closes
        pending = self._launches
        pending.append([name, acc.id, gsize, lsize, nbytes, self._stream_label(acc, stream), t0, t1, ev0, ev1, None])
        if len(pending) % _SETTLE_EVERY == 0:
            with self._lock:
                start = self._unsettled
                self._settle(pending[start:], wait=False)
                while start < len(pending) and pending[start][8] is None:
                    start += 1  # everything before this index has given its events back
                self._unsettled = start

    def transfer(self, direction: str, nbytes: int, acc: Any, t0: int, t1: int) -> None:
        self.transfers.append(TransferRecord(direction, int(nbytes), acc.id, self._ms(t0), (t1 - t0) / 1e6))

    def compile(self, acc: Any, entry: str, t0: int, t1: int, cache: str) -> None:
        self.compiles.append(CompileRecord(entry, acc.id, cache, self._ms(t0), (t1 - t0) / 1e6))

    def note(self, kind: str, t_ns: int, attrs: dict[str, Any]) -> None:
        self.notes.append(NoteRecord(kind, self._ms(t_ns), dict(attrs)))

    # -- closing ---------------------------------------------------------------------------------
    def _stream_label(self, acc: Any, stream: Any) -> str:
        native = getattr(stream, "_native", None)
        key = id(native)
        label = self._streams.get(key)
        if label is None:
            with self._lock:
                label = self._streams.get(key)
                if label is None:
                    default = bool(getattr(native, "is_default", False))
                    label = f"{acc.id} default stream" if default else f"{acc.id} stream {len(self._streams)}"
                    self._streams[key] = label
        return label

    def _settle(self, entries: list[list[Any]], wait: bool) -> None:
        """Reads the device time of launches whose events are done (all of them when ``wait``) and
        drops their events, so a long profile holds a bounded number of native events."""
        compiles = [(c.start_ms, c.start_ms + c.duration_ms) for c in self.compiles]
        for e in entries:
            ev0, ev1 = e[8], e[9]
            if ev0 is None or ev1 is None:
                continue
            try:
                if not wait and not ev1.query():
                    continue
                device_ms = float(ev0.elapsed(ev1))
            except Exception:  # an event of a device that failed: host time stands in
                device_ms = None
            if device_ms is not None:
                # a first launch compiles between its two events: that time is the compile's, not the kernel's
                start, end = self._ms(e[6]), self._ms(e[7])
                device_ms = max(0.0, device_ms - sum(ce - cs for cs, ce in compiles if cs >= start and ce <= end))
            e[8] = e[9] = None
            e[10] = device_ms

    def launches(self) -> list[LaunchRecord]:
        """The launch records, with device times read from their events (waits for them)."""
        entries = list(self._launches)
        self._settle(entries, wait=True)
        return [LaunchRecord(name, acc_id, tuple(gsize), None if lsize is None else tuple(lsize), nbytes, label,
                             self._ms(t0), (t1 - t0) / 1e6, device_ms)
                for name, acc_id, gsize, lsize, nbytes, label, t0, t1, _, _, device_ms in entries]


__all__ = ["CompileRecord", "LaunchRecord", "NoteRecord", "Recorder", "TransferRecord"]
