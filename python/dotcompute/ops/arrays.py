"""Arguments and results of the array operations: Buffers or numpy in, the same kind out.

The portable kernels work on flat 1-D buffers (flat indices keep them short and readable);
``flat()`` gives a plain n-d Buffer's own memory as 1-D (a native view, no copy) and copies the
expression layer's strided views and pending values; ``shaped()`` gives a new 1-D result (memory no
one else sees) in its n-d or 0-d shape the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer, accelerator
from . import klang as dc

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    AxisError = np.AxisError  # type: ignore[attr-defined,misc]

_KINDS = "biufc"


@dataclass
class Operand:
    """One array argument: the device (or host) data and where it came from."""

    acc: Accelerator
    host: np.ndarray | None  # the numpy input, when one was given
    buf: Buffer | None  # the Buffer input, or None until ``device()`` makes one

    @property
    def shape(self) -> tuple[int, ...]:
        return self.buf.shape if self.buf is not None else self.host.shape  # type: ignore[union-attr]

    @property
    def dtype(self) -> np.dtype:
        return self.buf.dtype if self.buf is not None else self.host.dtype  # type: ignore[union-attr]

    @property
    def size(self) -> int:
        # math.prod, not np.prod: a plain int product without numpy's Python-level reduction wrapper,
        # which costs microseconds per call (several times more with caches cold after a large kernel)
        return math.prod(self.shape)

    @property
    def is_numpy(self) -> bool:
        return self.host is not None

    def device(self) -> Buffer:
        """The data as a Buffer on ``acc`` (numpy input is copied there once)."""
        if self.buf is None:
            self.buf = self.acc.asarray(self.host)
        return self.buf

    def view(self) -> np.ndarray:
        """The data as numpy without a copy where possible (host-memory buffers, numpy input)."""
        if self.host is not None:
            return self.host
        return np.asarray(self.buf)

    def on_host(self, path: str) -> np.ndarray:
        """The data for a numpy computation: in place on the "vendor" path, else a host copy
        (numpy input is used as it is, never sent to the device and back)."""
        if path == "vendor" or self.host is not None:
            return self.view()
        return self.device().numpy()


def operand(name: str, x: Any, spec: Any = "auto", what: str = "x") -> Operand:
    """Normalises one array argument of operation ``name``; a clear TypeError for what is not an array."""
    if isinstance(x, Buffer):
        if spec not in (None, "auto") and accelerator(spec) is not x.accelerator:
            # spec is the user's accelerator= or the device of the operation's first operand
            target = accelerator(spec).id
            raise ValueError(f"{name}: {what} is on {x.accelerator.id}, but the operation runs on {target} "
                             "(accelerator=, or where its other operands are); move it with "
                             f"acc.asarray({what}.numpy())")
        check_dtype(name, x.dtype, what)
        return Operand(x.accelerator, None, x)
    try:
        host = np.asarray(x)
    except Exception as exc:  # noqa: BLE001 -- anything numpy cannot read is the caller's type error
        raise TypeError(f"{name}: {what} must be a dc.Buffer or an array, got {type(x).__name__}") from exc
    check_dtype(name, host.dtype, what)
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="))
    # np.ascontiguousarray would turn a 0-d array into shape (1,): keep numpy's shape exactly
    return Operand(accelerator("auto" if spec is None else spec), np.asarray(host, order="C"), None)


def check_dtype(name: str, dtype: np.dtype, what: str = "x") -> None:
    if dtype.kind not in _KINDS:
        raise TypeError(f"{name}: {what} has dtype {dtype}, which is not supported "
                        "(bool, integers, floats and complex are)")


def normalize_axis(name: str, axis: Any, ndim: int) -> int:
    """numpy's rules: -ndim <= axis < ndim, else numpy's AxisError."""
    import operator

    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an int or None, got {axis!r}") from None
    if not -ndim <= a < max(ndim, 1):
        raise AxisError(a, ndim)
    return a % max(ndim, 1)


def result(op: Operand, value: Buffer | np.ndarray) -> Any:
    """numpy in → numpy out; Buffer in → Buffer out."""
    if op.is_numpy:
        return value.numpy() if isinstance(value, Buffer) else value
    if isinstance(value, Buffer):
        return value
    return op.acc.asarray(value)


def into(op: Operand, shape: tuple[int, ...], dtype: Any, fill: Any) -> Any:
    """The result of a host (numpy) computation that ``fill(array)`` writes in place: straight into a
    new Buffer's host memory for Buffer input (no extra copy on the CPU), a new array for numpy input."""
    if op.is_numpy:
        arr = np.empty(shape, dtype)
        fill(arr)
        return arr
    out = op.acc.empty(shape, dtype)
    with out.host() as view:
        fill(view)
    return out


# ---------------------------------------------------------------------------------- layout kernels
@dc.kernel
def _flatten2(x: dc.Buffer, out: dc.Buffer, n1: dc.int64):
    f = dc.global_id(0)
    if f < out.shape[0]:
        out[f] = x[f // n1, f % n1]


@dc.kernel
def _flatten3(x: dc.Buffer, out: dc.Buffer, n1: dc.int64, n2: dc.int64):
    f = dc.global_id(0)
    if f < out.shape[0]:
        out[f] = x[f // (n1 * n2), (f // n2) % n1, f % n2]


@dc.kernel
def _unflatten2(x: dc.Buffer, out: dc.Buffer, n1: dc.int64):
    f = dc.global_id(0)
    if f < x.shape[0]:
        out[f // n1, f % n1] = x[f]


@dc.kernel
def _unflatten3(x: dc.Buffer, out: dc.Buffer, n1: dc.int64, n2: dc.int64):
    f = dc.global_id(0)
    if f < x.shape[0]:
        out[f // (n1 * n2), (f // n2) % n1, f % n2] = x[f]


#: backends whose buffer handles carry their offset (a view at an offset can go anywhere a buffer
#: goes); an OpenCL view at an offset would hand vendor libraries the whole allocation's cl_mem
_OFFSET_VIEWS = frozenset(("cpu", "cuda", "metal"))


def flat(buf: Buffer) -> Buffer:
    """``buf`` as a 1-D buffer: itself when it is one; the same memory seen as 1-D for a plain (always
    C-contiguous) n-d Buffer; a device copy otherwise (a view or pending expression of the expression
    layer, which launches read by strides). Callers only read it (or write a copy they made)."""
    if buf.ndim == 1:
        return buf
    acc = buf.accelerator
    if type(buf) is Buffer and buf.size and buf.ndim > 1:
        # a (1024, 1024) float32 reduced along an axis on PoCL spent 6 ms of its 7 in the copy kernel
        native = buf._native
        if not native.byte_offset or acc.backend in _OFFSET_VIEWS:
            return Buffer._wrap(native.view(0, (buf.size,)), acc)
    out = acc.empty((buf.size,), buf.dtype)
    if buf.size == 0:
        return out
    if buf.ndim == 0:
        out.copy_from(buf.numpy().reshape(1))
    elif buf.ndim == 2:
        acc.launch(_flatten2, buf.size, buf, out, buf.shape[1])
    elif buf.ndim == 3:
        acc.launch(_flatten3, buf.size, buf, out, buf.shape[1], buf.shape[2])
    else:  # kernels index at most 3 dimensions: more go through the host (rare, and correct)
        out.copy_from(buf.numpy().reshape(-1))
    return out


def shaped(buf: Buffer, shape: tuple[int, ...]) -> Buffer:
    """The 1-D ``buf`` as a buffer of ``shape`` (same size): for a plain Buffer a native view of its
    memory, so callers pass memory of their own making (a result), never an argument's."""
    if len(shape) == 1:
        return buf
    acc = buf.accelerator
    if type(buf) is Buffer and buf.size:
        # the same memory seen in the new shape, as flat() does: no copy, and nothing waited for (a
        # reduction's 0-d result went through the host, which waited for the launches behind it)
        native = buf._native
        if not native.byte_offset or acc.backend in _OFFSET_VIEWS:
            return Buffer._wrap(native.view(0, shape), acc)
    out = acc.empty(shape, buf.dtype)
    if buf.size == 0:
        return out
    if len(shape) == 0:
        out.copy_from(buf.numpy().reshape(()))  # one element: kernels have no 0-d buffers
    elif len(shape) == 2:
        acc.launch(_unflatten2, buf.size, buf, out, shape[1])
    elif len(shape) == 3:
        acc.launch(_unflatten3, buf.size, buf, out, shape[1], shape[2])
    else:
        out.copy_from(buf.numpy().reshape(shape))
    return out


def split_axis(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """(outer, n, inner): the flat layout of ``shape`` around ``axis``."""
    # math.prod, not np.prod (~5 us a call): every reduction along an axis asks
    return int(math.prod(shape[:axis])), shape[axis], int(math.prod(shape[axis + 1:]))


__all__ = ["AxisError", "Operand", "check_dtype", "flat", "into", "normalize_axis", "operand", "result", "shaped",
           "split_axis"]
