"""CUDA texture objects for raw kernels: ``TextureObject`` wraps ``cuTexObjectCreate`` over a CUDA
buffer, so that a kernel taking a ``cudaTextureObject_t`` can read it with ``tex1Dfetch``/``tex2D``.

The driver is called with ctypes on the same library the CUDA plugin loaded (libcuda.so.1, or the
CUDA simulator, which implements texture objects over linear and pitch2D memory): see
docs/cuda-simulator.md, "Texture objects".
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from ctypes import POINTER, byref, c_float, c_int, c_size_t, c_uint, c_uint64, c_ulonglong, c_void_p
from typing import TYPE_CHECKING

import numpy as np

from .. import config
from ..errors import DotComputeError
from .native import plugin_dir

if TYPE_CHECKING:
    from .buffer import Buffer

#: CUarray_format of each element dtype (half is not offered: the simulator does not read it)
_FORMATS = {np.dtype(np.uint8): 0x01, np.dtype(np.uint16): 0x02, np.dtype(np.uint32): 0x03,
            np.dtype(np.int8): 0x08, np.dtype(np.int16): 0x09, np.dtype(np.int32): 0x0A,
            np.dtype(np.float32): 0x20}
_ADDRESS_MODES = {"wrap": 0, "clamp": 1, "mirror": 2, "border": 3}
_FILTER_MODES = {"point": 0, "linear": 1}
_READ_MODES = ("element", "normalized_float")
_PITCH_ALIGNMENT = 32  # CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT on current GPUs


class _Linear(ctypes.Structure):
    _fields_ = [("ptr", c_uint64), ("format", c_int), ("channels", c_uint), ("bytes", c_size_t)]


class _Pitch2D(ctypes.Structure):
    _fields_ = [("ptr", c_uint64), ("format", c_int), ("channels", c_uint), ("width", c_size_t),
                ("height", c_size_t), ("pitch", c_size_t)]


class _Res(ctypes.Union):
    _fields_ = [("linear", _Linear), ("pitch2d", _Pitch2D), ("reserved", c_int * 32)]


class _ResourceDesc(ctypes.Structure):  # CUDA_RESOURCE_DESC
    _fields_ = [("type", c_int), ("res", _Res), ("flags", c_uint)]


class _TextureDesc(ctypes.Structure):  # CUDA_TEXTURE_DESC
    _fields_ = [("address", c_int * 3), ("filter", c_int), ("flags", c_uint), ("max_anisotropy", c_uint),
                ("mipmap_filter", c_int), ("mipmap_bias", c_float), ("min_mipmap_clamp", c_float),
                ("max_mipmap_clamp", c_float), ("border", c_float * 4), ("reserved", c_int * 12)]


_driver: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _driver
    if _driver is None:
        path = (str(plugin_dir() / "libdotcompute_cuda_sim.so") if config.cuda_sim()
                else os.environ.get("DOTCOMPUTE_CUDA_DRIVER") or "libcuda.so.1")
        lib = ctypes.CDLL(path)  # the library the plugin opened: the same state
        for name, args in (("cuTexObjectCreate", [POINTER(c_ulonglong), POINTER(_ResourceDesc),
                                                  POINTER(_TextureDesc), c_void_p]),
                           ("cuTexObjectDestroy", [c_ulonglong]),
                           ("cuDeviceGet", [POINTER(c_int), c_int]),
                           ("cuDevicePrimaryCtxRetain", [POINTER(c_void_p), c_int]),
                           ("cuDevicePrimaryCtxRelease_v2", [c_int]),
                           ("cuCtxSetCurrent", [c_void_p])):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, c_int
        _driver = lib
    return _driver


def _modes(value: str | Sequence[str], name: str, table: dict[str, int]) -> list[int]:
    items = [value, value] if isinstance(value, str) else list(value)
    if len(items) != 2 or any(v not in table for v in items):
        raise ValueError(f"TextureObject: {name} must be one of {sorted(table)} or a pair of them (x, y), "
                         f"got {value!r}")
    return [table[v] for v in items]


class TextureObject:
    """A texture object over a CUDA buffer, read by raw kernels with ``tex1Dfetch``/``tex2D``.

    ``buffer``: a contiguous buffer on a CUDA device of uint8/int8/uint16/int16/uint32/int32/float32.
    One dimension (``(n,)``, or ``(n, channels)``) makes a linear-memory texture (``tex1Dfetch``); two
    (``(height, width)``, or ``(height, width, channels)``) a pitch2D texture (``tex2D``), whose row
    bytes must be a multiple of 32 (the GPU's texture pitch alignment). ``channels`` is 1, 2 or 4
    (``float4``, ``uchar4``...). ``address_mode``: "clamp", "wrap", "mirror" or "border" (one, or an
    (x, y) pair; wrap and mirror act only with ``normalized=True``, as on a GPU). ``filter_mode``:
    "point" or "linear" (values read as float only). ``read_mode``: "element"
    (cudaReadModeElementType) or "normalized_float" (8/16-bit integers read as [0, 1] / [-1, 1]).
    ``border_color``: what "border" reads outside the texture.

    Pass ``np.uint64(tex.handle)`` for the kernel's ``cudaTextureObject_t`` parameter. The object keeps
    the buffer alive; ``close()`` (or leaving a ``with`` block) waits for the device's queued work and
    destroys it.
    """

    def __init__(self, buffer: Buffer, *, channels: int = 1, address_mode: str | Sequence[str] = "clamp",
                 filter_mode: str = "point", normalized: bool = False, read_mode: str = "element",
                 border_color: Sequence[float] = (0.0, 0.0, 0.0, 0.0)) -> None:
        acc = getattr(buffer, "accelerator", None)
        if acc is None or acc.backend != "cuda":
            raise ValueError(f"TextureObject: buffer must be a Buffer on a CUDA device, got {buffer!r}")
        dtype = np.dtype(buffer.dtype)
        if dtype not in _FORMATS:
            raise ValueError(f"TextureObject: buffer's dtype {dtype} has no texture format (uint8, int8, uint16, "
                             f"int16, uint32, int32, float32)")
        if channels not in (1, 2, 4):
            raise ValueError(f"TextureObject: channels must be 1, 2 or 4, got {channels!r}")
        shape = tuple(buffer.shape)
        if channels > 1:
            if not shape or shape[-1] != channels:
                raise ValueError(f"TextureObject: with channels={channels} the buffer's last axis must be "
                                 f"{channels}, got shape {shape}")
            shape = shape[:-1]
        if len(shape) not in (1, 2) or 0 in shape:
            raise ValueError(f"TextureObject: buffer must have 1 (linear) or 2 (pitch2D) texel dimensions, "
                             f"got shape {tuple(buffer.shape)}")
        if filter_mode not in _FILTER_MODES:
            raise ValueError(f"TextureObject: filter_mode must be 'point' or 'linear', got {filter_mode!r}")
        if read_mode not in _READ_MODES:
            raise ValueError(f"TextureObject: read_mode must be 'element' or 'normalized_float', got {read_mode!r}")
        integer = dtype.kind in "iu"
        if read_mode == "normalized_float" and (not integer or dtype.itemsize == 4):
            raise ValueError(f"TextureObject: read_mode='normalized_float' needs 8- or 16-bit integers, got {dtype}")
        if filter_mode == "linear" and integer and read_mode == "element":
            raise ValueError("TextureObject: filter_mode='linear' needs float values: a float32 buffer, or "
                             "read_mode='normalized_float' on 8/16-bit integers")
        border = [float(v) for v in border_color]
        if len(border) != 4:
            raise ValueError(f"TextureObject: border_color must have 4 values, got {border_color!r}")
        texel = dtype.itemsize * channels
        res = _ResourceDesc()
        ptr = int(buffer._native.device_ptr())
        if len(shape) == 1:
            res.type = 2
            res.res.linear = _Linear(ptr, _FORMATS[dtype], channels, shape[0] * texel)
        else:
            pitch = shape[1] * texel
            if pitch % _PITCH_ALIGNMENT:
                raise ValueError(f"TextureObject: a 2-D texture's rows must be a multiple of {_PITCH_ALIGNMENT} "
                                 f"bytes (the GPU's texture pitch alignment); {shape[1]} texels of {texel} bytes "
                                 f"are {pitch}: pad the rows")
            res.type = 3
            res.res.pitch2d = _Pitch2D(ptr, _FORMATS[dtype], channels, shape[1], shape[0], pitch)
        tex = _TextureDesc()
        tex.address[0], tex.address[1] = _modes(address_mode, "address_mode", _ADDRESS_MODES)
        tex.address[2] = tex.address[1]
        tex.filter = _FILTER_MODES[filter_mode]
        tex.flags = (1 if read_mode == "element" and integer else 0) | (2 if normalized else 0)
        tex.border[:] = border
        self.buffer = buffer
        self.shape = shape
        self.handle = self._call_in_context(acc.index, lambda lib, out: lib.cuTexObjectCreate(
            byref(out), byref(res), byref(tex), None), "cuTexObjectCreate")
        self._device = acc.index

    @staticmethod
    def _call_in_context(device: int, call, what: str) -> int:  # noqa: ANN001 (a private callback)
        lib = _lib()
        dev, ctx, out = c_int(0), c_void_p(), c_ulonglong(0)
        if lib.cuDeviceGet(byref(dev), device) or lib.cuDevicePrimaryCtxRetain(byref(ctx), dev):
            raise DotComputeError(f"TextureObject: no context on cuda:{device}")
        try:
            lib.cuCtxSetCurrent(ctx)
            status = call(lib, out)
        finally:
            lib.cuDevicePrimaryCtxRelease_v2(dev)
        if status:
            raise DotComputeError(f"TextureObject: {what} failed with CUresult {status}")
        return int(out.value)

    def close(self) -> None:
        """Destroy the texture object (idempotent), once the kernels queued on its device have run:
        launches are asynchronous, and a kernel still to run may read through the handle."""
        if self.handle:
            self.buffer.accelerator.synchronize()
            handle, self.handle = self.handle, 0
            self._call_in_context(self._device, lambda lib, out: lib.cuTexObjectDestroy(handle), "cuTexObjectDestroy")

    def __enter__(self) -> TextureObject:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TextureObject(handle={self.handle:#x}, shape={self.shape}, buffer={self.buffer!r})"
