"""The Chrome trace-event format (JSON object form), which Perfetto and chrome://tracing open.

Layout: one process (this one); one track (``tid``) per stream for launches, one per accelerator
for its host<->device copies, one for compiles and one for orchestration decisions (instant
events). Times are microseconds from the profile's start.
"""

from __future__ import annotations

import os
from typing import Any

from .records import CompileRecord, LaunchRecord, NoteRecord, TransferRecord


def trace_events(launches: list[LaunchRecord], transfers: list[TransferRecord], compiles: list[CompileRecord],
                 notes: list[NoteRecord], gpu: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every record as a trace event (``ph`` "X" with ``dur``, "i" for notes, "M" for track names).
    ``gpu``: the CUDA simulator's GPU-model counters by kernel name, added to its launches' args."""
    pid = os.getpid()
    tracks: dict[str, int] = {}

    def tid(label: str) -> int:
        if label not in tracks:
            tracks[label] = len(tracks) + 1
        return tracks[label]

    events: list[dict[str, Any]] = []
    for r in launches:
        events.append({"name": r.kernel, "cat": "launch", "ph": "X", "ts": r.start_ms * 1e3,
                       "dur": max(0.0, r.duration_ms) * 1e3, "pid": pid, "tid": tid(r.stream),
                       "args": {"accelerator": r.accelerator, "global_size": list(r.global_size),
                                "local_size": None if r.local_size is None else list(r.local_size),
                                "bytes": r.bytes, "host_ms": r.host_ms, "device_ms": r.device_ms}})
        if gpu and r.kernel in gpu:
            events[-1]["args"]["gpu_model"] = gpu[r.kernel]
    for t in transfers:
        events.append({"name": f"copy {t.direction}", "cat": "transfer", "ph": "X", "ts": t.start_ms * 1e3,
                       "dur": max(0.0, t.duration_ms) * 1e3, "pid": pid, "tid": tid(f"{t.accelerator} copies"),
                       "args": {"bytes": t.bytes, "direction": t.direction, "accelerator": t.accelerator}})
    for c in compiles:
        events.append({"name": f"compile {c.entry}", "cat": "compile", "ph": "X", "ts": c.start_ms * 1e3,
                       "dur": max(0.0, c.duration_ms) * 1e3, "pid": pid, "tid": tid("compile"),
                       "args": {"accelerator": c.accelerator, "cache": c.cache}})
    for n in notes:
        events.append({"name": n.kind, "cat": "orchestrate", "ph": "i", "s": "t", "ts": n.start_ms * 1e3,
                       "pid": pid, "tid": tid("orchestrate"), "args": {k: _plain(v) for k, v in n.attrs.items()}})
    meta = [{"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "dotcompute"}}]
    for label, number in tracks.items():
        meta.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": number, "args": {"name": label}})
    return meta + sorted(events, key=lambda e: e["ts"])


def _plain(value: Any) -> Any:
    """JSON-safe attribute values (ids and numbers stay, anything else becomes its str)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


__all__ = ["trace_events"]
