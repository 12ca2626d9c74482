"""The 1-D and 2-D transforms of ``dc.fft`` (``fft ifft rfft irfft fft2 ifft2``) with numpy.fft's
arguments and result dtypes, and the engine (``_run``) the n-d functions of fft_api.py build on.

Paths (ops/dispatch.py): on host-memory (CPU) buffers scipy.fft (pocketfft, ``workers=`` every
core) when SciPy is installed, else numpy.fft, both zero-copy; complex fft/ifft/fft2/ifft2 over the
last axes on OpenCL devices by clFFT where it is installed (ops/clfft.py; lengths of factors 2, 3,
5, 7; on CPU-type OpenCL devices only when preferred), by cuFFT on real CUDA devices
(ops/cufft.py), both on interleaved complex buffers as they are (each checks itself against the kernels below at
its first use per device, dtype and number of axes: ops/selfcheck.py); elsewhere, or when forced, the
Stockham/Bluestein kernels of fft_kernels.py. Those work on separate real and imaginary planes
because the kernel language has no complex type in them yet: a complex Buffer on a non-host device
is split into planes (and the result joined) through the host; real input goes to the device as
it is.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from functools import cache
from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer
from ..runtime.array_hooks import HOOKS
from . import clfft, cufft, dispatch, selfcheck
from . import fft_kernels as fk
from . import sort_kernels as sk
from .arrays import normalize_axis, operand, result


@cache
def _host_fft() -> tuple[Any, dict[str, Any]]:
    """(module, extra keywords) for FFTs of host memory: scipy.fft (pocketfft with threads), else
    numpy.fft. Imported at the first host FFT: scipy.fft alone took 0.6 s of `import dotcompute`."""
    try:
        import scipy.fft
    except ImportError:  # SciPy is optional (the `scipy` extra; the test extra has it)
        return np.fft, {}
    return scipy.fft, {"workers": os.cpu_count() or 1}

_RADICES = (4, 2, 3, 5, 7)
_NORMS = (None, "backward", "ortho", "forward")


def factor(n: int) -> list[int] | None:
    """The Stockham radices for length n (4s first), or None when a prime factor above 7 remains."""
    out = []
    for r in _RADICES:
        while n % r == 0 and n > 1:
            out.append(r)
            n //= r
    return out if n == 1 else None


#: Bytes of device tables (twiddles, Bluestein chirps) kept per process; least recently used
#: tables go first beyond it. ``acc.memory.trim()`` drops the device's tables before trimming.
TABLE_CACHE_BYTES = 64 << 20


class _TableCache:
    """Device tables by key ``(accelerator, ...)``, bounded by their bytes, least recently used first out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[Any, ...], tuple[Any, int]] = OrderedDict()
        self.nbytes = 0

    def get(self, key: tuple[Any, ...], make: Any) -> Any:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[0]
        value = make()
        size = sum(b.nbytes for b in value if isinstance(b, Buffer))
        with self._lock:
            if key not in self._items:
                self._items[key] = (value, size)
                self.nbytes += size
            while self.nbytes > TABLE_CACHE_BYTES and len(self._items) > 1:
                _, (_, old) = self._items.popitem(last=False)
                self.nbytes -= old
        return value

    def drop(self, native_acc: Any = None) -> None:
        """Forgets the tables of the accelerator whose native object is ``native_acc`` (None: all)."""
        with self._lock:
            for key in [k for k in self._items if native_acc is None or k[0]._native is native_acc]:  # noqa: SLF001
                self.nbytes -= self._items.pop(key)[1]

    def __len__(self) -> int:
        return len(self._items)


tables = _TableCache()


def _twiddles(acc: Accelerator, n: int, dtype: Any) -> tuple[Buffer, Buffer]:
    def make() -> tuple[Buffer, Buffer]:
        # w_n ** t = cos + i sin of 2 pi t / n, computed in float64 once per (device, length, dtype)
        ang = 2 * np.pi * np.arange(n) / n
        return acc.asarray(np.cos(ang).astype(dtype)), acc.asarray(np.sin(ang).astype(dtype))

    return tables.get((acc, "twiddles", n, np.dtype(dtype).str), make)


def _stage_twiddles(acc: Accelerator, n: int, radices: list[int], dtype: Any) -> tuple[Buffer, Buffer, dict]:
    """The radix-4 stages' twiddles laid out per stage for unit-stride reads: for the stage after
    radices of product p, ``w_n ** (m*k*step)`` (step = n / 4p) at ``offset[p] + (m-1)*p + k``, for
    m = 1..3 and k < p; the same angles as ``_twiddles`` (so the same values, bit for bit)."""
    def make() -> tuple[Buffer, Buffer, dict]:
        parts, offsets, at, p = [], {}, 0, 1
        for r in radices:
            if r == 4:
                step = n // (4 * p)
                e = (np.arange(1, 4)[:, None] * np.arange(p)[None, :] * step).ravel()
                parts.append(e)
                offsets[p] = at
                at += e.size
            p *= r
        ang = 2 * np.pi * np.concatenate(parts or [np.zeros(1, np.int64)]) / n
        return acc.asarray(np.cos(ang).astype(dtype)), acc.asarray(np.sin(ang).astype(dtype)), offsets

    return tables.get((acc, "stage twiddles", n, np.dtype(dtype).str), make)


def _bluestein_tables(acc: Accelerator, n: int, sign: int, dtype: Any) -> tuple[Any, ...]:
    def make() -> tuple[Any, ...]:
        m = 1 << (2 * n - 2).bit_length()  # a power of two >= 2n - 1
        k = np.arange(n)
        w = np.exp(sign * 1j * np.pi * ((k * k) % (2 * n)) / n)  # the chirp, exact k^2 mod 2n
        wa = np.zeros(m, complex)
        wa[:n] = w
        b = np.zeros(m, complex)
        b[:n] = np.conj(w)
        b[m - n + 1:] = np.conj(w[1:][::-1])
        bf = np.fft.fft(b)  # the chirp's spectrum: a constant table, like the twiddles
        up = [acc.asarray(np.ascontiguousarray(v).astype(dtype)) for v in (wa.real, wa.imag, bf.real, bf.imag,
                                                                              w.real, w.imag)]
        return (m, *up)

    return tables.get((acc, "bluestein", n, sign, np.dtype(dtype).str), make)


def _before_trim(native_acc: Any) -> None:
    """``acc.memory.trim()``: the device's tables and vendor FFT plans go first, so that their
    memory is among what the trim returns."""
    tables.drop(native_acc)
    if clfft._plans:  # noqa: SLF001 -- plans of every device: cheap to make again
        clfft.release()
    if cufft._plans:  # noqa: SLF001
        cufft.release()


HOOKS["trim"] = _before_trim


def fft_rows(re: Buffer, im: Buffer, n: int, sign: int) -> tuple[Buffer, Buffer]:
    """Unnormalised DFT of every row of length n of the planes (new buffers); sign -1 forward, +1 inverse."""
    acc = re.accelerator
    t = re.dtype.type
    radices = factor(n)
    if radices is None:
        return _bluestein(re, im, n, sign)
    if not radices:  # n == 1
        return _copy(re), _copy(im)
    tw_re, tw_im = _twiddles(acc, n, t)
    stage = fk.stage_kernel(t)
    # GPUs: radix-4 stages with unit-stride twiddle reads and stores (radix4_tile_kernel); CPU
    # devices keep radix4_kernel, whose strided twiddle reads stay in their caches
    offsets = _stage_twiddles(acc, n, radices, t) if acc.type != "cpu" else None
    p = 1
    for r in radices:
        ro, io = acc.empty((re.size,), t), acc.empty((re.size,), t)
        if r == 4 and offsets is not None:
            s_re, s_im, off = offsets[0], offsets[1], offsets[2][p]
            staged = p < 32 and fk.TILE % p == 0 and (n // 4) % fk.TILE == 0
            items = re.size // 4
            # staged: a group's TILE items lie in one row; else any power of two that divides the items
            group = fk.TILE if staged else min(fk.TILE, items & -items)
            acc.launch(fk.radix4_tile_kernel(t, staged), items, re, im, ro, io, s_re, s_im, n, p, sign, off,
                       local_size=group)
        elif r == 4:
            acc.launch(fk.radix4_kernel(t), re.size // 4, re, im, ro, io, tw_re, tw_im, n, p, sign)
        else:
            acc.launch(stage, re.size // r, re, im, ro, io, tw_re, tw_im, n, r, p, sign)
        re, im, p = ro, io, p * r
    return re, im


def _bluestein(re: Buffer, im: Buffer, n: int, sign: int) -> tuple[Buffer, Buffer]:
    acc = re.accelerator
    t = re.dtype.type
    m, wa_re, wa_im, bf_re, bf_im, w_re, w_im = _bluestein_tables(acc, n, sign, t)
    ar, ai = _resize(re, n, m), _resize(im, n, m)
    cmul = fk.cmul_kernel(t)
    acc.launch(cmul, ar.size, ar, ai, wa_re, wa_im, m, 1.0)
    ar, ai = fft_rows(ar, ai, m, -1)
    acc.launch(cmul, ar.size, ar, ai, bf_re, bf_im, m, 1.0)
    ar, ai = fft_rows(ar, ai, m, +1)
    cr, ci = _resize(ar, m, n), _resize(ai, m, n)
    acc.launch(cmul, cr.size, cr, ci, w_re, w_im, n, 1.0 / m)
    return cr, ci


def _resize(x: Buffer, n_in: int, n_out: int, offset: int = 0) -> Buffer:
    rows = x.size // n_in if n_in else 0
    out = x.accelerator.empty((rows * n_out,), x.dtype)
    if out.size:
        x.accelerator.launch(fk.resize_kernel(x.dtype.type), out.size, x, out, n_in, n_out, offset)
    return out


def _copy(x: Buffer) -> Buffer:
    return _resize(x, x.size, x.size) if x.size else x


def _scale(x: Buffer, factor: float) -> None:
    if factor != 1.0 and x.size:
        # the product in float64 and rounded once, except on Metal (no float64: float32 throughout)
        f = np.float32(factor) if x.accelerator.backend == "metal" else float(factor)
        x.accelerator.launch(fk.scale_kernel(x.dtype.type), x.size, x, f)


def _move(x: Buffer, outer_n_inner: tuple[int, int, int], to_last: bool) -> Buffer:
    _, n, inner = outer_n_inner
    if inner == 1 or x.size == 0:
        return x
    out = x.accelerator.empty((x.size,), x.dtype)
    x.accelerator.launch(sk.move_axis_kernel(), x.size, x, out, n, inner, int(to_last))
    return out


def _factor_for(norm: Any, n: int, inverse: bool) -> float:
    if norm not in _NORMS:
        raise ValueError(f"dc.fft: norm must be one of {_NORMS}, got {norm!r}")
    if norm == "ortho":
        return 1 / math.sqrt(n) if n else 1.0
    if (norm in (None, "backward")) == inverse:
        return 1 / n if n else 1.0
    return 1.0


class _Planes:
    """A complex array as device planes: rows of length n along the transformed axis, moved last."""

    def __init__(self, acc: Accelerator, host_or_buf: Any, real_dtype: np.dtype) -> None:
        self.acc = acc
        t = real_dtype
        if isinstance(host_or_buf, Buffer) and host_or_buf.dtype == t:
            self.shape = host_or_buf.shape
            self.re = _flat(host_or_buf)
            self.im = acc.zeros((host_or_buf.size,), t)
            return
        host = host_or_buf.numpy() if isinstance(host_or_buf, Buffer) else np.asarray(host_or_buf)
        self.shape = host.shape
        self.re = acc.asarray(np.ascontiguousarray(host.real, dtype=t).reshape(-1))
        self.im = acc.asarray(np.ascontiguousarray(host.imag if host.dtype.kind == "c" else np.zeros(host.shape),
                                                   dtype=t).reshape(-1))

    def along(self, axis: int) -> tuple[int, int, int]:
        outer = int(np.prod(self.shape[:axis], dtype=np.int64))
        inner = int(np.prod(self.shape[axis + 1:], dtype=np.int64))
        return outer, self.shape[axis], inner

    def transform(self, axis: int, n_out: int, sign: int, factor: float, keep: int | None = None,
                  hermitian_n: int | None = None) -> None:
        """Along ``axis``: resize to ``n_out`` (or, for irfft, extend the half spectrum to
        ``hermitian_n``), DFT, scale, and keep the first ``keep`` terms."""
        layout = self.along(axis)
        re, im = _move(self.re, layout, True), _move(self.im, layout, True)
        n_in = layout[1]
        if hermitian_n is not None:
            h = hermitian_n // 2 + 1
            re, im = _resize(re, n_in, h), _resize(im, n_in, h)
            fr = self.acc.empty((re.size // h * hermitian_n,), re.dtype)
            fi = self.acc.empty((fr.size,), re.dtype)
            if fr.size:
                self.acc.launch(fk.hermitian_kernel(re.dtype.type), fr.size, re, im, fr, fi, h, hermitian_n)
            re, im, n = fr, fi, hermitian_n
        else:
            if n_out != n_in:
                re, im = _resize(re, n_in, n_out), _resize(im, n_in, n_out)
            n = n_out
        if re.size and n:
            re, im = fft_rows(re, im, n, sign)
            _scale(re, factor)
            _scale(im, factor)
        if keep is not None and keep != n:
            re, im = _resize(re, n, keep), _resize(im, n, keep)
            n = keep
        self.shape = self.shape[:axis] + (n,) + self.shape[axis + 1:]
        new_layout = self.along(axis)
        self.re, self.im = _move(re, new_layout, False), _move(im, new_layout, False)

    def complex(self, dtype: np.dtype) -> np.ndarray:
        out = np.empty(self.shape, dtype)
        out.real = self.re.numpy().reshape(self.shape)
        out.imag = self.im.numpy().reshape(self.shape)
        return out

    def real(self) -> Buffer:
        from .arrays import shaped

        return shaped(self.re, self.shape)


def _flat(buf: Buffer) -> Buffer:
    from .arrays import flat

    return flat(buf)


def _complex_dtype(name: str, dtype: np.dtype) -> np.dtype:
    if dtype.kind not in "biufc":
        raise TypeError(f"dc.fft.{name}: dtype {dtype} is not supported")
    return np.dtype(np.complex64) if dtype in (np.float32, np.complex64, np.float16) else np.dtype(np.complex128)


def _run(name: str, x: Any, axes: tuple[Any, ...], sizes: tuple[Any, ...], norm: Any, accelerator: Any,
         inverse: bool, real_in: bool = False, real_out: bool = False, conj_in: bool = False,
         conj_out: bool = False) -> Any:
    """One transform over ``axes`` (in that order; a real input's halving is on the first, a real
    output's Hermitian extension on the last). ``conj_in``/``conj_out``: conjugate the input / the
    output (hfft and ihfft are irfft and rfft of the conjugate)."""
    o = operand(f"dc.fft.{name}", x, accelerator)
    cdt = _complex_dtype(name, o.dtype)
    if real_in and o.dtype.kind == "c":
        raise TypeError(f"dc.fft.{name}: x must be real, got {o.dtype}")
    nd = len(o.shape)
    if nd == 0:
        raise ValueError(f"dc.fft.{name}: x must have at least one dimension")
    axs = tuple(normalize_axis(f"dc.fft.{name}", a, nd) for a in axes)
    for s in sizes:
        if s is not None and (not isinstance(s, (int, np.integer)) or s < 1):
            raise ValueError(f"dc.fft.{name}: n must be a positive int, got {s!r}")
    for ax, s in zip(axs, sizes, strict=False):
        if s is None and o.shape[ax] == 0:
            raise ValueError(f"dc.fft.{name}: invalid number of data points (0) specified along axis {ax}")
    if len(sizes) != len(axs):
        raise ValueError(f"dc.fft.{name}: s has {len(sizes)} sizes for {len(axs)} axes")
    if len(set(axs)) != len(axs):
        raise ValueError(f"dc.fft.{name}: repeated axes {axes}")
    _norm_check(norm)
    rdt = np.dtype(np.float32 if cdt == np.complex64 else np.float64)
    lengths = tuple(o.shape[a] for a in axs)
    lib = None
    if (name in ("fft", "ifft", "fft2", "ifft2") and o.dtype == cdt and axs == tuple(range(nd - len(axs), nd))
            and all(v is None or v == n for v, n in zip(sizes, lengths, strict=True))):
        lib = "clfft" if clfft.applies(o.acc, cdt, lengths) else "cufft" if cufft.applies(o.acc, cdt, lengths) else None
    path = dispatch.choose(f"fft.{name}", o.acc, rdt, library=lib,
                           vendor=dispatch.device_vendor(f"fft.{name}", o.acc, lib is not None))
    if path == "vendor" and lib is not None:
        try:
            if _fft_trusted(lib, o.acc, cdt, len(lengths)):
                return result(o, _library_fft(lib, o.device(), lengths, inverse, norm, cdt))
            path = dispatch.choose(f"fft.{name}", o.acc, rdt, vendor=False)  # failed its self-check: warned
        except (clfft.CLFFTError, cufft.CuFFTError) as exc:
            path = dispatch.vendor_failed(f"fft.{name}", o.acc, lib, exc, rdt)
    if path in ("vendor", "host"):
        host = o.on_host(path)
        value = _vendor(name, host, axs, sizes, norm)
        value = value.astype(rdt if real_out else cdt, copy=False)
        return result(o, np.ascontiguousarray(value))
    planes = _Planes(o.acc, o.buf if o.buf is not None else o.host, rdt)
    if conj_in:
        _scale(planes.im, -1.0)
    # hfft/ihfft are irfft/rfft of the conjugate with the opposite normalisation direction
    pnorm = {"forward": "backward", "ortho": "ortho"}.get(norm, "forward") if conj_in or conj_out else norm
    sign = 1 if inverse else -1
    for i, (ax, s) in enumerate(zip(axs, sizes, strict=True)):
        n_in = planes.shape[ax]
        last = i == len(axs) - 1
        if real_out and last:  # irfft: the half spectrum along the last axis, extended to length s
            n = s if s is not None else 2 * (n_in - 1)
            if n < 1:
                raise ValueError(f"dc.fft.{name}: invalid number of data points ({n}) specified")
            planes.transform(ax, n, sign, _factor_for(pnorm, n, inverse), hermitian_n=n)
        else:
            n = s if s is not None else n_in
            keep = n // 2 + 1 if (real_in and i == 0) else None
            planes.transform(ax, n, sign, _factor_for(pnorm, n, inverse), keep=keep)
    if real_out:
        return result(o, planes.real())
    if conj_out:
        _scale(planes.im, -1.0)
    return result(o, planes.complex(cdt))


def _fft_trusted(lib: str, acc: Accelerator, cdt: np.dtype, ndim: int) -> bool:
    """The vendor FFT's self-check (ops/selfcheck.py) for complex ``cdt`` over ``ndim`` trailing axes
    on ``acc``: a batch of mixed-radix lengths (distinct per axis: a swapped axis order shows),
    forward and inverse with numpy's normalisation, against the Stockham kernels."""
    shape = (3, 12) if ndim == 1 else (2, 4, 6)
    lengths = shape[-ndim:]
    rng = np.random.default_rng(29)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(cdt)

    def vendor() -> np.ndarray:
        b = acc.asarray(x)
        return np.concatenate([_library_fft(lib, b, lengths, inv, None, cdt).numpy() for inv in (False, True)])

    def portable() -> np.ndarray:
        forward, inverse = (fft, ifft) if ndim == 1 else (fft2, ifft2)
        with dispatch.internal("portable"):
            b = acc.asarray(x)
            return np.concatenate([forward(b).numpy(), inverse(b).numpy()])

    return selfcheck.trusted(lib, f"c2c {ndim}-D FFT", acc, cdt, clfft.identity() if lib == "clfft" else
                             cufft.identity(), vendor, portable)


def _library_fft(lib: str, x: Buffer, lengths: tuple[int, ...], inverse: bool, norm: Any, cdt: np.dtype) -> Buffer:
    """The transform over the trailing ``lengths`` of the complex buffer ``x`` by clFFT or cuFFT,
    with numpy's normalisation."""
    from .arrays import shaped

    factor = _factor_for(norm, int(np.prod(lengths)), inverse)
    if lib == "cufft":
        out = cufft.transform(x, lengths, inverse)  # unscaled: numpy's norm by a kernel
        exact = False
    else:
        # clFFT takes its scale as a float: for complex128, a factor that float32 would round is
        # applied afterwards in double precision (one more pass), so results keep float64 accuracy
        exact = cdt == np.complex64 or float(np.float32(factor)) == factor
        out = clfft.transform(x, lengths, inverse, factor if exact else 1.0)
    if not exact and factor != 1.0:
        flat_out = _flat(out)  # a copy when out has more than one axis: scaled, then reshaped
        _scale(flat_out, factor)
        out = shaped(flat_out, out.shape)
    return out


def _norm_check(norm: Any) -> None:
    if norm not in _NORMS:
        raise ValueError(f"dc.fft: norm must be one of {_NORMS}, got {norm!r}")


def _vendor(name: str, host: np.ndarray, axs: tuple[int, ...], sizes: tuple[Any, ...], norm: Any) -> np.ndarray:
    module, workers = _host_fft()
    fn = getattr(module, name)
    if name in ("rfftn", "irfftn"):  # _run's order has the real axis first (rfftn) or last (irfftn)
        axs, sizes = (axs[1:] + axs[:1], sizes[1:] + sizes[:1]) if name == "rfftn" else (axs, sizes)
        s = None if all(v is None for v in sizes) else tuple(
            v if v is not None else (host.shape[a] if name == "rfftn" or a != axs[-1] else 2 * (host.shape[a] - 1))
            for a, v in zip(axs, sizes, strict=True))
        return fn(host, s=s, axes=axs, norm=norm, **workers)
    if name in ("fft2", "ifft2", "fftn", "ifftn"):
        s = None if all(v is None for v in sizes) else tuple(v if v is not None else host.shape[a]
                                                               for a, v in zip(axs, sizes, strict=True))
        return fn(host, s=s, axes=axs, norm=norm, **workers)
    return fn(host, n=sizes[0], axis=axs[0], norm=norm, **workers)


def fft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *, accelerator: Any = "auto") -> Any:
    """Discrete Fourier transform along ``axis`` (``n``: cut or zero-pad to n points first)."""
    return _run("fft", x, (axis,), (n,), norm, accelerator, inverse=False)


def ifft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *, accelerator: Any = "auto") -> Any:
    """Inverse of :func:`fft` (scaled by 1/n with the default norm)."""
    return _run("ifft", x, (axis,), (n,), norm, accelerator, inverse=True)


def rfft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *, accelerator: Any = "auto") -> Any:
    """FFT of real input: the n//2 + 1 non-negative frequency terms."""
    return _run("rfft", x, (axis,), (n,), norm, accelerator, inverse=False, real_in=True)


def irfft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *, accelerator: Any = "auto") -> Any:
    """Inverse of :func:`rfft`: a real signal of ``n`` points (default ``2 * (len - 1)``)."""
    return _run("irfft", x, (axis,), (n,), norm, accelerator, inverse=True, real_out=True)


def fft2(x: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, *, accelerator: Any = "auto") -> Any:
    """2-D FFT over ``axes`` (``s``: the sizes along them)."""
    sizes = tuple(s) if s is not None else (None,) * len(axes)
    return _run("fft2", x, tuple(axes), sizes, norm, accelerator, inverse=False)


def ifft2(x: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, *, accelerator: Any = "auto") -> Any:
    """Inverse of :func:`fft2`."""
    sizes = tuple(s) if s is not None else (None,) * len(axes)
    return _run("ifft2", x, tuple(axes), sizes, norm, accelerator, inverse=True)

__all__ = ["factor", "fft", "fft2", "fft_rows", "ifft", "ifft2", "irfft", "rfft"]
