"""Which implementation runs one array operation: the vendor fast path, the portable kernel, or the host.

Per call, from the buffer's accelerator and dtype:

* ``"vendor"``: a library that works on the buffer's memory where it is: numpy/SciPy (OpenBLAS,
  pocketfft) on CPU buffers, which are host memory, so nothing is copied.
* ``"portable"``: the operation's kernel-language implementation (ops/kernels_*.py); it runs on every
  backend, including ones added later.
* ``"host"``: a round trip through numpy, only for dtypes the kernel language cannot compute with
  yet on a device without a vendor path (correct, but it copies).

``prefer("portable")`` forces the portable kernels in a block (tests and benchmarks use it so the
kernels are really exercised on the CPU too). Every choice is a note in an open ``dc.profile()``
(kind ``"operation"``), is passed to the functions in ``listeners``, and is logged at DEBUG level.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from ..dtypes import KERNEL_DTYPES
from ..runtime import Accelerator, trace

PATHS = ("auto", "vendor", "portable")

_log = logging.getLogger("dotcompute.ops")
_state = threading.local()

#: Called as ``fn(operation, accelerator_id, path)`` after each choice.
listeners: list[Callable[[str, str, str], None]] = []


@contextmanager
def prefer(path: str) -> Iterator[None]:
    """Within the block, operations use ``path``: ``"portable"``, ``"vendor"`` or ``"auto"`` (the default).

    ``"vendor"`` still falls back to the portable kernel where no vendor library applies.
    """
    if path not in PATHS:
        raise ValueError(f"prefer: path must be one of {PATHS}, got {path!r}")
    old = getattr(_state, "path", "auto")
    _state.path = path
    try:
        yield
    finally:
        _state.path = old


def preferred() -> str:
    return getattr(_state, "path", "auto")


def kernel_dtype(dtype: np.dtype) -> bool:
    """Whether the kernel language computes with ``dtype`` (the portable kernels need it)."""
    return np.dtype(dtype) in KERNEL_DTYPES


def choose(operation: str, acc: Accelerator, *dtypes: np.dtype, vendor: bool | None = None) -> str:
    """The path for one call. ``vendor``: whether a vendor implementation exists for these arguments
    (default: on host-memory accelerators, numpy's)."""
    if vendor is None:
        vendor = acc.unified_memory and acc.backend == "cpu"
    want = preferred()
    portable_ok = all(kernel_dtype(d) for d in dtypes)
    if want == "portable" and portable_ok:
        path = "portable"
    elif vendor:
        path = "vendor"
    elif portable_ok:
        path = "portable"
    else:
        path = "host"
    _log.debug("%s on %s: %s", operation, acc.id, path)
    trace.note("operation", operation=operation, accelerator=acc.id, path=path)  # shows in dc.profile()
    for fn in listeners:
        fn(operation, acc.id, path)
    return path


__all__ = ["PATHS", "choose", "kernel_dtype", "listeners", "prefer", "preferred"]
