"""cuFFT (complex FFTs on CUDA devices), loaded with ctypes at run time from NVIDIA's wheel
(``pip install dotcompute[cuda-libs]``: nvidia-cufft-cu12) or a CUDA toolkit.

Never required: without it, with ``DOTCOMPUTE_OPS_DISABLE=cufft``, and always on simulated devices
(no native handles there), FFTs on CUDA run the portable kernels. Plans (cufftPlanMany over the
last 1 or 2 axes, batched) are kept per (context, lengths, batch, type), at most ``MAX_PLANS``;
cuFFT does not scale, so numpy's normalisation is a kernel launch after the transform. A transform
leases its plan (ops/vendor.py): an evicted plan is destroyed only after the stream its transforms
went to has finished them, and never while another thread is between cufftSetStream and the exec.
"""

from __future__ import annotations

import ctypes
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer
from . import native
from .vendor import PlanCache, VendorLibrary

SONAMES = ["libcufft.so.11", "libcufft.so.10", "libcufft.so"]
MAX_PLANS = 32
_C2C, _Z2Z = 0x29, 0x69  # cufftType
_FORWARD, _INVERSE = -1, 1

class CuFFTError(RuntimeError):
    """A cuFFT call returned an error status."""


def candidates() -> list[str]:
    """The files and sonames tried, in order."""
    return native.nvidia_wheel_candidates("cufft", SONAMES)


def _declare(lib: ctypes.CDLL) -> dict[str, Any]:
    i, vp = ctypes.c_int, ctypes.c_void_p
    ip = ctypes.POINTER(ctypes.c_int)
    return {"plan_many": native.fn(lib, "cufftPlanMany", i, ip, i, ip, ip, i, i, ip, i, i, i, i),
            "set_stream": native.fn(lib, "cufftSetStream", i, i, vp),
            "C2C": native.fn(lib, "cufftExecC2C", i, i, vp, vp, i),
            "Z2Z": native.fn(lib, "cufftExecZ2Z", i, i, vp, vp, i),
            "destroy": native.fn(lib, "cufftDestroy", i, i)}


_lib = VendorLibrary("cufft", candidates, _declare)
# per (context, lengths, batch, precision); read by fft.py's table release
_plans = PlanCache(MAX_PLANS, lambda plan: _lib["destroy"](plan))


def library() -> ctypes.CDLL | None:
    """The loaded cuFFT, or None (not installed, or disabled)."""
    return _lib.load()


def identity() -> str:
    """The loaded library's file (path, size, modification time): the self-check's verdicts are per file."""
    return _lib.identity()


def applies(acc: Accelerator, dtype: np.dtype, lengths: tuple[int, ...]) -> bool:
    """Whether cuFFT can transform complex ``dtype`` rows of ``lengths`` (1-D or 2-D) on ``acc``."""
    return (acc.backend == "cuda" and np.dtype(dtype) in (np.complex64, np.complex128)
            and 1 <= len(lengths) <= 2 and all(n >= 1 for n in lengths)
            and native.context(acc) is not None and library() is not None)


def _plan(acc: Accelerator, lengths: tuple[int, ...], batch: int, double: bool) -> AbstractContextManager[int]:
    """The plan, leased for a ``with`` block that enqueues on the default stream."""
    def make() -> int:
        handle = ctypes.c_int()
        dims = (ctypes.c_int * len(lengths))(*lengths)  # cuFFT takes C order: the last length varies fastest
        total = int(np.prod(lengths))
        status = _lib["plan_many"](ctypes.byref(handle), len(lengths), dims, None, 1, total, None, 1, total,
                                   _Z2Z if double else _C2C, batch)
        if status != 0:
            raise CuFFTError(f"cufftPlanMany({lengths}, batch {batch}) on {acc.id} failed with status {status}")
        return handle.value

    return _plans.lease((native.context(acc), lengths, batch, double), make, native.stream_object(acc))


def transform(x: Buffer, lengths: tuple[int, ...], inverse: bool) -> Buffer:
    """A new buffer: the unscaled DFT of every C-contiguous block of ``lengths`` (the last 1 or 2
    axes) of ``x``; ``inverse``: the +i exponent. Enqueued on the default stream, out of place."""
    library()
    acc = x.accelerator
    native.make_current(acc)
    total = int(np.prod(lengths))
    out = acc.empty(x.shape, x.dtype)
    run = _lib["Z2Z" if x.dtype == np.complex128 else "C2C"]
    with _plan(acc, lengths, x.size // total, x.dtype == np.complex128) as plan:
        status = _lib["set_stream"](plan, ctypes.c_void_p(native.stream(acc)))
        if status != 0:
            raise CuFFTError(f"cufftSetStream on {acc.id} failed with status {status}")
        status = run(plan, ctypes.c_void_p(native.read(x)), ctypes.c_void_p(native.read(out)),
                     _INVERSE if inverse else _FORWARD)
    if status != 0:
        raise CuFFTError(f"cuFFT transform of {lengths} on {acc.id} failed with status {status}")
    native.written(out)
    return out


def release() -> None:
    """Destroys every cached plan."""
    _plans.release()


__all__ = ["MAX_PLANS", "SONAMES", "CuFFTError", "applies", "candidates", "identity", "library", "release",
           "transform"]
