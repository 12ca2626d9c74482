"""Choosing the device for ``accelerator="best"`` and ``"gpu"`` from measured history.

Per history key (kernel, argument dtypes, size class): every candidate device is explored until
it has ``EXPLORE`` measured launches (the first launch of a kernel on a device in a process is not
measured: it includes compiling); then the device with the lowest running mean is exploited, and
every ``REEXPLORE_EVERY``-th launch of the key re-measures another candidate in turn, so a device
that became faster is noticed. Failed launches count against a device.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ..errors import BackendUnavailableError
from ..runtime import Accelerator, devices
from ..runtime.registry import gpu_candidates
from .resilience import breakers

EXPLORE = 3
REEXPLORE_EVERY = 50
MAX_FAILURES = 2  # a device that failed this often for a key (and never succeeded) is skipped

_counters: dict[str, itertools.count] = {}
_warmed: set[tuple[str, str]] = set()


def candidates(spec: str, exclude: Sequence[str] = ()) -> list[Accelerator]:
    """The devices ``spec`` may use now (breakers closed). "best": every device. "gpu": the devices
    ``dc.accelerator("gpu")`` chooses among (GPUs, then other non-CPU device types; never a CPU-type
    device such as cpu:0 or PoCL's OpenCL device)."""
    found = devices() if spec == "best" else gpu_candidates()
    if not found:
        raise BackendUnavailableError("accelerator='gpu': no GPU was found on this machine (CPU-type devices, "
                                      "such as PoCL's OpenCL device, are not GPUs; see dc.devices(); use "
                                      "'best' or 'auto' to include them)", reason="no GPU found")
    return [d for d in found if d.id not in exclude and breakers.allows(d.id)]


def choose(key: str, cands: list[Accelerator], stats: dict[str, dict[str, Any]]) -> tuple[Accelerator, str]:
    """(device, reason) for the next launch of ``key`` among ``cands`` (non-empty)."""
    usable = [d for d in cands if not _given_up(stats.get(d.id))]
    if not usable:
        return cands[0], "every candidate failed before; trying the first again"
    for d in usable:
        s = stats.get(d.id)
        n = s["n"] if s else 0
        if n < EXPLORE:
            return d, f"exploring {d.id} ({n} of {EXPLORE} measurements)"
    count = next(_counters.setdefault(key, itertools.count(1)))
    measured = sorted(usable, key=lambda d: stats[d.id]["ms"])
    best = measured[0]
    if len(measured) > 1 and count % REEXPLORE_EVERY == 0:
        other = measured[1 + (count // REEXPLORE_EVERY) % (len(measured) - 1)]
        return other, f"re-exploring {other.id} (launch {count} of this key)"
    times = ", ".join(f"{d.id} {stats[d.id]['ms']:.3f} ms" for d in measured)
    return best, f"fastest measured ({times})"


def _given_up(s: dict[str, Any] | None) -> bool:
    return s is not None and s["n"] == 0 and s["fail"] >= MAX_FAILURES


def first_use(key: str, acc_id: str) -> bool:
    """True the first time (in this process) ``key`` runs on ``acc_id``: that launch compiles, so
    its time is not a measurement of the kernel."""
    mark = (key, acc_id)
    if mark in _warmed:
        return False
    _warmed.add(mark)
    return True


__all__ = ["EXPLORE", "MAX_FAILURES", "REEXPLORE_EVERY", "candidates", "choose", "first_use"]
