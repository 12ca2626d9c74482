"""Giving each Dask worker its own accelerator."""

from __future__ import annotations

from typing import Any

from .. import runtime
from .placement import pin, pinned


def _accelerators_here() -> list[str]:
    # GPUs and other accelerators first; the CPU only when there is nothing else
    devs = list(runtime.devices())
    accel = [d.id for d in devs if d.backend != "cpu"]
    return accel or [d.id for d in devs if d.backend == "cpu"][:1]


def _pin_here(rank: int, spec: Any) -> str | None:
    if spec is not None:
        return pin(spec)
    devs = _accelerators_here()
    return pin(devs[rank % len(devs)])


def pin_devices(client: Any, devices: Any = None) -> dict[str, str]:
    """Pin each worker of ``client`` to one accelerator, the way dask-cuda gives each worker one GPU.

    Workers on the same host are numbered and take that host's accelerators in turn (non-CPU
    devices first; ``cpu:0`` where there are none). ``devices``: a list of specs to hand out instead,
    or a ``{worker address: spec}`` dict. Returns ``{worker address: accelerator id}``. A pinned worker
    runs every ``dotcompute.dask`` block there (unless a call names ``accelerator=``).
    """
    info = client.scheduler_info()
    workers = sorted(info.get("workers", {}))
    if not workers:
        raise ValueError("pin_devices: the client has no workers")
    by_host: dict[str, list[str]] = {}
    for w in workers:
        by_host.setdefault(info["workers"][w].get("host", w), []).append(w)
    out: dict[str, str] = {}
    for host_workers in by_host.values():
        for rank, w in enumerate(host_workers):
            if isinstance(devices, dict):
                spec = devices.get(w)
                if spec is None:
                    raise ValueError(f"pin_devices: devices= names no accelerator for worker {w}")
            elif devices is not None:
                if not devices:
                    raise ValueError("pin_devices: devices= is empty")
                spec = list(devices)[rank % len(devices)]
            else:
                spec = None
            result = client.run(_pin_here, rank, spec, workers=[w])
            out[w] = result[w]
    return out


def pinned_device() -> str | None:
    """The id of the accelerator this process is pinned to (None: not pinned). On a cluster:
    ``client.run(dcd.pinned_device)``."""
    acc = pinned()
    return None if acc is None else acc.id
