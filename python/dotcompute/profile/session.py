"""``dc.profile()``: the context that collects every launch, copy and compile inside it."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..runtime import trace
from . import chrome, gpu_model, otel
from .records import CompileRecord, LaunchRecord, NoteRecord, Recorder, TransferRecord


@dataclass(frozen=True)
class KernelStats:
    """Launch statistics of one kernel on one accelerator (times: device time when known, in ms)."""

    name: str
    accelerator: str
    count: int
    total_ms: float
    mean_ms: float
    p50_ms: float
    p99_ms: float
    bytes: int


class KernelTable(list):
    """``prof.kernels``: a list of :class:`KernelStats`, also indexable by kernel name (when it ran on
    one accelerator) or by ``(name, accelerator id)``."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            found = [k for k in self if k.name == key]
            if len(found) == 1:
                return found[0]
            if not found:
                raise KeyError(f"no launches of kernel {key!r} in this profile")
            accs = ", ".join(k.accelerator for k in found)
            raise KeyError(f"kernel {key!r} ran on several accelerators ({accs}); use prof.kernels[{key!r}, 'cpu:0']")
        if isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key):
            for k in self:
                if (k.name, k.accelerator) == key:
                    return k
            raise KeyError(f"no launches of kernel {key[0]!r} on {key[1]} in this profile")
        return super().__getitem__(key)


class _Tee:
    """Feeds an inner profile and the one it is nested in (both see every record)."""

    def __init__(self, *recorders: Any) -> None:
        self.recorders = recorders

    def launch(self, *a: Any) -> None:
        for r in self.recorders:
            r.launch(*a)

    def transfer(self, *a: Any) -> None:
        for r in self.recorders:
            r.transfer(*a)

    def compile(self, *a: Any) -> None:
        for r in self.recorders:
            r.compile(*a)

    def note(self, *a: Any) -> None:
        for r in self.recorders:
            r.note(*a)


# The recorders of every open profile, in the order they opened. ``trace.active`` is derived from
# this list (one recorder, a _Tee of several, or None) each time a profile opens or closes: profiles
# opened on different threads, or closed in another order than they opened (p1 started, p2 started,
# p1 stopped), then stop recording exactly when they are stopped. Saving and restoring "the
# previous recorder" instead left a stopped profile installed for the rest of the process.
_open_lock = threading.Lock()
_open: list[Recorder] = []


def _reinstall() -> None:
    """Points ``trace.active`` at the open recorders (call with ``_open_lock`` held)."""
    if not _open:
        trace.set_active(None)
    elif len(_open) == 1:
        trace.set_active(_open[0])
    else:
        trace.set_active(_Tee(*_open))


class Profile:
    """``with dc.profile() as prof:`` records; afterwards ``prof.kernels``, ``prof.summary()``,
    ``prof.to_json(path)``, ``prof.to_chrome_trace(path)``, ``prof.plot(path)``.

    ``otel=True`` also emits OpenTelemetry spans and metrics when the profile closes, through the
    globally configured providers (or ``tracer_provider`` / ``meter_provider``).
    """

    def __init__(self, otel: bool = False, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        if not isinstance(otel, bool):
            raise TypeError(f"dc.profile(otel=...) must be True or False, not {otel!r}")
        if otel:
            _otel_require()
        self.otel = otel
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._recorder: Recorder | None = None
        self._open = False
        self._launches: list[LaunchRecord] | None = None
        self.wall_start_ns = 0
        # the CUDA simulator's GPU-model counters at the start, when they are on (gpu_model.py)
        self._gpu_before: list[dict[str, Any]] | None = None
        self._gpu: list[dict[str, Any]] | None = None

    # -- lifetime ----------------------------------------------------------------------------------
    def start(self) -> Profile:
        """Starts recording (what ``with`` does on entry)."""
        if self._open:
            raise RuntimeError("this dc.profile() is already recording")
        self.wall_start_ns = time.time_ns()
        self._recorder = Recorder(trace.now())
        self._launches = None
        self._gpu = None
        self._gpu_before = gpu_model.read_counters() if gpu_model.enabled() else None
        with _open_lock:
            _open.append(self._recorder)
            _reinstall()
        self._open = True
        return self

    def stop(self) -> None:
        """Stops recording, reads the device times of the launches, and emits OpenTelemetry data."""
        if not self._open:
            return
        self._open = False
        assert self._recorder is not None
        with _open_lock:
            if self._recorder in _open:
                _open.remove(self._recorder)
            _reinstall()
        self._launches = self._recorder.launches()  # waits for the launches: their counts are in
        if self._gpu_before is not None:
            self._gpu = gpu_model.difference(gpu_model.read_counters(), self._gpu_before)
        if self.otel:
            otel.export(self._launches, self.transfers, self.compiles, self.wall_start_ns,
                        self._tracer_provider, self._meter_provider)

    def __enter__(self) -> Profile:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- records -----------------------------------------------------------------------------------
    @property
    def launches(self) -> list[LaunchRecord]:
        if self._recorder is None:
            return []
        if self._launches is None or self._open:
            return self._recorder.launches()
        return self._launches

    @property
    def transfers(self) -> list[TransferRecord]:
        return list(self._recorder.transfers) if self._recorder is not None else []

    @property
    def compiles(self) -> list[CompileRecord]:
        return list(self._recorder.compiles) if self._recorder is not None else []

    @property
    def notes(self) -> list[NoteRecord]:
        """Orchestration decisions: device choices, fallbacks, retries, circuit-breaker changes."""
        return list(self._recorder.notes) if self._recorder is not None else []

    @property
    def kernels(self) -> KernelTable:
        """Per (kernel, accelerator), most total time first (also ``prof.kernels["name"]``)."""
        groups: dict[tuple[str, str], list[LaunchRecord]] = {}
        for r in self.launches:
            groups.setdefault((r.kernel, r.accelerator), []).append(r)
        out = []
        for (name, acc), records in groups.items():
            times = np.array([r.duration_ms for r in records], dtype=np.float64)
            out.append(KernelStats(name, acc, len(records), float(times.sum()), float(times.mean()),
                                   float(np.percentile(times, 50)), float(np.percentile(times, 99)),
                                   sum(r.bytes for r in records)))
        return KernelTable(sorted(out, key=lambda k: -k.total_ms))

    @property
    def gpu_counters(self) -> list[gpu_model.KernelCounters]:
        """The CUDA simulator's GPU-model counters of the kernels run inside the profile (empty unless
        ``DOTCOMPUTE_CUDA_SIM=1`` and ``DOTCOMPUTE_CUDA_SIM_COUNTERS=1``): a model of the GPU named by
        ``DOTCOMPUTE_CUDA_SIM_MODEL``, not a measurement (docs/profiling.md)."""
        if self._gpu_before is None:
            return []
        counts = self._gpu if self._gpu is not None and not self._open else \
            gpu_model.difference(gpu_model.read_counters(), self._gpu_before)
        return gpu_model.kernels(counts)

    # -- reports -----------------------------------------------------------------------------------
    def summary(self) -> str:
        """A readable table: kernels, then transfers, compiles and orchestration decisions."""
        lines = [f"{'kernel':<28} {'accelerator':<11} {'count':>7} {'total ms':>10} {'mean ms':>9} "
                 f"{'p50 ms':>9} {'p99 ms':>9} {'MiB':>9}"]
        for k in self.kernels:
            lines.append(f"{k.name[:28]:<28} {k.accelerator:<11} {k.count:>7} {k.total_ms:>10.3f} {k.mean_ms:>9.4f} "
                         f"{k.p50_ms:>9.4f} {k.p99_ms:>9.4f} {k.bytes / 2**20:>9.2f}")
        if len(lines) == 1:
            lines.append("(no launches)")
        moved: dict[tuple[str, str], list[float]] = {}
        for t in self.transfers:
            entry = moved.setdefault((t.accelerator, t.direction), [0, 0, 0.0])
            entry[0] += 1
            entry[1] += t.bytes
            entry[2] += t.duration_ms
        for (acc, direction), (count, nbytes, ms) in sorted(moved.items()):
            lines.append(f"transfers {direction} {acc}: {count} copies, {nbytes / 2**20:.2f} MiB, {ms:.3f} ms")
        caches: dict[str, int] = {}
        compile_ms = 0.0
        for c in self.compiles:
            caches[c.cache] = caches.get(c.cache, 0) + 1
            compile_ms += c.duration_ms
        if caches:
            parts = ", ".join(f"{n} {kind}" for kind, n in sorted(caches.items()))
            lines.append(f"compiles: {len(self.compiles)} ({parts}), {compile_ms:.1f} ms")
        kinds: dict[str, int] = {}
        for n in self.notes:
            kinds[n.kind] = kinds.get(n.kind, 0) + 1
        if kinds:
            lines.append("orchestration: " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())))
        gpu = gpu_model.table(self.gpu_counters)
        if gpu:
            lines.append(gpu)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Everything recorded, as plain data (what ``to_json`` writes)."""
        return {
            "format": "dotcompute-profile", "version": 1, "wall_start_ns": self.wall_start_ns,
            "kernels": [asdict(k) for k in self.kernels],
            "launches": [asdict(r) for r in self.launches],
            "transfers": [asdict(t) for t in self.transfers],
            "compiles": [asdict(c) for c in self.compiles],
            "notes": [{"kind": n.kind, "start_ms": n.start_ms, "attrs": {k: chrome._plain(v) for k, v in
                                                                          n.attrs.items()}} for n in self.notes],
            "gpu_model": [k.as_dict() for k in self.gpu_counters],
        }

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """The profile as JSON text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=1)
        if path is not None:
            _write(path, text)
        return text

    def to_chrome_trace(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """The Chrome trace-event document (opens in Perfetto and chrome://tracing); written to ``path``
        when given."""
        gpu = {k.kernel: k.as_dict() for k in self.gpu_counters}
        doc = {"traceEvents": chrome.trace_events(self.launches, self.transfers, self.compiles, self.notes, gpu),
               "displayTimeUnit": "ms", "otherData": {"producer": "dotcompute"}}
        if path is not None:
            _write(path, json.dumps(doc))
        return doc

    def plot(self, path: str | os.PathLike[str]) -> None:
        """Saves a bar chart of kernel and transfer totals (needs matplotlib)."""
        from .plot import plot

        plot(self.kernels, self.transfers, path)

    def __repr__(self) -> str:
        state = "recording" if self._open else "closed"
        return f"<dc.profile {state}: {len(self.launches)} launches, {len(self.transfers)} transfers>"


def _otel_require() -> None:
    otel.require()


def write_report(path: str | os.PathLike[str], text: str, what: str = "dc.profile: cannot write the profile") -> None:
    """Writes an exported report, turning an OSError into one that names the path and what to fix."""
    _write(path, text, what)


def _write(path: str | os.PathLike[str], text: str, what: str = "dc.profile: cannot write the profile") -> None:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        # "[Errno 2] No such file or directory" does not say whether the file or its folder is
        # missing; the profile is in memory still, so say what to fix and keep the error's type
        # (FileNotFoundError, PermissionError, IsADirectoryError) for callers that catch it.
        target = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(target))
        if e.errno == errno.ENOENT and not os.path.isdir(folder):
            why = f"the folder {folder!r} does not exist (create it first)"
        elif e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            why = f"no permission to write there ({e.strerror})"
        elif e.errno == errno.EISDIR:
            why = "it is a folder; give a file name"
        else:
            why = e.strerror or str(e)
        raise type(e)(e.errno, f"{what} to {target!r}: {why}") from None


def profile(otel: bool = False, tracer_provider: Any = None, meter_provider: Any = None) -> Profile:
    """``with dc.profile() as prof:`` — records every launch, copy and compile inside the block."""
    return Profile(otel=otel, tracer_provider=tracer_provider, meter_provider=meter_provider)


__all__ = ["KernelStats", "KernelTable", "Profile", "profile", "write_report"]
