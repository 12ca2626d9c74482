"""``Accelerator``: one device of one backend, and its memory pool."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, OutOfMemoryError
from . import trace as _trace
from . import uninit as _uninit
from .array_hooks import HOOKS
from .buffer import Buffer, native_order, normalize_shape
from .fast_launch import attempt as _fast_attempt
from .layer_hooks import provided
from .native import native
from .stream import Stream


def _features(bits: int) -> list[str]:
    return [name for name, bit in native().FEATURES.items() if bits & bit]


_MAX_BYTES = 2**63 - 1  # the native layer counts sizes in int64

# fork(): a child process forked after this process started devices (multiprocessing's default
# "fork" start method on Linux, os.fork) inherits the runtime's memory but none of its threads -- the
# CPU backend's worker pool and stream queues, the OpenCL/CUDA drivers' own threads -- so its first
# pooled launch, copy or synchronize waited forever. Such a child now gets a BackendUnavailableError
# saying what to do instead of a hang. (A child forked before any device was used starts its own
# runtime normally: the hook is registered when the first Accelerator is made.)
inherited_by_fork = False
_fork_hook = False


def _after_fork_in_child() -> None:
    global inherited_by_fork
    inherited_by_fork = True


def refuse_after_fork(acc_id: str) -> None:
    """Raises the error for work on ``acc_id`` in a child forked from a process that had started it."""
    raise BackendUnavailableError(
        f"{acc_id} cannot be used in this process: it was forked (os.fork, or multiprocessing's 'fork' start "
        f"method) after its parent had started dotcompute's devices, and their threads and driver state do "
        f"not survive a fork (the work would hang). Use multiprocessing.get_context('spawn') or "
        f"'forkserver', or start using dotcompute only in the child processes.",
        reason="forked from a process whose dotcompute runtime had started")


class Memory:
    """The accelerator's memory pool: ``stats()``, ``trim()`` and a ``limit`` in bytes (None: none)."""

    __slots__ = ("_native",)

    def __init__(self, native_acc: Any) -> None:
        self._native = native_acc

    def stats(self) -> dict[str, int]:
        """Bytes ``in_use`` and ``reserved`` (in use + cached), ``peak``, pool ``hits`` and ``misses``…"""
        return dict(self._native.memory_stats())

    def trim(self) -> None:
        """Returns every cached (free) block to the device, after the layers above have dropped
        what they cache on it (``HOOKS["trim"]``: the array operations' FFT tables and plans)."""
        drop = HOOKS.get("trim")
        if drop is not None:
            drop(self._native)
        self._native.memory_trim()

    @property
    def limit(self) -> int | None:
        value = self._native.memory_limit
        return value or None

    @limit.setter
    def limit(self, nbytes: int | None) -> None:
        if nbytes is None:
            self._native.memory_limit = 0
            return
        # a float or a string is a mistake (1.5 bytes? "1GB"?), not something to round silently
        if isinstance(nbytes, (bool, np.bool_)) or not isinstance(nbytes, (int, np.integer)):
            raise TypeError(f"memory limit must be an int byte count or None, got {type(nbytes).__name__} "
                            f"({nbytes!r})")
        if nbytes < 0:
            raise ValueError(f"memory limit must be a byte count >= 0 or None, got {nbytes!r}")
        self._native.memory_limit = int(nbytes)

    def __repr__(self) -> str:
        s = self.stats()
        return f"<dc.Memory in_use={s['in_use']} reserved={s['reserved']} peak={s['peak']} limit={self.limit}>"


#: ``dc.accelerator(spec)``, set by :mod:`.registry` (which imports this module, so it cannot be imported here).
_SPEC_RESOLVER: Any = None


class _ConstructedFromSpec(type):
    """``dc.Accelerator("cpu:0")`` is ``dc.accelerator("cpu:0")``: the one object of that device.

    Users guess the constructor (CuPy's ``cupy.cuda.Device(0)``, ``torch.device("cuda:0")``); a
    wrapper around the spec string instead of a device failed only later, with an AttributeError
    from deep inside a launch. The runtime itself wraps native devices with ``_native=``.
    """

    def __call__(cls, spec: Any = "auto", *, _native: Any = None) -> Any:
        if _native is not None:
            return super().__call__(_native)
        if _SPEC_RESOLVER is None:  # pragma: no cover -- importing the runtime package sets it
            raise TypeError("get accelerators with dc.accelerator(spec), e.g. dc.accelerator('cpu:0')")
        if spec is None:
            raise TypeError("dc.Accelerator(spec) needs a spec such as 'cpu:0', 'cuda', 'opencl:0' or 'auto', "
                            "not None (or use dc.accelerator(spec))")
        return _SPEC_RESOLVER(spec)


class Accelerator(metaclass=_ConstructedFromSpec):
    """One device: ``cpu:0``, ``cuda:1``, ``opencl:0``, ``metal:0``.

    Get one with ``dc.accelerator(spec)``; ``dc.Accelerator(spec)`` is the same call and returns the same
    object (one per device, so accelerators compare with ``is``).
    """

    __slots__ = ("_native", "_default_stream", "_memory", "_info", "_capture_stream", "__weakref__")

    def __init__(self, native_acc: Any) -> None:
        global _fork_hook
        if not _fork_hook:
            _fork_hook = True
            os.register_at_fork(after_in_child=_after_fork_in_child)
        self._native = native_acc
        self._default_stream: Stream | None = None
        self._memory = Memory(native_acc)
        self._info: dict[str, Any] | None = None
        # While ``with acc.graph():`` runs: the capture stream, used by launches given no stream.
        self._capture_stream: Stream | None = None

    # -- identity ---------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        """``"backend:index"``, e.g. ``"cpu:0"``."""
        return self._native.id

    @property
    def name(self) -> str:
        """The device's own name (e.g. the CPU model)."""
        return self._native.name

    @property
    def backend(self) -> str:
        return self._native.backend

    @property
    def index(self) -> int:
        return self._native.index

    @property
    def type(self) -> str:
        """``"cpu"``, ``"gpu"`` or ``"accelerator"``."""
        return self._native.type

    @property
    def unified_memory(self) -> bool:
        """Device memory is host memory and host memory is device memory (the CPU): buffers are
        viewed by numpy without copies and numpy arrays are passed to kernels as they are."""
        return self._native.unified_memory

    @property
    def host_visible_memory(self) -> bool:
        """Device buffers can be host-addressable (Metal's shared storage): those are viewed by
        numpy without copies (``buf.host()``, ``np.asarray(buf)``), while numpy arrays passed to
        kernels are still staged. Which buffers are: ``buf.host_visible``."""
        return self._native.unified_memory or self._native.host_visible_memory

    @property
    def info(self) -> dict[str, Any]:
        """Capabilities: memory, compute units, work-group limits, SIMD width, features, backend extras."""
        if self._info is None:
            raw = dict(self._native.info)
            extra_text = raw.pop("extra_json", "{}") or "{}"
            try:
                extra = json.loads(extra_text)
            except ValueError:
                extra = {"extra_json": extra_text}
            info: dict[str, Any] = {
                "name": raw["name"],
                "vendor": raw["vendor"],
                "type": raw["type"],
                "arch": raw["arch"],
                "memory": raw["global_memory_bytes"],
                "local_memory": raw["local_memory_bytes"],
                "compute_units": raw["compute_units"],
                "max_work_group_size": raw["max_work_group_size"],
                "max_work_item_sizes": tuple(raw["max_work_item_sizes"]),
                "simd_width": raw["simd_width"],
                "features": _features(raw["features"]),
                # the contract's word ("info: memory, compute units, capabilities"); same list as "features"
                "capabilities": _features(raw["features"]),
                "compiler": self._native.compiler_identity,
            }
            if isinstance(extra, dict):
                for key, value in extra.items():
                    info.setdefault(key, value)
            else:
                info["extra"] = extra
            # what dc.subgroup_size() returns in kernels here (lang/emit/subgroups.py): the warp or
            # SIMD-group width on CUDA and Metal, the emulation's fixed width on the CPU and OpenCL
            info.setdefault("subgroup_size", int(raw["simd_width"] or 32)
                            if self.backend in ("cuda", "metal") else 32)
            self._info = info
        return dict(self._info)

    # -- memory -----------------------------------------------------------------------------------
    @property
    def memory(self) -> Memory:
        return self._memory

    def empty(self, shape: int | Sequence[int], dtype: Any = np.float32) -> Buffer:
        """A new buffer with undefined contents."""
        if inherited_by_fork:
            refuse_after_fork(self.id)
        dims = normalize_shape(shape)
        dt = native_order(np.dtype(dtype))
        nbytes = dt.itemsize
        for d in dims:
            nbytes *= d
        if nbytes > _MAX_BYTES or (dims and max(dims) > _MAX_BYTES):
            # A size no device can address is a failed allocation like any other (an OutOfMemoryError,
            # also a MemoryError), not the native layer's "shape is too large" KernelTypeError or
            # pybind11's "Unable to cast Python instance" RuntimeError for extents of 2**63 and more.
            raise OutOfMemoryError(f"out of memory on {self.id}: cannot allocate a buffer of shape {dims} and "
                                   f"dtype {dt}: its extents or its size pass 2**63 - 1 bytes, more than any "
                                   f"device can address")
        buf = Buffer._wrap(self._native.allocate(dims, dt), self)
        if _uninit.active:  # initcheck of acc.empty memory (runtime/uninit.py): only while checks are in use
            _uninit.mark(buf)
        return buf

    def zeros(self, shape: int | Sequence[int], dtype: Any = np.float32) -> Buffer:
        buf = self.empty(shape, dtype)
        buf._native.fill_bytes(0)
        return buf

    def asarray(self, array: Any, dtype: Any = None) -> Buffer:
        """A new buffer holding a copy of ``array`` (anything numpy accepts), optionally converted to ``dtype``.

        A :class:`Buffer` of this accelerator with the same dtype is returned as it is.
        """
        if isinstance(array, Buffer):
            if array.accelerator is self and (dtype is None or np.dtype(dtype) == array.dtype):
                return array
            array = array.numpy()
        # np.asarray with order="C", unlike np.ascontiguousarray, keeps 0-d arrays 0-d
        host = np.asarray(array, dtype=dtype, order="C")
        if inherited_by_fork:
            refuse_after_fork(self.id)
        if not host.dtype.isnative:  # big-endian data from files: devices compute in native order
            host = host.astype(native_order(host.dtype))
        buf = Buffer._wrap(self._native.allocate(host.shape, host.dtype), self)
        recorder = _trace.active
        if recorder is None:
            buf._native.copy_from_host(host)
        else:
            t0 = _trace.now()
            buf._native.copy_from_host(host)
            recorder.transfer("h2d", host.nbytes, self, t0, _trace.now())
        return buf

    # -- work -------------------------------------------------------------------------------------
    @property
    def default_stream(self) -> Stream:
        if self._default_stream is None:
            self._default_stream = Stream._wrap(self._native.default_stream, self)
        return self._default_stream

    def stream(self) -> Stream:
        """A new in-order stream of this accelerator."""
        if inherited_by_fork:
            refuse_after_fork(self.id)
        return Stream._wrap(self._native.create_stream(), self)

    def synchronize(self) -> None:
        """Waits for all work queued on every stream of this accelerator (pending array expressions
        on it are evaluated first)."""
        if inherited_by_fork:
            refuse_after_fork(self.id)
        sync = HOOKS.get("synchronize")
        if sync is not None:
            sync(self)
        self._native.synchronize()

    def launch(self, kernel: Any, global_size: Any, *args: Any, local_size: Any = None, stream: Any = None,
               fallback: Any = None, retries: int = 0, check: Any = None) -> None:
        """``dc.launch(kernel, global_size, *args, accelerator=self, ...)``."""
        if (local_size is None and stream is None and fallback is None and not retries and check is None
                and not inherited_by_fork and _fast_attempt(self, kernel, global_size, args)):
            return  # a cached kernel with plain arguments: one native call (runtime/fast_launch.py)
        if fallback is not None or retries or check is not None:
            # dc.launch (registered by dotcompute.launch) hands these options to dotcompute.orchestrate
            # (check=: to the kernel checks, docs/kernel-safety.md)
            provided("launch")(kernel, global_size, *args, local_size=local_size, accelerator=self, stream=stream,
                   fallback=fallback, retries=retries, check=check)
            return
        (_LAUNCH or _launch_function())(self, kernel, global_size, args, local_size, stream)

    def graph(self) -> Any:
        """``with acc.graph() as g:`` captures this CUDA device's launches; ``g.launch()`` replays them.

        Inside the block a dedicated capture stream is current: launches given no ``stream=`` are
        recorded on it instead of running. Other backends raise BackendUnavailableError.
        """
        from .cuda_interop import capture_graph

        return capture_graph(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled by its id (Dask, multiprocessing): the receiving process looks its own device up
        return (Accelerator, (self.id,))

    def __repr__(self) -> str:
        return f"<dc.Accelerator {self.id} {self.name!r} ({self.type})>"


_LAUNCH: Any = None


def _launch_function() -> Any:
    # Resolved once: an import statement on every launch costs microseconds, and launches are benchmarked.
    global _LAUNCH
    if _LAUNCH is None:
        _LAUNCH = provided("launch_on")
    return _LAUNCH


__all__ = ["Accelerator", "Memory"]
