"""Aggregate lowering of statements: assignments to aggregates, tuples and places (locals, struct
fields, components, buffer elements), augmented and annotated assignments."""

from __future__ import annotations

import ast
from typing import Any

from .. import ir
from ..types import BOOL, INDEX, ScalarType
from ..vectypes import (
    MatrixType,
    StructType,
    VectorType,
    aggregate_type,
)
from .agg_values import (
    _COMPONENTS,
    AggValue,
    AggVar,
    Place,
    Slot,
    sub_range,
    type_name,
)
from .exprs import _BINOP_NAMES
from .function import Sym
from .typing_rules import strengthen


class AggStmtsMixin:
    """Statements that store aggregates (a part of :class:`AggregateLowerer`)."""

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
