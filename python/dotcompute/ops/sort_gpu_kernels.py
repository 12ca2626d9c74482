"""The portable radix sort's passes for GPUs (every device that is not CPU-type): coalesced, and
free of shared-memory bank conflicts.

One LSD pass per 4-bit digit (8 passes for 32-bit keys, 16 for 64-bit), each three steps over
tiles of ``WG * items`` keys (up to 4096), one work-group of ``WG`` items per tile:

* ``radix_count_gpu``: the group reads its tile with consecutive items on consecutive keys (one
  128-byte request per warp), counts digits in per-item columns of work-group memory (item t owns
  column t: no two lanes of a warp share a bank), sums the columns with a tree, and writes the
  tile's 16 counts into the digit-major table ``counts[d * tiles + tile]``.
* an exclusive scan of that table (ops/scan.py) gives every (digit, tile) its first output slot.
* ``radix_scatter_gpu``: the group stages its tile in work-group memory (coalesced reads) and sorts
  it there stably by the digit with four 1-bit splits whose ranks are sub-group counts:
  ``dc.subgroup_sum`` of a 32-key chunk's bits, a scan of the chunks' counts, and
  ``dc.subgroup_exclusive_sum`` for each key's rank among its chunk's ones. A split stores its
  zeros ascending from the start and its ones *backwards* from the end of the other copy of the
  tile: a sub-group's zeros and ones then fill 32 distinct banks (its zeros take banks c, c+1, ...
  and its ones c-1, c-2, ..., c being minus the ones before it), and any aligned run of 32
  positions is read from 32 distinct banks as well. Then each digit's run goes to its global
  slots through a "virtual" index space in which every run starts at the same offset modulo 32 as
  its global destination, so a warp writes one aligned 128-byte segment of a run (4 sectors per
  request, as a copy). The keys of such a segment are consecutive in the sorted tile: the warp
  reads the two aligned 32-key windows that hold them and each lane takes its key by
  ``dc.subgroup_shuffle``.

Longer tiles mean longer runs (256 keys per digit on average at 4096 keys) and so fewer partly
written sectors at the runs' ends. Work-group memory: the tile twice (keys and values; up to
32 KiB for 4096 uint32 keys), two int32 words per 32-key chunk, the runs' table.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ..lang.emit.subgroups import OPENCL_MAX_GROUP
from . import klang as dc

WG = 256  # items per work-group
GBITS = 4  # bits per digit
GB = 1 << GBITS  # digits


def shared_bytes(items: int, key_dtype: Any, val_dtype: Any | None) -> int:
    """Work-group memory of radix_scatter_gpu for tiles of ``WG * items`` keys: the tile twice
    (keys and values), two int32 words per 32-key chunk, the runs' table."""
    tile = WG * items
    ks = np.dtype(key_dtype).itemsize
    vs = np.dtype(val_dtype).itemsize if val_dtype is not None else 0
    return 2 * tile * (ks + vs) + (0 if vs else 8) + 2 * (tile // 32) * 4 + 8 * (3 * GB + 3)


def items_per_item(key_dtype: Any, val_dtype: Any | None, local_memory: int | None, backend: str = "") -> int:
    """Keys per item: the largest of 16, 8, 4, 2 (4096- to 512-key tiles: the longer the tile's
    16 runs, the fewer partly written sectors at their ends) whose tile fits in the device's
    work-group memory (``local_memory``, at most 48 KiB: CUDA's static limit; Metal has 32 KiB;
    OpenCL's sub-group emulation takes 8 KiB of it), else 1."""
    limit = min(local_memory or 48 * 1024, 48 * 1024)
    if backend == "opencl":
        limit -= OPENCL_MAX_GROUP * 8
    for items in (16, 8, 4, 2):
        if shared_bytes(items, key_dtype, val_dtype) <= limit:
            return items
    return 1


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
        if t == 0:  # one item: the 16 totals share bank 0 (16 lanes reading them would conflict)
            for d in range(GB):
                counts[d * tiles + g] = cnt[d * WG]

    return radix_count_gpu


@cache
def _bits(dtype: Any) -> tuple[Any, Any]:
    """Device functions taking a key or value of ``dtype`` to its bits as a uint64 and back: values
    cross lanes as two uint32 shuffles (Metal's SIMD-group functions take no 64-bit values)."""
    d = np.dtype(dtype)
    T = getattr(dc, d.name)  # noqa: N806
    if d == np.bool_:
        @dc.func
        def to_bits(x) -> dc.uint64:
            return dc.uint64(x)

        @dc.func
        def from_bits(w: dc.uint64):
            return w != 0
    elif d.itemsize == 8:
        @dc.func
        def to_bits(x) -> dc.uint64:
            return dc.bitcast(x, dc.uint64)

        @dc.func
        def from_bits(w: dc.uint64):
            return dc.bitcast(w, T)
    else:
        U = dc.uint32 if d.itemsize == 4 else getattr(dc, f"uint{d.itemsize * 8}")  # noqa: N806

        @dc.func
        def to_bits(x) -> dc.uint64:
            return dc.uint64(dc.bitcast(x, U))

        @dc.func
        def from_bits(w: dc.uint64):
            return dc.bitcast(U(w), T)
    return to_bits, from_bits


@cache
def radix_scatter_gpu_kernel(key_dtype: Any, val_dtype: Any | None, local_memory: int | None = None,
                             backend: str = "") -> Any:
    """``val_dtype`` None: keys alone. ``local_memory``: the device's work-group memory in bytes and
    ``backend`` its kind (they set the tile, ``items_per_item``)."""
    has_vals = val_dtype is not None
    K = getattr(dc, np.dtype(key_dtype).name)  # noqa: N806
    V = getattr(dc, np.dtype(val_dtype).name) if has_vals else dc.int64  # noqa: N806
    items = items_per_item(key_dtype, val_dtype, local_memory, backend)
    tile = WG * items
    vsize = 2 * tile if has_vals else 1
    HAS = int(has_vals)  # noqa: N806
    chunks = tile // 32  # sub-group chunks of the tile (32 items: the width on every target)
    LS, GS, VS = 0, GB + 1, 2 * GB + 2  # noqa: N806 -- offsets into meta: local starts, global, virtual
    kbits, kfrom = _bits(key_dtype)
    vbits, vfrom = _bits(val_dtype if has_vals else np.int64)
    KW = int(np.dtype(key_dtype).itemsize == 8)  # noqa: N806 -- 64-bit keys: their high halves cross lanes too
    VW = int(has_vals and np.dtype(val_dtype).itemsize == 8)  # noqa: N806

    @dc.kernel
    def radix_scatter_gpu(keys: dc.Buffer, vals: dc.Buffer, keys_out: dc.Buffer, vals_out: dc.Buffer,
                          counts: dc.Buffer[dc.int64], offsets: dc.Buffer[dc.int64], n: dc.int64,
                          tiles: dc.int64, shift: dc.int64, top: dc.int32):
        sk = dc.shared((2 * tile,), K)  # two copies of the tile: the split reads one, writes the other
        sv = dc.shared((vsize,), V)
        ones_in = dc.shared((chunks,), dc.int32)  # per sub-group chunk: its keys with the bit set
        ones_before = dc.shared((chunks,), dc.int32)  # ... and those before it in the tile
        meta = dc.shared((3 * GB + 3,), dc.int64)
        t = dc.local_id(0)
        g = dc.group_id(0)
        lane = dc.int32(dc.subgroup_local_id())
        sg = dc.int32(dc.subgroup_id())
        per = dc.int32(WG // dc.subgroup_size())  # sub-groups per work-group
        base = g * tile
        real = dc.int32(dc.min(n - base, dc.int64(tile)))  # keys of this tile; the rest are padding
        # 1. the tile into work-group memory, consecutive lanes on consecutive keys
        for j in range(items):
            e = j * WG + t
            kk = K(0)  # padding past n: every lane stores (and later reads) each position
            vk = V(0)
            if base + e < n:
                kk = keys[base + e]
                if HAS == 1:
                    vk = vals[base + e]
            sk[e] = kk
            if HAS == 1:
                sv[e] = vk
        if t == 0:
            # the runs' starts in the sorted tile, their global starts, and their starts in a virtual
            # index space in which every run begins at its global start's offset modulo 32
            vpos = dc.int64(0)
            lpos = dc.int64(0)
            for d in range(GB):
                gpos = offsets[d * tiles + g]
                vpos += (gpos - vpos) % 32
                meta[LS + d] = lpos
                meta[GS + d] = gpos
                meta[VS + d] = vpos
                c = counts[d * tiles + g]
                vpos += c
                lpos += c
            meta[LS + GB] = lpos
            meta[VS + GB] = vpos
        dc.barrier()
        # 2. a stable split of the tile on each bit of the digit (padding keys count as all ones, so
        # they stay last). Logical position p of the copy being read lies at p below `zeros`, and
        # at tile - 1 + zeros - p above: the ones are stored backwards. Then a sub-group's zeros
        # (ascending) and ones (descending) cover 32 distinct banks, and so does any aligned run of
        # 32 logical positions: no bank conflicts on either side.
        zeros = dc.int32(tile)
        src = 0
        for b in range(GBITS):
            for j in range(items):
                p = dc.int32(j * WG + t)
                a = p if p < zeros else tile - 1 + zeros - p
                k = sk[src * tile + a]
                bit = dc.int32(1)
                if p < real:
                    bit = dc.int32((gdigit(k, shift, top) >> b) & 1)
                ones = dc.subgroup_sum(bit)
                if lane == 0:
                    ones_in[j * per + sg] = ones
            dc.barrier()
            # every sub-group scans the chunk counts (each needs the total); the first stores them
            carry = dc.int32(0)
            for r in range((chunks + 31) // 32):
                c = r * 32 + lane
                x = dc.int32(0)
                if c < chunks:
                    x = ones_in[c]
                ex = dc.subgroup_exclusive_sum(x)
                if sg == 0 and c < chunks:
                    ones_before[c] = carry + ex
                carry += dc.subgroup_sum(x)
            dc.barrier()
            nzeros = tile - carry
            for j in range(items):
                p = dc.int32(j * WG + t)
                a = p if p < zeros else tile - 1 + zeros - p
                k = sk[src * tile + a]
                bit = dc.int32(1)
                if p < real:
                    bit = dc.int32((gdigit(k, shift, top) >> b) & 1)
                ob = ones_before[j * per + sg] + dc.subgroup_exclusive_sum(bit)
                to = p - ob  # a zero's new position (its address too)
                if bit == 1:
                    to = tile - 1 - ob  # the ob-th one, stored backwards from the end
                sk[(1 - src) * tile + to] = k
                if HAS == 1:
                    sv[(1 - src) * tile + to] = sv[src * tile + a]
            dc.barrier()
            zeros = nzeros
            src = 1 - src
        # 3. the runs to their global slots through the virtual index space: a sub-group writes one
        # aligned 128-byte segment of a run (or the end of one run and the start of the next). Its
        # keys are consecutive in the sorted tile: it reads the two aligned 32-key windows holding
        # them (conflict-free, as above) and each lane takes its key from them by a shuffle.
        vend = meta[VS + GB]
        for m in range((vend + WG - 1) // WG):
            vv = m * WG + t
            q = dc.int32(tile)  # the key's position in the sorted tile (tile: none)
            dst = dc.int64(0)
            for d in range(GB):
                r = vv - meta[VS + d]
                ls = meta[LS + d]
                le = meta[LS + d + 1]  # read by every lane (a read under `and` would diverge)
                gs = meta[GS + d]
                if r >= 0 and r < le - ls:
                    q = dc.int32(ls + r)
                    dst = gs + r
            lo = dc.subgroup_min(q)
            w0 = lo // 32 * 32
            # a lane without a key of its own stores the window's first key again (same address,
            # same value: no sector more), so every lane of the warp stores once per window
            own = q < tile
            if not own:
                q = lo
                for d in range(GB):
                    ls = meta[LS + d]
                    le = meta[LS + d + 1]
                    gs = meta[GS + d]
                    if lo >= ls and lo < le:
                        dst = gs + lo - ls
            p1 = w0 + lane
            p2 = p1 + 32
            k1 = K(0)
            k2 = K(0)
            v1 = V(0)
            v2 = V(0)
            if p1 < tile:
                k1 = sk[src * tile + (p1 if p1 < zeros else tile - 1 + zeros - p1)]
                if HAS == 1:
                    v1 = sv[src * tile + (p1 if p1 < zeros else tile - 1 + zeros - p1)]
            if p2 < tile:
                k2 = sk[src * tile + (p2 if p2 < zeros else tile - 1 + zeros - p2)]
                if HAS == 1:
                    v2 = sv[src * tile + (p2 if p2 < zeros else tile - 1 + zeros - p2)]
            at = dc.int32((q - w0) & 31)
            # the key (and value) at sorted position q: window 1 below w0 + 32, else window 2
            first = q - w0 < 32
            kb1 = kbits(k1)
            kb2 = kbits(k2)
            x1 = dc.uint64(dc.subgroup_shuffle(dc.uint32(kb1 & 0xFFFFFFFF), at))
            x2 = dc.uint64(dc.subgroup_shuffle(dc.uint32(kb2 & 0xFFFFFFFF), at))
            h1 = dc.uint64(0)
            h2 = dc.uint64(0)
            if KW == 1:
                h1 = dc.uint64(dc.subgroup_shuffle(dc.uint32(kb1 >> 32), at)) << 32
                h2 = dc.uint64(dc.subgroup_shuffle(dc.uint32(kb2 >> 32), at)) << 32
            kb = (x1 | h1) if first else (x2 | h2)
            vb = dc.uint64(0)
            if HAS == 1:
                vb1 = vbits(v1)
                vb2 = vbits(v2)
                y1 = dc.uint64(dc.subgroup_shuffle(dc.uint32(vb1 & 0xFFFFFFFF), at))
                y2 = dc.uint64(dc.subgroup_shuffle(dc.uint32(vb2 & 0xFFFFFFFF), at))
                g1 = dc.uint64(0)
                g2 = dc.uint64(0)
                if VW == 1:
                    g1 = dc.uint64(dc.subgroup_shuffle(dc.uint32(vb1 >> 32), at)) << 32
                    g2 = dc.uint64(dc.subgroup_shuffle(dc.uint32(vb2 >> 32), at)) << 32
                vb = (y1 | g1) if first else (y2 | g2)
            if lo < tile:
                keys_out[dst] = kfrom(kb)
                if HAS == 1:
                    vals_out[dst] = vfrom(vb)

    return radix_scatter_gpu


__all__ = ["GB", "GBITS", "WG", "gdigit", "items_per_item", "radix_count_gpu_kernel",
           "radix_scatter_gpu_kernel", "shared_bytes"]
