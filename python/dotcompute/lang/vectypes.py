"""Small vectors, matrices and structs of the kernel language (``dc.vec3``, ``dc.mat33``, ``@dc.struct``).

These are *aggregate* types: a fixed number of scalar leaves. The frontend keeps an aggregate
value as its list of leaf expressions (``frontend/aggregates.py``), so the IR — and therefore
every emitter — only ever sees scalars: a ``vec3`` local is three float32 locals, a
``Buffer[dc.vec3]`` is a float32 buffer with one more (trailing) dimension of extent 3, and
a ``vec3`` kernel argument is three float32 arguments. Struct *buffers* are the one place the
IR names an aggregate (:class:`StructType` as a buffer's element type, accessed one scalar leaf
at a time), because their memory interleaves leaves of different types.

Layout (docs/kernel-language.md, "Vectors, matrices and structs"):

* vectors and matrices in buffers are packed, C order, exactly numpy's ``(n, 3)`` / ``(n, 3, 3)``
  arrays (a ``vec3`` takes 12 bytes, never the 16 of OpenCL's or Metal's ``float3``);
* a struct is laid out like a C struct of its fields in declaration order, each field at the
  next multiple of its alignment (a scalar's size; a vector's or matrix's element size; a
  nested struct's largest alignment), the whole size rounded up to the largest alignment —
  ``numpy.dtype(..., align=True)``, with vector and matrix fields as arrays of their element
  type (so a ``vec3`` field is 12 bytes, 4-aligned, on every backend).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .types import FLOAT32, UINT8, BufferAnnotation, ScalarType, elem_ndim, from_dtype
from .types import buffer_annotation as scalar_buffer_annotation

_COMPONENTS = "xyzw"


class AggregateType:
    """Common interface: ``leaves`` (the flat list of (path, scalar type)), ``shape`` (the trailing
    array shape of a vector/matrix; None for structs), ``np_dtype`` (a numpy dtype of one value)."""

    name: str

    @property
    def leaves(self) -> list[tuple[tuple, ScalarType]]:
        raise NotImplementedError

    @property
    def nleaves(self) -> int:
        return len(self.leaves)

    @property
    def np_dtype(self) -> np.dtype:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class VectorType(AggregateType):
    """``dc.vector(n, dtype)``; ``dc.vec2/3/4`` are the float32 ones. Called in a kernel (or on the
    host) it constructs a vector: ``dc.vec3(x, y, z)`` or ``dc.vec3(s)`` (every component ``s``)."""

    n: int
    dtype: ScalarType

    @property
    def name(self) -> str:  # type: ignore[override]
        if self.dtype == FLOAT32:
            return f"vec{self.n}"
        return f"vector({self.n}, {self.dtype})"

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n,)

    @property
    def leaves(self) -> list[tuple[tuple, ScalarType]]:
        return [((i,), self.dtype) for i in range(self.n)]

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype((self.dtype.np_dtype, (self.n,)))

    def __call__(self, *args: Any) -> np.ndarray:
        return _host_construct(self, args)

    def __repr__(self) -> str:
        return f"dc.{self.name}"


@dataclass(frozen=True)
class MatrixType(AggregateType):
    """``dc.matrix(rows, cols, dtype)``; ``dc.mat22/33/44`` are the float32 ones. Stored row-major
    (C order, numpy's): ``m[i, j]`` is row ``i``, column ``j``."""

    rows: int
    cols: int
    dtype: ScalarType

    @property
    def name(self) -> str:  # type: ignore[override]
        if self.dtype == FLOAT32 and self.rows == self.cols:
            return f"mat{self.rows}{self.cols}"
        return f"matrix({self.rows}, {self.cols}, {self.dtype})"

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.rows, self.cols)

    @property
    def leaves(self) -> list[tuple[tuple, ScalarType]]:
        return [((i, j), self.dtype) for i in range(self.rows) for j in range(self.cols)]

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype((self.dtype.np_dtype, (self.rows, self.cols)))

    def row_type(self) -> VectorType:
        return VectorType(self.cols, self.dtype)

    def __call__(self, *args: Any) -> np.ndarray:
        return _host_construct(self, args)

    def __repr__(self) -> str:
        return f"dc.{self.name}"


@dataclass(frozen=True)
class StructField:
    name: str
    type: ScalarType | VectorType | MatrixType | StructType
    offset: int


@dataclass(frozen=True, eq=False)
class StructType(AggregateType):
    """The kernel-language view of an ``@dc.struct`` class: named, typed fields at C offsets."""

    name: str  # type: ignore[misc]
    fields: tuple[StructField, ...]
    size: int
    align: int
    pyclass: Any = field(default=None, compare=False, hash=False)

    @property
    def shape(self) -> None:
        return None

    def field(self, name: str) -> StructField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    @property
    def leaves(self) -> list[tuple[tuple, ScalarType]]:
        out: list[tuple[tuple, ScalarType]] = []
        for f in self.fields:
            if isinstance(f.type, ScalarType):
                out.append(((f.name,), f.type))
            else:
                out += [((f.name, *p), t) for p, t in f.type.leaves]
        return out

    def leaf_offsets(self) -> list[int]:
        """The byte offset of every leaf, in leaf order."""
        out: list[int] = []
        for f in self.fields:
            t = f.type
            if isinstance(t, ScalarType):
                out.append(f.offset)
            elif isinstance(t, StructType):
                out += [f.offset + o for o in t.leaf_offsets()]
            else:
                out += [f.offset + k * t.dtype.itemsize for k in range(t.nleaves)]
        return out

    @property
    def np_dtype(self) -> np.dtype:
        return self.pyclass.dtype

    def __repr__(self) -> str:
        return f"<dc.struct {self.name}>"


Aggregate = VectorType | MatrixType | StructType


def vector(n: int, dtype: Any = FLOAT32) -> VectorType:
    """``dc.vector(n, dtype)``: the type of small vectors of ``n`` (1 to 16) elements."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= int(n) <= 16:
        raise ValueError(f"dc.vector(n, dtype): n must be 1 to 16, not {n!r}")
    return VectorType(int(n), _elem(dtype))


def matrix(rows: int, cols: int, dtype: Any = FLOAT32) -> MatrixType:
    """``dc.matrix(rows, cols, dtype)``: the type of small row-major matrices (1 to 8 each way)."""
    for v in (rows, cols):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= int(v) <= 8:
            raise ValueError(f"dc.matrix(rows, cols, dtype): rows and cols must be 1 to 8, not {v!r}")
    return MatrixType(int(rows), int(cols), _elem(dtype))


def _elem(dtype: Any) -> ScalarType:
    t = from_dtype(dtype)
    if t.is_complex:
        # dc.length/dc.dot would need numpy's conjugating definitions: not yet
        raise ValueError(f"vectors and matrices of {t} are not supported (bool, integer and float types are)")
    return t


vec2, vec3, vec4 = vector(2), vector(3), vector(4)
mat22, mat33, mat44 = matrix(2, 2), matrix(3, 3), matrix(4, 4)


def _host_construct(t: VectorType | MatrixType, args: tuple) -> np.ndarray:
    """The host meaning of ``dc.vec3(...)``: a numpy array (helpers can run on the host)."""
    dt = t.dtype.np_dtype
    if len(args) == 1:
        a = np.asarray(args[0], dtype=dt)
        if a.ndim == 0:
            return np.full(t.shape, a, dtype=dt)
        return a.reshape(t.shape).copy()
    return np.asarray(args, dtype=dt).reshape(t.shape)


# ---------------------------------------------------------------------------------------------
# vector and matrix functions


class VecFunction:
    """``dc.dot``, ``dc.cross``, ...: recognised by identity in kernels; numpy on the host."""

    def __init__(self, name: str, nargs: int, host: Any, doc: str) -> None:
        self.name = name
        self.nargs = nargs
        self._host = host
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = doc

    def __call__(self, *args: Any) -> Any:
        return self._host(*args)

    def __repr__(self) -> str:
        return f"<dotcompute vector function {self.name}>"


def _host_normalize(v: Any) -> Any:
    v = np.asarray(v)
    return v / np.sqrt(np.dot(v, v))


dot = VecFunction("dot", 2, lambda a, b: np.dot(a, b), "dot(a, b): the dot product of two vectors.")
cross = VecFunction("cross", 2, lambda a, b: np.cross(a, b), "cross(a, b): the cross product of two 3-vectors.")
length = VecFunction("length", 1, lambda v: np.sqrt(np.dot(v, v)), "length(v): the Euclidean length of v.")
length_sq = VecFunction("length_sq", 1, lambda v: np.dot(v, v), "length_sq(v): dot(v, v).")
normalize = VecFunction("normalize", 1, _host_normalize, "normalize(v): v / length(v).")
transpose = VecFunction("transpose", 1, lambda m: np.transpose(m), "transpose(m): the transposed matrix.")
outer = VecFunction("outer", 2, lambda a, b: np.outer(a, b), "outer(a, b): the matrix a[i] * b[j].")
determinant = VecFunction("determinant", 1, lambda m: np.linalg.det(m), "determinant(m): of a square matrix "
                          "(2x2, 3x3 or 4x4).")
VEC_FUNCTIONS = {f.name: f for f in (dot, cross, length, length_sq, normalize, transpose, outer, determinant)}


# ---------------------------------------------------------------------------------------------
# structs


def aggregate_type(obj: Any) -> Aggregate | None:
    """The aggregate type ``obj`` names (``dc.vec3``, a ``@dc.struct`` class), or None."""
    if isinstance(obj, (VectorType, MatrixType, StructType)):
        return obj
    st = getattr(obj, "__dc_struct__", None) if isinstance(obj, type) else None
    return st if isinstance(st, StructType) else None


def _field_type(cls: type, name: str, ann: Any) -> ScalarType | VectorType | MatrixType | StructType:
    agg = aggregate_type(ann)
    if agg is not None:
        if not isinstance(agg, StructType) and agg.dtype.name == "float16":
            # OpenCL C has no half struct members without cl_khr_fp16 (only half pointers)
            raise TypeError(f"@dc.struct {cls.__name__}: field {name!r}: float16 fields are not supported yet "
                            "(bool, integer, float32 and float64 fields are)")
        return agg
    from .types import scalar_type

    t = scalar_type(ann)
    if t is None:
        raise TypeError(f"@dc.struct {cls.__name__}: field {name!r} has type {ann!r}, which is not a kernel type "
                        "(a scalar dtype, dc.vec3-style vector, dc.mat33-style matrix or another @dc.struct)")
    if t.is_complex or t.name == "float16":
        raise TypeError(f"@dc.struct {cls.__name__}: field {name!r}: {t} fields are not supported yet "
                        "(bool, integer, float32 and float64 fields are)")
    return t


def _align_of(t: Any) -> int:
    if isinstance(t, ScalarType):
        return t.itemsize
    if isinstance(t, StructType):
        return t.align
    return t.dtype.itemsize


def _size_of(t: Any) -> int:
    if isinstance(t, ScalarType):
        return t.itemsize
    if isinstance(t, StructType):
        return t.size
    return t.dtype.itemsize * t.nleaves


def struct(cls: type) -> type:
    """``@dc.struct``: a class whose annotated fields make a kernel struct type.

    The class gains ``dtype`` (the numpy structured dtype of one value, C layout with natural
    alignment) and ``__dc_struct__``; ``Particle(pos=..., mass=...)`` on the host makes a numpy
    scalar of that dtype (fields left out are zero)."""
    anns = cls.__dict__.get("__annotations__", {})
    if not anns:
        raise TypeError(f"@dc.struct {cls.__name__} has no annotated fields")
    import sys

    # string annotations (``from __future__ import annotations``) resolve where the class is defined:
    # the decorating frame's names (a module loaded from a file need not be in sys.modules)
    caller = sys._getframe(1)
    module_globals = {**caller.f_globals, **caller.f_locals}
    fields: list[StructField] = []
    offset = 0
    align = 1
    names, formats, offsets = [], [], []
    for name, ann in anns.items():
        if isinstance(ann, str):  # from __future__ import annotations
            try:
                ann = eval(ann, dict(module_globals), dict(vars(cls)))  # noqa: S307 -- the user's own annotation
            except Exception as e:
                raise TypeError(f"@dc.struct {cls.__name__}: cannot resolve the annotation of {name!r}: {e}") from None
        t = _field_type(cls, name, ann)
        a = _align_of(t)
        offset = (offset + a - 1) // a * a
        fields.append(StructField(name, t, offset))
        names.append(name)
        formats.append(t.np_dtype)
        offsets.append(offset)
        offset += _size_of(t)
        align = max(align, a)
    size = (offset + align - 1) // align * align
    dtype = np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size}, align=True)
    st = StructType(cls.__name__, tuple(fields), size, align, pyclass=cls)
    cls.__dc_struct__ = st  # type: ignore[attr-defined]
    cls.dtype = dtype  # type: ignore[attr-defined]

    def __new__(klass: type, *args: Any, **kwargs: Any) -> np.void:  # noqa: N807
        value = np.zeros((), dtype=dtype)
        for fname, v in itertools.chain(zip(names, args, strict=False), kwargs.items()):
            if fname not in names:
                raise TypeError(f"{cls.__name__}() has no field {fname!r}")
            value[fname] = v
        return value[()]

    cls.__new__ = staticmethod(__new__)  # type: ignore[assignment]
    return cls


def struct_type(obj: Any) -> StructType | None:
    t = aggregate_type(obj)
    return t if isinstance(t, StructType) else None


def leaf_values(t: Aggregate, value: Any, what: str) -> list[Any]:
    """The scalar leaves of a host value for an aggregate kernel argument, in leaf order; raises
    ValueError (the caller names the parameter) when the value does not fit ``t``."""
    if isinstance(t, StructType):
        if isinstance(value, np.void) or (isinstance(value, np.ndarray) and value.dtype.names):
            v = np.asarray(value)
            if v.shape != () or v.dtype.names is None:
                raise ValueError(f"expects one {t.name} value, got an array of shape {v.shape}")
            missing = [f.name for f in t.fields if f.name not in v.dtype.names]
            if missing:
                raise ValueError(f"expects a {t.name}, got a structured value without the field(s) {missing}")
            parts = [v[f.name] for f in t.fields]
        elif isinstance(value, tuple):
            if len(value) != len(t.fields):
                raise ValueError(f"expects a {t.name} ({len(t.fields)} fields), got a tuple of {len(value)}")
            parts = list(value)
        else:
            raise ValueError(f"expects a {t.name} (a numpy value of {t.name}.dtype, or a tuple of its fields), "
                             f"got {type(value).__name__}")
        out: list[Any] = []
        for f, p in zip(t.fields, parts, strict=True):
            if isinstance(f.type, ScalarType):
                a = np.asarray(p)
                if a.shape != ():
                    raise ValueError(f"field {f.name!r} is a {f.type} number, got shape {a.shape}")
                out.append(a.astype(f.type.np_dtype)[()])
            else:
                out += leaf_values(f.type, p, what)
        return out
    a = np.asarray(value)
    if a.dtype.kind not in "biuf" or a.shape != t.shape:
        got = f"shape {a.shape}" if a.dtype.kind in "biuf" else type(value).__name__
        raise ValueError(f"expects a {t.name} (shape {t.shape}), got {got}")
    return [x for x in a.astype(t.dtype.np_dtype).reshape(-1)]


def buffer_annotation(dtype: Any = None, ndim: int | None = None) -> BufferAnnotation:
    """The annotation object for ``dc.Buffer[dtype, ndim]`` (called by the runtime's Buffer class):
    vectors, matrices and structs here, scalar dtypes by ``types.buffer_annotation``."""
    agg = aggregate_type(dtype)
    if agg is not None:
        return aggregate_buffer_annotation(agg, ndim)
    return scalar_buffer_annotation(dtype, ndim)


def aggregate_buffer_annotation(agg: Any, ndim: int | None) -> BufferAnnotation:
    """``dc.Buffer[dc.vec3]``: the leaf dtype with the element's trailing dimensions (a ``(n, 3)``
    float32 array); ``dc.Buffer[Particle]``: the struct's bytes (the launch views the structured
    array as uint8 of shape ``(n, itemsize)``)."""
    if ndim is None:
        ndim = 1
    if isinstance(ndim, bool) or not isinstance(ndim, (int, np.integer)) or not 1 <= int(ndim) <= 3:
        raise ValueError(f"dc.Buffer ndim must be 1, 2 or 3, not {ndim!r}")
    dtype = UINT8 if agg.shape is None else agg.dtype
    if int(ndim) + elem_ndim(agg) > 3:
        # the launch ABI passes buffers of 1 to 3 dimensions, element dimensions included
        raise ValueError(f"dc.Buffer[{agg.name}, {ndim}] would be a {int(ndim) + elem_ndim(agg)}-d array; buffers "
                         f"have at most 3 dimensions including the element's ({elem_ndim(agg)} for a {agg.name})")
    return BufferAnnotation(dtype, int(ndim) + elem_ndim(agg), agg)


__all__ = ["buffer_annotation", "aggregate_buffer_annotation",
           "AggregateType", "VectorType", "MatrixType", "StructType", "StructField", "Aggregate", "vector",
           "matrix", "vec2", "vec3", "vec4", "mat22", "mat33", "mat44", "struct", "aggregate_type", "struct_type",
           "leaf_values", "VecFunction", "VEC_FUNCTIONS", "dot", "cross", "length", "length_sq", "normalize",
           "transpose", "outer", "determinant"]
