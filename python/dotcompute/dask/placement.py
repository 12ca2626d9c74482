"""Which accelerator of this process runs a block.

A process pinned to one device (``pin_devices``) uses it; a single-threaded ``distributed`` worker
uses ``dc.accelerator("auto")``. Otherwise (the threaded scheduler, a worker with several threads,
or an explicit list of devices) blocks are spread over the candidate devices (``dc.devices()`` by
default) in proportion to their measured throughput: each
block goes where it is expected to *finish* first, counting the work already running there. A
device nobody has measured yet gets two blocks first (the first-chunk measurements); the
orchestration history, when it has times for this kernel, seeds the estimates instead. In a single
thread this always picks the fastest device; with the threaded scheduler (several blocks at once)
the blocks split between the devices by speed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import runtime
from ..lang.types import BufferType, scalar_type
from ..orchestrate.history import history, history_key
from ..orchestrate.precompile import precompile

_ALPHA = 0.5  # weight of a new measurement in the running throughput estimate


@dataclass
class DeviceStats:
    chunks: int = 0
    elements: int = 0
    throughput: float | None = None  # elements per second
    provisional: bool = True  # only the first launch measured (it may include the compile)
    busy: float = 0.0  # estimated seconds of work now running here
    running: int = 0


class Spreader:
    """Per-process, per-kernel device statistics and the choice rule."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats: dict[tuple[str, str], DeviceStats] = {}

    def stats(self, kernel_key: str, acc_id: str) -> DeviceStats:
        key = (kernel_key, acc_id)
        s = self._stats.get(key)
        if s is None:
            s = self._stats[key] = DeviceStats()
        return s

    def choose(self, kernel_key: str, accs: Sequence[Any], work: int, seeds: dict[str, float]) -> tuple[Any, float]:
        """The device for ``work`` elements, and the seconds it is expected to take there."""
        with self._lock:
            stats = [self.stats(kernel_key, a.id) for a in accs]
            for a, s in zip(accs, stats, strict=True):
                if s.throughput is None and a.id in seeds:
                    s.throughput, s.provisional = seeds[a.id], False
            for a, s in zip(accs, stats, strict=True):
                # measure a device twice before trusting it: a first launch can carry one-off costs
                # (a driver's lazy set-up) that would keep it from ever getting another block
                if (s.throughput is None or s.provisional) and s.running == 0:
                    s.running += 1
                    return a, 0.0
            best, best_finish, best_cost = None, float("inf"), 0.0
            for a, s in zip(accs, stats, strict=True):
                if s.throughput is None:
                    continue  # its first block is still running
                cost = work / s.throughput
                if s.busy + cost < best_finish:
                    best, best_finish, best_cost = (a, s), s.busy + cost, cost
            if best is None:  # every device is running its first block: the least loaded
                a, s = min(zip(accs, stats, strict=True), key=lambda p: p[1].running)
                s.running += 1
                return a, 0.0
            a, s = best
            s.busy += best_cost
            s.running += 1
            return a, best_cost

    def done(self, kernel_key: str, acc_id: str, work: int, expected: float, seconds: float | None) -> None:
        with self._lock:
            s = self.stats(kernel_key, acc_id)
            s.running -= 1
            s.busy = max(0.0, s.busy - expected)
            if seconds is None:
                return
            s.chunks += 1
            s.elements += work
            rate = work / max(seconds, 1e-9)
            if s.throughput is None or s.provisional:
                s.throughput = rate
                s.provisional = s.chunks < 2
            else:
                s.throughput = (1 - _ALPHA) * s.throughput + _ALPHA * rate

    def snapshot(self, kernel_key: str | None = None, name: str | None = None) -> dict[str, dict[str, Any]]:
        with self._lock:
            out: dict[str, dict[str, Any]] = {}
            for (k, acc_id), s in self._stats.items():
                if kernel_key is not None and k != kernel_key:
                    continue
                if name is not None and k.rpartition("@")[0] != name:
                    continue
                d = out.setdefault(acc_id, {"chunks": 0, "elements": 0, "throughput": None})
                d["chunks"] += s.chunks
                d["elements"] += s.elements
                d["throughput"] = s.throughput
            return out


spreader = Spreader()
_pinned: dict[str, Any] = {"device": None}


def pin(spec: str | None) -> str | None:
    """Pins this process to one accelerator (``None`` unpins); returns its id."""
    if spec is None:
        _pinned["device"] = None
        return None
    acc = runtime.accelerator(spec)
    _pinned["device"] = acc
    return acc.id


def pinned() -> Any:
    return _pinned["device"]


def check_spec(spec: str) -> str:
    """A spec that no process could resolve (empty, a backend nobody has heard of, a malformed index)
    raises the runtime's ``AcceleratorSpecError`` here, when the graph is built, instead of in every
    task on every worker. Well-formed specs are resolved on the workers, which may have devices (an
    index, a GPU) this client lacks."""
    text = spec.strip().lower()
    if text in ("auto", "best", "gpu"):
        return spec
    backend, colon, index = text.partition(":")
    known = backend in runtime.KNOWN_BACKENDS or any(b.name == backend for b in runtime.backends())
    if not known or (colon and not (index.isascii() and index.isdigit())):
        runtime.accelerator(spec)  # raises, with the runtime's own message and the devices here
    return spec


def kernel_key(kernel: Any) -> str:
    return f"{getattr(kernel, 'name', '?')}@{id(kernel):x}"


def candidates(accelerator: Any) -> list[Any]:
    """The devices a block may run on, from ``map_blocks(accelerator=...)``."""
    if accelerator is None:
        acc = pinned()
        if acc is not None:
            return [acc]
        if _single_threaded_worker():
            return [runtime.accelerator("auto")]  # one block at a time: nothing to spread
        return list(runtime.devices())
    if isinstance(accelerator, (list, tuple)):
        return [runtime.accelerator(a) for a in accelerator]
    return [accelerator]  # one spec: dc.launch resolves it (also "best", "gpu" and the like)


def _single_threaded_worker() -> bool:
    """Whether this is a ``distributed`` worker that runs one task at a time."""
    try:
        from distributed import get_worker

        return get_worker().state.nthreads == 1
    except (ImportError, ValueError, AttributeError):
        return False


def run_placed(kernel: Any, accelerator: Any, work: int, launch: Any, gsize: tuple[int, ...],
               args: Sequence[Any]) -> Any:
    """Runs ``launch(acc)`` on the chosen device, timing it for the estimates and the history."""
    accs = candidates(accelerator)
    backend = getattr(kernel, "backend", None)  # a RawKernel runs only on its own backend's devices
    if backend is not None and not hasattr(kernel, "pyfunc") and not isinstance(accs[0], str):
        accs = [a for a in accs if a.backend == backend] or [runtime.accelerator(backend)]
    key = kernel_key(kernel)
    if len(accs) == 1:
        return _run_counted(key, accs[0], work, launch)
    hkey = history_key(kernel, gsize, tuple(args))
    seeds = {}
    for acc_id, st in history.entry(hkey).items():
        if st.get("ms"):
            seeds[acc_id] = work / (st["ms"] / 1e3)
    acc, expected = spreader.choose(key, accs, work, seeds)
    if spreader.stats(key, acc.id).chunks == 0:
        _compile(kernel, acc, args)  # the first measurement should time the launch, not the compiler
    t0 = time.perf_counter()
    seconds = None
    try:
        result = launch(acc)
        seconds = time.perf_counter() - t0
    finally:
        spreader.done(key, acc.id, work, expected, seconds)
    return result


def _run_counted(key: str, acc: Any, work: int, launch: Any) -> Any:
    """One candidate device: nothing to choose, but the block is counted and timed, so that
    ``spread_stats`` reports what ran where on a pinned or single-threaded worker too (it was empty
    there). A spec the orchestrator resolves per kernel ("best") is launched as given, uncounted."""
    if isinstance(acc, str):
        if acc.strip().lower() == "best":
            return launch(acc)
        acc = runtime.accelerator(acc)
    with spreader._lock:
        spreader.stats(key, acc.id).running += 1
    t0 = time.perf_counter()
    seconds = None
    try:
        result = launch(acc)
        seconds = time.perf_counter() - t0
    finally:
        spreader.done(key, acc.id, work, 0.0, seconds)
    return result


def _compile(kernel: Any, acc: Any, args: Sequence[Any]) -> None:
    try:
        if hasattr(kernel, "pyfunc"):
            sig = [BufferType(scalar_type(a.dtype), a.ndim) if hasattr(a, "shape") and hasattr(a, "dtype")
                   and getattr(a, "ndim", 0) else a for a in args]
            precompile(kernel, [acc], signatures=[sig])
        else:
            kernel.compile(acc)
    except Exception:  # noqa: BLE001 -- the launch that follows reports the problem with its context
        pass


def spread_stats(kernel: Any = None) -> dict[str, dict[str, Any]]:
    """Per device: blocks run, elements processed and the throughput estimate (elements/s) in *this*
    process, for ``kernel`` or for all kernels. On a cluster, ask the workers:
    ``client.run(dcd.spread_stats)`` or ``client.run(dcd.spread_stats, kernel)`` (there the kernel is
    matched by name)."""
    if kernel is None:
        return spreader.snapshot()
    exact = spreader.snapshot(kernel_key(kernel))
    if exact:
        return exact
    # ``client.run(dcd.spread_stats, kernel)`` sends its own copy of the kernel, not the object the tasks
    # used (on a cluster the scheduler rebuilds graphs, so the workers get a re-pickled copy): match by name
    return spreader.snapshot(name=getattr(kernel, "name", "?"))
