"""CLBlast (matmul on OpenCL devices), loaded with ctypes at run time when the system has it.

Debian/Ubuntu: ``apt install libclblast1``. Never required: without it, or with
``DOTCOMPUTE_OPS_DISABLE=clblast``, matmul on OpenCL runs the portable kernel (or numpy on a host
copy on CPU-type devices). The routines are enqueued on the accelerator's default command queue
(ops/native.py), in order with dotcompute's own work; CLBlast compiles its kernels for a device
on first use (seconds on PoCL) and keeps them for the process.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer
from . import native
from .vendor import VendorLibrary

NAMES = ["libclblast.so.1", "libclblast.so", "libclblast.dylib", "clblast.dll"]
_ROW_MAJOR, _NO_TRANS = 101, 111  # CLBlastLayoutRowMajor, CLBlastTransposeNo


class CLBlastError(RuntimeError):
    """A CLBlast routine returned an error status."""


def _declare(lib: ctypes.CDLL) -> dict[str, Any]:
    sz, vp = ctypes.c_size_t, ctypes.c_void_p
    return {name: native.fn(lib, f"CLBlast{name}StridedBatched", ctypes.c_int, ctypes.c_int, ctypes.c_int,
                            ctypes.c_int, sz, sz, sz, real, vp, sz, sz, sz, vp, sz, sz, sz, real, vp, sz, sz, sz, sz,
                            ctypes.POINTER(vp), ctypes.POINTER(vp))
            for name, real in (("Sgemm", ctypes.c_float), ("Dgemm", ctypes.c_double))}


_lib = VendorLibrary("clblast", lambda: NAMES, _declare)


def library() -> ctypes.CDLL | None:
    """The loaded CLBlast, or None (not installed, or disabled)."""
    return _lib.load()


def identity() -> str:
    """The loaded library's file (path, size, modification time): the self-check's verdicts are per file."""
    return _lib.identity()


def applies(acc: Accelerator, dtype: np.dtype) -> bool:
    """Whether CLBlast can run a float32/float64 matmul on ``acc`` (an OpenCL device with native handles)."""
    return (acc.backend == "opencl" and np.dtype(dtype) in (np.float32, np.float64)
            and library() is not None and native.context(acc) is not None)


def gemm(a: Buffer, b: Buffer, c: Buffer, batch: int, m: int, n: int, k: int, stride_a: int, stride_b: int) -> None:
    """``c[i] = a[i] @ b[i]`` for each of ``batch`` row-major (m, k) @ (k, n) products, enqueued.

    ``stride_a`` / ``stride_b``: elements between the batch's matrices (0: one matrix for all).
    """
    library()
    f = _lib["Sgemm" if c.dtype == np.float32 else "Dgemm"]
    acc = c.accelerator
    queue = ctypes.c_void_p(native.stream(acc))
    status = f(_ROW_MAJOR, _NO_TRANS, _NO_TRANS, m, n, k, 1.0, native.read(a), 0, k, stride_a,
               native.read(b), 0, n, stride_b, 0.0, native.read(c), 0, n, m * n, batch,
               ctypes.byref(queue), None)
    if status != 0:
        raise CLBlastError(f"CLBlast gemm ({m}x{k} @ {k}x{n}, batch {batch}, {c.dtype}) on {acc.id} failed with "
                           f"status {status}")
    native.written(c)


__all__ = ["NAMES", "CLBlastError", "applies", "gemm", "identity", "library"]
