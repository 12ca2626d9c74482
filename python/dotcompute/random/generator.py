"""``dc.random.default_rng(seed)``: a numpy-style Generator whose numbers are made on the device.

The stream: element ``k`` of a generator's stream is a pure function of ``(key, k)`` — the four
Philox4x32-10 words of counter ``(k mod 2**32, k div 2**32, 0, 0)`` under the key (the seed's low
and high 32 bits). A draw of ``n`` values takes positions ``pos .. pos + n - 1`` and advances
``pos`` by ``n``, so ``random(10)`` then ``random(6)`` gives the same 16 numbers as ``random(16)``,
on every backend, however the output is split into launches or chunks (``Generator.at(k)`` jumps
to position ``k``: chunk ``[a, b)`` of a large array is ``rng.at(a).random(b - a)``).

Bits: ``random``/``uniform`` and ``integers`` are bit-identical on every backend (integer and
exactly-rounded float arithmetic only); ``normal`` uses log, sqrt and cos, which device math
libraries may round differently in the last place.
"""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np

from ..ops import argsort
from ..runtime import Accelerator, Buffer
from ..runtime.default_device import default_float as _default_float
from ..runtime.default_device import resolve
from . import kernels as rk

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_U64 = 1 << 64


def _size(name: str, size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        size = (size,)
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"Generator.{name}: size must be an int or a tuple of ints, got {size!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"Generator.{name}: size must be non-negative, got {shape}")
    return shape


def _seed_key(seed: Any) -> tuple[int, int]:
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    try:
        s = operator.index(seed)
    except TypeError:
        raise TypeError(f"default_rng: seed must be a non-negative int or None, got {type(seed).__name__}") from None
    if s < 0 or s >= _U64:
        raise ValueError(f"default_rng: seed must be in [0, 2**64), got {s}")
    return s & 0xFFFFFFFF, s >> 32


class Generator:
    """Draws from one Philox stream onto ``device`` (default: what ``"auto"`` gives)."""

    def __init__(self, seed: Any = None, device: Any = None) -> None:
        self.key = _seed_key(seed)
        self.position = 0
        self._device = device

    def __repr__(self) -> str:
        return f"Generator(Philox4x32-10, key={self.key}, position={self.position})"

    def at(self, position: int) -> Generator:
        """A generator on the same key whose next draw starts at stream ``position``."""
        g = Generator.__new__(Generator)
        g.key, g._device = self.key, self._device
        g.position = operator.index(position)
        if not 0 <= g.position < _U64:
            raise ValueError(f"Generator.at: position must be in [0, 2**64), got {position}")
        return g

    def _acc(self, device: Any) -> Accelerator:
        # None: the default device (a dc.default_device block, DOTCOMPUTE_DEFAULT_DEVICE, else "auto")
        return resolve(device if device is not None else self._device, "device")

    def _take(self, n: int) -> int:
        start = self.position
        self.position = (self.position + n) % _U64
        return start

    def _draw(self, kernel: Any, shape: tuple[int, ...], dtype: np.dtype, acc: Accelerator, *params: Any) -> Buffer:
        n = int(np.prod(shape, dtype=np.int64))
        out = acc.empty((n,), dtype)
        start = self._take(n)
        if n:
            acc.launch(kernel, n, out, np.uint64(start), np.uint32(self.key[0]), np.uint32(self.key[1]), *params)
        return _reshape(out, shape)

    def _float(self, name: str, dtype: Any, acc: Accelerator) -> np.dtype:
        d = _default_float(acc) if dtype is None else np.dtype(dtype)
        if d not in _FLOATS:
            raise TypeError(f"Generator.{name}: dtype must be float32 or float64, got {d}")
        return d

    def random(self, size: Any = None, dtype: Any = None, *, device: Any = None) -> Buffer:
        """Uniform floats in [0, 1) (``dtype`` None: float64, float32 on devices without float64)."""
        return self.uniform(0.0, 1.0, size, dtype=dtype, device=device, _name="random")

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None, *, dtype: Any = None,
                device: Any = None, _name: str = "uniform") -> Buffer:
        """Uniform floats in [low, high) (numpy's spelling: high may be below low)."""
        acc = self._acc(device)
        d = self._float(_name, dtype, acc)
        t = d.type
        lo, hi = float(low), float(high)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise OverflowError(f"Generator.{_name}: low and high must be finite, got {low} and {high}")
        kernel = rk.uniform32 if d == np.float32 else rk.uniform64
        return self._draw(kernel, _size(_name, size), d, acc, t(lo), t(hi - lo))

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None, *, dtype: Any = None,
               device: Any = None) -> Buffer:
        """Normal (Gaussian) floats by the Box-Muller transform (one value per stream position)."""
        acc = self._acc(device)
        d = self._float("normal", dtype, acc)
        if float(scale) < 0:
            raise ValueError(f"Generator.normal: scale must be non-negative, got {scale}")
        kernel = rk.normal32 if d == np.float32 else rk.normal64
        return self._draw(kernel, _size("normal", size), d, acc, d.type(loc), d.type(scale))

    def integers(self, low: int, high: int | None = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False, *, device: Any = None) -> Buffer:
        """Integers in [low, high) (``endpoint=True``: [low, high]); ``high`` None: [0, low)."""
        d = np.dtype(dtype)
        if d.kind not in "iub":
            raise TypeError(f"Generator.integers: dtype must be an integer or bool dtype, got {d}")
        if high is None:
            low, high = 0, low
        lo, hi = operator.index(low), operator.index(high) + (1 if endpoint else 0)
        info = (0, 1) if d.kind == "b" else (int(np.iinfo(d).min), int(np.iinfo(d).max))
        if lo >= hi:
            raise ValueError(f"Generator.integers: low >= high ({low} >= {high}{' + 1' if endpoint else ''})")
        if lo < info[0] or hi - 1 > info[1]:
            raise ValueError(f"Generator.integers: [{low}, {high}) is out of bounds for {d}")
        acc = self._acc(device)
        raw = self._draw(rk.integers64, _size("integers", size), np.dtype(np.uint64), acc,
                         np.uint64(lo % _U64), np.uint64((hi - lo) % _U64))
        if d == np.uint64:
            return raw
        out = acc.empty((raw.size,), d)
        if raw.size:
            acc.launch(rk.wrap_into, raw.size, _flat(raw), out)
        return _reshape(out, raw.shape)

    def permutation(self, x: Any, axis: int = 0, *, device: Any = None) -> Buffer:
        """A shuffled copy of ``x`` along axis 0 (an int n: a permutation of ``arange(n)``)."""
        if isinstance(x, (int, np.integer)):
            acc = self._acc(device)
            return self._perm(int(x), acc)
        buf = _as_buffer("permutation", x, self._acc(device))
        if axis != 0:
            raise ValueError(f"Generator.permutation: axis must be 0, got {axis}")
        if buf.ndim == 0:
            raise ValueError("Generator.permutation: x must have at least one dimension (or be an int)")
        return _gather(buf, self._perm(buf.shape[0], buf.accelerator))

    def shuffle(self, x: Buffer, axis: int = 0) -> None:
        """Shuffles the Buffer ``x`` in place along axis 0."""
        if not isinstance(x, Buffer):
            raise TypeError(f"Generator.shuffle: x must be a dc.Buffer, got {type(x).__name__}")
        if axis != 0 or x.ndim == 0:
            raise ValueError("Generator.shuffle: x must have at least one dimension, shuffled along axis 0")
        shuffled = _gather(x, self._perm(x.shape[0], x.accelerator))
        _copy_into(shuffled, x)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0, *,
               device: Any = None) -> Buffer:
        """Random picks from ``a`` (an int n: from ``arange(n)``), with or without replacement,
        uniformly or by probabilities ``p``."""
        acc = self._acc(device)
        pool = None if isinstance(a, (int, np.integer)) else _as_buffer("choice", a, acc)
        n = int(a) if pool is None else (pool.shape[0] if pool.ndim else 0)
        if axis != 0:
            raise ValueError(f"Generator.choice: axis must be 0, got {axis}")
        if n <= 0 and (pool is None or pool.ndim == 0):
            raise ValueError("Generator.choice: a must be a positive int or a non-empty array")
        shape = _size("choice", size)
        k = int(np.prod(shape, dtype=np.int64))
        if n == 0 and k:
            raise ValueError("Generator.choice: a cannot be empty unless no samples are taken")
        if p is not None:
            pv = np.asarray(p.numpy() if isinstance(p, Buffer) else p, np.float64)
            if pv.shape != (n,) or np.any(pv < 0) or not np.isclose(pv.sum(), 1.0):
                raise ValueError("Generator.choice: p must be n non-negative probabilities that sum to 1")
        if not replace:
            if k > n:
                raise ValueError(f"Generator.choice: cannot take {k} samples from {n} without replacement")
            if p is not None:
                raise NotImplementedError("Generator.choice: replace=False with p= has no device path yet")
            idx = _head(self._perm(n, acc), k)
        elif p is None:
            idx = _flat(self.integers(0, n, (k,), device=acc))
        else:
            ft = _default_float(acc)
            cdf = acc.asarray((np.cumsum(pv) / pv.sum()).astype(ft))  # p is a short host list: its cdf is made there
            u = _flat(self.random((k,), dtype=ft, device=acc))
            idx = acc.empty((k,), np.int64)
            if k:
                acc.launch(rk.search_cdf, k, cdf, u, idx)
        picked = idx if pool is None else _gather(pool, idx)
        return _reshape(_flat(picked), shape + (pool.shape[1:] if pool is not None else ()))

    def _perm(self, n: int, acc: Accelerator) -> Buffer:
        # the order of n random 64-bit keys (argsort is stable, so ties cannot make it device-dependent)
        keys = self.integers(0, 1 << 63, (n,), dtype=np.int64, device=acc)
        return argsort(keys) if n else acc.empty((0,), np.int64)


def default_rng(seed: Any = None, *, device: Any = None) -> Generator:
    """A :class:`Generator` seeded with ``seed`` (a non-negative int below 2**64, or None: from the OS)."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed, device)


# ------------------------------------------------------------------------------ layout helpers
def _flat(buf: Buffer) -> Buffer:
    from ..ops.arrays import flat

    return flat(buf)


def _reshape(buf: Buffer, shape: tuple[int, ...]) -> Buffer:
    from ..ops.arrays import shaped

    if buf.shape == shape:
        return buf
    return shaped(_flat(buf), shape)


def _head(buf: Buffer, k: int) -> Buffer:
    out = buf.accelerator.empty((k,), buf.dtype)
    if k:
        buf.accelerator.launch(rk.copy_flat, k, buf, out)
    return out


def _as_buffer(name: str, x: Any, acc: Accelerator) -> Buffer:
    if isinstance(x, Buffer):
        return x
    try:
        return acc.asarray(np.ascontiguousarray(x))
    except Exception as exc:  # noqa: BLE001 -- what numpy cannot read is the caller's type error
        raise TypeError(f"Generator.{name}: x must be an int, a dc.Buffer or an array") from exc


def _gather(buf: Buffer, idx: Buffer) -> Buffer:
    inner = int(np.prod(buf.shape[1:], dtype=np.int64))
    out = buf.accelerator.empty((idx.size * inner,), buf.dtype)
    if out.size:
        buf.accelerator.launch(rk.gather_rows, out.size, _flat(buf), idx, out, inner)
    return _reshape(out, (idx.size,) + buf.shape[1:])


def _copy_into(src: Buffer, dst: Buffer) -> None:
    """The shuffled rows written back into ``dst`` on the device (kernels index up to 3 dimensions;
    more go through the host, as ops/arrays.py does)."""
    from ..ops import arrays

    f = _flat(src)
    if dst.size == 0:
        return
    if dst.ndim == 1:
        dst.accelerator.launch(rk.copy_flat, f.size, f, dst)
    elif dst.ndim > 3:
        dst.copy_from(f.numpy().reshape(dst.shape))
    elif dst.ndim == 2:
        dst.accelerator.launch(arrays._unflatten2, f.size, f, dst, dst.shape[1])  # noqa: SLF001
    else:
        dst.accelerator.launch(arrays._unflatten3, f.size, f, dst, dst.shape[1], dst.shape[2])  # noqa: SLF001


__all__ = ["Generator", "default_rng"]
