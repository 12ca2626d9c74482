"""What a run reports: one :class:`StageResult` per stage and the :class:`PipelineRun` around them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..profile import write_report

OK, FAILED, SKIPPED = "ok", "failed", "skipped"


class AcceleratorId(str):
    """Where a stage ran: the accelerator's id (``"cpu:0"``, or ``"host"`` for host steps) as a str that
    also answers ``.id`` and ``.backend`` and compares equal to the ``dc.Accelerator`` itself, so
    ``st.accelerator == "cpu:0"``, ``st.accelerator == acc`` and ``st.accelerator.id`` all read
    naturally."""

    __slots__ = ()

    @property
    def id(self) -> str:
        return str(self)

    @property
    def backend(self) -> str:
        return str(self).split(":", 1)[0]

    def __eq__(self, other: object) -> bool:
        other_id = getattr(other, "id", None)
        if not isinstance(other, str) and isinstance(other_id, str):
            return str(self) == other_id
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


@dataclass
class StageResult:
    """How one stage went.

    ``status``: ``"ok"``, ``"failed"`` or ``"skipped"`` (a dependency failed under ``skip``, or the run
    was aborted before the stage started). ``attempts``: launches or calls made (retries and a
    fallback included). ``accelerator``: the id it finally ran on (``"host"`` for host steps).
    ``elapsed_ms``: device time between the stage's events for device stages that ran on a stream,
    else wall time; ``wall_ms``: host time spent issuing (and, for host steps, running) it;
    ``device_ms``: the event-timed device part (None for host steps). ``start_ms``/``end_ms``: the
    stage on the run's time line (ms from the start of the run), which is what the trace draws.
    ``bytes_moved``: bytes copied between devices or for a fallback.
    """

    name: str
    kind: str
    status: str = SKIPPED
    attempts: int = 0
    error: BaseException | None = None
    accelerator: str = ""
    elapsed_ms: float = 0.0
    wall_ms: float = 0.0
    device_ms: float | None = None
    start_ms: float | None = None
    end_ms: float | None = None
    bytes_moved: int = 0
    fell_back: bool = False
    track: str = ""  # the stream (or host worker) it ran on, for the trace

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "accelerator" and not isinstance(value, AcceleratorId):
            value = AcceleratorId(value)
        object.__setattr__(self, name, value)

    @property
    def retries(self) -> int:
        """Attempts beyond the first."""
        return max(0, self.attempts - 1)

    @property
    def ok(self) -> bool:
        return self.status == OK


class PipelineRun:
    """The result of ``p.run()``: ``ok``, ``elapsed_ms`` (wall time of the whole run) and ``stages``
    (name -> :class:`StageResult`, in the order the stages were added)."""

    def __init__(self, stages: dict[str, StageResult], elapsed_ms: float, error: BaseException | None = None) -> None:
        self.stages = stages
        self.elapsed_ms = elapsed_ms
        self.error = error  # the PipelineError of an aborted run
        self.replayed = False  # the device work ran as one CUDA graph (see cudagraph.py)
        self.graph_ms: float | None = None  # that graph's device time

    @property
    def ok(self) -> bool:
        """Every stage ran and succeeded."""
        return all(s.status == OK for s in self.stages.values())

    @property
    def failed(self) -> list[str]:
        return [n for n, s in self.stages.items() if s.status == FAILED]

    @property
    def skipped(self) -> list[str]:
        return [n for n, s in self.stages.items() if s.status == SKIPPED]

    def summary(self) -> str:
        """A text table: one row per stage with status, where it ran, times, attempts and bytes moved."""
        head = ("stage", "status", "on", "ms", "device ms", "attempts", "bytes", "error")
        rows = [head]
        for s in self.stages.values():
            dev = "" if s.device_ms is None else f"{s.device_ms:.3f}"
            err = "" if s.error is None else f"{type(s.error).__name__}: {s.error}".splitlines()[0][:60]
            rows.append((s.name, s.status + (" (fallback)" if s.fell_back else ""), s.accelerator,
                         f"{s.elapsed_ms:.3f}", dev, str(s.attempts), str(s.bytes_moved), err))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        state = "ok" if self.ok else f"{len(self.failed)} failed, {len(self.skipped)} skipped"
        lines.append(f"total {self.elapsed_ms:.3f} ms wall, {state}")
        return "\n".join(lines)

    def trace_events(self) -> list[dict[str, Any]]:
        """Chrome/Perfetto trace events: one track (thread) per stream or host worker."""
        tracks: dict[str, int] = {}
        events: list[dict[str, Any]] = []
        for s in self.stages.values():
            if s.start_ms is None or s.end_ms is None:
                continue
            tid = tracks.setdefault(s.track or s.accelerator, len(tracks) + 1)
            events.append({"name": s.name, "cat": s.kind, "ph": "X", "pid": 1, "tid": tid,
                           "ts": s.start_ms * 1000.0, "dur": max(0.0, s.end_ms - s.start_ms) * 1000.0,
                           "args": {"status": s.status, "accelerator": s.accelerator, "attempts": s.attempts}})
        for name, tid in tracks.items():
            events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}})
        return events

    def to_chrome_trace(self, path: str | Path) -> Path:
        """Writes the trace (opens in Perfetto or chrome://tracing); returns the path."""
        path = Path(path)
        write_report(path, json.dumps({"traceEvents": self.trace_events(), "displayTimeUnit": "ms"}),
                     "PipelineRun.to_chrome_trace: cannot write the trace")
        return path

    def __repr__(self) -> str:
        state = "ok" if self.ok else f"failed={self.failed} skipped={self.skipped}"
        return f"<dc.PipelineRun {len(self.stages)} stages, {self.elapsed_ms:.3f} ms, {state}>"
