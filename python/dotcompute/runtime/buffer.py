"""``Buffer``: typed n-d memory on one accelerator, and the ``dc.Buffer[...]`` annotation."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from . import trace as _trace
from .array_hooks import ArrayOperators, _binary, _inplace, notify_write
from .layer_hooks import provided

if TYPE_CHECKING:
    from .accelerator import Accelerator


def normalize_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    """``5`` -> ``(5,)``; a sequence of ints -> a tuple; negative extents are refused."""
    if type(shape) is int:  # the common forms first, without a raised and caught TypeError (~2 us)
        dims: tuple[int, ...] = (shape,)
    elif type(shape) is tuple and all(type(d) is int for d in shape):
        dims = shape
    else:
        if isinstance(shape, bool):
            raise TypeError("shape must be an int or a sequence of ints, not a bool")
        try:
            dims = (operator.index(shape),)  # type: ignore[arg-type]
        except TypeError:
            try:
                dims = tuple(operator.index(d) for d in shape)  # type: ignore[union-attr]
            except TypeError:
                raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None
    for d in dims:
        if d < 0:
            raise ValueError(f"shape {dims} has a negative extent")
    return dims


class Buffer(ArrayOperators):
    """Typed, C-contiguous n-d memory on one accelerator.

    Made by ``acc.empty``, ``acc.zeros`` and ``acc.asarray``. As an annotation,
    ``dc.Buffer[dc.float32]`` (1-D), ``dc.Buffer[dc.float32, 2]`` and plain
    ``dc.Buffer`` declare kernel parameters.
    """

    # _shape and _dtype: copies of the native buffer's (fixed for its life), read by every operation
    # several times; a read through the extension costs 10-20 us when the caches are cold after a
    # large kernel (a slot read a fraction of that), which dc.sum of 16M float32 paid a few times
    __slots__ = ("_native", "_accelerator", "_shape", "_dtype", "__weakref__")

    _native: Any
    _accelerator: Accelerator
    _shape: tuple[int, ...]
    _dtype: np.dtype

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("make buffers with acc.empty(shape, dtype), acc.zeros(...) or acc.asarray(array)")

    @classmethod
    def _wrap(cls, native_buffer: Any, accelerator: Accelerator) -> Buffer:
        obj = object.__new__(cls)
        obj._native = native_buffer
        obj._accelerator = accelerator
        obj._shape = native_buffer.shape
        obj._dtype = native_buffer.dtype
        return obj

    def __class_getitem__(cls, params: Any) -> Any:
        buffer_annotation = provided("buffer_annotation")  # the kernel language's type (registered by it)
        if isinstance(params, tuple):
            if len(params) != 2:
                raise TypeError(f"use dc.Buffer[dtype] or dc.Buffer[dtype, ndim], not dc.Buffer{list(params)}")
            return buffer_annotation(params[0], params[1])
        return buffer_annotation(params)

    # -- description ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self._shape)

    @property
    def nbytes(self) -> int:
        return math.prod(self._shape) * self._dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def accelerator(self) -> Accelerator:
        return self._accelerator

    @property
    def host_visible(self) -> bool:
        """Whether the host sees the device memory itself (the CPU; Metal's shared storage):
        ``buf.host()`` and ``np.asarray(buf)`` are then views of it, with no copy either way."""
        return self._native.host_visible

    # -- copies and pickling: by value, like numpy and CuPy arrays ---------------------------------
    def __copy__(self) -> Buffer:
        # copy.copy used to return a second wrapper of the SAME memory (the default slot copy):
        # writing one changed the other, unlike numpy's and CuPy's copies
        return self.accelerator.asarray(self.numpy())

    def __deepcopy__(self, memo: dict[int, Any]) -> Buffer:
        return self.__copy__()

    def __reduce__(self) -> tuple[Any, ...]:
        # the contents travel as a numpy array and come back on the same accelerator (by its id)
        return (_buffer_from_host, (self.accelerator, self.numpy()))

    # numpy's shifts (ArrayOperators has the other operators): lazy expressions like them
    __lshift__, __rlshift__ = _binary("lshift")
    __rshift__, __rrshift__ = _binary("rshift")
    __ilshift__ = _inplace("lshift")
    __irshift__ = _inplace("rshift")

    def __divmod__(self, other: Any) -> tuple[Any, Any]:
        return self // other, self % other

    def __rdivmod__(self, other: Any) -> tuple[Any, Any]:
        return other // self, other % self

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d buffer")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<dc.Buffer shape={self.shape} dtype={self.dtype} on {self._accelerator.id}>"

    # -- host access ------------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host copy of the contents (after the work queued on the buffer has finished)."""
        out = np.empty(self.shape, self.dtype)
        self._download(out)
        return out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # Host-addressable device memory (unified, or Metal's shared storage): numpy reads it in place.
        if self._native.host_visible and copy is not True:
            array = self._native.host_view(True)
        elif copy is False:
            raise ValueError(f"a buffer on {self._accelerator.id} cannot be seen by numpy without a copy "
                             "(its memory is not host memory); use np.asarray(buf) or buf.numpy()")
        else:
            array = self.numpy()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError(f"converting the buffer from {array.dtype} to {np.dtype(dtype)} needs a copy")
            array = array.astype(dtype)
        return array

    @contextmanager
    def host(self) -> Iterator[np.ndarray]:
        """A writable numpy view of the host copy; on exit the host copy is the newer one.

        Where the buffer is host-visible (``buf.host_visible``: the CPU, Metal's
        shared storage) the view is the device memory itself, once the work
        queued on the buffer has finished: writes need no upload and the next
        kernel sees them. Elsewhere the device data is downloaded first if it
        is newer, and uploaded lazily, before the next device use, after the
        block. Enqueue no work on the buffer while the view is being written.
        """
        notify_write(self)  # pending expressions that read the old contents run first
        view = self._native.host_view(True)
        try:
            yield view
        finally:
            self._native.mark_host_dirty()

    def copy_from(self, array: Any) -> None:
        """Overwrites the buffer with ``array`` (same shape and dtype)."""
        if isinstance(array, Buffer):
            array = array.numpy()
        # a list or scalar has no dtype of its own: it takes the buffer's, as in ``ndarray[...] = list``
        src = np.asarray(array) if isinstance(array, np.ndarray) else np.asarray(array, dtype=self.dtype)
        if not src.dtype.isnative and native_order(src.dtype) == self.dtype:
            src = src.astype(self.dtype)
        self._check_host(src, "copy_from", "source")
        notify_write(self)
        src = np.ascontiguousarray(src)
        recorder = _trace.active
        if recorder is None:
            self._native.copy_from_host(src)
        else:
            t0 = _trace.now()
            self._native.copy_from_host(src)
            recorder.transfer("h2d", src.nbytes, self._accelerator, t0, _trace.now())

    def copy_to(self, out: np.ndarray) -> np.ndarray:
        """Copies the buffer into the numpy array ``out`` (same shape and dtype, C-contiguous, writable)."""
        if not isinstance(out, np.ndarray):
            raise TypeError(f"copy_to: out must be a numpy array, got {type(out).__name__}")
        self._check_host(out, "copy_to", "out")
        if not out.flags.c_contiguous:
            raise ValueError("copy_to: out must be C-contiguous (use np.empty(buf.shape, buf.dtype))")
        if not out.flags.writeable:
            raise ValueError("copy_to: out is read-only")
        self._download(out)
        return out

    def _download(self, out: np.ndarray) -> None:
        # the one device-to-host copy path, so an open dc.profile() sees every download
        recorder = _trace.active
        if recorder is None:
            self._native.copy_to_host(out)
        else:
            t0 = _trace.now()
            self._native.copy_to_host(out)
            recorder.transfer("d2h", out.nbytes, self._accelerator, t0, _trace.now())

    # -- scalars: each waits for the work queued on the buffer (numpy's rules: one element only) ----
    def item(self) -> Any:
        """The single element as a Python scalar (a 0-d buffer, e.g. ``dc.sum(x)``, or any of size 1)."""
        if self.size != 1:
            raise ValueError(f"item(): can only convert a buffer of size 1 to a Python scalar, "
                             f"this one has shape {self.shape}")
        return self.numpy().reshape(()).item()

    def _one(self, kind: str) -> Any:
        # numpy's float()/int()/complex() refuse an array of several elements with a TypeError
        # (item() says ValueError, as numpy's does)
        if self.size != 1:
            raise TypeError(f"{kind}(): only a buffer of one element can be converted to a Python scalar, "
                            f"this one has shape {self.shape}")
        return self.item()

    def __float__(self) -> float:
        return float(self._one("float"))

    def __int__(self) -> int:
        return int(self._one("int"))

    def __complex__(self) -> complex:
        return complex(self._one("complex"))

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"the truth value of a buffer of shape {self.shape} is ambiguous "
                             "(only buffers of one element have one)")
        return bool(self.item())

    def __index__(self) -> int:
        # numpy 2's rule: only a 0-d integer array is an int. A one-element 1-d buffer, or a bool one,
        # used to pass here, so x[mask_of_one] = v wrote x[0] or x[1] instead of masking
        if self.dtype.kind not in "iu" or self.ndim != 0:
            raise TypeError(f"only 0-d integer buffers can be used as an index, not shape {self.shape} "
                            f"dtype {self.dtype}")
        return int(self.item())

    def __matmul__(self, other: Any) -> Any:
        return _ops_hook("matmul")(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _ops_hook("matmul")(other, self)

    def __imatmul__(self, other: Any) -> Any:
        # numpy's rule: a @= b writes in place only when the product keeps a's shape and dtype
        product = _ops_hook("matmul")(self, other)
        if product.shape != self.shape:
            raise ValueError(f"a @= b: the product has shape {product.shape}, a {self.shape}")
        self[...] = product
        return self

    # -- the Array API array object (docs/array-api.md) ------------------------------------------------
    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"__array_namespace__: api_version {api_version!r} is not supported (2024.12 is)")
        import dotcompute

        return dotcompute

    @property
    def device(self) -> Accelerator:
        """The accelerator holding the buffer (the Array API's device)."""
        return self._accelerator

    def to_device(self, device: Any, /, *, stream: Any = None) -> Buffer:
        """The buffer on ``device`` (an Accelerator or a spec such as ``"cpu:0"``): itself when it is
        there already, else a copy."""
        return _ops_hook("to_device")(self, device, stream=stream)

    @property
    def mT(self) -> Any:  # noqa: N802 -- the standard's name
        """The last two axes swapped (a stack of matrices transposed)."""
        return _ops_hook("matrix_transpose")(self)

    # -- interop (CUDA Array Interface, DLPack, device-to-device copies): see cuda_interop.py ------
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3 (CUDA buffers only; AttributeError elsewhere)."""
        from .cuda_interop import cuda_array_interface

        return cuda_array_interface(self)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:
        """A DLPack capsule sharing this buffer's memory (CUDA and CPU buffers). A consumer that asks
        for the CPU (``dl_device=(1, 0)``) gets a host copy of a buffer on another device unless it
        passes ``copy=False`` (the standard's cross-device export; namespace/dlpack.py)."""
        from .cuda_interop import to_dlpack

        if dl_device is not None and tuple(dl_device) == (1, 0) and self._accelerator.backend != "cpu":
            if copy is False:
                raise BufferError(f"__dlpack__: the buffer is on {self._accelerator.id}; exporting it to the CPU "
                                  "needs a copy, and copy=False forbids it")
            on_cpu = _ops_hook("to_device")(self, "cpu:0")  # moving data is what the consumer asked for
            return to_dlpack(on_cpu, stream, max_version, dl_device, None)
        if copy:  # a copy made on the device (the export then shares the copy's memory)
            from .array_hooks import hook

            fresh = hook("astype")(self, self.dtype)
            fresh._native  # noqa: B018 -- evaluates the pending copy kernel
            return to_dlpack(fresh, stream, max_version, dl_device, None)
        return to_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        from .cuda_interop import dlpack_device

        return dlpack_device(self)

    def copy_to_device(self, accelerator: Accelerator) -> Buffer:
        """A copy of this buffer on ``accelerator`` (between CUDA devices: peer or staged device copy)."""
        from .cuda_interop import copy

        out = accelerator.empty(self.shape, self.dtype)
        copy(out, self)
        return out

    def _check_host(self, array: np.ndarray, method: str, what: str) -> None:
        if array.shape != self.shape:
            raise ValueError(f"{method}: {what} has shape {array.shape}, the buffer {self.shape}")
        if array.dtype != self.dtype:
            raise TypeError(f"{method}: {what} has dtype {array.dtype}, the buffer {self.dtype} "
                            f"(convert with .astype(np.{self.dtype.name}))")


#: Array operations that Buffer's operators delegate to, filled in by ``dotcompute.ops`` (a layer
#: above the runtime, which must not import it): ``"matmul"`` → ``fn(a, b)``.
OPS_HOOKS: dict[str, Any] = {}


def _ops_hook(name: str) -> Any:
    fn = OPS_HOOKS.get(name)
    if fn is None:
        raise TypeError(f"Buffer {name} needs dotcompute.ops; import dotcompute (not only dotcompute.runtime)")
    return fn


def _buffer_from_host(accelerator: Accelerator, array: np.ndarray) -> Buffer:
    """Unpickles a Buffer: a copy of ``array`` on ``accelerator``."""
    return accelerator.asarray(array)


def native_order(dtype: np.dtype) -> np.dtype:
    """``dtype`` in the machine's byte order (devices have no big-endian arithmetic)."""
    return dtype if dtype.isnative else dtype.newbyteorder("=")


__all__ = ["OPS_HOOKS", "Buffer", "native_order", "normalize_shape"]
