"""Vectors, matrices and structs in the frontend: every aggregate value is lowered to its scalar leaves.

An aggregate value (:class:`AggValue`) is the list of scalar IR expressions of its leaves, in
leaf order (vector components, matrix elements row-major, struct fields depth first). So the
IR stays scalar and every emitter prints aggregates without knowing about them:

* a ``vec3`` local is three scalar locals, a ``vec3`` parameter three scalar parameters;
* ``Buffer[dc.vec3]`` is the float32 buffer with one more dimension (extent 3), and ``b[i]``
  is the three loads ``b[i, 0..2]``; ``Buffer[Particle]`` is a buffer of the struct's bytes whose
  accesses name one scalar field (``BufferLoad.member``), the only aggregate the emitters see;
* elementwise arithmetic, ``@``, ``dc.dot`` … are expanded into scalar expressions;
* device functions that take or return aggregates are inlined (the IR has no aggregate
  returns): their body is lowered once per specialisation and copied, renamed, into each
  caller, ``return`` becoming assignments of the result leaves and a jump out of a one-pass
  ``while True`` loop.

Leaves are duplicated when a value is used more than once (``dc.length(v)`` reads every
component twice). Pure expressions may be duplicated; anything else (a device function call)
is first computed into a temporary by a statement placed before the current one. That is not
possible where an expression is evaluated conditionally or repeatedly (``and``/``or``, a
conditional expression, a chained comparison, a ``while`` test); there the frontend says so.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import ir, vectypes
from ..kinds import DeviceFunctionBase
from ..types import BOOL, FLOAT64, INDEX, BufferType, ScalarType, elem_ndim, promote
from ..vectypes import (
    MatrixType,
    StructType,
    VecFunction,
    VectorType,
    aggregate_type,
)
from .exprs import _BINOP_NAMES, BufferValue, StaticValue
from .function import FunctionLowerer, Sym, always_returns, is_aggregate_param
from .typing_rules import convert, is_weak, strengthen

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
# the lowerer


class AggregateLowerer(FunctionLowerer):
    """FunctionLowerer with vectors, matrices and structs (the module builder uses this class)."""

    def __init__(self, *args: Any, inline: bool = False, **kwargs: Any) -> None:
        self._premade: dict[int, Any] = {}
        self._no_hoist = 0
        self.inline = inline
        self.agg_refs: dict[str, Any] = {}  # buffer IR name -> element type
        self.inline_returns: list[_InlineReturn] = []
        super().__init__(*args, **kwargs)

    # ----------------------------------------------------------------------------- parameters

    def aggregate_param(self, a: ast.arg, t: Any, i: int, debug_ids: list[int] | None) -> None:
        """An aggregate scalar parameter (one IR parameter per leaf) or a buffer of aggregates."""
        if isinstance(t, BufferType):
            name = self.names.fresh(a.arg)
            p = ir.Param(name=name, py_name=a.arg, type=t, index=len(self.params), loc=self.loc(a))
            did = debug_ids[i] if debug_ids else i
            elem = t.elem
            ndim = t.ndim if not isinstance(elem, StructType) else t.ndim - 1
            dtype = t.dtype
            extra: dict[str, Any] = {"struct": elem} if isinstance(elem, StructType) else {"fixed_extents": elem.shape}
            ref = ir.BufferRef(name=name, py_name=a.arg, space="global", dtype=dtype, ndim=ndim,
                               param_index=len(self.params), debug_id=did, **extra)
            self.params.append(p)
            self._param_names.add(name)
            self.agg_refs[name] = elem
            self.scope[a.arg] = Sym("param", p, ref)
            return
        agg = aggregate_type(t)
        leaves = []
        for path, lt in agg.leaves:
            name = self.names.fresh(f"{a.arg}_{'_'.join(map(str, path))}")
            p = ir.Param(name=name, py_name=f"{a.arg}.{'.'.join(map(str, path))}", type=lt, index=len(self.params),
                         loc=self.loc(a))
            self.params.append(p)
            self._param_names.add(name)
            leaves.append(p)
        self.scope[a.arg] = Sym("param", AggVar(a.arg, a.arg, agg, leaves))

    def logical_ndim(self, ref: ir.BufferRef) -> int:
        elem = self.agg_refs.get(ref.name)
        if elem is None or isinstance(elem, StructType):
            return ref.ndim
        return ref.ndim - elem_ndim(elem)

    # ----------------------------------------------------------------------------- plumbing

    def value(self, node: ast.expr) -> Any:
        made = self._premade.pop(id(node), None)
        if made is not None:
            return made
        return super().value(node)

    def premade(self, node: ast.AST, v: Any) -> None:
        self._premade[id(node)] = v

    def as_expr(self, v: Any, node: ast.AST) -> ir.Expr:
        """What ``expr`` makes of an already lowered value."""
        self.premade(node, v)
        return super().expr(node)  # type: ignore[arg-type]

    def expr(self, node: ast.expr) -> ir.Expr:
        v = self.value(node)
        if isinstance(v, AggValue):
            raise self.rep.type(node, f"a {type_name(v.type)} value cannot be used as a number here",
                                hint="take a component (v.x, v[i]), or use dc.dot / dc.length")
        return self.as_expr(v, node)

    def symbol_value(self, sym: Sym, node: ast.Name) -> Any:
        if isinstance(sym.var, AggVar):
            loc = self.loc(node)
            return AggValue(sym.var.type, [ir.Var(name=v.name, type=v.type, loc=loc) for v in sym.var.vars], node)
        return super().symbol_value(sym, node)

    def refuse_chained_index(self, node: ast.Subscript) -> None:
        inner = node.value
        if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name):
            sym = self.scope.get(inner.value.id)
            if sym is not None and sym.ref is not None and sym.ref.name in self.agg_refs:
                return
        super().refuse_chained_index(node)

    # ----------------------------------------------------------------------------- hoisting

    def can_hoist(self) -> bool:
        return self._no_hoist == 0

    def hold(self, e: ir.Expr, node: ast.AST, why: str = "") -> ir.Expr:
        """``e`` in a form that may be read several times: constants and variables as they are,
        anything else computed once into a temporary where a statement can go, else (pure
        expressions only) duplicated."""
        if isinstance(e, (ir.Const, ir.Var)):
            return e
        if not self.can_hoist():
            if not pure(e):
                raise self.rep.type(node, f"{why or 'this value'} must be computed once before it is used here, "
                                          "which is not possible inside and/or, a conditional expression, a "
                                          "chained comparison or a while condition",
                                    hint="assign it to a variable first")
            return e
        e = strengthen(e)
        tmp = self.temp(e.type, node, "v")
        self.emit(ir.Assign(name=tmp, value=e, loc=e.loc))
        return ir.Var(name=tmp, type=e.type, loc=e.loc)

    def hold_agg(self, v: AggValue) -> AggValue:
        return dataclasses.replace(v, leaves=[self.hold(e, v.node) for e in v.leaves])

    def x_BoolOp(self, node: ast.BoolOp) -> ir.Expr:
        self._no_hoist += 1
        try:
            return super().x_BoolOp(node)
        finally:
            self._no_hoist -= 1

    def cond(self, node: ast.expr) -> ir.Expr:
        made = self._premade.pop(id(node), None)
        if made is not None:
            return made
        if isinstance(node, ast.BoolOp):
            self._no_hoist += 1
            try:
                return super().cond(node)
            finally:
                self._no_hoist -= 1
        return super().cond(node)

    def x_Compare(self, node: ast.Compare) -> ir.Expr:
        chained = len(node.ops) > 1
        self._no_hoist += chained
        try:
            operands = [node.left, *node.comparators]
            for o in operands:
                v = self.value(o)
                if isinstance(v, AggValue):
                    raise self.rep.type(o, f"{type_name(v.type)} values cannot be compared",
                                        hint="compare components (v.x < w.x) or lengths (dc.length(v))")
                self.premade(o, v)
            return super().x_Compare(node)
        finally:
            self._no_hoist -= chained

    def s_While(self, node: ast.While) -> None:
        # the test runs again before every iteration: nothing may be computed once before the loop
        # for it (pure vector expressions are repeated instead, inlined calls are refused)
        self._no_hoist += 1
        try:
            self.premade(node.test, self.cond(node.test))
        finally:
            self._no_hoist -= 1
        n = len(self.block)
        super().s_While(node)
        if len(self.block) > n + 1:
            raise self.rep.type(node.test, "this while condition needs values computed before it (a device "
                                           "function returning a vector or struct, or a repeated vector "
                                           "expression), which cannot be re-evaluated on every iteration",
                                hint="compute it into a variable before the loop and again at the end of the body")

    # ----------------------------------------------------------------------------- expressions

    def x_Attribute(self, node: ast.Attribute) -> Any:
        base = self.value(node.value)
        if isinstance(base, AggValue):
            return self.agg_attribute(base, node.attr, node)
        if isinstance(base, BufferValue) and base.ref.name in self.agg_refs:
            if node.attr == "ndim":
                return ir.Const(value=self.logical_ndim(base.ref), type=INDEX, weak=True, loc=self.loc(node))
            if node.attr == "size":
                size = self.shape_of(base.ref, 0, node)
                for d in range(1, self.logical_ndim(base.ref)):
                    size = self.binop("Mult", size, self.shape_of(base.ref, d, node), node)
                return size
        self.premade(node.value, base)
        return super().x_Attribute(node)

    def shape_of(self, ref: ir.BufferRef, dim: int, node: ast.AST) -> ir.Expr:
        if ref.name in self.agg_refs:
            n = self.logical_ndim(ref)
            if not -n <= dim < n:
                raise self.rep.type(node, f"{ref.py_name!r} has {n} dimension(s); shape[{dim}] is out of range")
            if ref.shape is not None:  # a dc.shared array of vectors: its shape is a constant
                return ir.Const(value=ref.shape[dim % n], type=INDEX, loc=self.loc(node))
            return ir.Shape(buffer=ref, dim=dim % n, type=INDEX, weak=True, loc=self.loc(node))
        return super().shape_of(ref, dim, node)

    def shared_decl(self, target: ast.expr, call: ast.Call) -> None:
        """``tile = dc.shared((64,), dc.vec3)``: a work-group array of vectors or matrices is the
        scalar array with the element's trailing dimensions, like a buffer of them."""
        self._shared_elem: Any = None
        self._in_shared = True
        try:
            super().shared_decl(target, call)
        finally:
            self._in_shared = False

    def declare_shared(self, py_name: str, shape: tuple[int, ...], dtype: ScalarType, node: ast.AST) -> None:
        elem = getattr(self, "_shared_elem", None)
        if elem is None:
            return super().declare_shared(py_name, shape, dtype, node)
        if len(shape) + len(elem.shape) > 3:
            raise self.rep.type(node, f"a dc.shared array of {elem.name} has at most {3 - len(elem.shape)} "
                                      "dimension(s) (3 in all with the element's)")
        super().declare_shared(py_name, shape + elem.shape, dtype, node)
        self.agg_refs[self.scope[py_name].ref.name] = elem
        self._shared_elem = None
        return None

    def agg_attribute(self, v: AggValue, attr: str, node: ast.AST) -> Any:
        t = v.type
        if isinstance(t, VectorType):
            if len(attr) == 1 and attr in _COMPONENTS[:t.n]:
                return self.agg_item(v, _COMPONENTS.index(attr), node)
            if 2 <= len(attr) <= 4 and all(c in _COMPONENTS[:t.n] for c in attr):
                # a swizzle (read only): v.xy, v.zyx, v.xxxx
                return AggValue(VectorType(len(attr), t.dtype), [v.leaves[_COMPONENTS.index(c)] for c in attr], node)
            raise self.rep.type(node, f"a {t.name} has no component {attr!r}",
                                hint=f"its components are {', '.join('.' + c for c in _COMPONENTS[:min(t.n, 4)])}"
                                     if t.n <= 4 else "index it: v[i]")
        if isinstance(t, MatrixType):
            if attr == "T":
                return self.transpose(v, node)
            raise self.rep.type(node, f"a {t.name} has no attribute {attr!r}", hint="index it: m[i, j]; m.T")
        f = t.field(attr)
        if f is None:
            raise self.rep.type(node, f"struct {t.name} has no field {attr!r}",
                                hint=f"its fields are {', '.join(x.name for x in t.fields)}")
        start, stop, ft = sub_range(t, attr)
        if isinstance(ft, ScalarType):
            return v.leaves[start]
        return AggValue(ft, v.leaves[start:stop], node)

    def agg_item(self, v: AggValue, k: int, node: ast.AST) -> Any:
        """Component/row ``k`` (constant, already range-checked) of a vector or matrix value."""
        start, stop, st = sub_range(v.type, k)
        if isinstance(st, ScalarType):
            return v.leaves[start]
        origin = None
        if v.origin is not None:
            origin = (v.origin[0], [*v.origin[1], ir.Const(value=k, type=INDEX, loc=self.loc(node))])
        return AggValue(st, v.leaves[start:stop], node, origin)

    def x_Subscript(self, node: ast.Subscript) -> Any:
        chain = self.table_chain(node)  # a constant table, indexed in one go (OFFS[d][0])
        if chain is not None:
            return self.table_item(chain[0], chain[1], node)
        self.refuse_chained_index(node)
        base = self.value(node.value)
        if isinstance(base, BufferValue) and base.ref.name in self.agg_refs:
            return self.agg_buffer_item(base, node)
        if isinstance(base, AggValue):
            return self.agg_index(base, node.slice, node)
        self.premade(node.value, base)
        return super().x_Subscript(node)

    def index_parts(self, index: ast.expr) -> list[ast.expr]:
        parts = list(index.elts) if isinstance(index, ast.Tuple) else [index]
        for p in parts:
            if isinstance(p, ast.Slice):
                raise self.rep.syntax(p, "slices are not supported in kernels",
                                      hint="index one element at a time: v[i]")
        return parts

    def component_index(self, p: ast.expr, n: int, what: str) -> ir.Expr:
        e = self.expr(p)
        if not e.type.is_int or e.type.is_bool:
            if e.type.is_bool or not e.type.is_int:
                raise self.rep.type(p, f"{what} indices must be integers, not {e.type}")
        if isinstance(e, ir.Const):
            k = int(e.value)
            if not -n <= k < n:
                raise self.rep.type(p, f"index {k} is out of range for a {what} of {n}")
            return ir.Const(value=k % n, type=INDEX, loc=e.loc)
        return convert(e, INDEX)

    def agg_index(self, v: AggValue, index: ast.expr, node: ast.AST) -> Any:
        t = v.type
        if isinstance(t, StructType):
            raise self.rep.type(node, f"struct {t.name} cannot be indexed", hint="read its fields: p.name")
        parts = self.index_parts(index)
        if len(parts) > len(t.shape):
            raise self.rep.type(node, f"a {t.name} has {len(t.shape)} dimension(s) but is indexed with {len(parts)}")
        out: Any = v
        for p in parts:
            n = out.type.n if isinstance(out.type, VectorType) else out.type.rows
            k = self.component_index(p, n, out.type.name)
            if isinstance(k, ir.Const):
                out = self.agg_item(out, int(k.value), node)
            else:
                out = self.dynamic_item(out, k, node)
        return out

    def dynamic_item(self, v: AggValue, k: ir.Expr, node: ast.AST) -> Any:
        """``v[k]`` with a run-time ``k``: straight from memory for a buffer element, else a
        selection among the components (an index out of range gives the last one)."""
        loc = self.loc(node)
        if v.origin is not None:
            ref, idx = v.origin
            t = v.type
            st = t.dtype if isinstance(t, VectorType) else t.row_type()
            if isinstance(st, ScalarType):
                return ir.BufferLoad(buffer=ref, indices=[*idx, k], type=st, loc=loc)
            leaves = [ir.BufferLoad(buffer=ref, indices=[*idx, k, ir.Const(value=j, type=INDEX, loc=loc)],
                                    type=st.dtype, loc=loc) for j in range(st.n)]
            return AggValue(st, leaves, node, (ref, [*idx, k]))
        k = self.hold(k, node, "the index")
        n = v.type.n if isinstance(v.type, VectorType) else v.type.rows
        options = [self.agg_item(v, j, node) for j in range(n)]

        def pick(leaf: int | None) -> ir.Expr:
            def get(o: Any) -> ir.Expr:
                return o if leaf is None else o.leaves[leaf]
            out = get(options[-1])
            for j in range(n - 2, -1, -1):
                c = ir.Compare(op="Eq", left=k, right=ir.Const(value=j, type=INDEX, loc=loc), type=BOOL, loc=loc)
                out = ir.IfExp(cond=c, then=get(options[j]), orelse=out, type=out.type, loc=loc)
            return out

        if isinstance(options[0], AggValue):
            return AggValue(options[0].type, [pick(i) for i in range(options[0].type.nleaves)], node)
        return pick(None)

    def agg_buffer_item(self, base: BufferValue, node: ast.Subscript) -> Any:
        ref = base.ref
        elem = self.agg_refs[ref.name]
        nlog = self.logical_ndim(ref)
        parts = self.index_parts(node.slice)
        if len(parts) < nlog:
            raise self.rep.type(node, f"{ref.py_name!r} has {nlog} dimension(s) but is indexed with {len(parts)} "
                                      "index(es)", hint="give one index per dimension")
        self.note_access(ref, read=True)
        idx = self.buffer_indices(ref, parts[:nlog], node)
        v = self.element_value(ref, idx, elem, node)
        rest = parts[nlog:]
        if rest:
            tup = ast.copy_location(ast.Tuple(elts=rest, ctx=ast.Load()), rest[0])
            return self.agg_index(v, tup, node)
        return v

    def buffer_indices(self, ref: ir.BufferRef, parts: list[ast.expr], node: ast.AST) -> list[ir.Expr]:
        """The logical indices of an aggregate buffer access (int64; constant negatives count from the end)."""
        out = []
        for d, p in enumerate(parts):
            e = self.expr(p)
            if not e.type.is_int or e.type.is_bool:
                raise self.rep.type(p, f"array indices must be integers, not {e.type}",
                                    hint="convert with int(x)" if e.type.is_float else None)
            if is_weak(e) and e.value < 0:  # type: ignore[attr-defined]
                e = self.binop("Add", self.shape_of(ref, d, p), ir.Const(value=e.value, type=INDEX, loc=e.loc), p)  # type: ignore[attr-defined]
            out.append(convert(e, INDEX))
        return out

    def element_slots(self, ref: ir.BufferRef, idx: list[ir.Expr], elem: Any) -> list[Slot]:
        if isinstance(elem, StructType):
            return [Slot(type=lt, ref=ref, indices=list(idx), member=path) for path, lt in elem.leaves]
        out = []
        for path, lt in elem.leaves:
            out.append(Slot(type=lt, ref=ref, indices=[*idx, *[ir.Const(value=k, type=INDEX) for k in path]]))
        return out

    def element_value(self, ref: ir.BufferRef, idx: list[ir.Expr], elem: Any, node: ast.AST) -> AggValue:
        loc = self.loc(node)
        slots = self.element_slots(ref, idx, elem)
        origin = None if isinstance(elem, StructType) else (ref, list(idx))
        return AggValue(elem, [s.read(loc) for s in slots], node, origin)

    # ----------------------------------------------------------------------------- operators

    def x_BinOp(self, node: ast.BinOp) -> Any:
        a = self.value(node.left)
        b = self.value(node.right)
        if isinstance(node.op, ast.MatMult):
            return self.matmul(a, b, node)
        if isinstance(a, AggValue) or isinstance(b, AggValue):
            op = _BINOP_NAMES.get(type(node.op))
            if op is None:
                raise self.rep.syntax(node, f"the operator {type(node.op).__name__} is not supported in kernels")
            return self.agg_binop(op, a, b, node.left, node.right, node)
        self.premade(node.left, a)
        self.premade(node.right, b)
        return super().x_BinOp(node)

    def agg_binop(self, op: str, a: Any, b: Any, an: ast.AST, bn: ast.AST, node: ast.AST) -> AggValue:
        if isinstance(a, AggValue) and isinstance(b, AggValue):
            if isinstance(a.type, StructType) or isinstance(b.type, StructType):
                raise self.rep.type(node, f"structs have no arithmetic ({type_name(a.type)} and {type_name(b.type)})")
            if a.type.shape != b.type.shape:
                raise self.rep.type(node, f"operands of different shapes: {a.type.name} and {b.type.name}",
                                    hint="elementwise arithmetic needs vectors/matrices of the same shape")
            leaves = [self.binop(op, x, y, node) for x, y in zip(a.leaves, b.leaves, strict=True)]
            return self.rebuild(a.type, leaves, node)
        if isinstance(a, AggValue):
            s = self.hold(self.as_expr(b, bn), bn)
            v = a
            leaves = [self.binop(op, x, s, node) for x in v.leaves]
        else:
            s = self.hold(self.as_expr(a, an), an)
            v = b
            leaves = [self.binop(op, s, y, node) for y in v.leaves]
        if isinstance(v.type, StructType):
            raise self.rep.type(node, f"structs have no arithmetic ({v.type.name})")
        return self.rebuild(v.type, leaves, node)

    def rebuild(self, like: Any, leaves: list[ir.Expr], node: ast.AST) -> AggValue:
        """An aggregate of ``like``'s shape whose element type is the (common) type of ``leaves``."""
        leaves = [strengthen(x) for x in leaves]
        t = leaves[0].type
        for x in leaves[1:]:
            t = promote(t, x.type)
        leaves = [convert(x, t) for x in leaves]
        if isinstance(like, VectorType):
            return AggValue(VectorType(like.n, t), leaves, node)
        return AggValue(MatrixType(like.rows, like.cols, t), leaves, node)

    def x_UnaryOp(self, node: ast.UnaryOp) -> Any:
        if isinstance(node.op, ast.Not):
            return super().x_UnaryOp(node)
        v = self.value(node.operand)
        if isinstance(v, AggValue):
            if isinstance(v.type, StructType) or isinstance(node.op, ast.Invert):
                sym = "~" if isinstance(node.op, ast.Invert) else "-"
                raise self.rep.type(node, f"bad operand type for unary {sym}: {type_name(v.type)}")
            if isinstance(node.op, ast.UAdd):
                return v
            loc = self.loc(node)
            # bools negate as ints (Python's -True == -1), as the scalar rule does
            leaves = [self.unary_leaf(x, loc) for x in v.leaves]
            return self.rebuild(v.type, leaves, node)
        self.premade(node.operand, v)
        return super().x_UnaryOp(node)

    def unary_leaf(self, x: ir.Expr, loc: ir.Loc) -> ir.Expr:
        if x.type.is_bool:
            x = convert(x, INDEX)
        return ir.UnaryOp(op="USub", operand=x, type=x.type, loc=loc)

    def x_IfExp(self, node: ast.IfExp) -> Any:
        self._no_hoist += 1
        try:
            a = self.value(node.body)
            b = self.value(node.orelse)
        finally:
            self._no_hoist -= 1
        if not isinstance(a, AggValue) and not isinstance(b, AggValue):
            self.premade(node.body, a)
            self.premade(node.orelse, b)
            return super().x_IfExp(node)
        if not (isinstance(a, AggValue) and isinstance(b, AggValue)) or a.type.nleaves != b.type.nleaves or \
                type(a.type) is not type(b.type) or getattr(a.type, "shape", 0) != getattr(b.type, "shape", 0) or \
                (isinstance(a.type, StructType) and a.type is not b.type):
            def what(v: Any) -> str:
                return type_name(v.type) if hasattr(v, "type") else "a non-number"
            raise self.rep.type(node, f"the branches of this conditional expression have different types: "
                                      f"{what(a)} and {what(b)}")
        c = self.cond(node.test)
        if isinstance(c, ir.Const):
            return a if c.value else b
        c = self.hold(strengthen(c), node.test, "the condition")
        loc = self.loc(node)
        leaves = []
        for x, y in zip(a.leaves, b.leaves, strict=True):
            t = promote(strengthen(x).type, strengthen(y).type)
            leaves.append(ir.IfExp(cond=c, then=convert(x, t), orelse=convert(y, t), type=t, loc=loc))
        if isinstance(a.type, StructType):
            return AggValue(a.type, [convert(x, lt) for x, (_, lt) in zip(leaves, a.type.leaves, strict=True)], node)
        return self.rebuild(a.type, leaves, node)

    def matmul(self, a: Any, b: Any, node: ast.BinOp) -> Any:
        if not isinstance(a, AggValue) or not isinstance(b, AggValue) or isinstance(a.type, StructType) \
                or isinstance(b.type, StructType):
            raise self.rep.type(node, "@ needs two vectors or matrices (m @ v, m @ m, v @ m, v @ v)")
        a, b = self.hold_agg(a), self.hold_agg(b)
        ash = a.type.shape if isinstance(a.type, MatrixType) else (1, a.type.n)
        bsh = b.type.shape if isinstance(b.type, MatrixType) else (b.type.n, 1)
        if ash[1] != bsh[0]:
            raise self.rep.type(node, f"@: shapes do not match: {a.type.name} @ {b.type.name} "
                                      f"({ash[1]} columns against {bsh[0]} rows)")
        leaves = []
        for i in range(ash[0]):
            for j in range(bsh[1]):
                acc: ir.Expr | None = None
                for k in range(ash[1]):
                    x = a.leaves[i * ash[1] + k]
                    y = b.leaves[k * bsh[1] + j]
                    p = self.binop("Mult", x, y, node)
                    acc = p if acc is None else self.binop("Add", acc, p, node)
                assert acc is not None
                leaves.append(acc)
        if isinstance(a.type, VectorType) and isinstance(b.type, VectorType):
            return leaves[0]
        if isinstance(a.type, VectorType):
            return self.rebuild(VectorType(bsh[1], FLOAT64), leaves, node)
        if isinstance(b.type, VectorType):
            return self.rebuild(VectorType(ash[0], FLOAT64), leaves, node)
        return self.rebuild(MatrixType(ash[0], bsh[1], FLOAT64), leaves, node)

    def transpose(self, v: AggValue, node: ast.AST) -> AggValue:
        t = v.type
        if isinstance(t, VectorType):
            return v
        leaves = [v.leaves[i * t.cols + j] for j in range(t.cols) for i in range(t.rows)]
        return AggValue(MatrixType(t.cols, t.rows, t.dtype), leaves, node)

    # ----------------------------------------------------------------------------- calls

    def call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Name) and node.func.id in self.scope:
            return super().call(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "conjugate":
            return super().call(node)  # z.conjugate(): a method of a number, not a callee to look up
        callee = self.value(node.func)
        fn = callee.value if isinstance(callee, StaticValue) else None
        agg = aggregate_type(fn) if fn is not None else None
        if agg is not None:
            return self.construct(agg, node)
        if fn is vectypes.vector or fn is vectypes.matrix:
            # dc.vector(3, dc.int32): a type, made at compile time (then usually called)
            from .resolve import static_eval

            if node.keywords:
                raise self.rep.syntax(node, f"dc.{fn.__name__}() takes positional arguments only")
            try:
                args = [static_eval(self.parsed, a, self.builder.captures) for a in node.args]
                return StaticValue(fn(*args), node)
            except (ValueError, TypeError) as e:
                raise self.rep.type(node, str(e)) from None
        if fn is not None and not isinstance(fn, VecFunction):
            fn = _NUMPY_VEC.get(id(fn), fn)  # np.dot(a, b) on vectors is dc.dot(a, b), and so on
        if isinstance(fn, VecFunction):
            return self.vec_function(fn, node)
        if isinstance(fn, DeviceFunctionBase):
            if self.needs_inline(fn, node):
                return self.inline_call(fn, node)
            self.premade(node.func, callee)
            try:
                return super().call(node)
            except NeedsInline:
                # an unannotated function that turned out to return a vector/matrix/struct
                return self.inline_call(fn, node)
        if fn is len and len(node.args) == 1 and not node.keywords:
            v = self.value(node.args[0])
            if isinstance(v, AggValue) and not isinstance(v.type, StructType):
                n = v.type.n if isinstance(v.type, VectorType) else v.type.rows
                return ir.Const(value=n, type=ir.INDEX, weak=True, loc=self.loc(node))
            if isinstance(v, BufferValue) and v.ref.name in self.agg_refs:
                return self.shape_of(v.ref, 0, node)
            self.premade(node.args[0], v)
        if fn is not None and self.is_elementwise(fn) and node.args:
            args = [self.value(a) for a in node.args]
            if any(isinstance(a, AggValue) for a in args):
                return self.elementwise_call(fn, args, node)
            for a, v in zip(node.args, args, strict=True):
                self.premade(a, v)
        self.premade(node.func, callee)
        return super().call(node)

    def atomic(self, op: str, node: ast.Call) -> ir.Expr:
        """Atomics on a vector/matrix buffer take one component, by its full index
        (``dc.atomic_add(forces, (i, 0), fx)``); struct fields have none yet."""
        if node.args and isinstance(node.args[0], ast.Name):
            sym = self.scope.get(node.args[0].id)
            ref = sym.ref if sym is not None else None
            if ref is not None and ref.name in self.agg_refs:
                elem = self.agg_refs[ref.name]
                if isinstance(elem, StructType):
                    raise self.rep.type(node.args[0], f"atomics on fields of a {elem.name} buffer are not supported",
                                        hint="accumulate into a separate scalar buffer (one element per struct)")
                index = node.args[1] if len(node.args) > 1 else None
                count = len(index.elts) if isinstance(index, ast.Tuple) else 1
                if index is not None and count != ref.ndim:
                    raise self.rep.type(index, f"an atomic on {ref.py_name!r} (a buffer of {elem.name}) updates one "
                                               f"component: give {ref.ndim} indices, the element's and the "
                                               "component's",
                                        hint=f"dc.atomic_{op}({ref.py_name}, (i, 0), x) for the x component")
        return super().atomic(op, node)

    def is_elementwise(self, fn: Any) -> bool:
        from .. import builtins as dcb
        from .calls import _NP_MATH, _PY_MATH

        if isinstance(fn, dcb.MathFunction):
            return True
        try:
            return fn in _PY_MATH or fn in _NP_MATH or fn in (min, max, abs)
        except TypeError:
            return False

    def elementwise_call(self, fn: Any, args: list[Any], node: ast.Call) -> AggValue:
        """``dc.sqrt(v)``, ``abs(v)``, ``min(v, w)``, ``dc.min(v, 0.0)``: applied to every component."""
        shape_of = next(a for a in args if isinstance(a, AggValue))
        if isinstance(shape_of.type, StructType):
            raise self.rep.type(node, f"{getattr(fn, '__name__', 'this function')}() does not take a struct")
        held = []
        for a, an in zip(args, node.args, strict=True):
            if isinstance(a, AggValue):
                if a.type.shape != shape_of.type.shape:
                    raise self.rep.type(an, f"operands of different shapes: {a.type.name} and {shape_of.type.name}")
                held.append(a)
            else:
                held.append(self.hold(self.as_expr(a, an), an))
        leaves = []
        for k in range(shape_of.type.nleaves):
            sub_args = []
            for i, h in enumerate(held):
                x = h.leaves[k] if isinstance(h, AggValue) else h
                arg = ast.copy_location(ast.Name(id=f"__dc_leaf{i}", ctx=ast.Load()), node.args[i])
                self.premade(arg, x)
                sub_args.append(arg)
            call = ast.copy_location(ast.Call(func=node.func, args=sub_args, keywords=[]), node)
            self.premade(node.func, StaticValue(fn, node.func))
            leaves.append(super().call(call))
        return self.rebuild(shape_of.type, leaves, node)

    def construct(self, t: Any, node: ast.Call) -> AggValue:
        loc = self.loc(node)
        if isinstance(t, StructType):
            return self.construct_struct(t, node)
        if node.keywords:
            raise self.rep.syntax(node.keywords[0].value, f"dc.{t.name}() takes positional arguments only")
        values = [self.value(a) for a in node.args]
        n = t.nleaves
        if not values:
            zero = False if t.dtype.is_bool else (0.0 if t.dtype.is_float else 0)
            return AggValue(t, [ir.Const(value=zero, type=t.dtype, loc=loc) for _ in range(n)], node)
        flat: list[tuple[ir.Expr, ast.AST]] = []
        for v, an in zip(values, node.args, strict=True):
            if isinstance(v, AggValue):
                if isinstance(v.type, StructType):
                    raise self.rep.type(an, f"a struct cannot become a {t.name}")
                flat += [(x, an) for x in v.leaves]
            else:
                flat.append((self.as_expr(v, an), an))
        if len(flat) == 1 and n > 1:
            e = self.hold(self.cast_leaf(flat[0][0], t.dtype, flat[0][1]), flat[0][1])
            return AggValue(t, [e] * n, node)
        if isinstance(t, MatrixType) and len(values) == t.rows and len(flat) == n and \
                not all(isinstance(v, AggValue) and v.type.shape == (t.cols,) for v in values) and \
                any(isinstance(v, AggValue) for v in values):
            raise self.rep.type(node, f"dc.{t.name}() takes {n} numbers, {t.rows} rows of {t.cols}, or one number")
        if len(flat) != n:
            raise self.rep.type(node, f"dc.{t.name}() takes {n} numbers (or one, for every component), "
                                      f"got {len(flat)}")
        return AggValue(t, [self.cast_leaf(e, t.dtype, an) for e, an in flat], node)

    def cast_leaf(self, e: ir.Expr, t: ScalarType, node: ast.AST) -> ir.Expr:
        if e.type.is_complex:
            raise self.rep.type(node, f"a {e.type} value cannot become {t}",
                                hint="take z.real, z.imag or abs(z)")
        return convert(e, t, self.loc(node))

    def construct_struct(self, t: StructType, node: ast.Call) -> AggValue:
        names = [f.name for f in t.fields]
        given: dict[str, ast.expr] = {}
        if len(node.args) > len(names):
            raise self.rep.type(node, f"{t.name}() takes {len(names)} field value(s), got {len(node.args)}")
        for name, a in zip(names, node.args, strict=False):
            given[name] = a
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in names:
                raise self.rep.type(kw.value, f"struct {t.name} has no field {kw.arg!r}")
            if kw.arg in given:
                raise self.rep.type(kw.value, f"{t.name}() got two values for {kw.arg!r}")
            given[kw.arg] = kw.value
        leaves: list[ir.Expr] = []
        loc = self.loc(node)
        for f in t.fields:
            a = given.get(f.name)
            if a is None:
                for _, lt in (f.type.leaves if not isinstance(f.type, ScalarType) else [((), f.type)]):
                    zero = False if lt.is_bool else (0.0 if lt.is_float else 0)
                    leaves.append(ir.Const(value=zero, type=lt, loc=loc))
                continue
            v = self.value(a)
            leaves += self.coerce_to(v, f.type, a, f"field {f.name!r} of {t.name}")
        return AggValue(t, leaves, node)

    def coerce_to(self, v: Any, t: Any, node: ast.AST, what: str, store: bool = False) -> list[ir.Expr]:
        """The leaves of value ``v`` converted for a place of type ``t`` (assignment rules; ``store``:
        numpy's setitem rules, any number converts, a scalar broadcasts)."""
        if isinstance(t, ScalarType):
            if isinstance(v, AggValue):
                raise self.rep.type(node, f"cannot assign a {type_name(v.type)} value to {what} of type {t}",
                                    hint="take a component, or dc.dot / dc.length")
            e = self.as_expr(v, node)
            if store:
                return [self.store_value(e, t, node)]
            return [self.coerce_assign(e, t, node, what)]
        if not isinstance(v, AggValue):
            e = self.as_expr(v, node)
            if isinstance(t, StructType):
                raise self.rep.type(node, f"cannot assign a {e.type} number to {what} of type {t.name}",
                                    hint=f"assign a field ({what}.{t.fields[0].name} = ...), or a whole {t.name}")
            if not store:
                text = ast.unparse(node) if isinstance(node, ast.expr) else "x"
                raise self.rep.type(node, f"cannot assign a {e.type} number to {what} of type {type_name(t)}",
                                    hint=f"construct one: dc.{t.name}({text})" if not isinstance(t, StructType)
                                    else None)
            e = self.hold(e, node)
            return [self.store_value(e, lt, node) for _, lt in t.leaves]
        same = (isinstance(t, StructType) and v.type is t) or (
            not isinstance(t, StructType) and not isinstance(v.type, StructType) and type(t) is type(v.type)
            and t.shape == v.type.shape)
        if not same:
            raise self.rep.type(node, f"cannot assign a {type_name(v.type)} value to {what} of type {type_name(t)}")
        out = []
        for x, (_, lt) in zip(v.leaves, t.leaves, strict=True):
            out.append(self.store_value(x, lt, node) if store else self.coerce_assign(x, lt, node, what))
        return out

    def vec_function(self, fn: VecFunction, node: ast.Call) -> Any:
        if node.keywords:
            raise self.rep.syntax(node.keywords[0].value, f"keyword arguments are not supported for dc.{fn.name}()")
        if len(node.args) != fn.nargs:
            raise self.rep.type(node, f"dc.{fn.name}() takes {fn.nargs} argument(s), got {len(node.args)}")
        args = []
        for a in node.args:
            v = self.value(a)
            if not isinstance(v, AggValue) or isinstance(v.type, StructType):
                what = type_name(v.type) if isinstance(v, AggValue) else "number"
                raise self.rep.type(a, f"dc.{fn.name}() takes vectors or matrices, not a {what}")
            args.append(v)
        name = fn.name
        if name in ("dot", "cross", "length", "length_sq", "normalize", "outer"):
            for a, an in zip(args, node.args, strict=True):
                if not isinstance(a.type, VectorType):
                    raise self.rep.type(an, f"dc.{name}() takes vectors, not a {a.type.name}")
        if name in ("transpose", "determinant") and not isinstance(args[0].type, MatrixType):
            raise self.rep.type(node.args[0], f"dc.{name}() takes a matrix, not a {args[0].type.name}")
        if name == "transpose":
            return self.transpose(args[0], node)
        if name in ("dot", "cross") and args[0].type.n != args[1].type.n:
            raise self.rep.type(node, f"dc.{name}(): vectors of different lengths ({args[0].type.name} and "
                                      f"{args[1].type.name})")
        if name == "cross" and args[0].type.n != 3:
            raise self.rep.type(node, f"dc.cross() takes 3-vectors, not {args[0].type.name}")
        if name == "dot":
            return self.dot(args[0], args[1], node)
        if name == "length_sq":
            v = self.hold_agg(args[0])
            return self.dot(v, v, node)
        if name == "length":
            return self.length(args[0], node)
        if name == "normalize":
            v = self.hold_agg(args[0])
            ln = self.hold(self.length(v, node), node)
            return self.rebuild(v.type, [self.binop("TrueDiv", x, ln, node) for x in v.leaves], node)
        if name == "cross":
            a, b = self.hold_agg(args[0]), self.hold_agg(args[1])
            x, y = a.leaves, b.leaves

            def m(i: int, j: int) -> ir.Expr:
                return self.binop("Sub", self.binop("Mult", x[i], y[j], node), self.binop("Mult", x[j], y[i], node),
                                  node)
            return self.rebuild(a.type, [m(1, 2), m(2, 0), m(0, 1)], node)
        if name == "outer":
            a, b = self.hold_agg(args[0]), self.hold_agg(args[1])
            leaves = [self.binop("Mult", x, y, node) for x in a.leaves for y in b.leaves]
            return self.rebuild(MatrixType(a.type.n, b.type.n, FLOAT64), leaves, node)
        assert name == "determinant"
        t = args[0].type
        if t.rows != t.cols or t.rows not in (1, 2, 3, 4):
            raise self.rep.type(node, f"dc.determinant() takes a square matrix of size 1 to 4, not {t.name}")
        m = self.hold_agg(args[0])
        leaves = m.leaves if t.dtype.is_float else [convert(x, FLOAT64) for x in m.leaves]
        return self.det(leaves, t.rows, list(range(t.rows)), node)

    def dot(self, a: AggValue, b: AggValue, node: ast.AST) -> ir.Expr:
        acc: ir.Expr | None = None
        for x, y in zip(a.leaves, b.leaves, strict=True):
            p = self.binop("Mult", x, y, node)
            acc = p if acc is None else self.binop("Add", acc, p, node)
        assert acc is not None
        return acc

    def length(self, v: AggValue, node: ast.AST) -> ir.Expr:
        v = self.hold_agg(v)
        d = self.dot(v, v, node)
        return self.math_values("sqrt", [d], node, python_ints=False)

    def det(self, leaves: list[ir.Expr], n: int, cols: list[int], node: ast.AST, row: int = 0) -> ir.Expr:
        """Laplace expansion along the rows (n <= 4: at most 24 products, as numpy's LU would not be exact)."""
        size = int(round(len(leaves) ** 0.5))
        if len(cols) == 1:
            return leaves[row * size + cols[0]]
        acc: ir.Expr | None = None
        for k, c in enumerate(cols):
            minor = self.det(leaves, n, [x for x in cols if x != c], node, row + 1)
            term = self.binop("Mult", leaves[row * size + c], minor, node)
            if acc is None:
                acc = term
            else:
                acc = self.binop("Sub" if k % 2 else "Add", acc, term, node)
        assert acc is not None
        return acc

    # ----------------------------------------------------------------------------- statements

    def s_Assign(self, node: ast.Assign) -> None:
        targets = node.targets
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple):
            return super().s_Assign(node)
        if len(targets) == 1 and self.is_shared_call(node.value):
            return super().s_Assign(node)
        v = self.value(node.value)
        if isinstance(v, AggValue) or any(self.is_agg_target(t) for t in targets):
            if len(targets) > 1 and isinstance(v, AggValue):
                v = self.hold_agg(v)
            elif len(targets) > 1:
                v = self.hold(self.as_expr(v, node.value), node.value)
            for t in targets:
                self.agg_store(t, v, node.value, node)
            return None
        self.premade(node.value, v)
        return super().s_Assign(node)

    def unpack_value(self, target: ast.Tuple, value_node: ast.expr, node: ast.stmt) -> None:
        """``x, y = v`` with a vector ``v`` (numpy unpacks a 1-d array the same way), such as the
        result of a device function that returns ``dc.vec2(a, b)``. One value is evaluated once;
        anything but a vector of as many components is refused here, at the assignment."""
        v = self.value(value_node)
        n = len(target.elts)
        if isinstance(v, AggValue) and isinstance(v.type, VectorType) and v.type.n == n:
            held = self.hold_agg(v)
            for t, leaf in zip(target.elts, held.leaves, strict=True):
                self.store(t, leaf, node)
            return None
        if isinstance(v, AggValue):
            what = f"a {v.type.name} with {v.type.n} components" if isinstance(v.type, VectorType) else \
                f"a {v.type.name}"
            raise self.rep.syntax(node, f"cannot unpack {what} into {n} names")
        is_call = isinstance(value_node, ast.Call)
        raise self.rep.syntax(node, f"cannot unpack one value into {n} names",
                              hint="a device function returns one number or vector; return dc.vec2(a, b) and "
                                   "write `a, b = f(x)`" if is_call else "tuples are only supported as a, b = x, y")

    def tuple_assign(self, target: ast.Tuple, value_node: ast.expr, node: ast.stmt) -> None:
        """``a, b = b, a`` with vectors/structs too: every value is copied before any target is written."""
        value_node = self.shape_as_tuple(value_node, target, node)
        if not isinstance(value_node, (ast.Tuple, ast.List)) and not self.is_agg_target(target):
            return self.unpack_value(target, value_node, node)
        if not isinstance(value_node, ast.Tuple) or len(value_node.elts) != len(target.elts):
            return super().tuple_assign(target, value_node, node)
        values = [self.value(v) for v in value_node.elts]
        if not any(isinstance(v, AggValue) for v in values):
            for v, vn in zip(values, value_node.elts, strict=True):
                self.premade(vn, v)
            return super().tuple_assign(target, value_node, node)
        held: list[Any] = []
        for v, vn in zip(values, value_node.elts, strict=True):
            if isinstance(v, AggValue):
                leaves = []
                for x in v.leaves:  # copies even of variables: a target may be one of them
                    x = strengthen(x)
                    tmp = self.temp(x.type, vn, "v")
                    self.emit(ir.Assign(name=tmp, value=x, loc=x.loc))
                    leaves.append(ir.Var(name=tmp, type=x.type, loc=x.loc))
                held.append(AggValue(v.type, leaves, vn))
                continue
            e = strengthen(self.as_expr(v, vn))
            if not isinstance(e, ir.Const):
                tmp = self.temp(e.type, vn)
                self.emit(ir.Assign(name=tmp, value=e, loc=e.loc))
                e = ir.Var(name=tmp, type=e.type, loc=e.loc)
            held.append(e)
        for t, v, vn in zip(target.elts, held, value_node.elts, strict=True):
            if isinstance(v, AggValue) or self.is_agg_target(t):
                self.agg_store(t, v, vn, node)
            else:
                super().store(t, v, node)
        return None

    def shape_as_tuple(self, value_node: ast.expr, target: ast.Tuple, node: ast.stmt) -> ast.expr:
        if isinstance(value_node, ast.Attribute) and value_node.attr == "shape" and \
                isinstance(value_node.value, ast.Name):
            sym = self.scope.get(value_node.value.id)
            if sym is not None and sym.ref is not None and sym.ref.name in self.agg_refs:
                ndim = self.logical_ndim(sym.ref)
                if len(target.elts) != ndim:
                    raise self.rep.type(node, f"{sym.ref.py_name!r} has {ndim} dimension(s) but its shape is "
                                              f"unpacked into {len(target.elts)} names",
                                        hint="unpack one name per dimension, or use .shape[d]")
                elts: list[ast.expr] = []
                for d in range(ndim):
                    sub = ast.Subscript(value=value_node, slice=ast.Constant(value=d), ctx=ast.Load())
                    elts.append(ast.copy_location(sub, value_node))
                    ast.copy_location(sub.slice, value_node)
                return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), value_node)
        return super().shape_as_tuple(value_node, target, node)

    def is_agg_target(self, target: ast.expr) -> bool:
        """Whether storing into ``target`` involves an aggregate (a name holding one, a component,
        a field, an element of an aggregate buffer)."""
        if isinstance(target, ast.Name):
            sym = self.scope.get(target.id)
            return sym is not None and isinstance(sym.var, AggVar)
        if isinstance(target, ast.Attribute):
            return True  # only aggregates have assignable attributes; the base check refuses others
        if isinstance(target, ast.Subscript):
            inner = target.value
            if isinstance(inner, ast.Name):
                sym = self.scope.get(inner.id)
                if sym is None:
                    return False
                if isinstance(sym.var, AggVar):
                    return True
                return sym.ref is not None and sym.ref.name in self.agg_refs
            return self.is_agg_target(inner)
        return False

    def store(self, target: ast.expr, value: ir.Expr, node: ast.AST) -> None:
        if self.is_agg_target(target):
            self.agg_store(target, value, node, node)
            return
        super().store(target, value, node)

    def agg_store(self, target: ast.expr, v: Any, value_node: ast.AST, node: ast.AST) -> None:
        loc = self.loc(node)
        if isinstance(target, ast.Name):
            sym = self.scope.get(target.id)
            if sym is None:
                if not isinstance(v, AggValue):
                    self.premade(value_node, v)
                    super().store(target, self.as_expr(v, value_node), node)
                    return
                self.declare_agg(target.id, v.type, target)
                sym = self.scope[target.id]
            if sym.kind != "local" or not isinstance(sym.var, AggVar):
                if sym.kind == "param":
                    raise self.rep.syntax(target, f"cannot assign to the parameter {target.id!r}",
                                          hint="parameters are read-only in kernels; copy it into a local variable")
                if not isinstance(v, AggValue):
                    super().store(target, self.as_expr(v, value_node), node)
                    return
                raise self.rep.type(target, f"cannot assign a {type_name(v.type)} value to {target.id!r} of type "
                                            f"{getattr(sym.var, 'type', '?')}")
            var = sym.var
            leaves = self.coerce_to(v, var.type, target, target.id)
            self.write_slots([Slot(type=x.type, var=x.name) for x in var.vars], leaves, loc)
            return
        place = self.place(target)
        if isinstance(place, tuple):  # a run-time component of a local vector: ("dyn", index, [places])
            _, k, options = place
            vals = self.coerce_to(v, self.dyn_type(place), target, ast.unparse(target), store=True)
            vals = [self.hold(x, node) for x in vals]
            self.emit(self.dynamic_store(k, options, vals, loc))
            return
        vals = self.coerce_to(v, place.type, target, ast.unparse(target), store=True)
        self.write_slots(place.slots, vals, loc)

    def dynamic_store(self, k: ir.Expr, options: list[Any], vals: list[ir.Expr], loc: ir.Loc) -> ir.Stmt:
        def writes(o: Any) -> list[ir.Stmt]:
            if isinstance(o, tuple):
                return [self.dynamic_store(o[1], o[2], vals, loc)]
            return [s.write(x, loc) for s, x in zip(o.slots, vals, strict=True)]
        out = writes(options[-1])
        for j in range(len(options) - 2, -1, -1):
            c = ir.Compare(op="Eq", left=k, right=ir.Const(value=j, type=INDEX, loc=loc), type=BOOL, loc=loc)
            out = [ir.If(cond=c, then=writes(options[j]), orelse=out, loc=loc)]
        return out[0]

    @staticmethod
    def dyn_type(place: Any) -> Any:
        while isinstance(place, tuple):
            place = place[2][0]
        return place.type

    def write_slots(self, slots: list[Slot], values: list[ir.Expr], loc: ir.Loc) -> None:
        """Store ``values`` into ``slots``; through temporaries when a value reads a slot written
        before it (``v = dc.cross(v, w)``, ``v.x, v.y`` swaps)."""
        names = {s.var for s in slots if s.var is not None}
        bufs = {s.ref.name for s in slots if s.ref is not None}
        values = [strengthen(x) for x in values]

        def reads_slots(e: ir.Expr) -> bool:
            for n in ir.walk(e):
                if isinstance(n, (ir.Var, ir.Bind)) and n.name in names:
                    return True
                if isinstance(n, ir.BufferLoad) and n.buffer.name in bufs:
                    return True
            return False
        if len(values) > 1 and any(reads_slots(x) for x in values[1:]):
            held = []
            for x in values:
                if isinstance(x, ir.Const):
                    held.append(x)
                    continue
                tmp = self.temp(x.type, self.parsed.tree, "v")
                self.emit(ir.Assign(name=tmp, value=x, loc=loc))
                held.append(ir.Var(name=tmp, type=x.type, loc=loc))
            values = held
        for s, x in zip(slots, values, strict=True):
            self.emit(s.write(x, loc))

    def declare_agg(self, py_name: str, t: Any, node: ast.AST) -> AggVar:
        vars_ = []
        for path, lt in t.leaves:
            name = self.names.fresh(f"{py_name}_{'_'.join(map(str, path))}")
            var = ir.LocalVar(name=name, py_name=f"{py_name}.{'.'.join(map(str, path))}", type=lt, loc=self.loc(node))
            self.locals.append(var)
            vars_.append(var)
        agg = AggVar(py_name, py_name, t, vars_)
        self.scope[py_name] = Sym("local", agg)
        return agg

    def place(self, target: ast.expr) -> Any:
        """The storage an assignment target names: a :class:`Place`, or ``("dyn", k, options)`` for a
        run-time index into a local vector/matrix."""
        if isinstance(target, ast.Name):
            sym = self.scope.get(target.id)
            if sym is None:
                raise self.rep.syntax(target, f"local variable {target.id!r} is used before it is assigned")
            if sym.kind == "param":
                raise self.rep.syntax(target, f"cannot assign into the parameter {target.id!r}",
                                      hint="parameters are read-only in kernels; copy it into a local variable")
            if isinstance(sym.var, AggVar):
                return Place(sym.var.type, [Slot(type=x.type, var=x.name) for x in sym.var.vars])
            raise self.rep.type(target, f"{target.id!r} is a {sym.var.type} number and has no components")
        if isinstance(target, ast.Attribute):
            base = self.place(target.value)
            if isinstance(base, tuple) or not base.is_agg:
                raise self.rep.syntax(target, "attributes cannot be assigned in kernels")
            return self.sub_place(base, target.attr, target)
        if isinstance(target, ast.Subscript):
            inner = target.value
            if isinstance(inner, ast.Name):
                sym = self.scope.get(inner.id)
                if sym is not None and sym.ref is not None and sym.ref.name in self.agg_refs:
                    return self.buffer_place(sym.ref, target)
                if sym is not None and sym.ref is not None:
                    raise self.rep.type(target, f"{inner.id!r} is a buffer of {sym.ref.dtype} numbers; a vector, "
                                                "matrix or struct cannot be stored into one element",
                                        hint="declare it as a buffer of vectors, e.g. dc.Buffer[dc.vec3], or "
                                             "store the components one by one")
            base = self.place(inner)
            if isinstance(base, tuple) or not base.is_agg or isinstance(base.type, StructType):
                raise self.rep.type(target, f"{ast.unparse(inner)!r} cannot be indexed")
            parts = self.index_parts(target.slice)
            out: Any = base
            for p in parts:
                out = self.index_any(out, p, target, ast.unparse(inner))
            return out
        raise self.rep.syntax(target, "cannot assign to this expression")

    def index_any(self, place: Any, p: ast.expr, node: ast.AST, what: str) -> Any:
        """``place[p]`` where ``place`` may itself be a run-time selection (``m[r, c]`` with run-time r)."""
        if isinstance(place, tuple):
            _, k0, options = place
            first = options[0]
            while isinstance(first, tuple):
                first = first[2][0]
            if not first.is_agg:
                raise self.rep.type(node, f"too many indices for {what!r}")
            n = first.type.n if isinstance(first.type, VectorType) else first.type.rows
            k = self.component_index(p, n, first.type.name)
            return ("dyn", k0, [self.index_resolved(o, k, node) for o in options])
        if not place.is_agg or isinstance(place.type, StructType):
            raise self.rep.type(node, f"too many indices for {what!r}")
        n = place.type.n if isinstance(place.type, VectorType) else place.type.rows
        return self.index_place(place, self.component_index(p, n, place.type.name), node)

    def index_resolved(self, place: Any, k: ir.Expr, node: ast.AST) -> Any:
        if isinstance(place, tuple):
            _, k0, options = place
            return ("dyn", k0, [self.index_resolved(o, k, node) for o in options])
        return self.index_place(place, k, node)

    def sub_place(self, base: Place, attr: str, node: ast.AST) -> Place:
        t = base.type
        if isinstance(t, VectorType):
            if len(attr) != 1 or attr not in _COMPONENTS[:t.n]:
                raise self.rep.type(node, f"a {t.name} has no component {attr!r}")
            return self.index_place(base, ir.Const(value=_COMPONENTS.index(attr), type=INDEX), node)
        if isinstance(t, MatrixType):
            raise self.rep.type(node, f"a {t.name} has no assignable attribute {attr!r}", hint="assign m[i, j]")
        f = t.field(attr)
        if f is None:
            raise self.rep.type(node, f"struct {t.name} has no field {attr!r}",
                                hint=f"its fields are {', '.join(x.name for x in t.fields)}")
        start, stop, ft = sub_range(t, attr)
        return Place(ft, base.slots[start:stop])

    def index_place(self, base: Place, k: ir.Expr, node: ast.AST) -> Any:
        t = base.type
        if isinstance(k, ir.Const):
            start, stop, st = sub_range(t, int(k.value))
            buf = None
            if base.buf is not None:
                buf = (base.buf[0], [*base.buf[1], k])
            return Place(st, base.slots[start:stop], buf)
        if base.buf is not None:
            ref, idx = base.buf
            st = t.dtype if isinstance(t, VectorType) else t.row_type()
            if isinstance(st, ScalarType):
                return Place(st, [Slot(type=st, ref=ref, indices=[*idx, k])])
            slots = [Slot(type=st.dtype, ref=ref, indices=[*idx, k, ir.Const(value=j, type=INDEX)])
                     for j in range(st.n)]
            return Place(st, slots, (ref, [*idx, k]))
        k = self.hold(k, node, "the index")
        n = t.n if isinstance(t, VectorType) else t.rows
        return ("dyn", k, [self.index_place(base, ir.Const(value=j, type=INDEX), node) for j in range(n)])

    def buffer_place(self, ref: ir.BufferRef, target: ast.Subscript) -> Any:
        elem = self.agg_refs[ref.name]
        nlog = self.logical_ndim(ref)
        parts = self.index_parts(target.slice)
        if len(parts) < nlog:
            raise self.rep.type(target, f"{ref.py_name!r} has {nlog} dimension(s) but is indexed with "
                                        f"{len(parts)} index(es)", hint="give one index per dimension")
        self.note_access(ref, written=True)
        idx = [self.hold(e, target) for e in self.buffer_indices(ref, parts[:nlog], target)]
        buf = None if isinstance(elem, StructType) else (ref, idx)
        out: Any = Place(elem, self.element_slots(ref, idx, elem), buf)
        for p in parts[nlog:]:
            if not out.is_agg or isinstance(out.type, StructType):
                raise self.rep.type(target, f"too many indices for {ref.py_name!r}")
            n = out.type.n if isinstance(out.type, VectorType) else out.type.rows
            out = self.index_place(out, self.component_index(p, n, out.type.name), target)
        return out

    def place_value(self, place: Any, node: ast.AST) -> Any:
        loc = self.loc(node)
        if isinstance(place, tuple):
            _, k, options = place
            vals = [self.place_value(o, node) for o in options]
            if isinstance(vals[0], AggValue):
                raise self.rep.type(node, "augmented assignment to a run-time row is not supported",
                                    hint="index the element: m[i, j] += x")
            out = vals[-1]
            for j in range(len(vals) - 2, -1, -1):
                c = ir.Compare(op="Eq", left=k, right=ir.Const(value=j, type=INDEX, loc=loc), type=BOOL, loc=loc)
                out = ir.IfExp(cond=c, then=vals[j], orelse=out, type=out.type, loc=loc)
            return out
        for s in place.slots:
            if s.ref is not None:
                self.note_access(s.ref, read=True)
        leaves = [s.read(loc) for s in place.slots]
        if not place.is_agg:
            return leaves[0]
        return AggValue(place.type, leaves, node)

    def s_AugAssign(self, node: ast.AugAssign) -> None:
        target = node.target
        if not self.is_agg_target(target):
            return super().s_AugAssign(node)
        op = _BINOP_NAMES.get(type(node.op))
        if op is None:
            raise self.rep.syntax(node, f"the operator {type(node.op).__name__}= is not supported in kernels")
        place = self.place(target)
        current = self.place_value(place, target)
        rhs = self.value(node.value)
        if isinstance(current, AggValue) or isinstance(rhs, AggValue):
            if not isinstance(current, AggValue):
                raise self.rep.type(node, f"cannot add a {type_name(rhs.type)} into the number "
                                          f"{ast.unparse(target)!r}")
            result: Any = self.agg_binop(op, current, rhs, target, node.value, node)
        else:
            result = self.binop(op, current, self.as_expr(rhs, node.value), node)
        loc = self.loc(node)
        if isinstance(place, tuple):
            _, k, options = place
            vals = [self.hold(x, node) for x in self.coerce_to(result, self.dyn_type(place), target,
                                                               ast.unparse(target), store=True)]
            self.emit(self.dynamic_store(k, options, vals, loc))
            return None
        if isinstance(target, ast.Name):
            vals = self.coerce_to(result, place.type, target, target.id)
        else:
            vals = self.coerce_to(result, place.type, target, ast.unparse(target), store=True)
        self.write_slots(place.slots, vals, loc)
        return None

    def s_AnnAssign(self, node: ast.AnnAssign) -> None:
        from .resolve import static_eval

        try:
            obj = static_eval(self.parsed, node.annotation, self.builder.captures)
        except Exception:
            obj = None
        t = aggregate_type(obj)
        if t is None:
            return super().s_AnnAssign(node)
        if not isinstance(node.target, ast.Name):
            raise self.rep.syntax(node, "annotated assignment needs a plain name")
        name = node.target.id
        sym = self.scope.get(name)
        if sym is None:
            var = self.declare_agg(name, t, node.target)
        elif not isinstance(sym.var, AggVar) or sym.kind != "local":
            raise self.rep.type(node, f"{name!r} is already declared; it cannot be redeclared as {type_name(t)}")
        elif sym.var.type != t:
            raise self.rep.type(node, f"{name!r} is already a {type_name(sym.var.type)}; it cannot be redeclared "
                                      f"as {type_name(t)}")
        else:
            var = sym.var
        if node.value is not None:
            v = self.value(node.value)
            if not isinstance(v, AggValue) and not isinstance(t, StructType):
                e = self.hold(self.as_expr(v, node.value), node.value)
                v = AggValue(t, [self.cast_leaf(e, t.dtype, node.value)] * t.nleaves, node.value)
            leaves = self.coerce_to(v, t, node.target, name)
            self.write_slots([Slot(type=x.type, var=x.name) for x in var.vars], leaves, self.loc(node))
        return None

    def annotation_type(self, node: ast.expr) -> ScalarType:
        from .resolve import static_eval

        try:
            obj = static_eval(self.parsed, node, self.builder.captures)
        except Exception:
            obj = None
        agg = aggregate_type(obj)
        if agg is not None and getattr(self, "_in_shared", False) and not isinstance(agg, StructType):
            self._shared_elem = agg
            return agg.dtype
        if agg is not None:
            raise self.rep.type(node, f"{ast.unparse(node)} is a vector/matrix/struct type, which cannot be used here",
                                hint="dc.shared arrays and casts take scalar types")
        return super().annotation_type(node)

    # ----------------------------------------------------------------------------- returns and inlining

    def s_Return(self, node: ast.Return) -> None:
        if isinstance(node.value, ast.Tuple) and not self.is_kernel:
            # `return a, b` is how Python returns two values; say so at the return, not "tuples are not values"
            raise self.rep.syntax(node.value, "device functions return one value, not a tuple",
                                  hint="return a small vector (return dc.vec2(a, b), or dc.vector(n, dtype)(...)) "
                                       "and unpack it at the call (a, b = f(x)), or write into buffer parameters")
        if not self.inline:
            value = node.value
            if value is not None and not self.is_kernel:
                v = self.value(value)
                if isinstance(v, AggValue):
                    raise NeedsInline()
                self.premade(value, v)
            return super().s_Return(node)
        value = node.value
        if isinstance(value, ast.Constant) and value.value is None:
            value = None
        v = None if value is None else self.value(value)
        if v is not None and not isinstance(v, AggValue):
            v = self.as_expr(v, value)
        r = _InlineReturn(v, node, self.loc(node))
        self.inline_returns.append(r)
        self.emit(r)

    def needs_inline(self, fn: Any, node: ast.Call) -> bool:
        from .signature import param_decls, return_spec_any

        decls = param_decls(fn.parsed(), self.builder.captures, device=True)
        if any(aggregate_type(d.spec) is not None or getattr(d.spec, "elem", None) is not None for d in decls):
            return True
        if aggregate_type(return_spec_any(fn.parsed(), self.builder.captures)) is not None:
            return True
        for a in [*node.args, *[k.value for k in node.keywords]]:
            if isinstance(a, ast.Name):
                sym = self.scope.get(a.id)
                if sym is not None and (isinstance(sym.var, AggVar) or (sym.ref is not None
                                                                        and sym.ref.name in self.agg_refs)):
                    return True
            elif isinstance(a, (ast.Call, ast.BinOp, ast.Attribute, ast.Subscript, ast.UnaryOp, ast.IfExp)):
                # an expression that may yield an aggregate: decide by lowering it (kept for the call)
                v = self.value(a)
                self.premade(a, v)
                if isinstance(v, AggValue):
                    return True
        return False  # an aggregate return found while lowering the body raises NeedsInline

    def inline_call(self, fn: Any, node: ast.Call) -> Any:
        from .signature import param_decls, return_spec_any

        parsed = fn.parsed()
        decls = param_decls(parsed, self.builder.captures, device=True)
        given = self.bind_arguments(fn, decls, node)
        types: list[Any] = []
        values: list[Any] = []
        for decl, arg in zip(decls, given, strict=True):
            if arg is None:
                raise self.rep.type(node, f"{fn.__name__}() is missing the argument {decl.name!r}")
            v = self.value(arg)
            spec = decl.spec
            want = aggregate_type(spec)
            if isinstance(v, BufferValue):
                if v.ref.space != "global":
                    raise self.rep.type(arg, "dc.shared arrays cannot be passed to device functions",
                                        hint="pass the values, or do the work in the kernel")
                t = self.params[v.ref.param_index].type if v.ref.param_index is not None else None
                assert isinstance(t, BufferType)
                if spec is not None and not (isinstance(spec, type(decl.spec)) and getattr(spec, "elem", None)
                                             == t.elem and (spec.dtype in (None, t.dtype))):
                    if getattr(spec, "elem", None) != t.elem or want is not None or isinstance(spec, ScalarType):
                        raise self.rep.type(arg, f"parameter {decl.name!r} of {fn.__name__}() expects "
                                                 f"{spec!r}, got a buffer of {t.elem or t.dtype}")
                types.append(t)
                values.append(v)
                continue
            if isinstance(v, AggValue):
                if want is None and spec is not None:
                    raise self.rep.type(arg, f"parameter {decl.name!r} of {fn.__name__}() expects {spec!r}, got a "
                                             f"{type_name(v.type)}")
                t = want or v.type
                leaves = self.coerce_to(v, t, arg, f"parameter {decl.name!r}")
                types.append(t)
                values.append(leaves)
                continue
            e = self.as_expr(v, arg)
            if want is not None:
                raise self.rep.type(arg, f"parameter {decl.name!r} of {fn.__name__}() expects a {type_name(want)}, "
                                         f"got a {e.type} number")
            st = decl.scalar_type_for(e, self.rep, arg)
            if spec is not None and e.type.is_float and not st.is_float and not is_weak(e):
                raise self.rep.type(arg, f"parameter {decl.name!r} of {fn.__name__}() is {st}; "
                                         f"a {e.type} argument would be truncated",
                                    hint=f"convert explicitly, e.g. dc.{st.name}(...)")
            if spec is not None and is_weak(e):
                e = self.coerce_assign(e, st, arg, decl.name)
            types.append(st)
            values.append([convert(e, st)])
        if not self.can_hoist():
            raise self.rep.type(node, f"{fn.__name__}() takes or returns vectors, matrices or structs, so it is "
                                      "inlined, which is not possible inside and/or, a conditional expression, "
                                      "a chained comparison or a while condition",
                                hint="assign its result to a variable first")
        callee = self.lower_inline(fn, tuple(types), node)
        rspec = return_spec_any(parsed, self.builder.captures)
        return self.splice(callee, values, rspec, fn, node)

    def lower_inline(self, fn: Any, types: tuple, node: ast.AST) -> AggregateLowerer:
        b = self.builder
        if any(fn is f for f in b._in_progress):
            chain = " -> ".join(f.__name__ for f in [*b._in_progress, fn])
            raise self.rep.syntax(node, f"recursion is not supported in kernels ({chain})",
                                  hint="rewrite the recursion as a loop")
        cache = b.__dict__.setdefault("_inline_cache", {})
        key = (id(fn), types)
        low = cache.get(key)
        if low is not None:
            return low
        parsed = fn.parsed()
        b._in_progress.append(fn)
        try:
            low = AggregateLowerer(parsed, b, list(types), is_kernel=False, ir_name=f"{parsed.name}_inl",
                                   inline=True)
            low.inline_body = low.stmts(parsed.tree.body)
        finally:
            b._in_progress.pop()
        cache[key] = low
        return low

    def splice(self, callee: AggregateLowerer, values: list[Any], rspec: Any, fn: Any, node: ast.Call) -> Any:
        loc = self.loc(node)
        rename: dict[str, str] = {}
        refs: dict[str, ir.BufferRef] = {}
        # parameters: bound to the argument values (evaluated in order, before the body)
        for p_group, v in zip(self.param_groups(callee), values, strict=True):
            if isinstance(v, BufferValue):
                (p,) = p_group
                refs[p.name] = v.ref
                self.note_access(v.ref, read=p.read, written=p.written)
                continue
            for p, x in zip(p_group, v, strict=True):
                new = self.temp(p.type, node, f"{fn.__name__}_{p.py_name}")
                rename[p.name] = new
                self.emit(ir.Assign(name=new, value=strengthen(x), loc=loc))
        for lv in callee.locals:
            new = self.temp(lv.type, node, f"{fn.__name__}_{lv.py_name.strip('<>')}")
            rename[lv.name] = new
        self.uses_atomics |= callee.uses_atomics
        # the result
        rets = [r for r in callee.inline_returns if r.value is not None]
        bare = [r for r in callee.inline_returns if r.value is None]
        rt = aggregate_type(rspec) if rspec not in (None, "void") else None
        if rt is None and isinstance(rspec, ScalarType):
            rt = rspec
        if rt is None and rspec is None and rets:
            first = rets[0].value
            rt = first.type if isinstance(first, AggValue) else None
            if rt is None:
                from .typing_rules import common_type
                if any(isinstance(r.value, AggValue) for r in rets):
                    raise callee.rep.type(rets[0].node, f"{fn.__name__}() returns numbers and vectors/structs")
                rt = common_type([r.value for r in rets])
        if rets and bare:
            raise callee.rep.type(bare[0].node, f"{fn.__name__}() returns a value elsewhere; every return must "
                                                "give one")
        if rspec == "void" and rets:
            raise callee.rep.type(rets[0].node, f"{fn.__name__}() is declared to return None")
        result_slots: list[Slot] = []
        if rt is not None:
            leaf_types = [rt] if isinstance(rt, ScalarType) else [lt for _, lt in rt.leaves]
            for lt in leaf_types:
                result_slots.append(Slot(type=lt, var=self.temp(lt, node, f"{fn.__name__}_ret")))
            if not always_returns(callee.inline_body):
                for s in result_slots:
                    zero = False if s.type.is_bool else (0.0 if s.type.is_float else 0)
                    self.emit(s.write(ir.Const(value=zero, type=s.type, loc=loc), loc))
        done = self.temp(BOOL, node, f"{fn.__name__}_done")
        conv: dict[int, list[ir.Expr]] = {}
        for r in rets:
            if isinstance(rt, ScalarType):
                if isinstance(r.value, AggValue):
                    raise callee.rep.type(r.node, f"{fn.__name__}() must return a {rt} number, not a "
                                                  f"{type_name(r.value.type)}")
                conv[id(r)] = [convert(r.value, rt) if rspec is None else callee.coerce_assign(
                    r.value, rt, r.node, "the return value") if not isinstance(rspec, ScalarType)
                    else convert(r.value, rt)]
            else:
                conv[id(r)] = callee.coerce_to(r.value, rt, r.node, f"the return value of {fn.__name__}()")
        copier = _Copier(rename, refs, result_slots, conv, done)
        if callee.parsed.info.filename != self.parsed.info.filename:
            # generated code and debug reports name the caller's file: point them at the call
            copier.loc = loc
        body = copier.stmts(callee.inline_body)
        if copier.nested_return:
            self.emit(ir.Assign(name=done, value=ir.Const(value=False, type=BOOL, loc=loc), loc=loc))
        body.append(ir.Break(loc=loc))
        self.emit(ir.While(cond=ir.Const(value=True, type=BOOL, loc=loc), body=body, loc=loc))
        if rt is None:
            return _VoidResult(node)
        reads = [s.read(loc) for s in result_slots]
        if isinstance(rt, ScalarType):
            return reads[0]
        return AggValue(rt, reads, node)

    def param_groups(self, callee: AggregateLowerer) -> list[list[ir.Param]]:
        """The callee's IR parameters grouped by Python parameter (an aggregate has one per leaf)."""
        groups: list[list[ir.Param]] = []
        for a in callee.parsed.tree.args.args:
            sym = callee.scope.get(a.arg)
            if sym is not None and isinstance(sym.var, AggVar):
                groups.append(list(sym.var.vars))
            else:
                # the parameter symbol may have been shadowed? parameters cannot be assigned, so no
                groups.append([sym.var] if sym is not None else [])
        return groups


class _VoidResult(StaticValue):
    """The "value" of an inlined call without one: using it is an error."""

    def __init__(self, node: ast.AST) -> None:
        super().__init__(None, node)


class NeedsInline(Exception):
    """Raised by a device function's ``return`` of an aggregate when it is being lowered as an
    ordinary function (no annotation said so): the call site inlines it instead."""


class _Copier:
    """Copies an inlined body: renames locals and parameters, substitutes buffers, turns returns
    into result assignments and a jump out of the surrounding one-pass loop."""

    def __init__(self, rename: dict[str, str], refs: dict[str, ir.BufferRef], result: list[Slot],
                 conv: dict[int, list[ir.Expr]], done: str) -> None:
        self.rename = rename
        self.refs = refs
        self.result = result
        self.conv = conv
        self.done = done
        self.loop_depth = 0
        self.nested_return = False
        self.loc: ir.Loc | None = None  # when set, every copied node is placed here

    def stmts(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            out += self.stmt(s)
        return out

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        at = self.loc or s.loc
        if isinstance(s, _InlineReturn):
            out: list[ir.Stmt] = []
            if s.value is not None:
                vals = [self.node(x) for x in self.conv[id(s)]]
                if len(vals) > 1:
                    # every result leaf from the callee's values before any is overwritten
                    out += [sl.write(v, at) for sl, v in zip(self.result, vals, strict=True)]
                else:
                    out.append(self.result[0].write(vals[0], at))
            if self.loop_depth:
                self.nested_return = True
                out.append(ir.Assign(name=self.done, value=ir.Const(value=True, type=BOOL, loc=at), loc=at))
            out.append(ir.Break(loc=at))
            return out
        if isinstance(s, (ir.For, ir.While)):
            self.loop_depth += 1
            before = self.nested_return
            self.nested_return = False
            try:
                copied = self.node(s)
            finally:
                self.loop_depth -= 1
            inner = self.nested_return
            self.nested_return = before or inner
            out = [copied]
            if inner:
                # a return inside this loop left it with break: leave the enclosing levels too
                out.append(ir.If(cond=ir.Var(name=self.done, type=BOOL, loc=at), then=[ir.Break(loc=at)], loc=at))
            return out
        return [self.node(s)]

    def node(self, n: Any) -> Any:
        if isinstance(n, ir.BufferRef):
            return self.refs.get(n.name, n)
        if isinstance(n, list):
            if n and isinstance(n[0], ir.Stmt):
                return self.stmts(n)
            return [self.node(x) for x in n]
        if not isinstance(n, ir.Node):
            return n
        if isinstance(n, (ir.For, ir.While)) and not self.loop_depth:
            pass
        changes: dict[str, Any] = {} if self.loc is None else {"loc": self.loc}
        for f in dataclasses.fields(n):
            val = getattr(n, f.name)
            if f.name in ("name", "var", "counter") and isinstance(val, str) and isinstance(
                    n, (ir.Var, ir.Bind, ir.Assign, ir.For)):
                changes[f.name] = self.rename.get(val, val)
            elif f.name == "body" and isinstance(n, (ir.For, ir.While)):
                changes[f.name] = self.stmts(val)
            elif f.name in ("then", "orelse") and isinstance(n, ir.If):
                changes[f.name] = self.stmts(val)
            elif isinstance(val, (ir.Node, ir.BufferRef, list)):
                changes[f.name] = self.node(val)
        return dataclasses.replace(n, **changes)


def pure(e: ir.Expr) -> bool:
    """No side effects: may be evaluated more than once (loads, arithmetic, math, not calls/atomics)."""
    return not any(isinstance(n, (ir.Call, ir.AtomicOp, ir.Bind)) for n in ir.walk(e))


__all__ = ["AggregateLowerer", "AggValue", "AggVar", "is_aggregate_param", "pure", "NeedsInline"]
