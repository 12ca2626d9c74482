"""Sorting: ``sort``, ``argsort`` (stable), ``sort_by_key`` (1-D, stable).

Paths (ops/dispatch.py): numpy on host-memory buffers (a stable order where order of equal keys
shows: keys of at most 32 bits packed with their positions into distinct 64-bit integers, which
numpy's fast unstable sort then orders stably, host_sort.py; a merge sort otherwise); the
kernels of sort_kernels.py elsewhere or when forced (LSD radix for one long row of int32, uint32,
int64, float32 or float64 keys, ``RADIX_ON_CPU``; run sort + merges otherwise); numpy on a host
copy for dtypes kernels lack. NaN sorts last, as in numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Buffer
from . import dispatch, host_sort
from . import sort_kernels as sk
from .arrays import flat, into, normalize_axis, operand, result, shaped, split_axis
from .reduce_kernels import op_add
from .scan import scan_flat

RADIX_MIN = 2048  # below this, merging a few runs beats four radix passes
#: Whether CPU-type devices (the CPU backend, PoCL) use the radix sort too. Measured here
#: (4M keys, load 4-5) since its blocks on CPU devices are few and long (sort_kernels.BLOCKS_CPU):
#: cpu:0 radix 197 ms vs merge 968 for int32, 681 vs 1213 for float32; PoCL 212 vs 626 for
#: int32, 953 vs 927 for float32 (float_key's arithmetic costs most there). Tests set it to
#: False to exercise the merge sort on every device.
RADIX_ON_CPU = True


def _radix_here(acc: Any) -> bool:
    return RADIX_ON_CPU or acc.type != "cpu"


def sort_rows(keys: Buffer, vals: Buffer | None, n: int) -> tuple[Buffer, Buffer | None]:
    """Sorts each row of ``n`` keys of the flat ``keys`` (a new buffer), carrying ``vals`` along; stable."""
    acc = keys.accelerator
    total = keys.size
    if total == n and n >= RADIX_MIN and _radix_here(acc):
        if keys.dtype in (np.int32, np.uint32, np.int64):
            return radix_sort(keys, vals)
        if keys.dtype in (np.float32, np.float64):
            return _float_radix_sort(keys, vals)
    k = _copy(keys)
    v = _copy(vals) if vals is not None else acc.empty((1,), np.int64)
    has = 0 if vals is None else 1
    if total == 0 or n <= 1:
        return k, (v if has else None)
    rows = total // n
    runs = -(-n // sk.RUN)
    kt, vt = k.dtype.type, v.dtype.type
    acc.launch(sk.sort_runs_kernel(kt, vt), rows * runs, k, v, n, runs, has)
    w = sk.RUN
    k2 = acc.empty((total,), kt)
    v2 = acc.empty((total,), vt) if has else v
    merge = sk.merge_path_kernel(kt, vt)
    chunk = sk.MERGE_CHUNK_CPU if acc.type == "cpu" else sk.MERGE_CHUNK
    while w < n:
        blocks = -(-n // (2 * w))
        per_block = -(-2 * w // chunk)
        acc.launch(merge, rows * blocks * per_block, k, v, k2, v2, n, w, blocks, per_block, has, chunk)
        k, k2 = k2, k
        if has:
            v, v2 = v2, v
        w *= 2
    return k, (v if has else None)


def radix_sort(keys: Buffer, vals: Buffer | None) -> tuple[Buffer, Buffer | None]:
    """LSD radix sort of one row of integer keys (new buffers), payload carried along; stable."""
    acc = keys.accelerator
    n = keys.size
    has = 0 if vals is None else 1
    block = sk.BLOCK if acc.type != "cpu" else max(sk.BLOCK, -(-n // sk.BLOCKS_CPU))
    blocks = -(-n // block)
    bits = keys.dtype.itemsize * 8
    signed = keys.dtype.kind == "i"
    k, v = keys, (vals if vals is not None else acc.empty((1,), np.int64))
    kt = keys.dtype.type
    counts = acc.empty((sk.BUCKETS * blocks,), np.int64)
    for shift in range(0, bits, sk.RADIX_BITS):
        top = int(signed and shift + sk.RADIX_BITS >= bits)
        acc.launch(sk.radix_count_kernel(), blocks, k, counts, n, blocks, shift, top, block)
        offsets = scan_flat(op_add, counts, 1, counts.size, 1, np.int64, exclusive=True, initial=0)
        k2 = acc.empty((n,), kt)
        v2 = acc.empty((n,), v.dtype) if has else v
        acc.launch(sk.radix_scatter_kernel(), blocks, k, v, k2, v2, offsets, n, blocks, shift, top, has, block)
        k, v = k2, v2
    return k, (v if has else None)


def _float_radix_sort(keys: Buffer, vals: Buffer | None) -> tuple[Buffer, Buffer | None]:
    """Float keys: radix-sort their order-preserving integer keys with the positions as payload,
    then gather the keys (and values) in that order; stable like the integer sort."""
    acc = keys.accelerator
    n = keys.size
    ikeys = acc.empty((n,), np.int32 if keys.dtype == np.float32 else np.int64)
    acc.launch(sk.float_key_kernel(keys.dtype.type), n, keys, ikeys)
    pos = acc.empty((n,), np.int64)
    acc.launch(sk.iota_kernel(), n, pos, n)
    _, order = radix_sort(ikeys, pos)
    assert order is not None
    return _gather(keys, order), (_gather(vals, order) if vals is not None else None)


def _gather(x: Buffer, order: Buffer) -> Buffer:
    out = x.accelerator.empty((order.size,), x.dtype)
    x.accelerator.launch(sk.gather_kernel(), order.size, x, order, out)
    return out


def _copy(buf: Buffer) -> Buffer:
    out = buf.accelerator.empty((buf.size,), buf.dtype)
    if buf.size:
        # the axis move with one inner element is the identity map: a device copy
        buf.accelerator.launch(sk.move_axis_kernel(), buf.size, flat(buf), out, buf.size, 1, 1)
    return out


def _move(buf: Buffer, n: int, inner: int, to_last: bool) -> Buffer:
    if inner == 1:
        return buf
    out = buf.accelerator.empty((buf.size,), buf.dtype)
    buf.accelerator.launch(sk.move_axis_kernel(), buf.size, buf, out, n, inner, int(to_last))
    return out


def _prepare(name: str, x: Any, axis: Any, accelerator: Any) -> tuple[Any, tuple[int, ...], int | None]:
    o = operand(name, x, accelerator)
    if axis is None:
        return o, (o.size,), None
    if not o.shape:
        raise np.exceptions.AxisError(axis, 0) if hasattr(np, "exceptions") else ValueError("0-d array")
    return o, o.shape, normalize_axis(name, axis, len(o.shape))


def _portable(o: Any, shape: tuple[int, ...], ax: int, want_indices: bool) -> Buffer:
    outer, n, inner = split_axis(shape, ax)
    acc = o.acc
    keys = _move(flat(o.device()), n, inner, True)
    vals = None
    if want_indices:
        vals = acc.empty((keys.size,), np.int64)
        if keys.size:
            acc.launch(sk.iota_kernel(), keys.size, vals, n)
    sk_, sv = sort_rows(keys, vals, n)
    res = sv if want_indices else sk_
    assert res is not None
    return shaped(_move(res, n, inner, False), shape)


def sort(x: Any, axis: Any = -1, *, accelerator: Any = "auto") -> Any:
    """A sorted copy along ``axis`` (None: the flattened array); NaN last."""
    o, shape, ax = _prepare("dc.sort", x, axis, accelerator)
    path = dispatch.choose("sort", o.acc, o.dtype)
    if path in ("vendor", "host"):
        host = o.on_host(path)
        if axis is None:
            host = host.reshape(-1)

        def fill(out: np.ndarray) -> None:
            out[...] = host
            out.sort(axis=-1 if axis is None else ax)

        return into(o, host.shape, host.dtype, fill)
    return result(o, _portable(o, shape, 0 if ax is None else ax, False))


def argsort(x: Any, axis: Any = -1, *, accelerator: Any = "auto") -> Any:
    """Indices that sort ``x`` along ``axis`` (None: flattened); stable: equal keys keep their order. int64."""
    o, shape, ax = _prepare("dc.argsort", x, axis, accelerator)
    path = dispatch.choose("argsort", o.acc, o.dtype)
    if path in ("vendor", "host"):
        host = o.on_host(path)
        return result(o, host_sort.stable_argsort(host, axis))
    return result(o, _portable(o, shape, 0 if ax is None else ax, True))


def sort_by_key(keys: Any, values: Any, *, accelerator: Any = "auto") -> tuple[Any, Any]:
    """1-D keys and values of the same length → (sorted keys, values in that order); stable."""
    if not isinstance(keys, Buffer) and isinstance(values, Buffer) and accelerator in (None, "auto"):
        accelerator = values.accelerator  # numpy keys with Buffer values: sorted where the values are
    ok = operand("dc.sort_by_key", keys, accelerator, "keys")
    ov = operand("dc.sort_by_key", values, ok.acc if ok.buf is not None else accelerator, "values")
    if len(ok.shape) != 1 or ok.shape != ov.shape:
        raise ValueError(f"dc.sort_by_key: keys and values must be 1-D of one length, got shapes {ok.shape} "
                         f"and {ov.shape}")
    if ok.acc is not ov.acc:
        raise ValueError(f"dc.sort_by_key: keys are on {ok.acc.id} and values on {ov.acc.id}")
    path = dispatch.choose("sort_by_key", ok.acc, ok.dtype, ov.dtype)
    if path in ("vendor", "host"):
        hk = ok.on_host(path)
        hv = ov.on_host(path)
        order = host_sort.stable_argsort(hk)
        return result(ok, hk[order]), result(ov, hv[order])
    sk_, sv = sort_rows(ok.device(), ov.device(), ok.size)
    assert sv is not None
    return result(ok, sk_), result(ov, sv)


__all__ = ["argsort", "sort", "sort_by_key", "sort_rows"]
