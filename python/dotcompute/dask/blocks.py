"""The task that runs on a worker: one kernel launch over one block.

Everything here receives and returns numpy arrays (device buffers never leave the process); the
kernel arrives pickled by value and is rebuilt once per process (see ``lang/pickling.py``).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import runtime
from ..errors import BackendUnavailableError
from ..launch import launch
from .outputs import OutputPlan
from .placement import run_placed


def where() -> str:
    """This process, as a worker address when it is a Dask worker."""
    try:
        from distributed import get_worker

        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
        return f"process {os.getpid()} on {socket.gethostname()}"


def _refill(block: np.ndarray, location: Sequence[int], counts: Sequence[int], modes: Sequence[Any],
            depths: Sequence[int]) -> None:
    """Fill the halo of a grown block at the array's edges from its current values again, as Dask's
    boundary handling filled it from the input: after a step, those cells hold what the kernel made of
    them, not the edge values (nearest), the mirror image (reflect) or the constant of the next step."""
    for d, (mode, h) in enumerate(zip(modes, depths, strict=True)):
        if not h or mode in ("periodic", "none"):
            continue  # periodic halos are real neighbours (they evolve correctly); "none" has no halo
        n = block.shape[d]

        def at(lo: int, hi: int, d: int = d) -> tuple[slice, ...]:
            return tuple(slice(lo, hi) if k == d else slice(None) for k in range(block.ndim))

        for lower in (True, False):
            if (location[d] != 0) if lower else (location[d] != counts[d] - 1):
                continue
            halo = at(0, h) if lower else at(n - h, n)
            if mode == "nearest":
                block[halo] = block[at(h, h + 1) if lower else at(n - h - 1, n - h)]
            elif mode == "reflect":
                block[halo] = np.flip(block[at(h, 2 * h) if lower else at(n - 2 * h, n - h)], axis=d)
            else:
                block[halo] = mode


def run_block(kernel: Any, plan: OutputPlan, accelerator: Any, local_size: Any, iterations: int, *args: Any,
              edges: Any = None, block_info: Any = None) -> Any:
    """Launch ``kernel`` over the block(s) in ``args``; returns the output block (a tuple when several).

    ``iterations`` > 1 (a single output shaped and typed like the first array argument): the kernel
    runs that many times, each launch reading the previous one's output in place of the first array,
    on device buffers that stay on the device in between. ``edges`` (map_overlap with iterations:
    the boundary mode and depth per axis): a block at the array's edge has its halo filled again
    between the steps (on the host; interior blocks stay on the device).
    """
    # a 0-d block is a lazy scalar argument (dcd.mean(x), x.max()): the launch takes its value
    inputs = [(a[()] if a.ndim == 0 else np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in args]
    first = next(a for a in inputs if isinstance(a, np.ndarray))
    outs = [np.empty(first.shape, d) for d in plan.dtypes]
    full = plan.assemble(inputs, outs)
    gsize = first.shape if first.ndim else (1,)
    if first.size == 0:
        # An empty block (Dask makes them: ``chunks=((50, 0, 50),)``, slicing, filtering) has an empty
        # output and nothing to compute; dc.launch refuses a zero global size, so no launch at all.
        return outs[0] if len(outs) == 1 else tuple(outs)

    info = (block_info or {}).get(None) or {}
    refill = None
    if edges is not None and info:
        loc, counts = info["chunk-location"], info["num-chunks"]
        if any(m not in ("periodic", "none") and h and (loc[d] == 0 or loc[d] == counts[d] - 1)
               for d, (m, h) in enumerate(zip(*edges, strict=True))):
            refill = (loc, counts, *edges)

    def on(acc: Any) -> None:
        if iterations == 1:
            launch(kernel, gsize, *full, local_size=local_size, accelerator=acc)
            return
        src = next(i for i, a in enumerate(full) if a is first)
        dst = plan.outputs[0]
        if isinstance(acc, str):
            # one spec (accelerator="cpu") reaches here as given; the device-resident loop needs the device
            # itself (a bare AttributeError: 'str' object has no attribute 'asarray' before)
            acc = runtime.accelerator(acc)
        if refill is not None:
            host = list(full)
            cur, nxt = first.copy(), outs[0]
            for _ in range(iterations):
                host[src], host[dst] = cur, nxt
                launch(kernel, gsize, *host, local_size=local_size, accelerator=acc)
                _refill(nxt, *refill)
                cur, nxt = nxt, cur
            if cur is not outs[0]:
                outs[0][...] = cur
            return
        dev = [acc.asarray(a) if isinstance(a, np.ndarray) and i != dst else a for i, a in enumerate(full)]
        cur, nxt = dev[src], acc.empty(first.shape, plan.dtypes[0])
        for _ in range(iterations):
            dev[src], dev[dst] = cur, nxt
            launch(kernel, gsize, *dev, local_size=local_size, accelerator=acc)
            cur, nxt = nxt, cur
        cur.copy_to(outs[0])

    try:
        run_placed(kernel, accelerator, first.size * iterations, on, gsize, full)
    except BackendUnavailableError as e:
        raise BackendUnavailableError(f"{where()}: {e}", reason=e.reason) from e
    return outs[0] if len(outs) == 1 else tuple(outs)


def pick(value: tuple[Any, ...], i: int) -> Any:
    """Output ``i`` of a block that produced several."""
    return value[i]
