"""Aggregate lowering of returns and inlining: a device function that takes or returns aggregates is
lowered once per specialisation and copied, renamed, into each caller."""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING, Any

from .. import ir
from ..types import BOOL, BufferType, ScalarType
from ..vectypes import (
    aggregate_type,
)
from .agg_values import (
    AggValue,
    AggVar,
    NeedsInline,
    Slot,
    _InlineReturn,
    _VoidResult,
    type_name,
)
from .exprs import BufferValue
from .function import always_returns
from .typing_rules import convert, is_weak, strengthen

if TYPE_CHECKING:
    from .aggregates import AggregateLowerer


class AggInlineMixin:
    """Returns and inlining of aggregate device functions (a part of :class:`AggregateLowerer`)."""

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
            low = type(self)(parsed, b, list(types), is_kernel=False, ir_name=f"{parsed.name}_inl",
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
