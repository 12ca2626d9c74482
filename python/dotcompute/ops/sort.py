"""Sorting: ``sort``, ``argsort`` (stable), ``sort_by_key`` (1-D, stable).

Paths (ops/dispatch.py): numpy on host-memory buffers (a stable order where order of equal keys
shows: keys of at most 32 bits packed with their positions into distinct 64-bit integers, which
numpy's fast unstable sort then orders stably, host_sort.py; a merge sort otherwise); the
kernels of sort_kernels.py elsewhere or when forced (radix for one long row of int32, uint32,
int64, float32 or float64 keys, ``RADIX_ON_CPU``; run sort + merges otherwise); numpy on a host
copy for dtypes kernels lack. NaN sorts last, as in numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Buffer
from . import dispatch, host_sort
from . import sort_gpu_kernels as sgk
from . import sort_kernels as sk
from .arrays import flat, into, normalize_axis, operand, result, shaped, split_axis
from .reduce_kernels import op_add
from .scan import scan_flat

RADIX_MIN = 2048  # below this, merging a few runs beats four radix passes
#: Whether CPU-type devices (the CPU backend, PoCL) use the radix sort too. Measured here
#: (4M keys, load 4-5) since its blocks on CPU devices are few and long (sort_kernels.BLOCKS_CPU):
#: cpu:0 radix 197 ms vs merge 968 for int32, 681 vs 1213 for float32; PoCL 212 vs 626 for
#: int32, 953 vs 927 for float32 (float_key's arithmetic costs most there). Tests set it and
#: RADIX_ON_GPU to False to exercise the merge sort on every device.
RADIX_ON_CPU = True
#: Whether other devices (GPUs) use the radix sort for one long row (the merge sort otherwise).
RADIX_ON_GPU = True
#: Whether CPU-type devices take the MSD-then-in-cache radix sort (sort_kernels.radix_local) rather
#: than the GPUs' LSD passes; tests set False to run the GPUs' algorithm on every device.
RADIX_MSD_ON_CPU = True


def _radix_here(acc: Any) -> bool:
    return RADIX_ON_CPU if acc.type == "cpu" else RADIX_ON_GPU


def sort_rows(keys: Buffer, vals: Buffer | None, n: int, need_keys: bool = True) -> tuple[Buffer | None, Buffer | None]:
    """Sorts each row of ``n`` keys of the flat ``keys`` (a new buffer), carrying ``vals`` along; stable.
    Without ``need_keys`` (argsort: only the payload is wanted) the sorted keys may be left out (None)."""
    acc = keys.accelerator
    total = keys.size
    if total == n and n >= RADIX_MIN and _radix_here(acc):
        if keys.dtype in (np.int32, np.uint32, np.int64, np.uint64):
            return radix_sort(keys, vals)
        if keys.dtype in (np.float32, np.float64):
            return _float_radix_sort(keys, vals, need_keys)
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
    """Radix sort of one row of integer keys (new buffers; the inputs are not changed), payload
    carried along; stable. GPUs: LSD passes of count, scan, coalesced scatter (sort_gpu_kernels). CPU devices:
    one MSD pass on the top digit, then each bucket sorted on its own in cache (sort_kernels.radix_local).
    Scratch pairs are reused between passes, and no pass waits for the host."""
    acc = keys.accelerator
    n = keys.size
    has = 0 if vals is None else 1
    cpu = acc.type == "cpu" and RADIX_MSD_ON_CPU
    bits = keys.dtype.itemsize * 8
    signed = keys.dtype.kind == "i"
    kt = keys.dtype.type
    v = vals if vals is not None else acc.empty((1,), np.int64)
    scratch = [(acc.empty((n,), kt), acc.empty((n,), v.dtype) if has else v) for _ in range(2)]
    if cpu:
        count, scatter = sk.radix_count_kernel(), sk.radix_scatter_kernel()
        block = max(sk.BLOCK, -(-n // sk.BLOCKS_CPU))
        blocks = -(-n // block)
        buckets = 1 << sk.TOP_BITS_CPU
        top_shift = bits - sk.TOP_BITS_CPU
        counts = acc.empty((buckets * blocks,), np.int64)
        starts = acc.empty((buckets + 1,), np.int64)
        # local_size=1: every item is a long serial walk, and the CPU backend gives each thread whole
        # work-groups: with the default group size the 64 blocks (or the buckets) would be one group
        acc.launch(count, blocks, keys, counts, n, blocks, top_shift, int(signed), block, 1, buckets, buckets,
                   local_size=1)
        acc.launch(sk.radix_offsets_kernel(), 1, counts, starts, blocks, buckets)
        (k1, v1), (k2, v2) = scratch
        acc.launch(scatter, blocks, keys, v, k1, v1, counts, n, blocks, top_shift, int(signed), has, block, 1,
                   buckets, buckets, local_size=1)
        lbits = sk.LOCAL_BITS_CPU
        passes = -(-top_shift // lbits)  # odd: the result is in the second pair, even: in the first
        items = min(sk.LOCAL_ITEMS_CPU, buckets)  # each with its own counter table
        local_counts = acc.empty((items << lbits,), np.int64)
        acc.launch(sk.radix_local_kernel(), items, k1, v1, k2, v2, starts, local_counts, top_shift, has, buckets,
                   lbits, local_size=1)
        k, v = (k2, v2) if passes % 2 else (k1, v1)
        return k, (v if has else None)
    # LSD passes of 4-bit digits, one work-group per tile, coalesced (sort_gpu_kernels)
    vt = v.dtype.type if vals is not None else None
    local_memory = acc.info.get("local_memory")
    items = sgk.items_per_item(kt, vt, local_memory, acc.backend)
    tiles = -(-n // (sgk.WG * items))
    counts = acc.empty((sgk.GB * tiles,), np.int64)
    count = sgk.radix_count_gpu_kernel(items)
    scatter = sgk.radix_scatter_gpu_kernel(kt, vt, local_memory, acc.backend)
    k = keys
    for p, shift in enumerate(range(0, bits, sgk.GBITS)):
        top = int(signed and shift + sgk.GBITS >= bits)
        acc.launch(count, tiles * sgk.WG, k, counts, n, tiles, shift, top, local_size=sgk.WG)
        offsets = scan_flat(op_add, counts, 1, counts.size, 1, np.int64, exclusive=True, initial=0)
        k2, v2 = scratch[p % 2]
        acc.launch(scatter, tiles * sgk.WG, k, v, k2, v2, counts, offsets, n, tiles, shift, top, local_size=sgk.WG)
        k, v = k2, v2
    return k, (v if has else None)


def _float_radix_sort(keys: Buffer, vals: Buffer | None, need_keys: bool) -> tuple[Buffer | None, Buffer | None]:
    """Float keys through their order-preserving unsigned keys (``dc.bitcast``, sort_kernels.float_key):
    alone, the keys are sorted and turned back into floats; with a payload that is all the caller
    wants (argsort), the payload rides along; otherwise (sort_by_key) the positions do, and keys and
    values are gathered in that order (so the keys keep their exact bits: -0.0, NaN payloads)."""
    acc = keys.accelerator
    n = keys.size
    ft = keys.dtype.type
    ukeys = acc.empty((n,), np.uint32 if keys.dtype == np.float32 else np.uint64)
    acc.launch(sk.float_key_kernel(ft, vals is None), n, keys, ukeys)
    if vals is None:
        sorted_keys, _ = radix_sort(ukeys, None)
        out = acc.empty((n,), ft)
        acc.launch(sk.key_float_kernel(ft), n, sorted_keys, out)
        return out, None
    if not need_keys:
        return None, radix_sort(ukeys, vals)[1]
    pos = acc.empty((n,), np.int64)
    acc.launch(sk.iota_kernel(), n, pos, n)
    _, order = radix_sort(ukeys, pos)
    assert order is not None
    return _gather(keys, order), _gather(vals, order)


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
    sk_, sv = sort_rows(keys, vals, n, need_keys=not want_indices)
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
    assert sk_ is not None and sv is not None
    return result(ok, sk_), result(ov, sv)


__all__ = ["argsort", "sort", "sort_by_key", "sort_rows"]
