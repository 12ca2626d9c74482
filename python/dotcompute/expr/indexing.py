"""``b[i]``, ``b[i:j]``, ``b[:, k]``, ``b[...] = v``, ``b.T``, ``b.reshape``.

Basic indexing (integers, slices with any step, ``...``) makes a *view*: a LazyBuffer that
reads the base buffer's memory whenever it is used (so it sees later writes, like a numpy
view) and writes into it (``v[...] = x``, ``v += 1``). Reading a view fuses into the
expression that uses it; a kernel launch is handed the base's memory (a region of the same
allocation; a strided view the kernel only reads as a copy: docs/views.md); an array
operation reads a copy of its current elements. Indexing
every dimension with an integer reads one element and returns a numpy scalar (it waits for
the work queued on the buffer).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..runtime import Buffer
from ..runtime.buffer import normalize_shape
from .codegen import CAST_NAMES, compile_kernel, launch
from .evaluate import before_write, concrete, flat_view, host_index, run, store
from .lazy import LazyBuffer, View
from .types import EXPR_DTYPES
from .views import reshaped


def _base_and_index(buf: Buffer) -> tuple[Buffer, tuple[tuple, ...]]:
    if type(buf) is LazyBuffer and buf._view is not None:
        return buf._view.base, buf._view.index
    base = concrete(buf)
    return base, tuple(("map", d, 0, 1) for d in range(base.ndim))


def _normalize_key(key: Any, ndim: int) -> list[Any]:
    """The key as one entry per buffer dimension (ints and slices), with ``None`` (a new axis of
    extent 1) kept where it stands."""
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not Ellipsis and k is not None)
    out: list[Any] = []
    for k in items:
        if k is Ellipsis:
            out.extend([slice(None)] * max(ndim - used, 0))
        elif isinstance(k, slice) or k is None:
            out.append(k)
        else:
            try:
                out.append(operator.index(k))
            except TypeError:
                raise IndexError(f"only integers, slices, '...', None, boolean masks and integer arrays are "
                                 f"valid buffer indices, not {type(k).__name__}") from None
    if used > ndim:
        raise IndexError(f"too many indices: the buffer has {ndim} dimension(s), {used} were given")
    if not any(k is Ellipsis for k in items):
        out.extend([slice(None)] * (ndim - used))
    return out


def is_advanced(key: Any) -> bool:
    """Whether ``key`` has a part that basic (view) indexing cannot express: a boolean (scalar or
    array) or an integer array. A one-element Buffer is one of these, never an int (numpy 2's rule)."""
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, (bool, np.bool_, list, np.ndarray)):
            return True
        if isinstance(k, Buffer) and (k.ndim > 0 or k.dtype.kind == "b"):
            return True
    return False


def _host_key(key: Any) -> Any:
    items = key if isinstance(key, tuple) else (key,)
    return tuple(np.asarray(k) if isinstance(k, Buffer) else k for k in items)


def _host_view(buf: Buffer) -> tuple[np.ndarray, Any]:
    """(the elements of ``buf`` as numpy, how to write them back) for a host-visible buffer."""
    base, index = _base_and_index(buf)
    whole = base._native.host_view(True)
    if type(buf) is LazyBuffer and buf._view is not None:
        hidx = host_index(index, buf.shape)
        return whole[hidx] if hidx else whole.copy(), (base, hidx)
    return whole, (base, None)


#: device implementations of mask and integer-array indexing ("get", "put"), installed by the
#: namespace (namespace/advanced.py: they use its nonzero and gather kernels, a layer above)
DEVICE_ADVANCED: dict[str, Any] = {}


def _advanced_get(buf: Buffer, key: Any) -> Buffer:
    acc = buf.accelerator
    if not acc.unified_memory and not buf.host_visible and "get" in DEVICE_ADVANCED:
        return DEVICE_ADVANCED["get"](buf, key)
    if not acc.unified_memory and not buf.host_visible:
        raise TypeError(f"boolean-mask and integer-array indexing have no device implementation on {acc.id} "
                        "yet (dotcompute does not copy through the host silently); see docs/array-api.md")
    elements, _ = _host_view(concrete(buf) if type(buf) is LazyBuffer and buf._op is not None else buf)
    result = np.asarray(elements[_host_key(key)])
    return acc.asarray(np.array(result, order="C"))


def _advanced_set(buf: Buffer, key: Any, value: Any) -> None:
    acc = buf.accelerator
    if not acc.unified_memory and not buf.host_visible and "put" in DEVICE_ADVANCED:
        if type(buf) is LazyBuffer and buf._op is not None:
            raise TypeError("cannot assign into a pending expression (it has no memory of its own)")
        DEVICE_ADVANCED["put"](buf, key, value)
        return
    if not acc.unified_memory and not buf.host_visible:
        raise TypeError(f"boolean-mask and integer-array assignment have no device implementation on {acc.id} "
                        "yet (dotcompute does not copy through the host silently); see docs/array-api.md")
    if type(buf) is LazyBuffer and buf._op is not None:
        raise TypeError("cannot assign into a pending expression (it has no memory of its own)")
    host_value = np.asarray(value)  # a Buffer value is evaluated (its own pending work runs first)
    base, _ = _base_and_index(buf)
    before_write(base)
    elements, (base, hidx) = _host_view(buf)
    elements[_host_key(key)] = host_value
    if hidx is not None:  # a view: its elements were a copy, written back into the base's memory
        base._native.host_view(True)[hidx] = elements
    base._native.mark_host_dirty()


def view_of(buf: Buffer, key: Any) -> tuple[Buffer, tuple[tuple, ...], tuple[int, ...]]:
    """(base buffer, view index over it, view shape) for ``buf[key]``."""
    shape = buf.shape
    keys = _normalize_key(key, len(shape))
    base, index = _base_and_index(buf)
    new_dims: list[Any] = []  # per view dim of buf: ("fix", value) or ("map", new_dim, start, step)
    new_shape: list[int] = []
    d = 0
    for k in keys:
        if k is None:
            new_shape.append(1)  # a new axis: no base dimension maps to it
            continue
        n = shape[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            new_dims.append(("map", len(new_shape), start, step))
            new_shape.append(len(range(start, stop, step)))
        else:
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            new_dims.append(("fix", k % n))
        d += 1
    composed = []
    for entry in index:
        if entry[0] == "fix":
            composed.append(entry)
            continue
        _, vdim, start, step = entry
        sub = new_dims[vdim]
        if sub[0] == "fix":
            composed.append(("fix", start + step * sub[1]))
        else:
            composed.append(("map", sub[1], start + step * sub[2], step * sub[3]))
    return base, tuple(composed), tuple(new_shape)


def getitem(buf: Buffer, key: Any) -> Any:
    if is_advanced(key):
        return _advanced_get(buf, key)
    base, index, shape = view_of(buf, key)
    acc = buf.accelerator
    if shape == () and buf.ndim == 0:
        return concrete(buf) if type(buf) is LazyBuffer else buf  # x[()] and x[...] of a 0-d Buffer: itself
    if shape == ():
        return read_element(base, index, acc)
    # a view of any number of dimensions: generated kernels read it by strides (codegen.Program)
    return LazyBuffer.view(View(base, index), shape, acc)


def read_element(base: Buffer, index: tuple[tuple, ...], acc: Any) -> Any:
    """One element as a numpy scalar (synchronises with the work queued on ``base``)."""
    pos = tuple(e[1] for e in index)
    if acc.unified_memory:
        return base._native.host_view(False)[pos]  # device memory is host memory: read in place
    if base.dtype not in EXPR_DTYPES or base.ndim == 0:
        # 0-d: kernels have no 0-d buffers (the generated read would have no index at all): a host copy
        return base.numpy()[host_index(index, ())]
    one = LazyBuffer.view(View(base, index), (), acc)
    value = LazyBuffer.pending("cast", (one,), (base.dtype,), base.dtype, (), acc)
    run([value], extras=False)
    host = np.empty((1,), base.dtype)
    value._backing._native.copy_to_host(host)  # type: ignore[union-attr]
    return host[0]


def setitem(buf: Buffer, key: Any, value: Any) -> None:
    if is_advanced(key):
        _advanced_set(buf, key, value)
        return
    base, index, shape = view_of(buf, key)
    target = LazyBuffer.view(View(base, index), shape, buf.accelerator)
    if type(value) is LazyBuffer and value._view is not None and value._view.base is base \
            and value._view.index == index:
        return  # b[i:j] += x: the in-place update already wrote through the same view
    store(target, value)


def transpose(buf: Buffer) -> Buffer:
    """``b.T``: a view with the axes reversed (no copy; reading it fuses, like any view)."""
    if buf.ndim < 2:
        return buf
    base, index = _base_and_index(buf)
    nd = buf.ndim
    flipped = tuple(e if e[0] == "fix" else ("map", nd - 1 - e[1], e[2], e[3]) for e in index)
    return LazyBuffer.view(View(base, flipped), tuple(reversed(buf.shape)), buf.accelerator)


def reshape(buf: Buffer, shape: Any) -> Buffer:
    """The elements in a new shape, C order; ``-1`` infers one extent. A buffer or a contiguous
    view is reshaped in place: the result is the same memory (expr/views.py, docs/views.md), as
    numpy's reshape is a view; otherwise a new buffer, copied by a kernel on the device."""
    dims = list(shape) if isinstance(shape, (tuple, list)) else [shape]
    if dims.count(-1) > 1:
        raise ValueError("reshape: only one extent can be -1")
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if -1 in dims:
        if known == 0 or buf.size % known:
            raise ValueError(f"reshape: cannot reshape a buffer of size {buf.size} into shape {tuple(dims)}")
        dims[dims.index(-1)] = buf.size // known
    new = normalize_shape(dims)
    if int(np.prod(new, dtype=np.int64)) != buf.size:
        raise ValueError(f"reshape: cannot reshape a buffer of shape {buf.shape} (size {buf.size}) into shape {new}")
    same_memory = reshaped(buf, new)
    if same_memory is not None:
        return same_memory
    acc = buf.accelerator
    src = concrete(buf)
    if (src.ndim == 0 or len(new) == 0 or src.size == 0 or src.dtype not in EXPR_DTYPES
            or src.dtype.kind == "c" and acc.host_visible_memory):
        return acc.asarray(np.asarray(src).reshape(new))  # nothing a kernel could index
    out = acc.empty(new, src.dtype)
    k, m = len(new), src.ndim
    if k > 3 or m > 3:
        # more dimensions than kernel parameters: src is contiguous now, so the elements in C order
        # are its 1-d memory, copied into the result's
        flat_view(out)[...] = flat_view(src)
        return out
    t = CAST_NAMES[src.dtype]
    params = [f"o: Buffer[{t}, {k}]", f"x: Buffer[{t}, {m}]"] + [f"q{d}: int64" for d in range(k)] + \
        [f"r{d}: int64" for d in range(m)]
    lines = ["def {name}(" + ", ".join(params) + "):"]
    lines += [f"    i{d} = gid({d})" for d in range(k)]
    lines.append("    if " + " and ".join(f"i{d} < q{d}" for d in range(k)) + ":")
    flat = "i0"
    for d in range(1, k):
        flat = f"({flat}) * q{d} + i{d}"
    lines.append(f"        f = {flat}")
    for d in range(m - 1, 0, -1):  # the flat index back into the source's indices, last first
        lines += [f"        j{d} = f % r{d}", f"        f = f // r{d}"]
    lines.append("        j0 = f")
    lines.append(f"        o[{', '.join(f'i{d}' for d in range(k))}] = x[{', '.join(f'j{d}' for d in range(m))}]")
    kernel, _ = compile_kernel(("reshape", src.dtype.str, k, m), "dc_reshape", lines)
    launch(acc, kernel, new, out, src, *new, *src.shape)
    return out


__all__ = ["getitem", "setitem", "transpose", "reshape", "view_of", "read_element"]
