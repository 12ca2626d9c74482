"""The backend's own objects behind Buffers and streams, for vendor libraries called with ctypes.

The plugin ABI's ``native_handle`` (backend_abi.h) gives the cl_command_queue / cl_mem / cl_context
(OpenCL) or CUstream / CUdeviceptr / CUcontext (CUDA) behind dotcompute's objects. A vendor routine
is enqueued on the accelerator's default stream, the one operations and launches use, so it runs
in order with them; its inputs are made current there first and its outputs marked as written
there, exactly as a kernel launch does. Devices whose plugin has no native handles, or refuses
them (the CUDA simulator: its addresses are not CUDA's), get ``None`` and the portable kernels.
"""

from __future__ import annotations

import ctypes
import os
import weakref
from typing import Any

from ..errors import DotComputeError
from ..runtime import Accelerator, Buffer

#: Libraries named here (comma-separated, e.g. ``clblast,clfft``) are never loaded.
DISABLE_ENV = "DOTCOMPUTE_OPS_DISABLE"

_context: weakref.WeakKeyDictionary[Accelerator, int | None] = weakref.WeakKeyDictionary()


def disabled(library: str) -> bool:
    """Whether ``library`` is switched off by DOTCOMPUTE_OPS_DISABLE."""
    names = {n.strip().lower() for n in os.environ.get(DISABLE_ENV, "").split(",")}
    return library.lower() in names or "all" in names


def library_override(library: str) -> str | None:
    """``DOTCOMPUTE_<LIBRARY>_LIBRARY`` (e.g. DOTCOMPUTE_CLFFT_LIBRARY): the one file to load for
    ``library`` instead of the usual sonames and wheels, or None when unset. Read at the library's
    first use in the process."""
    value = os.environ.get(f"DOTCOMPUTE_{library.upper()}_LIBRARY", "").strip()
    return value or None


def context(acc: Accelerator) -> int | None:
    """The device's cl_context / CUcontext, or None where the plugin gives no native handles."""
    if acc in _context:
        return _context[acc]
    try:
        handle: int | None = int(acc._native.native_context())  # noqa: SLF001 -- the runtime's native object
    except (DotComputeError, AttributeError):
        handle = None
    _context[acc] = handle
    return handle


def stream(acc: Accelerator) -> int:
    """The cl_command_queue / CUstream of the accelerator's default stream."""
    return int(acc._native.default_stream.native_handle())  # noqa: SLF001


def stream_object(acc: Accelerator) -> Any:
    """The accelerator's default stream (the native object, with ``synchronize()``): what a leased
    vendor plan waits for before it is destroyed (ops/vendor.py, PlanCache)."""
    return acc._native.default_stream  # noqa: SLF001


def read(buf: Buffer) -> int:
    """The cl_mem / CUdeviceptr of ``buf``, current for work on the default stream."""
    last = buf._native.last_stream  # noqa: SLF001 -- None: the default stream, already in order
    if last is not None:
        last.synchronize()  # another stream may still be writing it
    return int(buf._native.native_handle())  # noqa: SLF001


def written(buf: Buffer) -> None:
    """``buf`` was written by work on the default stream: host copies are stale from now on."""
    acc = buf.accelerator
    buf._native.mark_device_dirty(acc._native.default_stream)  # noqa: SLF001


def load_library(names: list[str]) -> ctypes.CDLL | None:
    """The first of ``names`` that loads (a soname, or a path), or None."""
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def nvidia_wheel_candidates(package: str, sonames: list[str]) -> list[str]:
    """Where NVIDIA's wheels put a library (``nvidia/<package>/lib/<soname>`` in any site folder on
    sys.path, e.g. nvidia-cublas-cu12), then the bare sonames (a CUDA toolkit on the loader path)."""
    found: list[str] = []
    try:
        import nvidia  # the namespace package of NVIDIA's wheels

        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    for root in roots:
        for so in sonames:
            path = os.path.join(root, package, "lib", so)
            if os.path.exists(path):
                found.append(path)
    return found + sonames


_cuda_driver: dict[str, Any] = {}


def make_current(acc: Accelerator) -> None:
    """Makes the CUDA device's context (the plugin's, native_handle) current on this thread, so
    that a runtime-API library (cuBLAS, cuFFT) works in it, on the plugin's streams and memory."""
    ctx = context(acc)
    if ctx is None:
        raise RuntimeError(f"{acc.id} has no native CUDA context")
    if "set" not in _cuda_driver:
        lib = load_library(["libcuda.so.1", "libcuda.so", "nvcuda.dll"])
        if lib is None:
            raise RuntimeError("libcuda.so.1 could not be loaded")
        _cuda_driver["set"] = fn(lib, "cuCtxSetCurrent", ctypes.c_int, ctypes.c_void_p)
    status = _cuda_driver["set"](ctypes.c_void_p(ctx))
    if status != 0:
        raise RuntimeError(f"cuCtxSetCurrent failed with CUresult {status}")


def fn(lib: ctypes.CDLL, name: str, restype: Any, *argtypes: Any) -> Any:
    """``lib.name`` with its C signature declared."""
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


__all__ = ["DISABLE_ENV", "context", "disabled", "fn", "library_override", "load_library", "make_current",
           "nvidia_wheel_candidates", "read", "stream", "stream_object", "written"]
