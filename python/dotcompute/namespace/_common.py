"""Shared plumbing of the Array API functions: operands, the host fast path, device results.

Every function here takes Buffers and returns Buffers on the input's device. Where the buffer's
memory is host memory (``buf.host_visible``: cpu:0, Metal's unified memory) numpy works on the
zero-copy host view, the "vendor" path of docs/operations.md. Elsewhere the work runs in kernels
on the device; what has no kernel path yet raises ``DeviceSupportError`` naming the function and
the device, never a silent copy through the host.
"""

from __future__ import annotations

import operator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from ..expr.lazy import LazyBuffer
from ..expr.types import SUPPORTED
from ..runtime import Accelerator, Buffer
from ..runtime.default_device import current_default

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    AxisError = np.AxisError  # type: ignore[attr-defined,misc]

KERNEL_NDIM = 3  # generated and language kernels index buffers of 1 to 3 dimensions


class DeviceSupportError(TypeError):
    """The function has no device implementation for this input on this device (yet)."""


def as_buffer(name: str, x: Any, acc: Accelerator | None = None) -> Buffer:
    """``x`` as a Buffer: Buffers as they are, anything numpy reads uploaded to ``acc`` (default: the
    default device, as the creation functions use: ``dc.stack`` of numpy scalars read from opencl:0
    buffers must land beside them under ``DOTCOMPUTE_DEFAULT_DEVICE=opencl:0``)."""
    if isinstance(x, Buffer):
        return x
    try:
        host = np.asarray(x)
    except Exception as exc:  # noqa: BLE001 -- anything numpy cannot read is the caller's type error
        raise TypeError(f"{name}: expected an array (dc.Buffer), got {type(x).__name__}") from exc
    if host.dtype.kind not in "biufc":
        raise TypeError(f"{name}: dtype {host.dtype} is not an Array API dtype")
    return (acc or current_default()).asarray(np.asarray(host, order="C"))


def same_device(name: str, *xs: Buffer) -> Accelerator:
    """The one device of ``xs``; ValueError naming both when they differ."""
    acc = xs[0].accelerator
    for x in xs[1:]:
        if x.accelerator is not acc:
            raise ValueError(f"{name}: arrays on two devices, {acc.id} and {x.accelerator.id}; "
                             "move one with x.to_device(...) first")
    return acc


def on_host(x: Buffer) -> bool:
    """Whether numpy can work on ``x``'s memory in place (the host fast path). A pending
    expression or view is asked through its device: its own ``host_visible`` would evaluate it."""
    if type(x) is LazyBuffer:
        return bool(x.accelerator.host_visible_memory)
    return bool(x.host_visible)


def host(x: Buffer) -> np.ndarray:
    """The elements as numpy: a zero-copy view of a host-visible buffer (a pending expression or
    view is evaluated first, on its device)."""
    return np.asarray(x)


def wrap(acc: Accelerator, value: Any) -> Buffer:
    """A numpy result (computed on host memory) as a new Buffer on ``acc``."""
    arr = np.asarray(value)
    return acc.asarray(arr if arr.flags.c_contiguous else np.array(arr, order="C"))


def fill(acc: Accelerator, shape: tuple[int, ...], dtype: Any, write: Any) -> Buffer:
    """A new host-visible Buffer that ``write(view)`` fills in place (no second copy)."""
    out = acc.empty(shape, dtype)
    if out.size:
        with out.host() as view:
            write(view)
    return out


def kernel_ok(*xs: Buffer, ndim: int = KERNEL_NDIM) -> bool:
    """Whether device kernels can take these buffers (dtype the generator spells, 1..ndim dims)."""
    return all(x.dtype in SUPPORTED and 1 <= x.ndim <= ndim for x in xs)


def no_device_path(name: str, acc: Accelerator, what: str) -> DeviceSupportError:
    return DeviceSupportError(
        f"{name}: {what} has no device implementation on {acc.id} yet (its memory is not host memory, and "
        "dotcompute does not copy through the host silently); see docs/array-api.md, or run it on cpu:0 "
        "with x.to_device('cpu:0')")


def on_device(x: Buffer) -> AbstractContextManager[None]:
    """Around a call into ``dotcompute.ops`` for ``x``: on a CPU-type device whose memory is not
    host memory (an OpenCL CPU device such as PoCL), the portable kernels (``ops.prefer("portable")``)
    unless the caller chose a path. ops' default takes numpy on a host copy for sorts, matmul and FFTs
    there, where that is faster; the namespace keeps device data on the device (issue 21: no host
    round trip). GPUs keep ops' default, which is their vendor library (cuBLAS, CLBlast, ...) where
    one applies: already on the device."""
    from ..ops import dispatch

    if on_host(x) or dispatch.preferred() != "auto" or x.accelerator.type != "cpu":
        return nullcontext()
    return dispatch.prefer("portable")


def concrete(x: Buffer) -> Buffer:
    """A pending expression or view evaluated into a plain Buffer (on its device)."""
    if type(x) is LazyBuffer:
        from ..expr.evaluate import concrete as _concrete

        return _concrete(x)
    return x


def normalize_axis(name: str, axis: Any, ndim: int) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an int, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim


def normalize_axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """None → every axis; an int or a tuple → sorted, distinct, non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(normalize_axis(name, a, ndim) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axis!r}")
    return tuple(sorted(axes))


def device_copy(acc: Accelerator, value: Buffer, shape: tuple[int, ...], dtype: Any) -> Buffer:
    """A new Buffer of ``shape`` written on the device from ``value`` (a view or expression,
    broadcast to ``shape``): the generated copy kernel of ``out[...] = value``."""
    out = acc.empty(shape, dtype)
    if out.size:
        out[...] = value
    return out


__all__ = ["AxisError", "DeviceSupportError", "as_buffer", "concrete", "device_copy", "fill", "host", "kernel_ok",
           "no_device_path", "normalize_axes", "normalize_axis", "on_device", "on_host", "same_device", "wrap"]
