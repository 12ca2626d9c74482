"""Aggregate lowering of expressions and operators: attributes, subscripts, components, buffer
elements, arithmetic, ``@`` and conditional expressions over aggregates."""

from __future__ import annotations

import ast
from typing import Any

from .. import ir
from ..types import BOOL, FLOAT64, INDEX, ScalarType, promote
from ..vectypes import (
    MatrixType,
    StructType,
    VectorType,
)
from .agg_values import (
    _COMPONENTS,
    AggValue,
    Slot,
    sub_range,
    type_name,
)
from .exprs import _BINOP_NAMES, BufferValue
from .typing_rules import convert, is_weak, strengthen


class AggExprsMixin:
    """Expressions and operators over aggregates (a part of :class:`AggregateLowerer`)."""

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
