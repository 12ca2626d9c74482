"""Buffers of any number of dimensions on devices, through the kernels' 1 to 3.

A Buffer is one C-contiguous allocation, so its elements can be seen in another shape of the same
size without a copy: the native view (``_native.view(0, shape)``, the same allocation, docs/views.md).
Generated kernels index 1 to 3 dimensions; a reshape is a copy between the 1-d forms of two
buffers, and a broadcast merges the adjacent dimensions that broadcast alike until at most 3 remain
(``(2, 1, 3, 4) → (2, 5, 3, 4)`` is ``(2, 1, 12) → (2, 5, 12)``). Everything stays on the device.
"""

from __future__ import annotations

import math

import numpy as np

from ..expr.types import EXPR_DTYPES
from ..runtime import Accelerator, Buffer
from ._common import concrete


def alias(x: Buffer, shape: tuple[int, ...]) -> Buffer:
    """``x``'s memory seen in ``shape`` (same size): writes through one show in the other."""
    c = concrete(x)
    if math.prod(shape) != c.size:
        raise ValueError(f"alias: shape {shape} does not hold the {c.size} elements of a {c.shape} buffer")
    return Buffer._wrap(c._native.view(0, tuple(shape)), c.accelerator)


def flat(x: Buffer) -> Buffer:
    """``x``'s memory as a 1-d buffer (a 0-d buffer is one element)."""
    return alias(x, (max(1, x.size) if x.ndim == 0 else x.size,))


def takes(x: Buffer) -> bool:
    """Whether the copy kernels here take ``x``'s dtype (every dtype the expression generator spells)."""
    return x.dtype in EXPR_DTYPES


def copies_ok(*xs: Buffer) -> bool:
    """Whether the copy and gather kernels take these buffers: 1 to 3 dimensions, any dtype the
    expression generator spells (complex too: they move elements, never compare them)."""
    return all(takes(x) and 1 <= x.ndim <= 3 for x in xs)


def around_axis(x: Buffer, axis: int) -> Buffer:
    """``x``'s memory as ``(outer, n, inner)`` around ``axis`` (the dimensions before it merged, then
    the axis, then those after it): what works along one axis of a buffer of any number of
    dimensions (a sort, a scan) does the same along axis 1 of this 3-d alias."""
    outer = math.prod(x.shape[:axis])
    return alias(x, (outer, x.shape[axis], math.prod(x.shape[axis + 1:])))


def reshape_copy(x: Buffer, shape: tuple[int, ...]) -> Buffer:
    """A new buffer of ``shape`` holding ``x``'s elements in C order, copied on ``x``'s device."""
    out = x.accelerator.empty(shape, x.dtype)
    if out.size:
        flat(out)[...] = flat(x)
    return out


def collapse(in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The fewest dimensions describing the broadcast of ``in_shape`` to ``out_shape``: adjacent
    output dimensions merge when the input has both (or broadcasts both); extents of 1 drop out."""
    padded = (1,) * (len(out_shape) - len(in_shape)) + tuple(in_shape)
    cin: list[int] = []
    cout: list[int] = []
    last = None
    for n_in, n_out in zip(padded, out_shape, strict=True):
        if n_out == 1:
            continue
        full = n_in == n_out
        if full is last:
            cout[-1] *= n_out
            cin[-1] *= n_in
        else:
            cout.append(n_out)
            cin.append(n_in)
        last = full
    return (tuple(cin) or (1,)), (tuple(cout) or (1,))


def broadcast_copy(acc: Accelerator, x: Buffer, shape: tuple[int, ...]) -> Buffer | None:
    """A new buffer of ``shape`` holding ``x`` broadcast (numpy's rules, checked by the caller), or
    None when no kernel takes ``x``'s dtype."""
    out = acc.empty(shape, x.dtype)
    if out.size == 0:
        return out
    cin, cout = collapse(x.shape, shape)
    if len(cout) > 3:
        if not copies_ok(flat(x)):
            return None
        # dimensions that alternate between broadcast and not ((2, 1, 2, 1) → (2, 2, 2, 2)): one
        # gather from the 1-d view, positions computed on the host from the shapes (as roll/tile do)
        from . import _kernels

        where = np.broadcast_to(np.arange(x.size, dtype=np.int64).reshape(x.shape), shape).reshape(-1)
        got = _kernels.take_flat(flat(x), _kernels.index_buffer(acc, np.ascontiguousarray(where)), 0)
        return alias(got, shape)
    alias(out, cout)[...] = alias(x, cin)
    return out


__all__ = ["alias", "around_axis", "broadcast_copy", "collapse", "copies_ok", "flat", "reshape_copy", "takes"]
