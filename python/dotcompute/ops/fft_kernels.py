"""Portable FFTs, written in the kernel language: mixed-radix Stockham stages and Bluestein.

The kernel language has no complex type yet, so a complex array is two planes, ``re`` and
``im``, of float32 or float64; rows of length ``n`` lie one after another (a batch).

``fft_stage`` is one radix-R pass of a self-sorting (Stockham) FFT: with ``p`` the product of the
radices already done and ``t = n / R``, work-item ``i`` reads ``x[i + s*t]`` for s < R, applies
the twiddles, does a length-R DFT and writes ``y[(i - i % p) * R + i % p + r*p]``. Twiddle and
DFT factors combine into one root of unity, ``w_L ** (s * (k + r*p))`` with ``L = p*R``, read
from a table of ``w_n ** t`` (so no sin/cos per element). Radices 4, 2, 3, 5 and 7 cover every
length whose prime factors are those; other lengths go through Bluestein's algorithm (a chirp
multiply, a power-of-two convolution by FFT, another chirp multiply), with ``cmul`` and
``chirp_pad`` below.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from . import klang as dc


@cache
def stage_kernel(dtype: Any) -> Any:
    T = dtype  # noqa: N806

    @dc.kernel
    def fft_stage(re: dc.Buffer, im: dc.Buffer, re_out: dc.Buffer, im_out: dc.Buffer, tw_re: dc.Buffer,
                  tw_im: dc.Buffer, n: dc.int64, radix: dc.int64, p: dc.int64, sign: dc.int64):
        g = dc.global_id(0)
        t = n // radix
        if g < (re.shape[0] // n) * t:
            row = g // t
            i = g - row * t
            base = row * n
            k = i % p
            j = (i - k) * radix + k
            big = p * radix  # L: the length of the DFTs this stage completes
            step = n // big  # w_L = w_n ** step
            for r in range(radix):
                sr = T(0)
                si = T(0)
                inc = k + r * p  # the root's exponent grows by this with s (mod L): no division
                q = 0
                for s in range(radix):
                    e = q * step
                    q += inc
                    if q >= big:
                        q -= big
                    c = tw_re[e]
                    sn = T(sign) * tw_im[e]
                    xr = re[base + i + s * t]
                    xi = im[base + i + s * t]
                    sr += xr * c - xi * sn
                    si += xr * sn + xi * c
                re_out[base + j + r * p] = sr
                im_out[base + j + r * p] = si

    return fft_stage


@dc.func
def twiddle_re(xr, xi, c, sn):
    return xr * c - xi * sn


@dc.func
def twiddle_im(xr, xi, c, sn):
    return xr * sn + xi * c


@cache
def radix4_kernel(dtype: Any) -> Any:
    """The radix-4 stage with its butterfly written out: three twiddle products and eight complex
    additions per four outputs (the generic stage does sixteen products); the multiplication by
    the fourth root of unity is a swap of real and imaginary parts."""
    T = dtype  # noqa: N806

    @dc.kernel
    def fft_radix4(re: dc.Buffer, im: dc.Buffer, re_out: dc.Buffer, im_out: dc.Buffer, tw_re: dc.Buffer,
                   tw_im: dc.Buffer, n: dc.int64, p: dc.int64, sign: dc.int64):
        g = dc.global_id(0)
        t = n // 4
        if g < (re.shape[0] // n) * t:
            row = g // t
            i = g - row * t
            base = row * n + i
            k = i % p
            out = row * n + (i - k) * 4 + k
            step = n // (4 * p)
            sg = T(sign)
            ar = re[base]
            ai = im[base]
            e1 = k * step
            br = twiddle_re(re[base + t], im[base + t], tw_re[e1], sg * tw_im[e1])
            bi = twiddle_im(re[base + t], im[base + t], tw_re[e1], sg * tw_im[e1])
            e2 = 2 * k * step
            cr = twiddle_re(re[base + 2 * t], im[base + 2 * t], tw_re[e2], sg * tw_im[e2])
            ci = twiddle_im(re[base + 2 * t], im[base + 2 * t], tw_re[e2], sg * tw_im[e2])
            e3 = 3 * k * step
            dr = twiddle_re(re[base + 3 * t], im[base + 3 * t], tw_re[e3], sg * tw_im[e3])
            di = twiddle_im(re[base + 3 * t], im[base + 3 * t], tw_re[e3], sg * tw_im[e3])
            s0r = ar + cr  # u0 + u2
            s0i = ai + ci
            d0r = ar - cr  # u0 - u2
            d0i = ai - ci
            s1r = br + dr  # u1 + u3
            s1i = bi + di
            d1r = br - dr  # u1 - u3
            d1i = bi - di
            # sigma * (u1 - u3), sigma = sign * i: (x + iy) * (sign * i) = -sign*y + i*sign*x
            rr = -sg * d1i
            ri = sg * d1r
            re_out[out] = s0r + s1r
            im_out[out] = s0i + s1i
            re_out[out + p] = d0r + rr
            im_out[out + p] = d0i + ri
            re_out[out + 2 * p] = s0r - s1r
            im_out[out + 2 * p] = s0i - s1i
            re_out[out + 3 * p] = d0r - rr
            im_out[out + 3 * p] = d0i - ri

    return fft_radix4


TILE = 256  # work-group size of radix4_tile_kernel


@cache
def radix4_tile_kernel(dtype: Any, staged: bool) -> Any:
    """The radix-4 stage for GPUs: unit-stride loads and stores across a warp's lanes.

    ``stw_re``/``stw_im`` hold this stage's twiddles contiguously from ``off`` (w_4p ** (m*k) at
    ``off + (m-1)*p + k``), where radix4_kernel reads ``tw[m*k*step]``, ``step`` apart across lanes (a
    sector per lane: 45 % coalescing on the simulator's GPU model). ``staged`` (stages with p < 32,
    ``TILE`` a multiple of p and of the group's rows): output ``(i - k)*4 + k + r*p`` of the group's
    items i0 .. i0+TILE-1 is a contiguous block of 4*TILE, but p = 1 puts a lane's neighbour 4 words
    away; the outputs go through work-group memory and leave as 4 unit-stride stores. The words sit
    rotated within each row of 32 by ``(row * min(p, 8)) % 32``, which keeps both the butterflies'
    writes (rows 4p apart per item group) and the unit-stride reads on 32 different banks.
    """
    T = dtype  # noqa: N806
    STAGED = staged  # noqa: N806 -- a constant: the untaken branch is folded away
    WORDS = 4 * TILE if staged else 1  # noqa: N806 -- the direct variant needs no work-group memory

    @dc.kernel
    def fft_radix4_tile(re: dc.Buffer, im: dc.Buffer, re_out: dc.Buffer, im_out: dc.Buffer, stw_re: dc.Buffer,
                        stw_im: dc.Buffer, n: dc.int64, p: dc.int64, sign: dc.int64, off: dc.int64):
        s_re = dc.shared((WORDS,), T)
        s_im = dc.shared((WORDS,), T)
        g = dc.global_id(0)
        t = n // 4
        rows = re.shape[0] // n
        row = g // t
        i = g - row * t
        k = i % p
        if g < rows * t:
            base = row * n + i
            sg = T(sign)
            ar = re[base]
            ai = im[base]
            c1 = stw_re[off + k]
            n1 = sg * stw_im[off + k]
            c2 = stw_re[off + p + k]
            n2 = sg * stw_im[off + p + k]
            c3 = stw_re[off + 2 * p + k]
            n3 = sg * stw_im[off + 2 * p + k]
            br = twiddle_re(re[base + t], im[base + t], c1, n1)
            bi = twiddle_im(re[base + t], im[base + t], c1, n1)
            cr = twiddle_re(re[base + 2 * t], im[base + 2 * t], c2, n2)
            ci = twiddle_im(re[base + 2 * t], im[base + 2 * t], c2, n2)
            dr = twiddle_re(re[base + 3 * t], im[base + 3 * t], c3, n3)
            di = twiddle_im(re[base + 3 * t], im[base + 3 * t], c3, n3)
            s0r = ar + cr
            s0i = ai + ci
            d0r = ar - cr
            d0i = ai - ci
            s1r = br + dr
            s1i = bi + di
            d1r = br - dr
            d1i = bi - di
            rr = -sg * d1i
            ri = sg * d1r
            if STAGED:
                rot = min(p, 8)
                q = (i - k) * 4 + k - (i - i % TILE) * 4  # the first output's place in the group's block
                for r in range(4):
                    jj = q + r * p
                    w = jj - jj % 32 + (jj + (jj // 32) * rot) % 32
                    if r == 0:
                        s_re[w] = s0r + s1r
                        s_im[w] = s0i + s1i
                    elif r == 1:
                        s_re[w] = d0r + rr
                        s_im[w] = d0i + ri
                    elif r == 2:
                        s_re[w] = s0r - s1r
                        s_im[w] = s0i - s1i
                    else:
                        s_re[w] = d0r - rr
                        s_im[w] = d0i - ri
            else:
                out = row * n + (i - k) * 4 + k
                re_out[out] = s0r + s1r
                im_out[out] = s0i + s1i
                re_out[out + p] = d0r + rr
                im_out[out + p] = d0i + ri
                re_out[out + 2 * p] = s0r - s1r
                im_out[out + 2 * p] = s0i - s1i
                re_out[out + 3 * p] = d0r - rr
                im_out[out + 3 * p] = d0i - ri
        if STAGED:
            dc.barrier()
            if g < rows * t:
                l = dc.local_id(0)  # noqa: E741
                first = row * n + (i - i % TILE) * 4  # the group's block of 4 * TILE outputs
                for r in range(4):
                    jj = l + r * TILE
                    w = jj - jj % 32 + (jj + (jj // 32) * min(p, 8)) % 32
                    re_out[first + jj] = s_re[w]
                    im_out[first + jj] = s_im[w]

    return fft_radix4_tile


@cache
def cmul_kernel(dtype: Any) -> Any:
    @dc.kernel
    def cmul(re: dc.Buffer, im: dc.Buffer, wr: dc.Buffer, wi: dc.Buffer, m: dc.int64, scale: dc.float64):
        # (re, im)[f] *= (wr, wi)[f % m] * scale: chirps and spectra, one row of m for every row
        f = dc.global_id(0)
        if f < re.shape[0]:
            q = f % m
            a = re[f]
            b = im[f]
            re[f] = (a * wr[q] - b * wi[q]) * scale
            im[f] = (a * wi[q] + b * wr[q]) * scale

    return cmul


@cache
def resize_kernel(dtype: Any) -> Any:
    T = dtype  # noqa: N806

    @dc.kernel
    def resize_rows(x: dc.Buffer, out: dc.Buffer, n_in: dc.int64, n_out: dc.int64, offset: dc.int64):
        # out row (length n_out) = x row (length n_in) from `offset`, cut or padded with zeros
        f = dc.global_id(0)
        if f < out.shape[0]:
            row = f // n_out
            q = f - row * n_out + offset
            out[f] = x[row * n_in + q] if q < n_in else T(0)

    return resize_rows


@cache
def hermitian_kernel(dtype: Any) -> Any:
    @dc.kernel
    def hermitian(re: dc.Buffer, im: dc.Buffer, re_out: dc.Buffer, im_out: dc.Buffer, h: dc.int64,
                  n: dc.int64):
        # the full spectrum of a real signal of length n from its first h = n//2 + 1 terms
        f = dc.global_id(0)
        if f < re_out.shape[0]:
            row = f // n
            q = f - row * n
            if q < h:
                re_out[f] = re[row * h + q]
                im_out[f] = im[row * h + q] if (q > 0 and 2 * q != n) else 0.0  # DC and Nyquist are real
            else:
                re_out[f] = re[row * h + n - q]
                im_out[f] = -im[row * h + n - q]

    return hermitian





@cache
def scale_kernel(dtype: Any) -> Any:
    T = dtype  # noqa: N806

    @dc.kernel
    def scale(x: dc.Buffer, factor):  # float64, or the data's float32 where a device has no float64
        f = dc.global_id(0)
        if f < x.shape[0]:
            x[f] = T(x[f] * factor)

    return scale
__all__ = ["TILE", "cmul_kernel", "hermitian_kernel", "radix4_kernel", "radix4_tile_kernel", "resize_kernel",
           "scale_kernel", "stage_kernel",
           "twiddle_im", "twiddle_re"]
