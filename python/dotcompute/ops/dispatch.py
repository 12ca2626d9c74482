"""Which implementation runs one array operation: the vendor fast path, the portable kernel, or the host.

Per call, from the buffer's accelerator and dtype:

* ``"vendor"``: a library that works on the buffer's memory where it is: numpy/SciPy (OpenBLAS,
  pocketfft) on CPU buffers, which are host memory, so nothing is copied.
* ``"portable"``: the operation's kernel-language implementation (ops/kernels_*.py); it runs on every
  backend, including ones added later.
* ``"lanes"`` / ``"threads"``: refinements of the vendor path for large full reductions of
  host-memory buffers (ops/reduce.py): the lane-blocked kernel of reduce_kernels.py on the CPU
  backend's threads, or numpy on slices of the array in a pool of Python threads (numpy releases
  the GIL), combined on the host. Chosen with ``auto`` above a measured size; ``prefer("lanes")``
  or ``prefer("threads")`` forces them at any size, ``prefer("vendor")`` keeps plain numpy.
* ``"host"``: a round trip through numpy: for dtypes the kernel language cannot compute with yet
  on a device without a vendor path, and, on OpenCL devices that are the host's own CPU, for the
  operations in ``HOST_FASTER_ON_CPU_DEVICES`` (the copies cost less than the portable kernel
  loses there). Never on GPUs for kernel dtypes.

``prefer("portable")`` forces the portable kernels in a block (tests and benchmarks use it so the
kernels are really exercised on the CPU too). Every choice is a note in an open ``dc.profile()``
(kind ``"operation"``), is passed to the functions in ``listeners``, and is logged at DEBUG level.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from ..dtypes import KERNEL_DTYPES
from ..runtime import Accelerator, trace

PATHS = ("auto", "vendor", "portable", "lanes", "threads")

_log = logging.getLogger("dotcompute.ops")


class _State(threading.local):
    """The calling thread's ``prefer`` path and whether the work is dotcompute's own (``internal``).
    Defaults on the class: a thread that never set them reads them without getattr's caught
    AttributeError (~1 us, on every operation call)."""

    path = "auto"
    quiet = False


_state = _State()

#: Called as ``fn(operation, accelerator_id, path)`` after each choice.
listeners: list[Callable[[str, str, str], None]] = []


@contextmanager
def prefer(path: str) -> Iterator[None]:
    """Within the block, operations use ``path``: ``"portable"``, ``"vendor"`` or ``"auto"`` (the default).

    ``"vendor"`` still falls back to the portable kernel where no vendor library applies;
    ``"lanes"`` and ``"threads"`` (the fast full reductions of host-memory buffers) fall back to
    ``"auto"``'s choice where they do not apply.
    """
    if path not in PATHS:
        raise ValueError(f"prefer: path must be one of {PATHS}, got {path!r}")
    old = _state.path
    _state.path = path
    try:
        yield
    finally:
        _state.path = old


def preferred() -> str:
    return _state.path


@contextmanager
def internal(path: str) -> Iterator[None]:
    """``prefer(path)`` for work dotcompute does for itself (a vendor library's self-check): its
    choices are not profile notes, log lines or listener calls, which describe the user's calls."""
    old = _state.quiet
    _state.quiet = True
    try:
        with prefer(path):
            yield
    finally:
        _state.quiet = old


#: The dtypes the portable kernels are written and tested for; as the kernel language grows
#: (small ints, float16, complex), each joins here once the operations are tested with it.
PORTABLE_DTYPES = frozenset(np.dtype(t) for t in (np.bool_, np.int32, np.int64, np.uint32, np.float32, np.float64))
#: both: what kernel_dtype asks, one set lookup (a tuple's scan compares dtypes one by one, ~1 us)
_KERNEL_PORTABLE = PORTABLE_DTYPES & frozenset(KERNEL_DTYPES)


def kernel_dtype(dtype: np.dtype) -> bool:
    """Whether the portable kernels compute with ``dtype`` (the kernel language has it, and the
    operations are tested with it)."""
    return (dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)) in _KERNEL_PORTABLE


#: Operations whose portable kernels are far slower than numpy on a host copy when the device is
#: itself the host's CPU (an OpenCL CPU device such as PoCL): measured here for 4M-key sorts
#: (1-2 s vs ~30 ms with the copies), 1024² matmul (2-10 vs 40+ GFLOP/s) and 2^20 FFTs (75 vs ~15 ms).
HOST_FASTER_ON_CPU_DEVICES = frozenset({"sort", "argsort", "sort_by_key", "matmul", "fft.fft", "fft.ifft",
                                        "fft.rfft", "fft.irfft", "fft.fft2", "fft.ifft2"})


def device_vendor(operation: str, acc: Accelerator, applicable: bool) -> bool | None:
    """For a vendor library on device memory (CLBlast, clFFT, cuBLAS, cuFFT): True to offer it to
    ``choose``, None to leave the default. Offered wherever it applies, except on CPU-type devices
    (PoCL) for the operations of HOST_FASTER_ON_CPU_DEVICES, where numpy on a host copy measured
    faster still (matmul 1024²: CLBlast ~15 GFLOP/s, numpy ~45); ``prefer("vendor")`` takes it there too."""
    if not applicable:
        return None
    if acc.type == "cpu" and operation in HOST_FASTER_ON_CPU_DEVICES and preferred() != "vendor":
        return None
    return True


def vendor_failed(operation: str, acc: Accelerator, library: str, exc: Exception, *dtypes: np.dtype) -> str:
    """A vendor library call failed before it enqueued anything (an error status): logs a warning
    and chooses again without vendor libraries; the second choice is a second profile note."""
    _log.warning("%s on %s: %s failed (%s); taking the next path", operation, acc.id, library, exc)
    return choose(operation, acc, *dtypes, vendor=False)


_host_cpu: weakref.WeakKeyDictionary[Accelerator, bool] = weakref.WeakKeyDictionary()


def host_cpu(acc: Accelerator) -> bool:
    """Whether ``acc`` is the CPU backend (its memory is host memory, numpy's paths apply), asked
    of the native device once per accelerator: every operation call asks, and each property read
    crosses into the extension (microseconds when the caches are cold after a large kernel)."""
    known = _host_cpu.get(acc)
    if known is None:
        known = _host_cpu[acc] = bool(acc.unified_memory and acc.backend == "cpu")
    return known


def choose(operation: str, acc: Accelerator, *dtypes: np.dtype, vendor: bool | None = None,
           fast: str | None = None, fast_worth: bool = False, library: str | None = None) -> str:
    """The path for one call. ``vendor``: whether a vendor implementation exists for these arguments
    (default: on host-memory accelerators, numpy's). ``fast``: a faster refinement of the vendor
    path that applies to these arguments (``"lanes"``, ``"threads"``), taken when preferred, or by
    ``auto`` when ``fast_worth`` (the size where it measured faster). ``library``: the vendor library
    behind ``vendor`` (``"clblast"``, ``"clfft"``, ...), named in the profile note when it is taken."""
    if vendor is None:
        vendor = host_cpu(acc)
    want = preferred()
    portable_ok = all(kernel_dtype(d) for d in dtypes)
    if want == "portable" and portable_ok:
        path = "portable"
    elif fast is not None and vendor and (want == fast or (want in ("auto", "lanes", "threads") and fast_worth)):
        path = fast
    elif vendor:
        path = "vendor"
    elif want in ("auto", "lanes", "threads") and acc.type == "cpu" and operation in HOST_FASTER_ON_CPU_DEVICES:
        path = "host"  # the device is this CPU: numpy on a copy beats the portable kernel there
    elif portable_ok:
        path = "portable"
    else:
        path = "host"
    lib = library if (path == "vendor" and library) else ("numpy" if path in ("vendor", "threads", "host") else None)
    if _state.quiet:
        return path
    # the log line, profile note and listeners each want acc.id: only read when one of them is there
    if _log.isEnabledFor(logging.DEBUG):
        _log.debug("%s on %s: %s%s", operation, acc.id, path, f" ({lib})" if lib else "")
    if trace.active is not None:
        if lib:  # shows in dc.profile()
            trace.note("operation", operation=operation, accelerator=acc.id, path=path, library=lib)
        else:
            trace.note("operation", operation=operation, accelerator=acc.id, path=path)
    for fn in listeners:
        fn(operation, acc.id, path)
    return path


__all__ = ["HOST_FASTER_ON_CPU_DEVICES", "PATHS", "PORTABLE_DTYPES", "choose", "device_vendor", "host_cpu",
           "internal", "kernel_dtype", "listeners", "prefer", "preferred", "vendor_failed"]
