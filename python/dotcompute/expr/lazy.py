"""``LazyBuffer``: a Buffer whose contents are an expression, computed when first needed.

A LazyBuffer is a real :class:`~dotcompute.runtime.Buffer` (``isinstance`` holds, shape and
dtype are known at once), so every path that needs its memory — ``.numpy()``, ``np.asarray``,
a kernel launch, an array operation — reaches it through the ``_native`` attribute, which
evaluates the expression the first time. Three states:

* pending: ``_op`` names the operation, ``_args`` are its operands (Buffers, LazyBuffers,
  :class:`Scalar`); evaluating runs one generated kernel and keeps the result;
* evaluated: an ordinary buffer (``_op`` is None); a 0-d result lives in ``_backing``, a
  1-element 1-D buffer, because kernel parameters have 1 to 3 dimensions;
* a view (``_view``): a window onto another buffer's memory, read afresh whenever it is
  used, written through ``v[...] = x`` and the in-place operators.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime import Buffer
from ..runtime import array_hooks as _array_hooks

_NATIVE = Buffer.__dict__["_native"]  # the slot descriptor: the evaluated native buffer
_ACC = Buffer.__dict__["_accelerator"]


@dataclass(frozen=True)
class Scalar:
    """A number in an expression: becomes a kernel parameter of ``dtype`` (so new values reuse
    the compiled kernel)."""

    value: Any
    dtype: np.dtype

    shape = ()


@dataclass(frozen=True, eq=False)  # Buffer == builds an expression: compare bases by identity
class View:
    """How a view reads ``base``: per base dimension either ``("fix", start)`` or
    ``("map", view_dim, start, step)``."""

    base: Buffer
    index: tuple[tuple, ...]


class _Pending:
    """The pending LazyBuffers, weakly, by identity (a WeakSet would compare them with ==, which
    builds an expression)."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}

    def add(self, obj: Any) -> None:
        key = id(obj)
        self._refs[key] = weakref.ref(obj, lambda _r, key=key: self._refs.pop(key, None))

    def discard(self, obj: Any) -> None:
        self._refs.pop(id(obj), None)

    def __bool__(self) -> bool:
        return bool(self._refs)

    def __iter__(self) -> Any:
        for r in list(self._refs.values()):
            obj = r()
            if obj is not None:
                yield obj


#: pending LazyBuffers, so that a write to one of their inputs can evaluate them first
PENDING = _Pending()


#: Bounds on one pending graph: its depth (operations on the longest path to a leaf) and its
#: weight (operations and leaves, shared ones counted per use). Beyond them the arguments of a new
#: operation are evaluated first. The depth keeps code generation's recursion far from Python's
#: limit; the weight bounds the generated kernel's parameters (OpenCL guarantees only 1 KiB of them).
MAX_DEPTH = 100
MAX_WEIGHT = 256


def _size_of(args: tuple[Any, ...]) -> tuple[int, int]:
    """(depth, weight) of an operation on ``args``."""
    depth, weight = 1, 1
    for a in args:
        if type(a) is LazyBuffer and a._op is not None:
            depth = max(depth, a._depth + 1)
            weight += a._weight
        else:
            weight += 1
    return depth, weight


class LazyBuffer(Buffer):
    # _shape and _dtype are Buffer's slots: a pending expression knows both before it has memory
    __slots__ = ("_op", "_args", "_loop", "_backing", "_view", "_extra", "_depth", "_weight", "_copy", "_alias_of")

    _op: str | None
    _args: tuple[Any, ...]
    _loop: tuple[np.dtype, ...]
    _backing: Buffer | None
    _view: View | None

    @classmethod
    def pending(cls, op: str, args: tuple[Any, ...], loop: tuple[np.dtype, ...], dtype: np.dtype,
                shape: tuple[int, ...], accelerator: Any, extra: Any = None) -> LazyBuffer:
        depth, weight = _size_of(args)
        if depth > MAX_DEPTH or weight > MAX_WEIGHT:
            # a very long chain (a loop of hundreds of `e = e * a + b`): generating it as one kernel
            # would recurse as deep as the chain and give the kernel one parameter per scalar, so
            # the pending arguments are computed now and the chain goes on from their values
            for a in args:
                if type(a) is LazyBuffer and a._op is not None:
                    EVALUATE["run"]([a])
            depth, weight = _size_of(args)
        obj = object.__new__(cls)
        _array_hooks.lazy_made = True
        _ACC.__set__(obj, accelerator)
        obj._op, obj._args, obj._loop, obj._extra = op, args, loop, extra
        obj._dtype, obj._shape = np.dtype(dtype), tuple(shape)
        obj._backing, obj._view, obj._alias_of = None, None, None
        obj._depth, obj._weight = depth, weight
        PENDING.add(obj)
        return obj

    @classmethod
    def scalar(cls, backing: Buffer, dtype: np.dtype, accelerator: Any) -> LazyBuffer:
        """An evaluated 0-d value held in ``backing``, a 1-element 1-D buffer."""
        obj = object.__new__(cls)
        _array_hooks.lazy_made = True
        _ACC.__set__(obj, accelerator)
        obj._op, obj._args, obj._loop, obj._extra = None, (), (), None
        obj._dtype, obj._shape = np.dtype(dtype), ()
        obj._backing, obj._view, obj._alias_of = backing, None, None
        return obj

    @classmethod
    def view(cls, view: View, shape: tuple[int, ...], accelerator: Any) -> LazyBuffer:
        obj = object.__new__(cls)
        _array_hooks.lazy_made = True
        _ACC.__set__(obj, accelerator)
        obj._op, obj._args, obj._loop, obj._extra = None, (), (), None
        obj._dtype, obj._shape = view.base.dtype, tuple(shape)
        obj._backing, obj._view, obj._alias_of = None, view, None
        return obj

    @classmethod
    def alias(cls, native: Any, root: Buffer, accelerator: Any) -> LazyBuffer:
        """A buffer on ``root``'s memory in another shape (``b.reshape``): ``native`` is the native
        view. It behaves as an evaluated buffer; ``_alias_of`` lets writes to either one run the
        pending expressions that read the other first (evaluate.before_write)."""
        obj = object.__new__(cls)
        _array_hooks.lazy_made = True
        _ACC.__set__(obj, accelerator)
        _NATIVE.__set__(obj, native)
        obj._op, obj._args, obj._loop, obj._extra = None, (), (), None
        obj._dtype, obj._shape = np.dtype(native.dtype), tuple(native.shape)
        obj._backing, obj._view, obj._alias_of = None, None, root
        return obj

    # -- description without evaluating ------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return int(math.prod(self._shape))  # np.prod costs ~5 us per call, and sizes are asked often

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    @property
    def is_pending(self) -> bool:
        """True while the expression has not run."""
        return self._op is not None

    def source(self, backend: str | None = None) -> str:
        """The fused kernel that evaluating this expression runs (``dc.explain(self, backend)``)."""
        return EVALUATE["explain"](self, backend)

    def __repr__(self) -> str:
        state = "pending" if self._op is not None else "view" if self._view is not None else "evaluated"
        return f"<dc.Buffer shape={self._shape} dtype={self._dtype} on {self._accelerator.id} ({state} expression)>"

    # -- evaluation -------------------------------------------------------------------------------
    @property  # type: ignore[override]
    def _native(self) -> Any:
        try:
            return _NATIVE.__get__(self, Buffer)
        except AttributeError:
            pass
        if self._view is not None:
            # a launch decided beforehand what it passes (evaluate.before_launch, expr/views.py: the
            # base's memory as a native view, or a copy of a strided view it only reads) and holds
            # it. Elsewhere (operations, downloads, DLPack) a contiguous view is the base's memory
            # where the backend's handles allow it (expr/views.py, memory_of); otherwise each use
            # copies the window as it is now. Either is kept until the next use: the native side
            # takes only the pointer of the buffer this returns, so one dropped here would be freed
            # while still in use
            copy = EVALUATE["pinned"](self)
            if copy is None:
                copy = EVALUATE["alias"](self)
                if copy is None:
                    copy = EVALUATE["copy"](self)
                self._copy = copy
            return copy._native
        if self._op is not None:
            EVALUATE["run"]([self])
        if self._backing is not None and self._op is None:
            try:
                return _NATIVE.__get__(self, Buffer)
            except AttributeError:
                host = np.empty((1,), self._dtype)
                self._backing._native.copy_to_host(host)
                native = self._accelerator.asarray(host.reshape(()))._native
                _NATIVE.__set__(self, native)
                return native
        return _NATIVE.__get__(self, Buffer)

    # -- writes into a view go to the base's memory ------------------------------------------------
    def copy_from(self, array: Any) -> None:
        """Overwrites the elements (same shape and dtype); on a view, the base's elements it shows."""
        if self._view is None:
            super().copy_from(array)
            return
        src = array.numpy() if isinstance(array, Buffer) else \
            np.asarray(array) if isinstance(array, np.ndarray) else np.asarray(array, dtype=self._dtype)
        self._check_host(src, "copy_from", "source")
        EVALUATE["store"](self, src)  # the copy a view hands out would take the write and drop it

    @contextmanager
    def host(self) -> Iterator[np.ndarray]:
        """A writable numpy copy of the elements; on a view, written back to the base on exit."""
        if self._view is None:
            with super().host() as view:
                yield view
            return
        copy = self.numpy()
        try:
            yield copy
        finally:
            EVALUATE["store"](self, copy)

    def _set_result(self, buf: Buffer) -> None:
        """Record the evaluated value (a Buffer of this shape, or a 1-element one for 0-d)."""
        if self._shape == () and buf.shape != ():
            self._backing = buf
        else:
            _NATIVE.__set__(self, buf._native)
        self._op, self._args, self._extra = None, (), None
        PENDING.discard(self)


#: filled by evaluate.py and explain.py (which import this module): "run"(roots), "copy"(view) -> Buffer,
#: "explain"(expr, backend) -> str
EVALUATE: dict[str, Any] = {}


def is_pending(x: Any) -> bool:
    return type(x) is LazyBuffer and x._op is not None


def alias_root(x: Any) -> Any:
    """The buffer owning ``x``'s memory: ``x`` itself, or the root of a reshaped alias."""
    if type(x) is LazyBuffer and x._alias_of is not None:
        return x._alias_of
    return x


__all__ = ["LazyBuffer", "Scalar", "View", "PENDING", "EVALUATE", "is_pending", "alias_root"]
