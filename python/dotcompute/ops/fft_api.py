"""The rest of the Array API 2024.12 ``fft`` extension: ``fftn ifftn rfftn irfftn hfft ihfft``,
``fftfreq rfftfreq`` and ``fftshift ifftshift``, with numpy 2's arguments and result dtypes.

The transforms are fft_core.py's ``_run`` over several axes (the same paths: scipy.fft on host memory,
the Stockham/Bluestein kernels elsewhere). The frequencies are made by a kernel on the requested
device, and the shifts are a roll per axis by a kernel on the buffer's device.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..runtime import Buffer
from ..runtime.default_device import default_float, resolve
from . import klang as dc
from .arrays import flat, normalize_axis, operand, result, shaped
from .fft_core import _copy as _engine_copy
from .fft_core import _run


def _nd_args(name: str, x: Any, s: Any, axes: Any) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """numpy 2's defaults: ``axes`` None is every axis, or the last ``len(s)`` when ``s`` is given;
    ``s`` None (or an entry -1) keeps the input's length along that axis."""
    nd = len(x.shape) if hasattr(x, "shape") else np.ndim(x)
    if axes is None:
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    else:
        axes = tuple(axes) if not np.isscalar(axes) else (axes,)
    if s is None:
        sizes: tuple[Any, ...] = (None,) * len(axes)
    else:
        sizes = tuple(None if operator.index(v) == -1 else operator.index(v) for v in s)
        if len(sizes) != len(axes):
            raise ValueError(f"dc.fft.{name}: s has {len(sizes)} sizes for {len(axes)} axes")
    return axes, sizes


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str | None = "backward",
         accelerator: Any = "auto") -> Any:
    """The n-dimensional DFT over ``axes`` (``s``: the sizes along them)."""

    axs, sizes = _nd_args("fftn", x, s, axes)
    return _run("fftn", x, axs, sizes, norm, accelerator, inverse=False)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str | None = "backward",
          accelerator: Any = "auto") -> Any:
    """Inverse of :func:`fftn`."""

    axs, sizes = _nd_args("ifftn", x, s, axes)
    return _run("ifftn", x, axs, sizes, norm, accelerator, inverse=True)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str | None = "backward",
          accelerator: Any = "auto") -> Any:
    """The n-dimensional DFT of real input: the last of ``axes`` keeps its ``n // 2 + 1`` terms."""

    axs, sizes = _nd_args("rfftn", x, s, axes)
    if not axs:
        raise ValueError("dc.fft.rfftn: axes must not be empty")
    # the real (halved) axis is transformed first: the others then see the half spectrum
    return _run("rfftn", x, axs[-1:] + axs[:-1], sizes[-1:] + sizes[:-1], norm, accelerator, inverse=False,
                real_in=True)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str | None = "backward",
           accelerator: Any = "auto") -> Any:
    """Inverse of :func:`rfftn`: real output, the last axis ``s[-1]`` long (default ``2 * (m - 1)``)."""

    axs, sizes = _nd_args("irfftn", x, s, axes)
    if not axs:
        raise ValueError("dc.fft.irfftn: axes must not be empty")
    return _run("irfftn", x, axs, sizes, norm, accelerator, inverse=True, real_out=True)


def hfft(x: Any, /, n: int | None = None, axis: int = -1, norm: str | None = "backward", *,
         accelerator: Any = "auto") -> Any:
    """The DFT of a signal with Hermitian symmetry given by its half: real output of ``n`` points."""

    return _run("hfft", x, (axis,), (n,), norm, accelerator, inverse=True, real_out=True, conj_in=True)


def ihfft(x: Any, /, n: int | None = None, axis: int = -1, norm: str | None = "backward", *,
          accelerator: Any = "auto") -> Any:
    """Inverse of :func:`hfft`: the half spectrum (``n // 2 + 1`` terms) of a real signal."""

    return _run("ihfft", x, (axis,), (n,), norm, accelerator, inverse=False, real_in=True, conj_out=True)


# ----------------------------------------------------------------------------------- frequencies
@dc.kernel
def _freq(out: dc.Buffer, n: dc.int64, nf, scale, half: dc.int32):
    # numpy's order: 0, 1, ..., (n - 1) // 2, then the negative frequencies -(n // 2), ..., -1;
    # scale has the output's dtype and the index stays a weak int, so float32 never needs float64
    i = dc.global_id(0)
    if i < out.shape[0]:
        if half == 0 and i >= (n + 1) // 2:
            out[i] = (i - nf) * scale  # nf: n in the output's dtype (exact below 2**24 in float32)
        else:
            out[i] = i * scale


def _freqs(name: str, n: Any, d: Any, dtype: Any, device: Any, half: bool) -> Buffer:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"dc.fft.{name}: n must be an integer, got {n!r}") from None
    if n < 1:
        raise ValueError(f"dc.fft.{name}: n must be positive, got {n}")
    acc = resolve(device, f"dc.fft.{name}: device")  # None: the default device, as the Array API functions
    dt = default_float(acc) if dtype is None else np.dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"dc.fft.{name}: dtype must be a real floating dtype, got {dt}")
    m = n // 2 + 1 if half else n
    out = acc.empty((m,), dt)
    acc.launch(_freq, m, out, n, dt.type(n), dt.type(1.0 / (float(d) * n)), int(half))
    return out


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Buffer:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``, on ``device``."""
    return _freqs("fftfreq", n, d, dtype, device, half=False)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Buffer:
    """The non-negative sample frequencies of an ``n``-point real DFT (``n // 2 + 1`` of them)."""
    return _freqs("rfftfreq", n, d, dtype, device, half=True)


# ---------------------------------------------------------------------------------------- shifts
@dc.kernel
def _roll(x: dc.Buffer, out: dc.Buffer, n: dc.int64, inner: dc.int64, shift: dc.int64):
    # along the middle axis of the (outer, n, inner) layout: out[.., (k + shift) mod n, ..] = x[.., k, ..]
    f = dc.global_id(0)
    if f < x.shape[0]:
        o = f // (n * inner)
        rest = f - o * n * inner
        k = rest // inner
        j = rest - k * inner
        out[(o * n + (k + shift) % n) * inner + j] = x[f]


def _shift(name: str, x: Any, axes: Any, inverse: bool) -> Any:
    o = operand(f"dc.fft.{name}", x)
    nd = len(o.shape)
    axs = tuple(range(nd)) if axes is None else ((axes,) if np.isscalar(axes) else tuple(axes))
    axs = tuple(normalize_axis(f"dc.fft.{name}", a, nd) for a in axs)
    if o.is_numpy:
        return (np.fft.ifftshift if inverse else np.fft.fftshift)(o.host, axes=axs)
    buf = flat(o.device())
    if buf is o.buf and buf.size:  # a 1-D input: roll into a new buffer, never the caller's
        buf = _copy(buf)
    for a in axs:
        n = o.shape[a]
        if n < 2 or buf.size == 0:
            continue
        inner = int(np.prod(o.shape[a + 1:], dtype=np.int64))
        shift = -(n // 2) if inverse else n // 2
        out = o.acc.empty((buf.size,), buf.dtype)
        o.acc.launch(_roll, buf.size, buf, out, n, inner, shift)
        buf = out
    return result(o, buf if nd == 1 else shaped(buf, o.shape))


def _copy(buf: Buffer) -> Buffer:
    return _engine_copy(buf)


def fftshift(x: Any, /, *, axes: Any = None) -> Any:
    """The zero frequency moved to the centre: a roll by ``n // 2`` along each of ``axes`` (default all)."""
    return _shift("fftshift", x, axes, inverse=False)


def ifftshift(x: Any, /, *, axes: Any = None) -> Any:
    """Inverse of :func:`fftshift` (a roll by ``-(n // 2)``)."""
    return _shift("ifftshift", x, axes, inverse=True)


__all__ = ["fftfreq", "fftn", "fftshift", "hfft", "ifftn", "ifftshift", "ihfft", "irfftn", "rfftfreq", "rfftn"]
