"""Types of the kernel language: scalars, buffers, work-group arrays, and the promotion rules.

Scalar types are a closed set (``bool`` and numpy's fixed-width ints and
floats, ``int8`` … ``uint64``, ``float16`` … ``float64``), each a singleton
:class:`ScalarType`, so emitters
compare them with ``is`` or ``==`` and map them by ``.name``. The rules here
are the ones written down in docs/kernel-language.md; the frontend is the only
caller of :func:`promote` and :func:`literal_type`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ScalarType:
    """One scalar type. ``kind`` is numpy's: ``b`` bool, ``i`` signed, ``u`` unsigned, ``f`` float,
    ``c`` complex (``bits`` counts both parts: complex64 is two float32)."""

    name: str
    kind: str
    bits: int

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(self.name)

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def is_int(self) -> bool:
        """Signed or unsigned integer (bool excluded)."""
        return self.kind in "iu"

    @property
    def is_signed(self) -> bool:
        return self.kind == "i"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def real_type(self) -> ScalarType:
        """The type of ``.real``/``.imag``/``abs()`` of a complex type (the type itself otherwise)."""
        if not self.is_complex:
            return self
        return FLOAT32 if self.bits == 64 else FLOAT64

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name


BOOL = ScalarType("bool", "b", 8)
INT8 = ScalarType("int8", "i", 8)
INT16 = ScalarType("int16", "i", 16)
INT32 = ScalarType("int32", "i", 32)
INT64 = ScalarType("int64", "i", 64)
UINT8 = ScalarType("uint8", "u", 8)
UINT16 = ScalarType("uint16", "u", 16)
UINT32 = ScalarType("uint32", "u", 32)
UINT64 = ScalarType("uint64", "u", 64)
FLOAT16 = ScalarType("float16", "f", 16)
FLOAT32 = ScalarType("float32", "f", 32)
FLOAT64 = ScalarType("float64", "f", 64)
COMPLEX64 = ScalarType("complex64", "c", 64)
COMPLEX128 = ScalarType("complex128", "c", 128)

SCALAR_TYPES: tuple[ScalarType, ...] = (BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
                                        FLOAT16, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128)
_BY_NAME = {t.name: t for t in SCALAR_TYPES}

#: The type of every index, global id, size and ``.shape[d]`` in the IR.
INDEX = INT64


@dataclass(frozen=True)
class BufferType:
    """A C-contiguous n-d buffer parameter (``dc.Buffer[dtype, ndim]``) in global memory."""

    dtype: ScalarType
    ndim: int
    #: a vector/matrix/struct element (lang/vectypes.py): then ``dtype``/``ndim`` describe the memory
    #: the emitters see (the leaf dtype with the trailing dimensions; uint8 bytes for a struct)
    elem: Any = None

    def __str__(self) -> str:
        if self.elem is not None:
            return f"Buffer[{self.elem}, {self.ndim - elem_ndim(self.elem)}]"
        return f"Buffer[{self.dtype}, {self.ndim}]"


@dataclass(frozen=True)
class SharedType:
    """A work-group array from ``dc.shared(shape, dtype)``; the shape is known at compile time."""

    dtype: ScalarType
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __str__(self) -> str:
        return f"shared[{self.dtype}, {self.shape}]"


@dataclass(frozen=True)
class VoidType:
    """The result of a kernel, of a device function without a return value, of ``barrier()``."""

    def __str__(self) -> str:
        return "void"


VOID = VoidType()

Type = ScalarType | BufferType | SharedType | VoidType


def scalar_type(obj: Any) -> ScalarType | None:
    """The kernel scalar type meant by ``obj`` (``dc.float32``, ``np.dtype('int32')``, ``bool``,
    ``int``, ``float``, ``"float32"``), or None when it names none of them."""
    if obj is bool:
        return BOOL
    if obj is int:
        return INT64
    if obj is float:
        return FLOAT64
    if isinstance(obj, ScalarType):
        return obj
    if isinstance(obj, str):
        return _BY_NAME.get("bool" if obj == "bool_" else obj)
    try:
        dt = np.dtype(obj)
    except (TypeError, ValueError):
        return None
    return _BY_NAME.get(dt.name)


def from_dtype(dt: Any) -> ScalarType:
    """Like :func:`scalar_type` but raises ``ValueError`` naming the kernel dtypes."""
    t = scalar_type(dt)
    if t is None:
        names = ", ".join(t.name for t in SCALAR_TYPES)
        raise ValueError(f"{dt!r} is not a kernel dtype; kernels compute with {names}")
    return t


# ---------------------------------------------------------------------------------------------
# dc.Buffer[...] annotations


@dataclass(frozen=True)
class BufferAnnotation:
    """What ``dc.Buffer[dtype]``, ``dc.Buffer[dtype, ndim]`` and bare ``dc.Buffer`` stand for in a
    signature. ``dtype``/``ndim`` None means generic: fixed per launch from the argument."""

    dtype: ScalarType | None
    ndim: int | None
    elem: Any = None  # see BufferType.elem (ndim counts the element's trailing dimensions too)

    @property
    def generic(self) -> bool:
        return self.dtype is None or self.ndim is None

    def resolve(self, dtype: ScalarType | None = None, ndim: int | None = None) -> BufferType:
        d = self.dtype or dtype
        n = self.ndim or ndim
        if d is None or n is None:
            raise ValueError("a generic buffer annotation needs a dtype and ndim to resolve")
        return BufferType(d, n, self.elem)

    def __repr__(self) -> str:
        if self.elem is not None:
            return f"dc.Buffer[{self.elem!r}, {self.ndim - elem_ndim(self.elem)}]"  # type: ignore[operator]
        if self.dtype is None and self.ndim is None:
            return "dc.Buffer"
        d = self.dtype.name if self.dtype else "?"
        return f"dc.Buffer[{d}, {self.ndim}]" if self.ndim else f"dc.Buffer[{d}]"


def buffer_annotation(dtype: Any = None, ndim: int | None = None) -> BufferAnnotation:
    """The annotation object for ``dc.Buffer[dtype, ndim]`` of a scalar dtype (vectors, matrices and
    structs: ``vectypes.buffer_annotation``, which the runtime's Buffer class calls).

    ``ndim`` defaults to 1 when a dtype is given (``dc.Buffer[dc.float32]`` is 1-D, as in the
    design's examples); bare ``dc.Buffer`` (``dtype=None``) is generic in both.
    """
    st = None if dtype is None else from_dtype(dtype)
    if ndim is None:
        ndim = 1 if st is not None else None
    if ndim is not None:
        if isinstance(ndim, bool) or not isinstance(ndim, (int, np.integer)) or not 1 <= int(ndim) <= 3:
            raise ValueError(f"dc.Buffer ndim must be 1, 2 or 3, not {ndim!r}")
        ndim = int(ndim)
    return BufferAnnotation(st, ndim)


def elem_ndim(elem: Any) -> int:
    """How many trailing memory dimensions a buffer element adds: a vector 1, a matrix 2, a struct 1
    (its bytes)."""
    shape = getattr(elem, "shape", None)
    return 1 if shape is None else len(shape)


# ---------------------------------------------------------------------------------------------
# Promotion


def promote(a: ScalarType, b: ScalarType) -> ScalarType:
    """The common type of two operands (neither a literal): numpy 2's (NEP 50) table, which
    docs/kernel-language.md prints.

    * same type → that type; bool with anything → the other type;
    * two ints of one signedness → the wider; signed with unsigned → the smallest signed type
      holding both (int8 + uint8 → int16), and int64/… with uint64 → float64;
    * int with float → the smallest float holding both (int16 + float16 → float32,
      int32 + float32 → float64, int64 + float32 → float64).
    """
    if a == b:
        return a
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    return _PROMOTED[(a, b)]


_PROMOTED = {(a, b): _BY_NAME[np.promote_types(a.np_dtype, b.np_dtype).name]
             for a in SCALAR_TYPES for b in SCALAR_TYPES}


def fits(value: int, t: ScalarType) -> bool:
    """Whether the Python int ``value`` is representable in integer type ``t``."""
    if t.is_bool:
        return value in (0, 1)
    if t.kind == "u":
        return 0 <= value < (1 << t.bits)
    return -(1 << (t.bits - 1)) <= value < (1 << (t.bits - 1))


def literal_type(value: bool | int | float | complex, other: ScalarType | None) -> ScalarType:
    """The type a Python literal takes next to an operand of type ``other`` (None: alone).

    An int literal takes ``other``'s type when ``other`` is an int type it fits in, or a float
    type; a float literal takes ``other``'s float type; otherwise int64 / float64 / bool.
    """
    if isinstance(value, bool):
        return BOOL if other is None or other.is_bool else other
    if isinstance(value, int):
        if other is not None and (other.is_float or other.is_complex or (other.is_int and fits(value, other))):
            return other
        return INT64
    if isinstance(value, complex):
        # NEP 50: a weak complex takes the other side's precision (float16 and float32 → complex64)
        if other is not None and other.is_complex:
            return other
        return COMPLEX64 if other is not None and other.is_float and other.bits <= 32 else COMPLEX128
    if other is not None and (other.is_float or other.is_complex):
        return other
    return FLOAT64


def type_of_python_scalar(value: Any) -> ScalarType | None:
    """The type of a folded constant: bool, int → int64, float → float64, numpy scalars exact."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, np.generic):
        return scalar_type(value.dtype)
    if isinstance(value, int):
        return INT64
    if isinstance(value, float):
        return FLOAT64
    if isinstance(value, complex):
        return COMPLEX128
    return None


def wrap_int(value: int, t: ScalarType) -> int:
    """``value`` wrapped to integer type ``t`` (two's complement), as the generated code does."""
    if t.is_bool:
        return int(bool(value))
    m = value & ((1 << t.bits) - 1)
    if t.kind == "i" and m >= 1 << (t.bits - 1):
        m -= 1 << t.bits
    return m


__all__ = ["ScalarType", "BufferType", "SharedType", "VoidType", "VOID", "Type", "BOOL", "INT8", "INT16", "INT32",
           "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "FLOAT16", "FLOAT32", "FLOAT64", "COMPLEX64",
           "COMPLEX128", "SCALAR_TYPES",
           "INDEX", "scalar_type", "from_dtype", "elem_ndim",
           "BufferAnnotation", "buffer_annotation", "promote", "fits", "literal_type",
           "type_of_python_scalar", "wrap_int"]
