"""clFFT (complex FFTs on OpenCL devices), loaded with ctypes at run time when the system has it.

Debian/Ubuntu: ``apt install libclfft2``. Never required: without it, or with
``DOTCOMPUTE_OPS_DISABLE=clfft``, FFTs on OpenCL run the portable kernels (or numpy on a host copy
on CPU-type devices). clFFT works on interleaved complex64/complex128 buffers as they are (no
split into planes), out of place, on the accelerator's default command queue (ops/native.py).
Plans are made per (device, lengths, batch, precision, scales), baked once and kept, up to
``MAX_PLANS`` of them (the oldest is destroyed beyond that); ``release()`` destroys them all. A
transform leases its plan (ops/vendor.py): an evicted plan is destroyed only after the queue its
transforms went to has finished them, and never while another thread is enqueueing with it.
"""

from __future__ import annotations

import atexit
import ctypes
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer
from . import native
from .vendor import PlanCache, VendorLibrary

NAMES = ["libclFFT.so.2", "libclFFT.so", "libclFFT.dylib", "clFFT.dll"]
RADICES = (2, 3, 5, 7)  # lengths clFFT 2.x plans: products of these
MAX_PLANS = 32

# clFFT's enumerations (clFFT.h)
_SINGLE, _DOUBLE = 1, 2
_INTERLEAVED = 1
_OUT_OF_PLACE = 2
_FORWARD, _BACKWARD = -1, 1


class CLFFTError(RuntimeError):
    """A clFFT call returned an error status."""


class _SetupData(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("patch", ctypes.c_uint),
                ("debugFlags", ctypes.c_ulong)]


def _check(status: int, what: str) -> None:
    if status != 0:
        raise CLFFTError(f"clFFT {what} failed with status {status}")


def _declare(lib: ctypes.CDLL) -> dict[str, Any] | None:
    """clFFT's functions, after its one-time setup (None if the setup fails: unusable)."""
    u, sz, vp, pl = ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t
    f = {
        "version": native.fn(lib, "clfftGetVersion", ctypes.c_int, *[ctypes.POINTER(u)] * 3),
        "setup": native.fn(lib, "clfftSetup", ctypes.c_int, ctypes.POINTER(_SetupData)),
        "teardown": native.fn(lib, "clfftTeardown", ctypes.c_int),
        "create": native.fn(lib, "clfftCreateDefaultPlan", ctypes.c_int, ctypes.POINTER(pl), vp, ctypes.c_int,
                            ctypes.POINTER(sz)),
        "precision": native.fn(lib, "clfftSetPlanPrecision", ctypes.c_int, pl, ctypes.c_int),
        "layout": native.fn(lib, "clfftSetLayout", ctypes.c_int, pl, ctypes.c_int, ctypes.c_int),
        "location": native.fn(lib, "clfftSetResultLocation", ctypes.c_int, pl, ctypes.c_int),
        "batch": native.fn(lib, "clfftSetPlanBatchSize", ctypes.c_int, pl, sz),
        "distance": native.fn(lib, "clfftSetPlanDistance", ctypes.c_int, pl, sz, sz),
        "scale": native.fn(lib, "clfftSetPlanScale", ctypes.c_int, pl, ctypes.c_int, ctypes.c_float),
        "bake": native.fn(lib, "clfftBakePlan", ctypes.c_int, pl, u, ctypes.POINTER(vp), vp, vp),
        "enqueue": native.fn(lib, "clfftEnqueueTransform", ctypes.c_int, pl, ctypes.c_int, u, ctypes.POINTER(vp),
                             u, vp, vp, ctypes.POINTER(vp), ctypes.POINTER(vp), vp),
        "destroy": native.fn(lib, "clfftDestroyPlan", ctypes.c_int, ctypes.POINTER(pl)),
    }
    # clfftSetup wants the version of the library it sets up
    major, minor, patch = u(), u(), u()
    if f["version"](ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch)) != 0:
        return None
    data = _SetupData(major.value, minor.value, patch.value, 0)
    if f["setup"](ctypes.byref(data)) != 0:
        return None
    atexit.register(release, teardown=True)
    return f


_lib = VendorLibrary("clfft", lambda: NAMES, _declare)
# per (context, queue, lengths, batch, precision, scales); read by fft.py's table release
_plans = PlanCache(MAX_PLANS, lambda plan: _lib["destroy"](ctypes.byref(ctypes.c_size_t(plan))))


def library() -> ctypes.CDLL | None:
    """The loaded and set-up clFFT, or None (not installed, disabled, or its setup failed)."""
    return _lib.load()


def plannable(n: int) -> bool:
    """Whether clFFT plans length ``n`` (a product of RADICES)."""
    if n < 1:
        return False
    for r in RADICES:
        while n % r == 0:
            n //= r
    return n == 1


def identity() -> str:
    """The loaded library's file (path, size, modification time): the self-check's verdicts are per file."""
    return _lib.identity()


def applies(acc: Accelerator, dtype: np.dtype, lengths: tuple[int, ...]) -> bool:
    """Whether clFFT can transform complex ``dtype`` rows of ``lengths`` (1-D or 2-D) on ``acc``."""
    return (acc.backend == "opencl" and np.dtype(dtype) in (np.complex64, np.complex128)
            and 1 <= len(lengths) <= 2 and all(plannable(n) for n in lengths)
            and library() is not None and native.context(acc) is not None)


def _plan(acc: Accelerator, lengths: tuple[int, ...], batch: int, double: bool,
          scales: tuple[float, float]) -> AbstractContextManager[int]:
    """The plan, leased for a ``with`` block that enqueues on the default queue."""
    key = (native.context(acc), native.stream(acc), lengths, batch, double, scales)

    def make() -> int:
        handle = ctypes.c_size_t()
        # clFFT's lengths run fastest-first: a C-order (rows, cols) array is (cols, rows) to it
        dims = (ctypes.c_size_t * len(lengths))(*reversed(lengths))
        _check(_lib["create"](ctypes.byref(handle), ctypes.c_void_p(key[0]), len(lengths), dims), "create plan")
        try:
            _check(_lib["precision"](handle, _DOUBLE if double else _SINGLE), "set precision")
            _check(_lib["layout"](handle, _INTERLEAVED, _INTERLEAVED), "set layout")
            _check(_lib["location"](handle, _OUT_OF_PLACE), "set result location")
            _check(_lib["batch"](handle, batch), "set batch size")
            total = int(np.prod(lengths))
            _check(_lib["distance"](handle, total, total), "set distance")
            _check(_lib["scale"](handle, _FORWARD, scales[0]), "set forward scale")
            _check(_lib["scale"](handle, _BACKWARD, scales[1]), "set backward scale")
            queue = ctypes.c_void_p(key[1])
            _check(_lib["bake"](handle, 1, ctypes.byref(queue), None, None), "bake plan")
        except CLFFTError:
            _lib["destroy"](ctypes.byref(handle))
            raise
        return handle.value

    return _plans.lease(key, make, native.stream_object(acc))


def transform(x: Buffer, lengths: tuple[int, ...], inverse: bool, scale: float) -> Buffer:
    """A new buffer: the DFT of every C-contiguous block of ``lengths`` (the last 1 or 2 axes) of
    ``x``, multiplied by ``scale``; ``inverse``: the +i exponent. Enqueued, out of place."""
    library()
    acc = x.accelerator
    total = int(np.prod(lengths))
    batch = x.size // total
    out = acc.empty(x.shape, x.dtype)
    # both directions' scales are part of the plan: the unused one is left at clFFT's default
    scales = (1.0, float(scale)) if inverse else (float(scale), 1.0 / total)
    with _plan(acc, lengths, batch, x.dtype == np.complex128, scales) as plan:
        queue = ctypes.c_void_p(native.stream(acc))
        src, dst = ctypes.c_void_p(native.read(x)), ctypes.c_void_p(native.read(out))
        _check(_lib["enqueue"](ctypes.c_size_t(plan), _BACKWARD if inverse else _FORWARD, 1, ctypes.byref(queue), 0,
                                 None, None, ctypes.byref(src), ctypes.byref(dst), None), "enqueue transform")
    native.written(out)
    return out


def release(teardown: bool = False) -> None:
    """Destroys every cached plan (and, at exit, tears clFFT down)."""
    _plans.release()
    if teardown and _lib.load() is not None:
        _lib["teardown"]()
        _lib.close()


__all__ = ["MAX_PLANS", "NAMES", "RADICES", "CLFFTError", "applies", "identity", "library", "plannable", "release",
           "transform"]
