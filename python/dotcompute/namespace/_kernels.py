"""The namespace's portable device kernels, written in the kernel language (every backend).

They work on flat 1-D buffers in the (outer, n, inner) layout of docs/operations.md: an n-d
buffer is flattened on its device by ``ops.arrays.flat`` and the result reshaped by ``shaped``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import arrays
from ..ops import klang as dc
from ..runtime import Accelerator, Buffer


@dc.kernel
def gather_axis(x: dc.Buffer, idx: dc.Buffer, out: dc.Buffer, n: dc.int64, m: dc.int64, inner: dc.int64):
    # out[o, j, i] = x[o, idx[j], i]; negative indices count from the end, as numpy's take
    f = dc.global_id(0)
    if f < out.shape[0]:
        i = f % inner
        j = (f // inner) % m
        o = f // (inner * m)
        k = dc.int64(idx[j])
        if k < 0:
            k = k + n
        out[f] = x[(o * n + k) * inner + i]


@dc.kernel
def gather_1d(x: dc.Buffer, idx: dc.Buffer, out: dc.Buffer, n: dc.int64):
    # out[j] = x[idx[j]]: gather_axis with outer = inner = 1, without its three 64-bit divisions
    # per element (a 1-D take of 256K from 1M float32 on PoCL: 33 ms with them)
    f = dc.global_id(0)
    if f < out.shape[0]:
        k = dc.int64(idx[f])
        if k < 0:
            k = k + n
        out[f] = x[k]


@dc.kernel
def gather_along(x: dc.Buffer, idx: dc.Buffer, out: dc.Buffer, n: dc.int64, m: dc.int64, inner: dc.int64):
    # out[o, j, i] = x[o, idx[o, j, i], i] (take_along_axis)
    f = dc.global_id(0)
    if f < out.shape[0]:
        i = f % inner
        o = f // (inner * m)
        k = dc.int64(idx[f])
        if k < 0:
            k = k + n
        out[f] = x[(o * n + k) * inner + i]


@dc.kernel
def nonzero_flags(x: dc.Buffer, flags: dc.Buffer):
    f = dc.global_id(0)
    if f < x.shape[0]:
        if x[f] != 0:
            flags[f] = dc.int64(1)
        else:
            flags[f] = dc.int64(0)


@dc.kernel
def scatter_coords(flags: dc.Buffer, pos: dc.Buffer, out: dc.Buffer, stride: dc.int64, extent: dc.int64):
    # element f is the pos[f]-th (1-based) selected one: its coordinate along one axis goes there
    f = dc.global_id(0)
    if f < flags.shape[0]:
        if flags[f] != 0:
            out[pos[f] - 1] = (f // stride) % extent


@dc.kernel
def scatter_index(flags: dc.Buffer, pos: dc.Buffer, out: dc.Buffer):
    # scatter_coords of a 1-D input (the coordinate is f itself): no 64-bit division and modulo per
    # element (1M float32 on PoCL: 16 ms with them)
    f = dc.global_id(0)
    if f < flags.shape[0]:
        if flags[f] != 0:
            out[pos[f] - 1] = f


@dc.kernel
def unravel_positions(pos: dc.Buffer, out: dc.Buffer, stride: dc.int64, extent: dc.int64):
    # the coordinate along one axis of each selected flat position (C order): work per selected
    # element only, not per element of the input as scatter_coords
    i = dc.global_id(0)
    if i < pos.shape[0]:
        out[i] = (pos[i] // stride) % extent


@dc.kernel
def run_starts(s: dc.Buffer, flags: dc.Buffer):
    # 1 where a sorted run of equal values starts (NaN never equals NaN: each NaN is its own run)
    f = dc.global_id(0)
    if f < s.shape[0]:
        if f == 0:
            flags[f] = dc.int64(1)
        elif s[f] != s[f - 1]:
            flags[f] = dc.int64(1)
        else:
            flags[f] = dc.int64(0)


@dc.kernel
def scatter_runs(s: dc.Buffer, perm: dc.Buffer, flags: dc.Buffer, pos: dc.Buffer, values: dc.Buffer,
                 first: dc.Buffer, starts: dc.Buffer):
    # the k-th run's value, the original index of its first element, and where it starts
    f = dc.global_id(0)
    if f < s.shape[0]:
        if flags[f] != 0:
            k = pos[f] - 1
            values[k] = s[f]
            first[k] = perm[f]
            starts[k] = f


@dc.kernel
def run_counts(starts: dc.Buffer, counts: dc.Buffer, total: dc.int64):
    k = dc.global_id(0)
    if k < starts.shape[0]:
        if k + 1 < starts.shape[0]:
            counts[k] = starts[k + 1] - starts[k]
        else:
            counts[k] = total - starts[k]


@dc.kernel
def scatter_inverse(perm: dc.Buffer, pos: dc.Buffer, inverse: dc.Buffer):
    f = dc.global_id(0)
    if f < perm.shape[0]:
        inverse[perm[f]] = pos[f] - 1


@dc.func
def _before(a, b, right: dc.int32) -> dc.int32:  # noqa: ANN001 -- generic over the dtype
    # numpy's order with NaN last: side="left" asks a < b, side="right" asks a <= b
    res = dc.int32(0)
    if b != b:  # noqa: PLR0124 -- b is NaN: every number is before it; NaN only for "right"
        if a == a or right == 1:  # noqa: PLR0124
            res = dc.int32(1)
    elif right == 1:
        if a <= b:
            res = dc.int32(1)
    elif a < b:
        res = dc.int32(1)
    return res


@dc.kernel
def search_sorted(a: dc.Buffer, v: dc.Buffer, out: dc.Buffer, right: dc.int32):
    # the first position p in sorted a where v must go: a[p-1] before v, v not after a[p]
    f = dc.global_id(0)
    if f < v.shape[0]:
        lo = dc.int64(0)
        hi = dc.int64(a.shape[0])
        while lo < hi:
            mid = (lo + hi) // 2
            if _before(a[mid], v[f], right) == 1:
                lo = mid + 1
            else:
                hi = mid
        out[f] = lo


@dc.kernel
def gather_affine(x: dc.Buffer, out: dc.Buffer, n: dc.int64, m: dc.int64, inner: dc.int64, div: dc.int64,
                  shift: dc.int64):
    # out[o, j, i] = x[o, (j // div + shift) % n, i]: roll (div 1, shift n - s), repeat by one count
    # (div r, shift 0) and tile (div 1, shift 0) along an axis, positions computed here, not uploaded
    f = dc.global_id(0)
    if f < out.shape[0]:
        i = f % inner
        j = (f // inner) % m
        o = f // (inner * m)
        out[f] = x[(o * n + (j // div + shift) % n) * inner + i]


@dc.kernel
def int_range(out: dc.Buffer, start: dc.int64, step: dc.int64):
    # arange of integers on the device: exact, so the values are numpy's (the caller checked they fit)
    f = dc.global_id(0)
    if f < out.shape[0]:
        out[f] = start + step * f


@dc.kernel
def diagonal_ones(out: dc.Buffer, one, first: dc.int64, stride: dc.int64, count: dc.int64):
    # eye: the zeroed buffer's k-th diagonal set to one (one: a scalar of the buffer's dtype)
    f = dc.global_id(0)
    if f < count:
        out[first + f * stride] = one


def launch(acc: Accelerator, kernel: Any, n: int, *args: Any) -> None:
    if n:
        acc.launch(kernel, n, *args)


def take_flat(x: Buffer, idx: Buffer, axis: int) -> Buffer:
    """``take(x, idx, axis)`` on the device: x of 1..3 dims, idx 1-D integers (checked by the caller)."""
    acc = x.accelerator
    outer, n, inner = arrays.split_axis(x.shape, axis)
    m = idx.size
    shape = x.shape[:axis] + (m,) + x.shape[axis + 1:]
    out = acc.empty((outer * m * inner,), x.dtype)
    if outer == 1 and inner == 1:
        launch(acc, gather_1d, out.size, arrays.flat(x), idx, out, n)
    else:
        launch(acc, gather_axis, out.size, arrays.flat(x), idx, out, n, m, inner)
    return arrays.shaped(out, shape)


def gather_shifted(x: Buffer, m: int, axis: int, div: int, shift: int) -> Buffer:
    """``x`` (1..3 dims) gathered along ``axis`` into ``m`` positions, position j reading
    ``(j // div + shift) % n``: computed on the device, nothing uploaded."""
    acc = x.accelerator
    outer, n, inner = arrays.split_axis(x.shape, axis)
    shape = x.shape[:axis] + (m,) + x.shape[axis + 1:]
    out = acc.empty((outer * m * inner,), x.dtype)
    launch(acc, gather_affine, out.size, arrays.flat(x), out, n, m, inner, div, shift)
    return arrays.shaped(out, shape)


def take_along(x: Buffer, idx: Buffer, axis: int) -> Buffer:
    acc = x.accelerator
    outer, n, inner = arrays.split_axis(x.shape, axis)
    m = idx.shape[axis]
    out = acc.empty((idx.size,), x.dtype)
    launch(acc, gather_along, out.size, arrays.flat(x), arrays.flat(idx), out, n, m, inner)
    return arrays.shaped(out, idx.shape)


def index_buffer(acc: Accelerator, idx: np.ndarray) -> Buffer:
    """A small host-computed index vector (a permutation, a shift) uploaded to the device."""
    return acc.asarray(np.ascontiguousarray(idx, dtype=np.int64).reshape(-1))


__all__ = ["diagonal_ones", "gather_affine", "gather_shifted", "index_buffer", "int_range", "launch", "nonzero_flags",
           "run_counts", "run_starts", "scatter_coords", "scatter_index", "scatter_inverse", "scatter_runs",
           "search_sorted", "take_along", "take_flat"]
