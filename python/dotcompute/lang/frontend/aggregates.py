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
from typing import Any

from .. import ir
from ..types import BufferType, elem_ndim
from ..vectypes import (
    StructType,
    aggregate_type,
)
from .agg_calls import AggCallsMixin
from .agg_exprs import AggExprsMixin
from .agg_inline import AggInlineMixin
from .agg_stmts import AggStmtsMixin
from .agg_values import AggValue, AggVar, NeedsInline, Place, Slot, _InlineReturn, pure, sub_range, type_name
from .function import FunctionLowerer, Sym, is_aggregate_param
from .typing_rules import strengthen


class AggregateLowerer(AggExprsMixin, AggCallsMixin, AggStmtsMixin, AggInlineMixin, FunctionLowerer):
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


__all__ = ["AggregateLowerer", "AggValue", "AggVar", "Place", "Slot", "is_aggregate_param", "pure", "NeedsInline",
           "sub_range", "type_name"]
