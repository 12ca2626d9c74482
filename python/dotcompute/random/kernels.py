"""The generator's kernels: element ``i`` of a launch is stream position ``start + i``.

Position ``p`` is the Philox counter ``(p mod 2**32, p div 2**32, 0, 0)`` under the generator's key;
its four words make that one element (floats take 24 or 53 bits, normals two uniforms, integers 64
bits), so an element depends only on ``(key, p)``: not on the launch size, the chunking, nor the device.
"""

from __future__ import annotations

from ..ops import klang as dc
from .philox import philox

INV24 = 1.0 / 16777216.0  # 2**-24: 24 random bits to a float32 in [0, 1), exactly
INV53 = 1.0 / 9007199254740992.0  # 2**-53: 53 random bits to a float64 in [0, 1), exactly
TWO_PI = 6.283185307179586


@dc.func
def words(start: dc.uint64, i: dc.int64, k0: dc.uint32, k1: dc.uint32):
    p = start + dc.uint64(i)
    return philox(dc.uint32(p & dc.uint64(0xFFFFFFFF)), dc.uint32(p >> 32), dc.uint32(0), dc.uint32(0), k0, k1)


@dc.func
def unit53(a: dc.uint32, b: dc.uint32) -> dc.float64:
    # numpy's construction: the top 27 bits of a and top 26 of b make 53 bits
    return dc.float64(dc.uint64(a >> 5) * dc.uint64(67108864) + dc.uint64(b >> 6)) * INV53


@dc.kernel
def uniform32(out: dc.Buffer[dc.float32], start: dc.uint64, k0: dc.uint32, k1: dc.uint32, low: dc.float32,
              scale: dc.float32):
    i = dc.global_id(0)
    if i < out.shape[0]:
        w = words(start, i, k0, k1)
        out[i] = low + scale * (dc.float32(w[0] >> 8) * dc.float32(INV24))


@dc.kernel
def uniform64(out: dc.Buffer[dc.float64], start: dc.uint64, k0: dc.uint32, k1: dc.uint32, low: dc.float64,
              scale: dc.float64):
    i = dc.global_id(0)
    if i < out.shape[0]:
        w = words(start, i, k0, k1)
        out[i] = low + scale * unit53(w[0], w[1])


@dc.kernel
def normal32(out: dc.Buffer[dc.float32], start: dc.uint64, k0: dc.uint32, k1: dc.uint32, loc: dc.float32,
             scale: dc.float32):
    i = dc.global_id(0)
    if i < out.shape[0]:
        w = words(start, i, k0, k1)
        # Box-Muller with u1 in (0, 1] (never log(0)) and u2 in [0, 1)
        u1 = dc.float32(1.0) - dc.float32(w[0] >> 8) * dc.float32(INV24)
        u2 = dc.float32(w[1] >> 8) * dc.float32(INV24)
        z = dc.sqrt(dc.float32(-2.0) * dc.log(u1)) * dc.cos(dc.float32(TWO_PI) * u2)
        out[i] = loc + scale * z


@dc.kernel
def normal64(out: dc.Buffer[dc.float64], start: dc.uint64, k0: dc.uint32, k1: dc.uint32, loc: dc.float64,
             scale: dc.float64):
    i = dc.global_id(0)
    if i < out.shape[0]:
        w = words(start, i, k0, k1)
        u1 = 1.0 - unit53(w[0], w[1])
        u2 = unit53(w[2], w[3])
        z = dc.sqrt(-2.0 * dc.log(u1)) * dc.cos(TWO_PI * u2)
        out[i] = loc + scale * z


@dc.kernel
def integers64(out: dc.Buffer[dc.uint64], start: dc.uint64, k0: dc.uint32, k1: dc.uint32, low: dc.uint64,
               span: dc.uint64):
    # span == 0 stands for 2**64 (every uint64); otherwise the 64 random bits are reduced mod span,
    # which favours low residues by at most span / 2**64
    i = dc.global_id(0)
    if i < out.shape[0]:
        w = words(start, i, k0, k1)
        r = (dc.uint64(w[0]) << 32) | dc.uint64(w[1])
        if span != dc.uint64(0):
            r = r % span
        out[i] = low + r


@dc.kernel
def gather_rows(x: dc.Buffer, idx: dc.Buffer[dc.int64], out: dc.Buffer, inner: dc.int64):
    # out row r is x row idx[r] (rows of ``inner`` elements, flat buffers)
    f = dc.global_id(0)
    if f < out.shape[0]:
        out[f] = x[idx[f // inner] * inner + f % inner]


@dc.kernel
def search_cdf(cdf: dc.Buffer, u: dc.Buffer, out: dc.Buffer[dc.int64]):
    # the first index whose cumulative probability exceeds u (a binary search per draw)
    i = dc.global_id(0)
    if i < out.shape[0]:
        lo = 0
        hi = cdf.shape[0] - 1
        v = u[i]
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[mid] > v:
                hi = mid
            else:
                lo = mid + 1
        out[i] = lo


__all__ = ["gather_rows", "integers64", "normal32", "normal64", "search_cdf", "uniform32", "uniform64", "words"]


@dc.kernel
def wrap_into(x: dc.Buffer[dc.uint64], out: dc.Buffer):
    # uint64 draws into the requested integer dtype: low + r is in range, so the conversion is exact
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i]


@dc.kernel
def copy_flat(x: dc.Buffer, out: dc.Buffer):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i]
