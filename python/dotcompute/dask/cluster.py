"""Giving each Dask worker its own accelerator."""

from __future__ import annotations

from typing import Any

from ..runtime.registry import gpu_candidates
from .placement import check_spec, pin, pinned


def _accelerators_here() -> list[str]:
    # GPUs and other accelerators first (what dc.accelerator("gpu") may choose); cpu:0 only when there
    # is none. A CPU-type device of another backend (PoCL's OpenCL device) is never handed out: it
    # runs on the same cores as cpu:0, only slower.
    return [d.id for d in gpu_candidates()] or ["cpu:0"]


def _pin_here(rank: int, spec: Any) -> str | None:
    if spec is not None:
        return pin(spec)
    devs = _accelerators_here()
    return pin(devs[rank % len(devs)])


try:  # distributed is what pin_devices works with, but dotcompute.dask itself needs only dask
    from distributed import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover
    _WorkerPlugin = object  # type: ignore[assignment,misc]


class _RepinOnRestart(_WorkerPlugin):  # type: ignore[misc,valid-type]
    """A worker plugin: a worker that starts again under a known name (the nanny restarts a worker that
    died, with a new process and address but the same name) is pinned as before; without it the
    new process would silently run on ``"auto"``."""

    name = "dotcompute-pin-devices"

    def __init__(self, by_name: dict[str, tuple[int, str | None]]) -> None:
        self.by_name = by_name

    def setup(self, worker: Any) -> None:
        entry = self.by_name.get(str(worker.name))
        if entry is not None and pinned() is None:
            _pin_here(*entry)


def pin_devices(client: Any, devices: Any = None) -> dict[str, str]:
    """Pin each worker of ``client`` to one accelerator, the way dask-cuda gives each worker one GPU.

    Workers on the same host are numbered and take that host's accelerators in turn (its GPUs and
    other non-CPU-type devices; ``cpu:0`` where there are none, never a CPU-type OpenCL device).
    ``devices``: a spec or a list of specs to hand out instead, or a ``{worker address: spec}`` dict
    (a malformed spec, or a worker the dict leaves out, raises before any worker is pinned). Returns
    ``{worker address: accelerator id}``. A pinned worker runs every ``dotcompute.dask`` block there
    (unless a call names ``accelerator=``).
    """
    if isinstance(devices, str):
        devices = [devices]  # one spec for every worker (list("cpu") would hand out 'c', 'p', 'u')
    if isinstance(devices, dict):
        specs = list(devices.values())
    elif devices is not None:
        specs = list(devices)
        if not specs:
            raise ValueError("pin_devices: devices= is empty")
    else:
        specs = []
    for spec in specs:
        # a malformed spec fails here, before any worker is pinned (not half-way through the workers)
        if not isinstance(spec, str) and not hasattr(spec, "id"):
            raise TypeError(f"pin_devices: devices= holds {spec!r}; give specs such as 'cuda:0' or dc.Accelerators")
        if isinstance(spec, str):
            check_spec(spec)
    info = client.scheduler_info()
    workers = sorted(info.get("workers", {}))
    if not workers:
        raise ValueError("pin_devices: the client has no workers")
    missing = [w for w in workers if isinstance(devices, dict) and devices.get(w) is None]
    if missing:
        raise ValueError(f"pin_devices: devices= names no accelerator for worker(s) {', '.join(missing)}")
    by_host: dict[str, list[str]] = {}
    for w in workers:
        by_host.setdefault(info["workers"][w].get("host", w), []).append(w)
    out: dict[str, str] = {}
    by_name: dict[str, tuple[int, str | None]] = {}
    for host_workers in by_host.values():
        for rank, w in enumerate(host_workers):
            if isinstance(devices, dict):
                spec = devices[w]
            elif devices is not None:
                spec = specs[rank % len(specs)]
            else:
                spec = None
            spec = getattr(spec, "id", spec)  # a dc.Accelerator travels as its id
            result = client.run(_pin_here, rank, spec, workers=[w])
            out[w] = result[w]
            by_name[str(info["workers"][w].get("name", w))] = (rank, spec)
    client.register_plugin(_RepinOnRestart(by_name), name=_RepinOnRestart.name)
    return out


def pinned_device() -> str | None:
    """The id of the accelerator this process is pinned to (None: not pinned). On a cluster:
    ``client.run(dcd.pinned_device)``."""
    acc = pinned()
    return None if acc is None else acc.id
