"""Stable argsort on the host, fast: the vendor path of ``dc.argsort`` / ``dc.sort_by_key`` for keys
of at most 32 bits.

numpy's stable argsort of 32-bit keys is a merge sort (timsort), several times slower than its
unstable sort of 64-bit integers (vectorised quicksort on AVX-512/AVX2 builds). A key of at most
32 bits and its position fit in one 64-bit integer, ``key << 32 | position``, in which no two are
equal; any sort of those integers is therefore stable, and the low 32 bits are then the argsort.
Floats first become integers with the same order (IEEE bits, the negative ones flipped), after
numpy's rules for the awkward values are applied: -0.0 equals 0.0, NaN sorts last.
"""

from __future__ import annotations

import numpy as np

MIN_SIZE = 4096  # below, numpy's merge sort is as quick and the packing is overhead
_MAX_ROW = 1 << 32  # positions must fit in the low 32 bits


def packable(dtype: np.dtype, n: int) -> bool:
    """Whether ``stable_argsort`` packs keys of ``dtype`` in rows of ``n``."""
    d = np.dtype(dtype)
    return n < _MAX_ROW and d.itemsize <= 4 and (d.kind in "biu" or d == np.float32)


def _ordered_bits(a: np.ndarray) -> np.ndarray:
    """float32 → int64 of the same order (numpy's: -0.0 == 0.0, every NaN after +inf)."""
    f = a + np.float32(0.0)  # -0.0 + 0.0 is +0.0; the sum is also a fresh array to edit
    f[np.isnan(f)] = np.float32(np.nan)  # one NaN bit pattern, positive: after +inf
    bits = f.view(np.int32).astype(np.int64)
    # negative floats: larger magnitude has larger bits but must sort first
    np.bitwise_xor(bits, 0x7FFFFFFF, out=bits, where=bits < 0)
    return bits


def stable_argsort(a: np.ndarray, axis: int | None = -1) -> np.ndarray:
    """``np.argsort(a, axis=axis, kind="stable")`` (int64), by packing when ``packable``."""
    if axis is None:
        a, axis = a.reshape(-1), -1
    axis = axis % max(a.ndim, 1)
    n = a.shape[axis] if a.ndim else 1
    if a.ndim == 0 or n < MIN_SIZE or not packable(a.dtype, n):
        return np.argsort(a, axis=axis, kind="stable")
    moved = np.moveaxis(a, axis, -1)
    if a.dtype == np.float32:
        keys = _ordered_bits(moved)
    elif a.dtype.kind == "u" or a.dtype == np.bool_:
        keys = moved.astype(np.uint64)  # unsigned: packed as uint64, so 2^31..2^32-1 stay positive
    else:
        keys = moved.astype(np.int64)
    keys <<= keys.dtype.type(32)
    keys |= np.arange(n, dtype=keys.dtype)
    keys.sort(axis=-1)  # every packed key is distinct: any sort order is the stable one
    keys &= keys.dtype.type(0xFFFFFFFF)
    order = keys.view(np.int64) if keys.dtype != np.int64 else keys
    return np.ascontiguousarray(np.moveaxis(order, -1, axis))


__all__ = ["MIN_SIZE", "packable", "stable_argsort"]
