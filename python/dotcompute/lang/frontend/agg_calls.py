"""Aggregate lowering of calls: constructors, casts, vector functions (dot, length, determinant),
atomics and elementwise functions applied leaf by leaf."""

from __future__ import annotations

import ast
from typing import Any

from .. import ir, vectypes
from ..kinds import DeviceFunctionBase
from ..types import FLOAT64, ScalarType
from ..vectypes import (
    MatrixType,
    StructType,
    VecFunction,
    VectorType,
    aggregate_type,
)
from .agg_values import (
    _NUMPY_VEC,
    AggValue,
    NeedsInline,
    type_name,
)
from .exprs import BufferValue, StaticValue
from .typing_rules import convert


class AggCallsMixin:
    """Calls with aggregate arguments or results (a part of :class:`AggregateLowerer`)."""

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
