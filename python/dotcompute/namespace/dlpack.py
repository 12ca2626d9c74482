"""``dc.from_dlpack``: Buffers from any DLPack producer (numpy, PyTorch, JAX, CuPy, array_api_strict,
another library's OpenCL memory, ...), with the ``device=`` and ``copy=`` keywords of the Array API
2024.12 (docs/array-api.md, "DLPack").

Zero copy where the device matches: a kDLCPU producer imported onto cpu:0, a kDLCUDA producer onto
the cuda device of its index, a kDLOpenCL producer (a ``cl_mem`` of our context) onto the opencl
device of its index, a kDLMetal producer (an ``MTLBuffer`` of our plugin's) onto the metal device.
The producer's capsule is consumed by the native module (python/src/dlpack.cpp): the Buffer
borrows the memory (``Buffer::borrow``) and holds the import, whose destructor calls the
producer's deleter once, when the last Buffer or view over the memory is gone. Writes through the
Buffer are the producer's writes.

A copy is made when the memory cannot be borrowed: another device, strides that are not C order,
an element that is not aligned, or a producer that marked its memory read-only (DLPack 1.0's flag;
Buffers have no read-only state, so handing one out would let the producer's data be written).
``copy=None`` then copies, ``copy=False`` raises (a ``BufferError`` that is also a ``ValueError``:
the standard's ValueError for "a copy would be needed", and BufferError as DLPack consumers raise).
``copy=True`` always copies.

The export side (``Buffer.__dlpack__`` / ``__dlpack_device__``) is the runtime's (runtime/buffer.py,
runtime/cuda_interop.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer
from ..runtime.native import native
from .datatypes import astype
from .devices import resolve, to_device

__all__ = ["from_dlpack"]

KDL_CPU, KDL_CUDA, KDL_OPENCL, KDL_METAL = 1, 2, 4, 8
_BACKEND_OF = {KDL_CPU: "cpu", KDL_CUDA: "cuda", KDL_OPENCL: "opencl", KDL_METAL: "metal"}
# backends whose DLPack data pointer is an opaque handle of the whole allocation (byte_offset: where
# the tensor starts in it), not an address
_HANDLES = ("opencl", "metal")
# DLPack's type codes (kDLInt, kDLUInt, kDLFloat, kDLComplex, kDLBool) as numpy kinds
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


class CopyNeededError(BufferError, ValueError):
    """``copy=False`` where only a copy can give the data (the standard's ValueError; a BufferError too)."""


def from_dlpack(x: Any, /, *, device: Accelerator | str | None = None, copy: bool | None = None) -> Buffer:
    """A Buffer with the data of ``x``, an object with ``__dlpack__``, on ``device``.

    ``copy=None`` shares the producer's memory where the device matches and the memory can be
    borrowed (see the module's docstring), else copies; ``copy=False`` never copies (``BufferError``,
    also a ``ValueError``, when it would have to); ``copy=True`` always copies. A Buffer is returned
    as it is when it is on ``device`` already and no copy is asked.
    """
    if copy not in (None, True, False):
        raise TypeError(f"dc.from_dlpack: copy must be None, True or False, got {copy!r}")
    if isinstance(x, Buffer):
        target = x.accelerator if device is None else resolve(device, "dc.from_dlpack")
        if target is x.accelerator:
            return astype(x, x.dtype, copy=True) if copy else x
        if copy is False:
            raise CopyNeededError(f"dc.from_dlpack: the buffer is on {x.accelerator.id}, device= asks for "
                                  f"{target.id}, and copy=False forbids the copy that moving it needs")
        return to_device(x, target)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"dc.from_dlpack: {type(x).__name__} does not export DLPack (it has no __dlpack__)")
    target = resolve(device, "dc.from_dlpack")
    where = _producer_device(x)
    if copy is not True and where is not None and _same_device(where, target):
        imported = _import(x, where, target)
        shared, reason = _borrow(imported, target)
        if shared is not None:
            return shared
        if copy is False:
            raise CopyNeededError(f"dc.from_dlpack: copy=False, but the {type(x).__name__}'s memory cannot be "
                                  f"shared: {reason}; pass copy=None or copy=True")
        made = _copy_of(imported, target)
        if made is not None:
            return made
        del imported  # the producer's deleter runs now; the host route below asks it again
    elif copy is False:
        raise CopyNeededError(f"dc.from_dlpack: copy=False, but the {type(x).__name__} is on DLPack device "
                              f"{_name(where)} and device= is {target.id}: only a copy can move it; "
                              "pass copy=None or copy=True")
    return _through_host(x, where, target)


# -- the producer ---------------------------------------------------------------------------------
def _producer_device(x: Any) -> tuple[int, int] | None:
    try:
        kind, index = x.__dlpack_device__()
    except Exception:  # noqa: BLE001 -- a producer without a usable device: only the host route
        return None
    return int(kind), int(index)


def _name(where: tuple[int, int] | None) -> str:
    if where is None:
        return "unknown"
    backend = _BACKEND_OF.get(where[0])
    return f"{where} ({backend}:{where[1]})" if backend else str(where)


def _same_device(where: tuple[int, int], target: Accelerator) -> bool:
    backend = _BACKEND_OF.get(where[0])
    if backend != target.backend:
        return False
    return backend == "cpu" or where[1] == target.index


def _stream_for(target: Accelerator) -> int | None:
    """The ``stream=`` a CUDA producer orders its work before: our default stream's CUstream."""
    if target.backend != "cuda":
        return None
    from ..runtime.cuda_interop import cuda_extension

    handle = cuda_extension().stream_native(target.default_stream)
    return handle if handle else 1  # 1: the legacy default stream (0 is not allowed)


def _capsule(x: Any, where: tuple[int, int], target: Accelerator) -> Any:
    """``x.__dlpack__`` asked for its own device, DLPack 1.0 first; older producers take fewer keywords."""
    stream = _stream_for(target)
    attempts = ({"stream": stream, "max_version": (1, 0), "dl_device": where, "copy": False},
                {"stream": stream}, {})
    for kwargs in attempts:
        try:
            return x.__dlpack__(**kwargs)
        except TypeError as exc:
            if "keyword" not in str(exc) and "argument" not in str(exc):
                raise
    raise TypeError(f"dc.from_dlpack: {type(x).__name__}.__dlpack__ takes none of the standard's calls")


def _import(x: Any, where: tuple[int, int], target: Accelerator) -> Any:
    try:
        capsule = _capsule(x, where, target)
    except BufferError as exc:
        raise BufferError(f"dc.from_dlpack: the {type(x).__name__} (DLPack device {_name(where)}) refused the "
                          f"export: {exc}") from None
    return native().dlpack_import(capsule)


def _dtype(imported: Any) -> np.dtype:
    kind = _KINDS.get(imported.code)
    if kind is None or imported.lanes != 1 or imported.bits % 8:
        raise TypeError(f"dc.from_dlpack: DLPack type (code {imported.code}, {imported.bits} bits, "
                        f"{imported.lanes} lanes) is not an Array API dtype")
    dt = np.dtype(f"{kind}{imported.bits // 8}") if kind != "b" else np.dtype(bool)
    if kind == "b" and imported.bits != 8:
        raise TypeError(f"dc.from_dlpack: a {imported.bits}-bit bool is not an Array API dtype")
    return dt


def _c_contiguous(shape: list[int], strides: list[int] | None) -> bool:
    if strides is None or 0 in shape:
        return True
    expected = 1
    for extent, stride in zip(reversed(shape), reversed(strides), strict=True):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


# -- sharing --------------------------------------------------------------------------------------
def _borrow(imported: Any, target: Accelerator) -> tuple[Buffer | None, str]:
    """(a Buffer over the imported memory, "") or (None, why it cannot be shared)."""
    dt = _dtype(imported)
    shape = list(imported.shape)
    if imported.read_only:
        return None, "the producer marked it read-only (a Buffer could write it)"
    if not _c_contiguous(shape, imported.strides):
        return None, f"its strides {tuple(imported.strides)} (in elements) are not C order"
    if 0 in shape or imported.data == 0:
        return None, "it is empty"
    if target.backend in _HANDLES:
        # a cl_mem or MTLBuffer: the offset makes a view of it (DLPack's convention for opaque handles)
        if imported.byte_offset % dt.itemsize:
            return None, f"its byte_offset {imported.byte_offset} is not a multiple of {dt.itemsize}"
        native_buf = imported.borrow(target._native, _allocation(imported, target), imported.byte_offset, shape, dt)
    else:
        address = imported.data + imported.byte_offset
        if address % dt.itemsize:
            return None, f"its address is not aligned to {dt.itemsize} bytes"
        native_buf = imported.borrow(target._native, address, 0, shape, dt)
    return Buffer._wrap(native_buf, target), ""


def _copy_of(imported: Any, target: Accelerator) -> Buffer | None:
    """A copy of memory that cannot be shared, made from the import itself where it can be read in
    place (host memory; contiguous device memory: a device copy); None: the host route."""
    dt = _dtype(imported)
    shape = tuple(imported.shape)
    if 0 in shape:
        return target.asarray(np.empty(shape, dt))
    if target.backend == "cpu":
        return target.asarray(np.array(_HostWindow(imported, dt), copy=True))
    if not _c_contiguous(list(shape), imported.strides):
        return None
    # read-only device memory: borrowed only for the device copy's read, never handed out
    handles = target.backend in _HANDLES
    address = _allocation(imported, target) if handles else imported.data + imported.byte_offset
    offset = imported.byte_offset if handles else 0
    if offset % dt.itemsize or (offset == 0 and address % dt.itemsize):
        return None
    source = Buffer._wrap(imported.borrow(target._native, address, offset, list(shape), dt), target)
    out = astype(source, dt, copy=True)
    out._native  # noqa: B018 -- the copy kernel runs now, while the producer's memory is held
    return out


def _allocation(imported: Any, target: Accelerator) -> int:
    """The device handle (dc_devptr) of the allocation an opaque DLPack handle names: the cl_mem
    itself on OpenCL; on Metal the plugin's address of the MTLBuffer (native_handle's reverse)."""
    if target.backend != "metal":
        return int(imported.data)
    return int(native().dlpack_buffer_address(target._native, imported.data))


class _HostWindow:
    """Host memory of an import as numpy sees it (``__array_interface__``); it holds the import, so
    an array made from it keeps the producer's memory alive."""

    def __init__(self, imported: Any, dtype: np.dtype) -> None:
        self._imported = imported
        strides = imported.strides
        self.__array_interface__ = {
            "version": 3, "shape": tuple(imported.shape), "typestr": dtype.str,
            "data": (imported.data + imported.byte_offset, bool(imported.read_only)),
            "strides": None if strides is None else tuple(int(s) * dtype.itemsize for s in strides),
        }


# -- the host route -------------------------------------------------------------------------------
def _through_host(x: Any, where: tuple[int, int] | None, target: Accelerator) -> Buffer:
    """The producer's data read on the host (numpy's DLPack reader, asking for the CPU: a GPU producer
    copies to the host itself), uploaded once to ``target``."""
    try:
        host = np.from_dlpack(x, device="cpu")
    except BufferError as exc:
        raise BufferError(f"dc.from_dlpack: the {type(x).__name__} (DLPack device {_name(where)}) cannot be read "
                          f"on the host: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(f"dc.from_dlpack: cannot import the {type(x).__name__}: {exc}") from None
    if host.dtype.kind not in "biufc":
        raise TypeError(f"dc.from_dlpack: dtype {host.dtype} is not an Array API dtype")
    return target.asarray(np.ascontiguousarray(host))
