"""cuBLAS (matmul on CUDA devices), loaded with ctypes at run time from NVIDIA's wheel
(``pip install dotcompute[cuda-libs]``: nvidia-cublas-cu12) or a CUDA toolkit.

Never required: without it, with ``DOTCOMPUTE_OPS_DISABLE=cublas``, and always on simulated devices
(DOTCOMPUTE_CUDA_SIM: their addresses are not CUDA's, so the plugin gives no native handles), matmul
on CUDA runs the portable tiled kernel. The GEMM is enqueued on the accelerator's default stream
(ops/native.py) in the plugin's context, in order with dotcompute's launches. cuBLAS is column-major:
a row-major ``C = A @ B`` is computed as ``C^T = B^T @ A^T``, which is the same memory.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer
from . import native
from .vendor import VendorLibrary

SONAMES = ["libcublas.so.12", "libcublas.so.11", "libcublas.so"]
_OP_N = 0  # CUBLAS_OP_N

_lock = threading.Lock()
_handles: dict[int, int] = {}  # CUcontext -> cublasHandle_t


class CuBLASError(RuntimeError):
    """A cuBLAS call returned an error status."""


def candidates() -> list[str]:
    """The files and sonames tried, in order."""
    return native.nvidia_wheel_candidates("cublas", SONAMES)


def _declare(lib: ctypes.CDLL) -> dict[str, Any]:
    vp, i, ll = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
    functions = {"create": native.fn(lib, "cublasCreate_v2", i, ctypes.POINTER(vp)),
                 "set_stream": native.fn(lib, "cublasSetStream_v2", i, vp, vp)}
    for name in ("Sgemm", "Dgemm"):
        functions[name] = native.fn(lib, f"cublas{name}StridedBatched", i, vp, i, i, i, i, i, vp, vp, i, ll,
                                    vp, i, ll, vp, vp, i, ll, i)
    return functions


_lib = VendorLibrary("cublas", candidates, _declare)


def library() -> ctypes.CDLL | None:
    """The loaded cuBLAS, or None (not installed, or disabled)."""
    return _lib.load()


def identity() -> str:
    """The loaded library's file (path, size, modification time): the self-check's verdicts are per file."""
    return _lib.identity()


def applies(acc: Accelerator, dtype: np.dtype) -> bool:
    """Whether cuBLAS can run a float32/float64 matmul on ``acc`` (a real CUDA device, native handles)."""
    return (acc.backend == "cuda" and np.dtype(dtype) in (np.float32, np.float64)
            and native.context(acc) is not None and library() is not None)


def _handle(acc: Accelerator) -> int:
    ctx = native.context(acc)
    assert ctx is not None
    with _lock:
        h = _handles.get(ctx)
        if h is None:
            out = ctypes.c_void_p()
            status = _lib["create"](ctypes.byref(out))
            if status != 0:
                raise CuBLASError(f"cublasCreate on {acc.id} failed with status {status}")
            h = _handles[ctx] = int(out.value or 0)
    return h


def gemm(a: Buffer, b: Buffer, c: Buffer, batch: int, m: int, n: int, k: int, stride_a: int, stride_b: int) -> None:
    """``c[i] = a[i] @ b[i]`` for ``batch`` row-major (m, k) @ (k, n) products, enqueued; strides in
    elements (0: one matrix for the whole batch)."""
    library()
    acc = c.accelerator
    native.make_current(acc)
    h = _handle(acc)
    status = _lib["set_stream"](ctypes.c_void_p(h), ctypes.c_void_p(native.stream(acc)))
    if status != 0:
        raise CuBLASError(f"cublasSetStream on {acc.id} failed with status {status}")
    real = ctypes.c_float if c.dtype == np.float32 else ctypes.c_double
    one, zero = real(1.0), real(0.0)
    f = _lib["Sgemm" if c.dtype == np.float32 else "Dgemm"]
    # column-major view: C^T (n x m) = B^T (n x k) @ A^T (k x m)
    status = f(ctypes.c_void_p(h), _OP_N, _OP_N, n, m, k, ctypes.byref(one),
               ctypes.c_void_p(native.read(b)), n, stride_b, ctypes.c_void_p(native.read(a)), k, stride_a,
               ctypes.byref(zero), ctypes.c_void_p(native.read(c)), n, m * n, batch)
    if status != 0:
        raise CuBLASError(f"cuBLAS gemm ({m}x{k} @ {k}x{n}, batch {batch}) on {acc.id} failed with status {status}")
    native.written(c)


__all__ = ["SONAMES", "CuBLASError", "applies", "candidates", "gemm", "identity", "library"]
