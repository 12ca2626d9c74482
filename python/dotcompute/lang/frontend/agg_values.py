"""The values and places of aggregate lowering: an aggregate value is its list of scalar leaves;
a place is where an assignment stores them (one slot per leaf)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import ir, vectypes
from ..types import ScalarType
from ..vectypes import (
    MatrixType,
    StructType,
    VectorType,
)
from .exprs import StaticValue

_COMPONENTS = "xyzw"


# ---------------------------------------------------------------------------------------------
# values and places


#: numpy's names for the vector functions (by id: some numpy functions are not hashable as keys)
_NUMPY_VEC = {id(np.dot): vectypes.dot, id(np.cross): vectypes.cross, id(np.outer): vectypes.outer,
              id(np.transpose): vectypes.transpose, id(np.linalg.norm): vectypes.length,
              id(np.linalg.det): vectypes.determinant, id(np.vdot): vectypes.dot}


@dataclass
class AggValue:
    """An aggregate value: its type and one scalar IR expression per leaf. ``origin`` is set for a
    vector/matrix element of a buffer (``(ref, indices)``) so a run-time component index can
    address memory directly."""

    type: Any
    leaves: list[ir.Expr]
    node: ast.AST
    origin: tuple[ir.BufferRef, list[ir.Expr]] | None = None


@dataclass
class AggVar:
    """A local or parameter of aggregate type: one scalar variable per leaf."""

    name: str
    py_name: str
    type: Any
    vars: list[Any]  # ir.LocalVar | ir.Param


@dataclass
class Slot:
    """One scalar storage place: a local variable, or a buffer element (with a struct member path)."""

    type: ScalarType
    var: str | None = None
    ref: ir.BufferRef | None = None
    indices: list[ir.Expr] = field(default_factory=list)
    member: tuple = ()

    def read(self, loc: ir.Loc) -> ir.Expr:
        if self.var is not None:
            return ir.Var(name=self.var, type=self.type, loc=loc)
        assert self.ref is not None
        return ir.BufferLoad(buffer=self.ref, indices=list(self.indices), type=self.type, loc=loc,
                             **({"member": self.member} if self.member else {}))

    def write(self, value: ir.Expr, loc: ir.Loc) -> ir.Stmt:
        if self.var is not None:
            return ir.Assign(name=self.var, value=value, loc=loc)
        assert self.ref is not None
        return ir.BufferStore(buffer=self.ref, indices=list(self.indices), value=value, loc=loc,
                              **({"member": self.member} if self.member else {}))


@dataclass
class Place:
    """Where an assignment stores: a scalar (one slot) or an aggregate (one slot per leaf).
    ``buf`` is set for a whole vector/matrix element of a buffer (run-time component indices)."""

    type: Any
    slots: list[Slot]
    buf: tuple[ir.BufferRef, list[ir.Expr]] | None = None

    @property
    def is_agg(self) -> bool:
        return not isinstance(self.type, ScalarType)


class _InlineReturn(ir.Stmt):
    """A ``return`` inside a device function being inlined; replaced when the body is copied."""

    def __init__(self, value: Any, node: ast.AST, loc: ir.Loc) -> None:
        super().__init__(loc=loc)
        self.value = value
        self.node = node


def sub_range(t: Any, key: Any) -> tuple[int, int, Any]:
    """The leaves ``[start, stop)`` and the type of component/row/field ``key`` of aggregate ``t``."""
    if isinstance(t, VectorType):
        return key, key + 1, t.dtype
    if isinstance(t, MatrixType):
        return key * t.cols, (key + 1) * t.cols, t.row_type()
    assert isinstance(t, StructType)
    start = 0
    for f in t.fields:
        n = 1 if isinstance(f.type, ScalarType) else f.type.nleaves
        if f.name == key:
            return start, start + n, f.type
        start += n
    raise KeyError(key)


def type_name(t: Any) -> str:
    return str(t) if isinstance(t, ScalarType) else t.name


# ---------------------------------------------------------------------------------------------


class _VoidResult(StaticValue):
    """The "value" of an inlined call without one: using it is an error."""

    def __init__(self, node: ast.AST) -> None:
        super().__init__(None, node)


class NeedsInline(Exception):
    """Raised by a device function's ``return`` of an aggregate when it is being lowered as an
    ordinary function (no annotation said so): the call site inlines it instead."""


def pure(e: ir.Expr) -> bool:
    """No side effects: may be evaluated more than once (loads, arithmetic, math, not calls/atomics)."""
    return not any(isinstance(n, (ir.Call, ir.AtomicOp, ir.Bind)) for n in ir.walk(e))
