"""The task that runs on a worker: one kernel launch over one block.

Everything here receives and returns numpy arrays (device buffers never leave the process); the
kernel arrives pickled by value and is rebuilt once per process (see ``lang/pickling.py``).
"""

from __future__ import annotations

import os
import socket
from typing import Any

import numpy as np

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


def run_block(kernel: Any, plan: OutputPlan, accelerator: Any, local_size: Any, iterations: int, *args: Any) -> Any:
    """Launch ``kernel`` over the block(s) in ``args``; returns the output block (a tuple when several).

    ``iterations`` > 1 (a single output shaped and typed like the first array argument): the kernel
    runs that many times, each launch reading the previous one's output in place of the first array,
    on device buffers that stay on the device in between.
    """
    inputs = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args]
    first = next(a for a in inputs if isinstance(a, np.ndarray))
    outs = [np.empty(first.shape, d) for d in plan.dtypes]
    full = plan.assemble(inputs, outs)
    gsize = first.shape if first.ndim else (1,)
    if first.size == 0:
        # An empty block (Dask makes them: ``chunks=((50, 0, 50),)``, slicing, filtering) has an empty
        # output and nothing to compute; dc.launch refuses a zero global size, so no launch at all.
        return outs[0] if len(outs) == 1 else tuple(outs)

    def on(acc: Any) -> None:
        if iterations == 1:
            launch(kernel, gsize, *full, local_size=local_size, accelerator=acc)
            return
        src = next(i for i, a in enumerate(full) if a is first)
        dst = plan.outputs[0]
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
