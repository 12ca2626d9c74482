"""The portable radix sort's passes for GPUs (every device that is not CPU-type): coalesced.

One LSD pass per 4-bit digit (8 passes for 32-bit keys, 16 for 64-bit), each three steps over
tiles of ``WG * items`` keys, one work-group of ``WG`` items per tile:

* ``radix_count_gpu``: the group reads its tile with consecutive items on consecutive keys (one
  128-byte request per warp), counts digits in per-item columns of work-group memory (item t owns
  column t: no two lanes of a warp share a bank), sums the columns with a tree, and writes the
  tile's 16 counts into the digit-major table ``counts[d * tiles + tile]``.
* an exclusive scan of that table (ops/scan.py) gives every (digit, tile) its first output slot.
* ``radix_scatter_gpu``: the group stages its tile in work-group memory (coalesced reads), sorts it
  there stably by the digit (each item ranks its ``items`` consecutive keys: per-item digit counts,
  one exclusive scan over the (digit, item) table, then each key to its rank), and writes each
  digit's run to its global slots. The writes go through a "virtual" index space in which every
  run starts at the same offset modulo 32 as its global destination, so the lanes of a warp write
  one aligned 128-byte segment of a run (4 sectors per request, as a copy) instead of straddling
  segments; lanes that fall in the gaps between runs stay idle.

With 16 digits a tile of 1024 keys has runs of 64 keys on average, long enough for whole
segments; 8-bit digits (runs of 4) could not be coalesced. Work-group memory: the staged tile twice
(unsorted, sorted; rows padded by one word every 32 so that items reading ``items`` consecutive
keys hit distinct banks) and the 17 x WG count table (17 = 16 digits + the tail's padding keys;
scanned in chunks of 17 per item: 17 is odd, so the chunks' words lie in distinct banks).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from . import klang as dc

WG = 256  # items per work-group
GBITS = 4  # bits per digit
GB = 1 << GBITS  # digits
ROWS = GB + 1  # plus one row for the keys past n in the last tile


def shared_bytes(items: int, key_dtype: Any, val_dtype: Any | None) -> int:
    """Work-group memory of radix_scatter_gpu for tiles of ``WG * items`` keys."""
    tile = WG * items
    ks = np.dtype(key_dtype).itemsize
    vs = np.dtype(val_dtype).itemsize if val_dtype is not None else 0
    return (tile + tile // 32) * (ks + vs) + tile * (ks + vs) + 2 * 8 + ROWS * WG * 4 + 2 * WG * 4 + 8 * (3 * ROWS + 3)


def items_per_item(key_dtype: Any, val_dtype: Any | None, local_memory: int | None) -> int:
    """Keys per item: 4 (1024-key tiles: runs of 64 keys per digit on average), else 2 or 1 where
    the tile would not fit in the device's work-group memory (``local_memory``, at most 48 KiB:
    CUDA's static limit; Metal has 32 KiB)."""
    limit = min(local_memory or 48 * 1024, 48 * 1024)
    for items in (4, 2):
        if shared_bytes(items, key_dtype, val_dtype) <= limit:
            return items
    return 1


@dc.func
def pad(e: dc.int64) -> dc.int64:
    # one spare word every 32: the items of a warp reading keys t * items + q then hit distinct banks
    return e + e // 32


@dc.func
def gdigit(k, shift: dc.int64, top: dc.int32) -> dc.int64:
    # the 4-bit digit at `shift`; the top digit of a signed type has its sign bit flipped
    d = (dc.int64(k) >> shift) & (GB - 1)
    return d ^ (GB // 2) if top == 1 else d


@cache
def radix_count_gpu_kernel(items: int) -> Any:
    tile = WG * items
    steps = WG.bit_length() - 1

    @dc.kernel
    def radix_count_gpu(keys: dc.Buffer, counts: dc.Buffer[dc.int64], n: dc.int64, tiles: dc.int64,
                        shift: dc.int64, top: dc.int32):
        cnt = dc.shared((GB * WG,), dc.int32)
        t = dc.local_id(0)
        g = dc.group_id(0)
        for d in range(GB):
            cnt[d * WG + t] = 0
        for j in range(items):
            i = g * tile + j * WG + t
            if i < n:
                cnt[gdigit(keys[i], shift, top) * WG + t] += 1
        dc.barrier()
        for s in range(steps):
            half = WG >> (s + 1)
            if t < half:
                for d in range(GB):
                    cnt[d * WG + t] += cnt[d * WG + t + half]
            dc.barrier()
        if t < GB:
            counts[t * tiles + g] = cnt[t * WG]

    return radix_count_gpu


@cache
def radix_scatter_gpu_kernel(key_dtype: Any, val_dtype: Any | None, local_memory: int | None = None) -> Any:
    """``val_dtype`` None: keys alone. ``local_memory``: the device's work-group memory in bytes
    (sets the tile, ``items_per_item``)."""
    has_vals = val_dtype is not None
    K = getattr(dc, np.dtype(key_dtype).name)  # noqa: N806
    V = getattr(dc, np.dtype(val_dtype).name) if has_vals else dc.int64  # noqa: N806
    items = items_per_item(key_dtype, val_dtype, local_memory)
    tile = WG * items
    padded = tile + tile // 32
    vsize = padded if has_vals else 1
    HAS = int(has_vals)  # noqa: N806
    chunk = ROWS  # entries of the count table each item scans
    steps = WG.bit_length() - 1
    LS, GS, VS = 0, ROWS + 1, 2 * ROWS + 2  # noqa: N806 -- offsets into meta: local starts, global, virtual

    @dc.kernel
    def radix_scatter_gpu(keys: dc.Buffer, vals: dc.Buffer, keys_out: dc.Buffer, vals_out: dc.Buffer,
                          offsets: dc.Buffer[dc.int64], n: dc.int64, tiles: dc.int64, shift: dc.int64,
                          top: dc.int32):
        sk = dc.shared((padded,), K)
        sv = dc.shared((vsize,), V)
        sk2 = dc.shared((tile,), K)
        sv2 = dc.shared((tile if HAS == 1 else 1,), V)
        cnt = dc.shared((ROWS * WG,), dc.int32)
        tsum = dc.shared((2 * WG,), dc.int32)
        meta = dc.shared((3 * ROWS + 3,), dc.int64)
        t = dc.local_id(0)
        g = dc.group_id(0)
        base = g * tile
        # 1. the tile into work-group memory, consecutive lanes on consecutive keys
        for j in range(items):
            e = j * WG + t
            if base + e < n:
                sk[pad(e)] = keys[base + e]
                if HAS == 1:
                    sv[pad(e)] = vals[base + e]
        for r in range(ROWS):
            cnt[r * WG + t] = 0
        dc.barrier()
        # 2. item t counts the digits of its keys t * items .. t * items + items - 1 in its column
        for q in range(items):
            e = t * items + q
            d = dc.int64(GB)
            if base + e < n:
                d = gdigit(sk[pad(e)], shift, top)
            cnt[d * WG + t] += 1
        dc.barrier()
        # 3. exclusive scan of cnt in (digit, item) order: chunk sums, a scan of those, chunk rewrite
        run = 0
        for c in range(chunk):
            run += cnt[t * chunk + c]
        tsum[t] = run
        dc.barrier()
        src = 0
        for s in range(steps):
            off = 1 << s
            v = tsum[src * WG + t]
            if t >= off:
                v += tsum[src * WG + t - off]
            tsum[(1 - src) * WG + t] = v
            dc.barrier()
            src = 1 - src
        excl = tsum[src * WG + t] - run
        for c in range(chunk):
            x = t * chunk + c
            v = cnt[x]
            cnt[x] = excl
            if x % WG == 0:
                meta[LS + x // WG] = excl  # where digit x // WG starts in the sorted tile
            excl += v
        if t == 0:
            meta[LS + ROWS] = tile
        dc.barrier()
        # 4. every key to its rank: the sorted tile
        for q in range(items):
            e = t * items + q
            k = sk[pad(e)]
            d = dc.int64(GB)
            if base + e < n:
                d = gdigit(k, shift, top)
            p = cnt[d * WG + t]
            cnt[d * WG + t] = p + 1
            sk2[p] = k
            if HAS == 1:
                sv2[p] = sv[pad(e)]
        # 5. the runs' global starts, and their starts in the virtual index space (aligned like them)
        if t == 0:
            vpos = dc.int64(0)
            for d in range(GB):
                gpos = offsets[d * tiles + g]
                vpos += (gpos - vpos) % 32
                meta[GS + d] = gpos
                meta[VS + d] = vpos
                vpos += meta[LS + d + 1] - meta[LS + d]
            meta[VS + GB] = vpos
        dc.barrier()
        for vv in range(t, meta[VS + GB], WG):
            for d in range(GB):
                r = vv - meta[VS + d]
                if r >= 0 and r < meta[LS + d + 1] - meta[LS + d]:
                    e = meta[LS + d] + r
                    keys_out[meta[GS + d] + r] = sk2[e]
                    if HAS == 1:
                        vals_out[meta[GS + d] + r] = sv2[e]

    return radix_scatter_gpu


__all__ = ["GB", "GBITS", "WG", "gdigit", "items_per_item", "pad", "radix_count_gpu_kernel",
           "radix_scatter_gpu_kernel", "shared_bytes"]
