"""Boolean-mask and integer-array indexing of Buffers on devices (host memory uses numpy in place).

The forms the Array API standard asks for, each in kernels on the buffer's device:

- ``x[mask]`` (a bool array over the leading dimensions of ``x``, or a bool scalar): the positions
  of the true elements (``nonzero``'s flags and prefix sum; one number, the count, read back) and
  a gather of those rows of ``x`` seen as a 2-d buffer (``(mask.size, rest)``).
- ``x[mask] = value`` (a scalar or 0-d value): ``where(mask, value, x)`` written into ``x``, one
  fused kernel, the mask seen with trailing extents of 1 so it broadcasts over the rest of ``x``.
- ``x[i0, i1, ...]`` with one integer (array) per dimension: the flat position
  ``sum(ik * stride_k)`` of every element (an expression over the broadcast index arrays), then a
  gather from ``x``'s 1-d form. Indices are checked first (two device reductions per array).
- slices and ``...`` beside integer arrays (``x[:, idx]``, ``x[idx, 1:, j]``): each slice becomes
  the integer array of its positions (computed on the host from the slice, a few numbers; shaped
  to its result axis by numpy's rule: the array axes in place when the arrays are adjacent, else
  first), then the form above.
- ``x[key] = value`` for the integer-array keys above: the same flat positions, ``value``
  broadcast to the indexed shape and cast to ``x``'s dtype (one expression), and one scatter
  kernel writing ``x``'s memory. Where an index repeats, one of the values lands (which one is
  unspecified, as the standard says; numpy's sequential loop keeps the last).

Other mixes (``None`` beside arrays, masks beside other indices, an array assigned through a mask)
raise DeviceSupportError.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..expr import build
from ..expr.evaluate import before_write
from ..expr.indexing import DEVICE_ADVANCED
from ..expr.lazy import LazyBuffer
from ..ops import klang as dc
from ..runtime import Buffer
from . import _kernels
from ._common import concrete, no_device_path, same_device
from ._layout import alias, flat, takes


@dc.kernel
def _scatter(out: dc.Buffer, pos: dc.Buffer, values: dc.Buffer):
    # out[pos[f]] = values[f]: the positions were checked and made non-negative by the caller
    f = dc.global_id(0)
    if f < pos.shape[0]:
        out[pos[f]] = values[f]


def _mask_of(buf: Buffer, key: Any) -> Any:
    """The mask of a ``x[mask]`` / ``x[mask, ...]`` key (a bool Buffer or a bool), or None."""
    items = key if isinstance(key, tuple) else (key,)
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    if len(items) != 1:
        return None
    m = items[0]
    if isinstance(m, (bool, np.bool_)):
        return bool(m)
    if isinstance(m, Buffer) and m.dtype.kind == "b":
        if m.shape != buf.shape[:m.ndim]:
            raise IndexError(f"boolean index of shape {m.shape} does not match the leading dimensions of the "
                             f"indexed array, {buf.shape}")
        return m
    return None


def _rows(buf: Buffer, lead: int) -> Buffer:
    """``buf``'s memory as ``lead`` rows (1-d when each row is one element)."""
    inner = math.prod(buf.shape) // lead if lead else 0
    return alias(buf, (lead,) if inner == 1 or buf.size == 0 else (lead, inner))


def _gather_rows(buf: Buffer, rows: Buffer, lead: int, rest: tuple[int, ...]) -> Buffer:
    acc = buf.accelerator
    count = rows.size
    if count == 0 or buf.size == 0:
        return acc.empty((count, *rest), buf.dtype)
    got = _kernels.take_flat(_rows(buf, lead), concrete(rows), 0)
    return alias(got, (count, *rest))


def _mask_get(buf: Buffer, mask: Any) -> Buffer:
    acc = buf.accelerator
    if isinstance(mask, bool) or mask.ndim == 0:
        keep = mask if isinstance(mask, bool) else bool(mask)  # one element back
        if not keep:
            return acc.empty((0, *buf.shape), buf.dtype)
        out = acc.empty((1, *buf.shape), buf.dtype)
        flat(out)[...] = flat(buf)
        return out
    same_device("boolean-mask indexing", buf, mask)
    from .searching import nonzero

    lead = mask.size
    rows = nonzero(flat(mask))[0] if lead else acc.empty((0,), np.int64)
    return _gather_rows(buf, rows, lead, buf.shape[mask.ndim:])


def _int_arrays_get(buf: Buffer, key: tuple, checked: frozenset[int] = frozenset()) -> Buffer:
    shape, pos = _positions(buf, key, checked)
    if math.prod(shape) == 0:
        return buf.accelerator.empty(shape, buf.dtype)
    got = _kernels.take_flat(flat(buf), flat(concrete(pos)), 0)
    return alias(got, shape)


def _positions(buf: Buffer, key: tuple, checked: frozenset[int] = frozenset()) -> tuple[tuple[int, ...], Any]:
    """(the indexed shape, the flat positions as an int64 expression of that shape's size) for one
    integer or integer array per dimension of ``buf``; ``checked``: key positions already in range."""
    from .indexing import _check_indices

    acc = buf.accelerator
    arrays = [k for k in key if isinstance(k, Buffer)]
    same_device("integer-array indexing", buf, *arrays)
    shape = np.broadcast_shapes(*(k.shape for k in arrays))
    if len(shape) > 3:
        # expressions index 3 dimensions: each array broadcast (namespace/_layout.py), then 1-d
        from .manipulation import broadcast_to

        key = tuple(flat(broadcast_to(k, shape)) if isinstance(k, Buffer) else k for k in key)
    stride = buf.size
    pos: Any = None
    for d, (k, n) in enumerate(zip(key, buf.shape, strict=True)):
        stride //= n
        if isinstance(k, Buffer):
            if d not in checked:
                _check_indices("integer-array indexing", k, n)
            term = build.where(build.binary("lt", k, 0), build.binary("add", k, n), k).astype(np.int64)
        else:
            i = int(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for an axis of size {n}")
            term = i % n
        if stride != 1:
            term = term * stride if isinstance(term, int) else build.binary("mul", term, stride)
        pos = term if pos is None else build.binary("add", pos, term) if isinstance(pos, Buffer) or isinstance(
            term, Buffer) else pos + term
    grid = shape if len(shape) <= 3 else (math.prod(shape),)
    if not isinstance(pos, Buffer) or pos.shape != grid:
        pos = build.binary("add", acc.zeros(grid, np.int64), pos)
    return tuple(shape), pos


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _integer_key(buf: Buffer, items: tuple) -> tuple[tuple, frozenset[int]] | None:
    """``items`` (ints, slices, ``...`` and at least one integer-array Buffer) as one integer or
    integer array per dimension of ``buf``, by numpy's rule for the result's axes, with the key
    positions whose arrays are in range by construction; None for other keys."""
    if not any(isinstance(k, Buffer) for k in items):
        return None
    if not all(_is_int(k) or isinstance(k, slice) or k is Ellipsis or isinstance(k, Buffer) and k.dtype.kind in "iu"
               for k in items) or sum(k is Ellipsis for k in items) > 1:
        return None
    if Ellipsis in [k for k in items if not isinstance(k, Buffer)]:
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        fill = buf.ndim - (len(items) - 1)
        items = items[:at] + (slice(None),) * max(fill, 0) + items[at + 1:]
    if len(items) > buf.ndim:
        raise IndexError(f"too many indices for a buffer of {buf.ndim} dimensions")
    items = items + (slice(None),) * (buf.ndim - len(items))
    advanced = [d for d, k in enumerate(items) if not isinstance(k, slice)]
    adv_shape = tuple(np.broadcast_shapes(*(k.shape for k in items if isinstance(k, Buffer))))
    sliced = [d for d, k in enumerate(items) if isinstance(k, slice)]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    first = sum(1 for d in sliced if d < advanced[0]) if adjacent else 0  # where the array axes go
    ndim = len(sliced) + len(adv_shape)
    acc = buf.accelerator
    out: list[Any] = []
    checked = []
    for d, k in enumerate(items):
        if isinstance(k, slice):
            j = sliced.index(d)
            axis = j if j < first else j + len(adv_shape)
            positions = np.arange(buf.shape[d], dtype=np.int64)[k]
            where = [1] * ndim
            where[axis] = positions.size
            out.append(acc.asarray(positions.reshape(where)))
            checked.append(d)
        elif isinstance(k, Buffer):
            lead = (1,) * (len(adv_shape) - k.ndim) + tuple(k.shape)
            out.append(k.reshape((1,) * first + lead + (1,) * (ndim - first - len(adv_shape))) if ndim else k)
        else:
            out.append(k)
    return tuple(out), frozenset(checked)


def get(buf: Buffer, key: Any) -> Buffer:
    """``buf[key]`` for a mask or integer-array key, on ``buf``'s device."""
    acc = buf.accelerator
    if not takes(buf):
        raise no_device_path("advanced indexing", acc, f"a buffer of {buf.dtype}")
    mask = _mask_of(buf, key)
    if mask is not None:
        return _mask_get(buf, mask)
    items = tuple(acc.asarray(np.asarray(k)) if isinstance(k, (list, np.ndarray)) else k
                  for k in (key if isinstance(key, tuple) else (key,)))
    if len(items) == 1 and isinstance(items[0], Buffer) and items[0].dtype.kind in "iu" and buf.ndim > 1:
        # x[idx]: whole rows (numpy's integer array over the first dimension)
        from .indexing import _check_indices

        idx = items[0]
        same_device("integer-array indexing", buf, idx)
        _check_indices("integer-array indexing", idx, buf.shape[0])
        rows = build.where(build.binary("lt", idx, 0), build.binary("add", idx, buf.shape[0]), idx)
        got = _gather_rows(buf, flat(concrete(rows.astype(np.int64))), buf.shape[0], buf.shape[1:])
        return alias(got, idx.shape + buf.shape[1:])
    if (len(items) == buf.ndim and all(isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))
                                       or isinstance(k, Buffer) and k.dtype.kind in "iu" for k in items)):
        return _int_arrays_get(buf, items)
    mixed = _integer_key(buf, items)
    if mixed is not None:
        return _int_arrays_get(buf, *mixed)
    raise no_device_path("advanced indexing", acc, "this mix of slices, masks and integer arrays")


def _put_integers(buf: Buffer, key: tuple, checked: frozenset[int], value: Any) -> None:
    """``buf[key] = value`` for one integer or integer array per dimension: a scatter on the device."""
    acc = buf.accelerator
    if type(buf) is LazyBuffer and buf._view is not None:
        # a view: scatter into a copy of its elements, then write them back through the view
        window = concrete(buf)
        _put_integers(window, key, checked, value)
        buf[...] = window
        return
    shape, pos = _positions(buf, key, checked)
    if math.prod(shape) == 0:
        return
    values = acc.empty(shape, buf.dtype)
    values[...] = value  # broadcast and cast (numpy's assignment), one expression
    before_write(buf)  # expressions still reading the old elements run first
    positions = flat(concrete(pos))
    _kernels.launch(acc, _scatter, positions.size, flat(buf), positions, flat(values))


def _integer_items(buf: Buffer, key: Any) -> tuple[tuple, frozenset[int]] | None:
    acc = buf.accelerator
    items = tuple(acc.asarray(np.asarray(k)) if isinstance(k, (list, np.ndarray)) else k
                  for k in (key if isinstance(key, tuple) else (key,)))
    if len(items) == buf.ndim and all(_is_int(k) or isinstance(k, Buffer) and k.dtype.kind in "iu" for k in items) \
            and any(isinstance(k, Buffer) for k in items):
        return items, frozenset()
    return _integer_key(buf, items)


def put(buf: Buffer, key: Any, value: Any) -> None:
    """``buf[mask] = value`` for a scalar or 0-d ``value``, and ``buf[key] = value`` for integer-array
    keys (with ints, slices and ``...`` beside them), on ``buf``'s device."""
    acc = buf.accelerator
    integers = _integer_items(buf, key) if takes(buf) and _mask_of_or_none(buf, key) is None else None
    if integers is not None:
        if isinstance(value, Buffer):
            same_device("integer-array assignment", buf, value)
        _put_integers(buf, *integers, value)
        return
    mask = _mask_of(buf, key) if takes(buf) else None
    if mask is None or isinstance(value, Buffer) and value.ndim != 0 or isinstance(value, np.ndarray) and value.ndim:
        raise no_device_path("boolean-mask assignment", acc, "this key or value (a scalar or 0-d value is taken)")
    if isinstance(mask, bool) or mask.ndim == 0:
        if bool(mask):
            buf[...] = value
        return
    same_device("boolean-mask assignment", buf, mask)
    if buf.size == 0:
        return
    m = alias(mask, mask.shape + (1,) * (buf.ndim - mask.ndim))
    if isinstance(value, np.ndarray):
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()
    buf[...] = build.where(m, value, buf)


def _mask_of_or_none(buf: Buffer, key: Any) -> Any:
    try:
        return _mask_of(buf, key)
    except IndexError:
        return True  # a mask of the wrong shape: the mask path reports it


DEVICE_ADVANCED["get"] = get
DEVICE_ADVANCED["put"] = put

__all__: list[str] = []
