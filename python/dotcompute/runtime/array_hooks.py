"""Buffer's numpy-style operators, forwarded to a hook table that ``dotcompute.expr`` fills in.

The runtime sits below the expression layer and must not import it, so the operators
here only look a function up in :data:`HOOKS` and call it. ``import dotcompute`` imports
``dotcompute.expr``, which installs the functions (``install``); until then an operator
raises a clear TypeError instead of misbehaving.

Hook names: ``binary(op, a, b)``, ``unary(op, a)``, ``inplace(op, a, b)``,
``getitem(buf, key)``, ``setitem(buf, key, value)``, ``astype(buf, dtype)``,
``reshape(buf, shape)``, ``transpose(buf)``, ``ufunc(ufunc, method, inputs, kwargs)``,
``array_function(func, types, args, kwargs)`` (both replaced by ``dotcompute.namespace``),
``before_write(buf)`` (a buffer is about to be written: pending expressions that read it
are evaluated first), ``before_launch(args)`` and ``synchronize()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

HOOKS: dict[str, Callable[..., Any]] = {}
# Set (by dotcompute.expr) when the first lazy buffer is made: until then no launch argument can be
# one and no expression can be pending, so launches skip the before_launch hook (one test per launch).
lazy_made = False


def install(**hooks: Callable[..., Any]) -> None:
    """Registers the implementations (called by ``dotcompute.expr`` at import)."""
    HOOKS.update(hooks)


def hook(name: str) -> Callable[..., Any]:
    fn = HOOKS.get(name)
    if fn is None:
        raise TypeError(f"Buffer {name} needs the array-expression layer; import dotcompute (not only "
                        "dotcompute.runtime) to enable numpy-style operators on buffers")
    return fn


def notify_write(buf: Any) -> None:
    """Called before a buffer is overwritten by the runtime's own methods (copy_from, host())."""
    fn = HOOKS.get("before_write")
    if fn is not None:
        fn(buf)


def _binary(op: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def fwd(self: Any, other: Any) -> Any:
        return hook("binary")(op, self, other)

    def rev(self: Any, other: Any) -> Any:
        return hook("binary")(op, other, self)

    fwd.__name__, rev.__name__ = f"__{op}__", f"__r{op}__"
    return fwd, rev


def _inplace(op: str) -> Callable[..., Any]:
    def fn(self: Any, other: Any) -> Any:
        return hook("inplace")(op, self, other)

    fn.__name__ = f"__i{op}__"
    return fn


def _unary(op: str) -> Callable[..., Any]:
    def fn(self: Any) -> Any:
        return hook("unary")(op, self)

    fn.__name__ = f"__{op}__"
    return fn


def _compare(op: str) -> Callable[..., Any]:
    def fn(self: Any, other: Any) -> Any:
        return hook("binary")(op, self, other)

    fn.__name__ = f"__{op}__"
    return fn


def _numpy_method(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(np, name)(self, *args, **kwargs)  # through __array_function__: stays on the device

    method.__name__ = name
    method.__doc__ = f"``np.{name}(buf, ...)`` as a method, as on numpy's and CuPy's arrays."
    return method


# numpy's ndarray methods that code written for numpy arrays (Dask's chunk functions among it) calls
_NUMPY_METHODS = ("all", "any", "argmax", "argmin", "clip", "conj", "copy", "cumprod", "cumsum", "dot", "max",
                  "mean", "min", "nonzero", "prod", "ravel", "repeat", "round", "squeeze", "std", "sum", "swapaxes",
                  "take", "trace", "transpose", "var")


class ArrayOperators:
    """Mixin of :class:`~dotcompute.runtime.buffer.Buffer`: arithmetic, comparisons, bitwise
    operators, indexing, ``astype``/``reshape``/``T``. Each builds a lazy array expression."""

    __slots__ = ()

    __add__, __radd__ = _binary("add")
    __sub__, __rsub__ = _binary("sub")
    __mul__, __rmul__ = _binary("mul")
    __truediv__, __rtruediv__ = _binary("truediv")
    __floordiv__, __rfloordiv__ = _binary("floordiv")
    __mod__, __rmod__ = _binary("mod")
    __pow__, __rpow__ = _binary("pow")
    __and__, __rand__ = _binary("and")
    __or__, __ror__ = _binary("or")
    __xor__, __rxor__ = _binary("xor")
    __iadd__ = _inplace("add")
    __isub__ = _inplace("sub")
    __imul__ = _inplace("mul")
    __itruediv__ = _inplace("truediv")
    __ifloordiv__ = _inplace("floordiv")
    __imod__ = _inplace("mod")
    __ipow__ = _inplace("pow")
    __iand__ = _inplace("and")
    __ior__ = _inplace("or")
    __ixor__ = _inplace("xor")
    __neg__ = _unary("neg")
    __pos__ = _unary("pos")
    __abs__ = _unary("abs")
    __invert__ = _unary("invert")
    __lt__ = _compare("lt")
    __le__ = _compare("le")
    __gt__ = _compare("gt")
    __ge__ = _compare("ge")
    __eq__ = _compare("eq")  # type: ignore[assignment]
    __ne__ = _compare("ne")  # type: ignore[assignment]
    # == builds an expression, yet buffers stay usable as dict keys and in sets (by identity)
    __hash__ = object.__hash__

    def __getitem__(self, key: Any) -> Any:
        return hook("getitem")(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        hook("setitem")(self, key, value)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return hook("ufunc")(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # np.sum(buf), np.concatenate([a, b]): the namespace's table (namespace/protocols.py)
        fn = HOOKS.get("array_function")
        return NotImplemented if fn is None else fn(func, types, args, kwargs)

    def astype(self, dtype: Any) -> Any:
        """The elements converted to ``dtype`` (a new, lazily computed buffer)."""
        return hook("astype")(self, dtype)

    def reshape(self, *shape: Any) -> Any:
        """The same elements in a new shape (C order); the size must not change."""
        return hook("reshape")(self, shape[0] if len(shape) == 1 else shape)

    @property
    def T(self) -> Any:  # noqa: N802 -- numpy's name
        """The transpose of a 2-D buffer (a new buffer; see docs/expressions.md)."""
        return hook("transpose")(self)


for _name in _NUMPY_METHODS:
    setattr(ArrayOperators, _name, _numpy_method(_name))

__all__ = ["ArrayOperators", "HOOKS", "hook", "install", "notify_write"]
