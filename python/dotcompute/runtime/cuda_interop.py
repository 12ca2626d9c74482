"""CUDA interop: ``__cuda_array_interface__``, DLPack, graph capture and copies between CUDA devices.

The CUDA-only features live in the plugin's second table (``cuda/cuda_ext.h``), reached through the
core's backend-agnostic ``plugin_symbol`` hook and called with ctypes; the core knows nothing of it.

Synchronisation (see ``cuda/README.md``): our streams are non-blocking. ``__cuda_array_interface__``
reports the buffer's stream and the consumer orders its work after it. ``__dlpack__(stream=S)``
makes the consumer's stream ``S`` wait on an event recorded on the buffer's stream, so nothing
blocks the host; ``stream=None`` means the legacy default stream, as the DLPack spec says.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from ctypes import CFUNCTYPE, POINTER, byref, c_char_p, c_int, c_int32, c_uint32, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any, NoReturn

from .. import config
from ..errors import BackendUnavailableError, DotComputeError, OutOfMemoryError
from .native import native, plugin_dir

if TYPE_CHECKING:
    from .accelerator import Accelerator
    from .buffer import Buffer
    from .stream import Stream

EXT_SYMBOL = "dotcompute_cuda_ext_entry"
BACKEND_SYMBOL = "dotcompute_backend_entry"

# -- the extension table (cuda_ext.h), field for field --------------------------------------------
_status = c_int


class _ExtTable(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("version", c_uint32),
        ("host_alloc", CFUNCTYPE(_status, c_uint64, POINTER(c_void_p))),
        ("host_free", CFUNCTYPE(_status, c_void_p)),
        ("mem_alloc_managed", CFUNCTYPE(_status, c_int32, c_uint64, POINTER(c_uint64))),
        ("enable_peer_access", CFUNCTYPE(_status, c_int32, c_int32, POINTER(c_int32))),
        ("memcpy_peer", CFUNCTYPE(_status, c_void_p, c_int32, c_uint64, c_uint64, c_int32, c_uint64, c_uint64,
                                  c_uint64)),
        ("graph_begin", CFUNCTYPE(_status, c_void_p)),
        ("graph_end", CFUNCTYPE(_status, c_void_p, POINTER(c_void_p))),
        ("graph_launch", CFUNCTYPE(_status, c_void_p, c_void_p)),
        ("graph_destroy", CFUNCTYPE(_status, c_void_p)),
        ("stream_native", CFUNCTYPE(_status, c_void_p, POINTER(c_uint64))),
        # version 2
        ("module_global", CFUNCTYPE(_status, c_void_p, c_char_p, POINTER(c_uint64), POINTER(c_uint64))),
    ]


_EXT_V1_SIZE = _ExtTable.module_global.offset  # every field before module_global


class _BackendPrefix(ctypes.Structure):
    """The leading fields of backend_abi.h's dc_backend, up to last_error (for the plugin's messages)."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("abi_version", c_uint32),
        ("name", c_char_p),
        ("version", c_char_p),
        ("initialize", c_void_p),
        ("shutdown", c_void_p),
        ("last_error", CFUNCTYPE(c_char_p)),
    ]


_DC_OK, _DC_INVALID_ARGUMENT, _DC_OUT_OF_MEMORY, _DC_UNAVAILABLE, _DC_UNSUPPORTED = 0, 1, 2, 5, 6


class CudaExtension:
    """The CUDA plugin's extension table; every call raises a dotcompute error on failure."""

    def __init__(self, table: _ExtTable, backend: _BackendPrefix) -> None:
        self._t = table
        self._backend = backend

    def call(self, name: str, *args: Any) -> None:
        status = getattr(self._t, name)(*args)
        if status != _DC_OK:
            self._raise(name, status)

    def _raise(self, name: str, status: int) -> NoReturn:
        raw = self._backend.last_error()
        message = f"cuda extension {name}() failed: {raw.decode(errors='replace') if raw else f'status {status}'}"
        if status == _DC_OUT_OF_MEMORY:
            raise OutOfMemoryError(message)
        if status in (_DC_UNAVAILABLE, _DC_UNSUPPORTED):
            raise BackendUnavailableError(message, message)
        if status == _DC_INVALID_ARGUMENT:
            raise ValueError(message)
        raise DotComputeError(message)

    def stream_native(self, stream: Stream) -> int:
        handle = c_uint64(0)
        self.call("stream_native", c_void_p(stream._native.handle), byref(handle))
        return handle.value

    def module_global(self, module_handle: int, name: str) -> tuple[int, int] | None:
        """(device address, bytes) of the module's ``__device__``/``__constant__`` variable ``name``,
        or None when the module has no such variable (cuModuleGetGlobal's CUDA_ERROR_NOT_FOUND)."""
        if self._t.struct_size < ctypes.sizeof(_ExtTable):
            raise BackendUnavailableError("the cuda plugin is too old for module globals (cuda_ext.h version "
                                          f"{self._t.version}, 2 needed)", "old cuda plugin")
        ptr, size = c_uint64(0), c_uint64(0)
        status = self._t.module_global(c_void_p(module_handle), name.encode(), byref(ptr), byref(size))
        if status == _DC_INVALID_ARGUMENT:
            raw = self._backend.last_error()
            if raw and b"no __device__ or __constant__ variable" in raw:
                return None
        if status != _DC_OK:
            self._raise("module_global", status)
        return ptr.value, size.value


_extensions: dict[int, CudaExtension] = {}


def cuda_extension() -> CudaExtension:
    """The loaded CUDA plugin's extension table (BackendUnavailableError when it is not loaded)."""
    nat = native()
    address = nat.plugin_symbol("cuda", EXT_SYMBOL)
    if not address:
        raise BackendUnavailableError(f"the cuda backend is not loaded (or its plugin exports no {EXT_SYMBOL})",
                                      "cuda plugin not loaded")
    ext = _extensions.get(address)  # keyed by address: a reloaded plugin gets a fresh entry
    if ext is None:
        table = _ExtTable.from_address(CFUNCTYPE(c_void_p)(address)())
        if table.struct_size < _EXT_V1_SIZE or table.version < 1:
            raise BackendUnavailableError(f"the cuda plugin's extension table is too old ({table.struct_size} "
                                          f"bytes, version {table.version})", "old cuda plugin")
        backend = _BackendPrefix.from_address(CFUNCTYPE(c_void_p)(nat.plugin_symbol("cuda", BACKEND_SYMBOL))())
        ext = _extensions[address] = CudaExtension(table, backend)
    return ext


def _require_cuda(acc: Accelerator, what: str) -> None:
    if acc.backend != "cuda":
        raise BackendUnavailableError(f"{what} needs a CUDA accelerator; {acc.id} is a {acc.backend!r} device",
                                      f"{what} is CUDA-only")


def _buffer_stream(buf: Buffer) -> Stream:
    from .stream import Stream

    last = buf._native.last_stream
    return Stream._wrap(last, buf.accelerator) if last is not None else buf.accelerator.default_stream


# -- __cuda_array_interface__ ---------------------------------------------------------------------
def cuda_array_interface(buf: Buffer) -> dict[str, Any]:
    """The v3 interface of a CUDA buffer; AttributeError elsewhere, so that duck typing sees no attribute."""
    if buf.accelerator.backend != "cuda":
        raise AttributeError(f"__cuda_array_interface__: the buffer is on {buf.accelerator.id}, not a CUDA device")
    ptr = buf._native.device_ptr()  # a newer host copy is uploaded first, on the buffer's stream
    stream = cuda_extension().stream_native(_buffer_stream(buf))
    return {"shape": tuple(buf.shape), "typestr": buf.dtype.str, "data": (int(ptr), False), "version": 3,
            "strides": None, "stream": stream if stream else 1}  # 1: the legacy default stream (0 is not allowed)


# -- DLPack ---------------------------------------------------------------------------------------
KDL_CPU, KDL_CUDA, KDL_OPENCL, KDL_METAL = 1, 2, 4, 8
_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}  # kDLInt, kDLUInt, kDLFloat, kDLComplex, kDLBool


# The capsule and its DLManagedTensor[Versioned] are made by the native module (python/src/dlpack.cpp):
# their destructors must run with a consumer's exception set and on any thread, which a ctypes
# callback cannot (numpy's refusal of a CUDA capsule became a SystemError and leaked the buffer).


def dlpack_device(buf: Buffer) -> tuple[int, int]:
    acc = buf.accelerator
    if acc.backend == "cuda":
        return (KDL_CUDA, acc.index)
    if acc.backend == "cpu" and acc.unified_memory:
        return (KDL_CPU, 0)
    if acc.backend == "opencl":
        return (KDL_OPENCL, acc.index)
    if acc.backend == "metal":
        return (KDL_METAL, acc.index)
    raise BufferError(f"__dlpack_device__: buffers on {acc.id} have no DLPack export here (cpu, cuda, opencl and "
                      f"metal do); read it with np.asarray(x) or move it with x.to_device('cpu:0')")


def _consumer_stream(stream: Any) -> int | None:
    """The CUstream the consumer works on (None: -1, no synchronisation wanted)."""
    if stream is None or stream == 1:
        return 0  # the legacy default stream
    if stream == -1:
        return None
    if stream == 0:
        raise BufferError("__dlpack__: stream=0 is ambiguous and not allowed (use 1 for the legacy default stream)")
    if stream == 2:
        return 2  # CU_STREAM_PER_THREAD
    if not isinstance(stream, int) or stream < 0:
        raise BufferError(f"__dlpack__: stream must be None, -1 or a CUstream as an int, got {stream!r}")
    return stream


def to_dlpack(buf: Buffer, stream: Any = None, max_version: Any = None, dl_device: Any = None,
              copy: bool | None = None) -> Any:
    """A capsule sharing the buffer's memory: ``dltensor_versioned`` (DLPack 1.0) when the consumer
    passes ``max_version`` >= (1, 0), else the legacy ``dltensor`` (DLManagedTensor)."""
    device = dlpack_device(buf)
    if dl_device is not None and tuple(dl_device) != device:
        raise BufferError(f"__dlpack__: the buffer is on DLPack device {device}, not {tuple(dl_device)}")
    if copy:
        raise BufferError("__dlpack__: copy=True is not supported (the export always shares memory)")
    byte_offset = 0
    if device[0] == KDL_CPU:
        if stream not in (None, -1):
            raise BufferError(f"__dlpack__: a CPU buffer takes no stream, got {stream!r}")
        ptr = buf._native.host_view(True).ctypes.data  # waits for the work queued on the buffer
    elif device[0] in (KDL_OPENCL, KDL_METAL):
        handle = "cl_mem" if device[0] == KDL_OPENCL else "MTLBuffer"
        if dl_device is None:
            # numpy, PyTorch and JAX ask with dl_device=None and could only fail on a cl_mem or an
            # MTLBuffer (numpy: "Unsupported device"): the handle goes to consumers naming the device
            raise BufferError(f"__dlpack__: the buffer is on {buf.accelerator.id}, whose {handle} a host consumer "
                              f"cannot read; use np.asarray(x) or x.to_device('cpu:0') (or pass "
                              f"dl_device=(1, 0) for a host copy, or dl_device={device} for the {handle})")
        if stream not in (None, -1):
            raise BufferError(f"__dlpack__: a {buf.accelerator.backend} buffer takes no stream, got {stream!r}")
        # DLPack's convention for opaque handles (OpenCL's cl_mem, Metal's MTLBuffer): data is the
        # handle of the whole allocation, byte_offset where the buffer starts in it. The consumer
        # enqueues on its own queue: our work first
        ptr, byte_offset = native().dlpack_export_handle(buf._native)
        _buffer_stream(buf).synchronize()
    else:
        consumer = _consumer_stream(stream)
        ptr = int(buf._native.device_ptr())
        if consumer is not None:
            producer = cuda_extension().stream_native(_buffer_stream(buf))
            if producer != consumer:
                _stream_waits_on(buf.accelerator.index, producer, consumer)
    dtype = buf.dtype
    if dtype.kind not in _DL_CODES:
        raise BufferError(f"__dlpack__: dtype {dtype} has no DLPack type")
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    # The consumer's work on this memory is queued where this buffer cannot see it: from now on its
    # host reads wait for all of the device's work (a read of the producer after `consumer *= 2`).
    buf._native.mark_aliased()
    # The capsule holds the buffer until the consumer's deleter runs (or the unconsumed capsule dies).
    return native().dlpack_capsule(buf, ptr, device[0], device[1], list(buf.shape), _DL_CODES[dtype.kind],
                                   dtype.itemsize * 8, versioned, False, byte_offset)


class _Driver:
    """The few driver calls the DLPack stream handshake needs, on the library the plugin loaded."""

    def __init__(self) -> None:
        if config.cuda_sim():  # the plugin loaded the CUDA simulator shipped beside it
            path = str(plugin_dir() / "libdotcompute_cuda_sim.so")
        else:
            path = os.environ.get("DOTCOMPUTE_CUDA_DRIVER") or "libcuda.so.1"
        lib = ctypes.CDLL(path)  # the same file the plugin opened, so the same handle and state
        self.path = path
        for name, args in (("cuDeviceGet", [POINTER(c_int), c_int]),
                           ("cuDevicePrimaryCtxRetain", [POINTER(c_void_p), c_int]),
                           ("cuDevicePrimaryCtxRelease_v2", [c_int]),
                           ("cuCtxSetCurrent", [c_void_p]),
                           ("cuEventCreate", [POINTER(c_void_p), c_uint32]),
                           ("cuEventRecord", [c_void_p, c_void_p]),
                           ("cuStreamWaitEvent", [c_void_p, c_void_p, c_uint32]),
                           ("cuEventDestroy_v2", [c_void_p])):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, c_int
            setattr(self, name, fn)

    def check(self, result: int, what: str) -> None:
        if result != 0:
            raise DotComputeError(f"{what} failed with CUresult {result} (driver {self.path})")


_driver: _Driver | None = None


def _stream_waits_on(device: int, producer: int, consumer: int) -> None:
    """``consumer`` waits (on the device, not the host) for the work queued so far on ``producer``."""
    global _driver
    if _driver is None:
        _driver = _Driver()
    d = _driver
    dev, ctx, event = c_int(0), c_void_p(), c_void_p()
    d.check(d.cuDeviceGet(byref(dev), device), "cuDeviceGet")
    d.check(d.cuDevicePrimaryCtxRetain(byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    try:
        d.check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        d.check(d.cuEventCreate(byref(event), 2), "cuEventCreate")  # 2: CU_EVENT_DISABLE_TIMING
        try:
            d.check(d.cuEventRecord(event, c_void_p(producer or None)), "cuEventRecord")
            d.check(d.cuStreamWaitEvent(c_void_p(consumer or None), event, 0), "cuStreamWaitEvent")
        finally:
            d.cuEventDestroy_v2(event)  # released by the driver once the wait is satisfied
    finally:
        d.cuDevicePrimaryCtxRelease_v2(dev)


# -- graphs ---------------------------------------------------------------------------------------
class Graph:
    """Work captured by ``with acc.graph() as g:``; ``g.launch()`` replays it."""

    def __init__(self, accelerator: Accelerator, stream: Stream) -> None:
        self._accelerator = accelerator
        self._stream = stream  # the capture stream; replays go here by default
        self._handle: int | None = None

    @property
    def stream(self) -> Stream:
        """The stream the launches were captured on; buffers used in the capture are ordered on it."""
        return self._stream

    def launch(self, stream: Stream | None = None) -> None:
        """Replays the captured work (asynchronously) on the capture stream, or on ``stream``.

        A replay on another stream is followed by an event the capture stream waits on, so that
        buffers written in the graph (whose last stream is the capture stream) still see it.
        """
        if self._handle is None:
            raise DotComputeError("graph.launch(): the graph is not captured yet (or was closed)")
        target = self._stream if stream is None else stream
        if target.accelerator is not self._accelerator:
            raise ValueError(f"graph.launch(): the stream belongs to {target.accelerator.id}, the graph "
                                       f"to {self._accelerator.id}")
        cuda_extension().call("graph_launch", c_void_p(self._handle), c_void_p(target._native.handle))
        if target is not self._stream:
            self._stream.wait(target.record())

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            cuda_extension().call("graph_destroy", c_void_p(handle))

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter teardown may have unloaded the plugin
            pass

    def __repr__(self) -> str:
        state = "captured" if self._handle is not None else "empty"
        return f"<dc.Graph {state} on {self._accelerator.id}>"


def capture_graph(acc: Accelerator) -> Any:
    """Captures the launches issued on ``acc`` (with no explicit stream) into a CUDA graph.

    For the duration a dedicated capture stream is the accelerator's current stream: launches
    without ``stream=`` go there and are recorded, not run. Work given an explicit stream is not
    captured (it runs as usual). Launches given numpy arrays (which synchronise) and host copies of
    buffers written in the block cannot be captured and fail inside it. Buffers used in the block
    are ordered on the capture stream, which ``g.launch()`` replays on by default.
    """
    _require_cuda(acc, "acc.graph()")  # checked at the call, not only on entering the block
    if acc._capture_stream is not None:
        raise DotComputeError(f"acc.graph(): {acc.id} is already capturing a graph (they do not nest)")
    return _capture(acc, cuda_extension())


@contextmanager
def _capture(acc: Accelerator, ext: CudaExtension) -> Iterator[Graph]:
    stream = acc.stream()
    graph = Graph(acc, stream)
    ext.call("graph_begin", c_void_p(stream._native.handle))
    acc._capture_stream = stream
    try:
        yield graph
    finally:
        acc._capture_stream = None
        out = c_void_p()
        ext.call("graph_end", c_void_p(stream._native.handle), byref(out))
        graph._handle = out.value


# -- copies between devices -----------------------------------------------------------------------
_peers_tried: set[tuple[int, int]] = set()


def copy(dst: Buffer, src: Buffer) -> None:
    """Copies ``src`` into ``dst`` (same shape and dtype), any devices; returns when the copy is done.

    Between CUDA devices: a peer copy when the two can reach each other (peer access is enabled on
    first use), otherwise staged through pinned host memory by the plugin. Elsewhere: through the host.
    """
    if dst.shape != src.shape or dst.dtype != src.dtype:
        raise ValueError(f"copy: dst is {dst.shape} {dst.dtype}, src {src.shape} {src.dtype}")
    da, sa = dst.accelerator, src.accelerator
    if da.backend != "cuda" or sa.backend != "cuda":
        dst.copy_from(src.numpy())
        return
    ext = cuda_extension()
    src_ptr, dst_ptr = int(src._native.device_ptr()), int(dst._native.device_ptr())
    _buffer_stream(src).synchronize()  # src's producer work is on another device's queue: wait on the host
    if da.index != sa.index:
        for a, b in ((da.index, sa.index), (sa.index, da.index)):
            if (a, b) not in _peers_tried:
                enabled = c_int32(0)
                ext.call("enable_peer_access", a, b, byref(enabled))
                _peers_tried.add((a, b))
    stream = _buffer_stream(dst)
    ext.call("memcpy_peer", c_void_p(stream._native.handle), da.index, dst_ptr, 0, sa.index, src_ptr, 0,
             dst.nbytes)
    dst._native.mark_device_dirty(stream._native)
    stream.synchronize()  # src may be overwritten by its own device's later work otherwise


__all__ = ["CudaExtension", "Graph", "capture_graph", "copy", "cuda_array_interface", "cuda_extension",
           "dlpack_device", "to_dlpack"]
