"""Lowering of Python statements to IR statements."""

from __future__ import annotations

import ast
import math
from typing import Any

from ...errors import KernelSyntaxError, KernelTypeError
from .. import builtins as dcb
from .. import ir
from ..types import FLOAT64, INT64, ScalarType, promote
from .exprs import TABLE_LOOP_PREFIX, BufferValue, StaticValue, is_table, table_rows
from .typing_rules import common_type, convert, is_weak, strengthen

_UNSUPPORTED_STMT = {
    ast.Try: ("try/except is not supported in kernels", "kernels cannot raise; check conditions with if"),
    ast.With: ("with statements are not supported in kernels", None),
    ast.AsyncWith: ("async with is not supported in kernels", None),
    ast.AsyncFor: ("async for is not supported in kernels", None),
    ast.Raise: ("raise is not supported in kernels", "kernels cannot raise; use debug=True for bounds checks"),
    ast.Assert: ("assert is not supported in kernels", "use debug=True for bounds checks, or an if"),
    ast.Import: ("import is not supported in kernels", "import at module level"),
    ast.ImportFrom: ("import is not supported in kernels", "import at module level"),
    ast.Global: ("global statements are not supported in kernels",
                 "kernels cannot change Python variables; write results into a buffer"),
    ast.Nonlocal: ("nonlocal statements are not supported in kernels",
                   "kernels cannot change Python variables; write results into a buffer"),
    ast.Delete: ("del is not supported in kernels", None),
    ast.ClassDef: ("classes cannot be defined in kernels", None),
    ast.FunctionDef: ("functions cannot be defined inside kernels", "define it at module level with @dc.func"),
    ast.AsyncFunctionDef: ("functions cannot be defined inside kernels", "define it at module level with @dc.func"),
}
if hasattr(ast, "Match"):
    _UNSUPPORTED_STMT[ast.Match] = ("match statements are not supported in kernels", "use if/elif")
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMT[ast.TryStar] = ("try/except is not supported in kernels", None)


def _float_literal(e: ir.Expr) -> bool:
    return is_weak(e) and isinstance(e.value, float) and math.isfinite(e.value)  # type: ignore[attr-defined]


class StmtLowering:
    """Mixin of FunctionLowerer: every ``ast.stmt`` → IR statements appended to ``self.block``."""

    rep: Any
    block: list[ir.Stmt]

    def stmts(self, body: list[ast.stmt]) -> list[ir.Stmt]:
        outer = self.block
        self.block = []
        try:
            for s in body:
                self.stmt(s)
            return self.block
        finally:
            self.block = outer

    def emit(self, s: ir.Stmt) -> None:
        self.block.append(s)

    def stmt(self, node: ast.stmt) -> None:
        kind = type(node)
        if kind in _UNSUPPORTED_STMT:
            msg, hint = _UNSUPPORTED_STMT[kind]
            raise self.rep.syntax(node, msg, hint=hint)
        method = getattr(self, f"s_{kind.__name__}", None)
        if method is None:
            raise self.rep.syntax(node, f"{kind.__name__} statements are not supported in kernels")
        method(node)

    # ----------------------------------------------------------------------------- simple statements

    def s_Pass(self, node: ast.Pass) -> None:
        pass

    def s_Expr(self, node: ast.Expr) -> None:
        v = node.value
        if isinstance(v, ast.Constant):
            if isinstance(v.value, str) or v.value is Ellipsis:
                return  # docstrings and `...`
        if isinstance(v, ast.Call):
            callee = None
            try:
                callee = self.value(v.func)  # type: ignore[attr-defined]
            except Exception:
                callee = None
            if isinstance(callee, StaticValue) and callee.value in (dcb.barrier, dcb.grid_barrier):
                self.barrier(v, grid=callee.value is dcb.grid_barrier)
                return
        e = self.value(v)  # type: ignore[attr-defined]
        if isinstance(e, (ir.Call, ir.AtomicOp)):
            self.emit(ir.ExprStmt(value=e, loc=self.loc(node)))  # type: ignore[attr-defined]
        # other expressions have no effect; lowering them above has checked them

    def barrier(self, call: ast.Call, grid: bool = False) -> None:
        what = "dc.grid_barrier()" if grid else "dc.barrier()"
        if not self.is_kernel:  # type: ignore[attr-defined]
            raise self.rep.syntax(call, f"{what} is only allowed in kernels, not in device functions",
                                  hint="call the barrier in the kernel between the device function calls")
        if call.args or call.keywords:
            raise self.rep.type(call, f"{what} takes no arguments")
        # a grid barrier is met by whole work-groups too: the launch runs whole groups, as for dc.barrier()
        self.uses_barrier = True  # type: ignore[attr-defined]
        if grid:
            self.uses_grid_barrier = True  # type: ignore[attr-defined]
        self.emit(ir.Barrier(grid=grid, loc=self.loc(call)))  # type: ignore[attr-defined]

    def s_Break(self, node: ast.Break) -> None:
        if not self.loop_depth:  # type: ignore[attr-defined]
            raise self.rep.syntax(node, "'break' outside loop")
        self.emit(ir.Break(loc=self.loc(node)))  # type: ignore[attr-defined]

    def s_Continue(self, node: ast.Continue) -> None:
        if not self.loop_depth:  # type: ignore[attr-defined]
            raise self.rep.syntax(node, "'continue' not properly in loop")
        self.emit(ir.Continue(loc=self.loc(node)))  # type: ignore[attr-defined]

    def s_Return(self, node: ast.Return) -> None:
        loc = self.loc(node)  # type: ignore[attr-defined]
        value = node.value
        if isinstance(value, ast.Constant) and value.value is None:
            value = None
        if self.is_kernel:  # type: ignore[attr-defined]
            if value is not None:
                raise self.rep.syntax(node, "kernels cannot return a value",
                                      hint="write results into a buffer argument")
            self.emit(ir.Return(loc=loc))
            return
        if value is None:
            r = ir.Return(loc=loc)
        else:
            e = self.expr(value)  # type: ignore[attr-defined]
            r = ir.Return(value=e, loc=loc)
        self.returns.append((r, node))  # type: ignore[attr-defined]
        self.emit(r)

    # ----------------------------------------------------------------------------- assignment

    def s_Assign(self, node: ast.Assign) -> None:
        targets = node.targets
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple):
            self.tuple_assign(targets[0], node.value, node)
            return
        if len(targets) == 1 and self.is_shared_call(node.value):
            self.shared_decl(targets[0], node.value)  # type: ignore[arg-type]
            return
        value = self.expr(node.value)  # type: ignore[attr-defined]
        if len(targets) > 1 and not isinstance(value, (ir.Const, ir.Var)):
            tmp = self.temp(strengthen(value).type, node)  # type: ignore[attr-defined]
            self.emit(ir.Assign(name=tmp, value=strengthen(value), loc=self.loc(node)))  # type: ignore[attr-defined]
            value = ir.Var(name=tmp, type=value.type, weak=value.weak, loc=value.loc)
        for t in targets:
            self.store(t, value, node)

    def tuple_assign(self, target: ast.Tuple, value_node: ast.expr, node: ast.stmt) -> None:
        value_node = self.shape_as_tuple(value_node, target, node)
        if not isinstance(value_node, ast.Tuple) or len(value_node.elts) != len(target.elts):
            raise self.rep.syntax(node, "tuple assignment needs a tuple of the same length on the right",
                                  hint="tuples are only supported as a, b = x, y")
        values = [self.expr(v) for v in value_node.elts]  # type: ignore[attr-defined]
        held = []
        for v, vn in zip(values, value_node.elts, strict=False):
            if isinstance(v, ir.Const):
                held.append(v)
                continue
            v = strengthen(v)
            tmp = self.temp(v.type, vn)  # type: ignore[attr-defined]
            self.emit(ir.Assign(name=tmp, value=v, loc=v.loc))
            held.append(ir.Var(name=tmp, type=v.type, weak=v.weak, loc=v.loc))
        for t, v in zip(target.elts, held, strict=False):
            self.store(t, v, node)

    def shape_as_tuple(self, value_node: ast.expr, target: ast.Tuple, node: ast.stmt) -> ast.expr:
        """``n, m = a.shape`` (a reflex from numpy) as ``n, m = a.shape[0], a.shape[1]``."""
        if not (isinstance(value_node, ast.Attribute) and value_node.attr == "shape"):
            return value_node
        base = self.value(value_node.value)  # type: ignore[attr-defined]
        if not isinstance(base, BufferValue):
            return value_node
        ndim = base.ref.ndim
        if len(target.elts) != ndim:
            raise self.rep.type(node, f"{base.ref.py_name!r} has {ndim} dimension(s) but its shape is unpacked "
                                      f"into {len(target.elts)} names",
                                hint="unpack one name per dimension, or use .shape[d]")
        elts: list[ast.expr] = []
        for d in range(ndim):
            sub = ast.Subscript(value=value_node, slice=ast.Constant(value=d), ctx=ast.Load())
            elts.append(ast.copy_location(sub, value_node))
            ast.copy_location(sub.slice, value_node)
        return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), value_node)

    def store(self, target: ast.expr, value: ir.Expr, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            name = self.assign_name(target, value, node)
            var = self.scope[target.id].var  # type: ignore[attr-defined]
            self.emit(ir.Assign(name=name, value=self.coerce_assign(value, var.type, target, target.id),  # type: ignore[attr-defined]
                                loc=self.loc(node)))  # type: ignore[attr-defined]
            return
        if isinstance(target, ast.Subscript):
            self.refuse_chained_index(target)  # type: ignore[attr-defined]
            base = self.value(target.value)  # type: ignore[attr-defined]
            if not isinstance(base, BufferValue):
                if isinstance(target.value, ast.Subscript):
                    raise self.rep.syntax(target, "chained indexing a[i][j] is not supported",
                                          hint="index all dimensions at once: a[i, j]")
                raise self.rep.type(target, f"{ast.unparse(target.value)!r} is not an array and cannot be "
                                            "assigned into")
            ref = base.ref
            indices = self.indices(ref, target.slice, target)  # type: ignore[attr-defined]
            self.note_access(ref, written=True)  # type: ignore[attr-defined]
            stored = self.store_value(value, ref.dtype, target)
            self.emit(ir.BufferStore(buffer=ref, indices=indices, value=stored, loc=self.loc(node)))  # type: ignore[attr-defined]
            return
        if isinstance(target, ast.Attribute):
            raise self.rep.syntax(target, "attributes cannot be assigned in kernels")
        if isinstance(target, (ast.List, ast.Starred)):
            raise self.rep.syntax(target, "this assignment target is not supported in kernels")
        raise self.rep.syntax(target, "cannot assign to this expression")

    def store_value(self, value: ir.Expr, dtype: ScalarType, node: ast.AST) -> ir.Expr:
        # numpy's setitem converts any number to the array's dtype; so does a kernel (but not a complex
        # into a real array, which numpy only does with a ComplexWarning, dropping the imaginary part)
        if value.type.is_complex and not dtype.is_complex:
            raise self.rep.type(node, f"cannot store a {value.type} value into a {dtype} array",
                                hint="store z.real, z.imag or abs(z)")
        return convert(value, dtype)

    def assign_name(self, target: ast.Name, value: ir.Expr, node: ast.AST) -> str:
        """Declare ``target`` on its first assignment (its type is the value's); return its IR name."""
        sym = self.scope.get(target.id)  # type: ignore[attr-defined]
        if sym is None:
            t = self.retype.get(target.id, strengthen(value).type)  # type: ignore[attr-defined]
            var = self.declare(target.id, t, target)  # type: ignore[attr-defined]
            # a name first bound to a Python number (i = dc.global_id(0), n = 0, acc = 0.0) holds one
            # when the body runs as Python: its reads are weak, like the value (NEP 50)
            var.weak = bool(value.weak)
            if t == FLOAT64 and _float_literal(value):
                self.float_literal_vars[target.id] = {value.value}  # type: ignore[attr-defined]
            return var.name
        seen = self.float_literal_vars.get(target.id)  # type: ignore[attr-defined]
        if seen is not None:
            # float literals and strong types; a weak run-time value (float(i)) keeps the name float64
            seen.add(value.value if _float_literal(value) else (None if value.weak else value.type))
        if sym.kind != "local":
            what = {"param": "parameter", "shared": "dc.shared array"}[sym.kind]
            raise self.rep.syntax(target, f"cannot assign to the {what} {target.id!r}",
                                  hint="parameters are read-only in kernels; copy it into a local variable"
                                  if sym.kind == "param" else None)
        return sym.var.name

    def s_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.rep.syntax(node, "annotated assignment needs a plain name")
        ann = self.annotation_type(node.annotation)  # type: ignore[attr-defined]
        name = node.target.id
        sym = self.scope.get(name)  # type: ignore[attr-defined]
        if sym is None:
            var = self.declare(name, ann, node.target)  # type: ignore[attr-defined]
        elif sym.kind != "local":
            raise self.rep.syntax(node.target, f"cannot assign to the parameter {name!r}")
        elif sym.var.type != ann:
            raise self.rep.type(node, f"{name!r} is already a {sym.var.type}; it cannot be redeclared as {ann}")
        else:
            var = sym.var
        if node.value is not None:
            value = self.expr(node.value)  # type: ignore[attr-defined]
            self.emit(ir.Assign(name=var.name, value=convert(value, ann), loc=self.loc(node)))  # type: ignore[attr-defined]

    def s_AugAssign(self, node: ast.AugAssign) -> None:
        from .exprs import _BINOP_NAMES

        op = _BINOP_NAMES.get(type(node.op))
        if op is None:
            raise self.rep.syntax(node, f"the operator {type(node.op).__name__}= is not supported in kernels")
        target = node.target
        if isinstance(target, ast.Name):
            current = self.expr(target)  # type: ignore[attr-defined]
            result = self.binop(op, current, self.expr(node.value), node)  # type: ignore[attr-defined]
            self.store(target, result, node)
            return
        if isinstance(target, ast.Subscript):
            base = self.value(target.value)  # type: ignore[attr-defined]
            if not isinstance(base, BufferValue):
                raise self.rep.type(target, f"{ast.unparse(target.value)!r} is not an array")
            ref = base.ref
            indices = []
            for ix in self.indices(ref, target.slice, target):  # type: ignore[attr-defined]
                if isinstance(ix, (ir.Const, ir.Var)):
                    indices.append(ix)
                    continue
                tmp = self.temp(ix.type, target)  # type: ignore[attr-defined]
                self.emit(ir.Assign(name=tmp, value=ix, loc=ix.loc))
                indices.append(ir.Var(name=tmp, type=ix.type, loc=ix.loc))
            self.note_access(ref, read=True, written=True)  # type: ignore[attr-defined]
            loc = self.loc(target)  # type: ignore[attr-defined]
            current = ir.BufferLoad(buffer=ref, indices=list(indices), type=ref.dtype, loc=loc)
            result = self.binop(op, current, self.expr(node.value), node)  # type: ignore[attr-defined]
            self.emit(ir.BufferStore(buffer=ref, indices=list(indices), value=self.store_value(result, ref.dtype, node),
                                     loc=self.loc(node)))  # type: ignore[attr-defined]
            return
        raise self.rep.syntax(target, "this augmented assignment target is not supported in kernels")

    # ----------------------------------------------------------------------------- dc.shared

    def is_shared_call(self, value: ast.expr) -> bool:
        if not isinstance(value, ast.Call):
            return False
        try:
            callee = self.value(value.func)  # type: ignore[attr-defined]
        except Exception:
            return False
        return isinstance(callee, StaticValue) and callee.value is dcb.shared

    def shared_decl(self, target: ast.expr, call: ast.Call) -> None:
        if not self.is_kernel:  # type: ignore[attr-defined]
            raise self.rep.syntax(call, "dc.shared() is only allowed in kernels")
        if self.nesting:  # type: ignore[attr-defined]
            raise self.rep.syntax(call, "dc.shared() must be at the top level of the kernel body",
                                  hint="declare work-group arrays before any if/for/while")
        if not isinstance(target, ast.Name):
            raise self.rep.syntax(target, "dc.shared() must be assigned to a plain name")
        if target.id in self.scope:  # type: ignore[attr-defined]
            raise self.rep.syntax(target, f"{target.id!r} is already defined; a dc.shared array needs a new name")
        args = list(call.args)
        kw = {k.arg: k.value for k in call.keywords}
        if set(kw) - {"shape", "dtype"} or len(args) + len(kw) != 2:
            raise self.rep.type(call, "dc.shared() takes (shape, dtype)")
        shape_node = args[0] if args else kw["shape"]
        dtype_node = args[1] if len(args) > 1 else kw["dtype"]
        elts = shape_node.elts if isinstance(shape_node, ast.Tuple) else [shape_node]
        shape = tuple(self.constant_int(e, "a dc.shared dimension") for e in elts)  # type: ignore[attr-defined]
        if not 1 <= len(shape) <= 3 or any(s <= 0 for s in shape):
            raise self.rep.type(shape_node, f"dc.shared shape must be 1 to 3 positive constants, not {shape}")
        dtype = self.annotation_type(dtype_node)  # type: ignore[attr-defined]
        self.declare_shared(target.id, shape, dtype, target)  # type: ignore[attr-defined]

    # ----------------------------------------------------------------------------- control flow

    def s_If(self, node: ast.If) -> None:
        cond = self.cond(node.test)  # type: ignore[attr-defined]
        self.nesting += 1  # type: ignore[attr-defined]
        try:
            then = self.stmts(node.body)
            orelse = self.stmts(node.orelse)
        finally:
            self.nesting -= 1  # type: ignore[attr-defined]
        if isinstance(cond, ir.Const):
            self.block.extend(then if cond.value else orelse)
            return
        self.emit(ir.If(cond=strengthen(cond), then=then, orelse=orelse, loc=self.loc(node)))  # type: ignore[attr-defined]

    def s_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.rep.syntax(node.orelse[0], "else on a while loop is not supported in kernels",
                                  hint="use a flag variable")
        cond = strengthen(self.cond(node.test))  # type: ignore[attr-defined]
        body = self.loop_body(node.body)
        self.emit(ir.While(cond=cond, body=body, loc=self.loc(node)))  # type: ignore[attr-defined]

    def loop_body(self, body: list[ast.stmt]) -> list[ir.Stmt]:
        self.loop_depth += 1  # type: ignore[attr-defined]
        self.nesting += 1  # type: ignore[attr-defined]
        try:
            return self.stmts(body)
        finally:
            self.loop_depth -= 1  # type: ignore[attr-defined]
            self.nesting -= 1  # type: ignore[attr-defined]

    def iterated_table(self, it: ast.expr) -> Any:
        """The constant table a ``for`` iterates (``for w in WEIGHTS``, ``for dy, dx in OFFSETS``), or None."""
        if not isinstance(it, (ast.Name, ast.Attribute)):
            return None
        if isinstance(it, ast.Name) and it.id in self.scope:  # type: ignore[attr-defined]
            return None
        try:
            v = self.value(it)  # type: ignore[attr-defined]
        except (KernelSyntaxError, KernelTypeError):
            return None
        return v.value if isinstance(v, StaticValue) and is_table(v.value) else None

    def table_loop(self, node: ast.For, table: Any) -> ast.For:
        """``for x in T: body`` as ``for i in range(len(T)): x = T[i]; body`` (tuple targets take
        ``T[i][0]``, ``T[i][1]``, ...): break and continue keep their meaning, and T[i] is the
        run-time table lookup."""
        rows = table_rows(table)
        index = f"{TABLE_LOOP_PREFIX}{node.lineno}_{node.col_offset}"
        target = node.target

        def item(*extra: int) -> ast.expr:
            e: ast.expr = ast.Subscript(value=node.iter, slice=ast.Name(id=index, ctx=ast.Load()), ctx=ast.Load())
            for k in extra:
                e = ast.Subscript(value=e, slice=ast.Constant(value=k), ctx=ast.Load())
            return e

        if isinstance(target, ast.Name):
            binds: list[ast.stmt] = [ast.Assign(targets=[target], value=item())]
        elif isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
            widths = {len(r) if isinstance(r, tuple) else 0 for r in rows}
            if widths != {len(target.elts)}:
                raise self.rep.type(target, f"cannot unpack the rows of {ast.unparse(node.iter)!r} into "
                                            f"{len(target.elts)} names")
            binds = [ast.Assign(targets=[t], value=item(k)) for k, t in enumerate(target.elts)]
        else:
            raise self.rep.syntax(target, "the loop variable must be a name or a tuple of names")
        loop = ast.For(target=ast.Name(id=index, ctx=ast.Store()),
                       iter=ast.Call(func=ast.Name(id="range", ctx=ast.Load()), args=[ast.Constant(value=len(rows))],
                                     keywords=[]),
                       body=[*binds, *node.body], orelse=[])
        for n in ast.walk(loop):
            if not hasattr(n, "lineno") or n in binds or n is loop:
                ast.copy_location(n, node)
        return ast.fix_missing_locations(loop)

    def s_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.rep.syntax(node.orelse[0], "else on a for loop is not supported in kernels",
                                  hint="use a flag variable")
        it = node.iter
        is_range = False
        if isinstance(it, ast.Call):
            try:
                callee = self.value(it.func)  # type: ignore[attr-defined]
            except Exception:
                callee = None
            is_range = isinstance(callee, StaticValue) and callee.value is range
        if not is_range:
            table = self.iterated_table(it)
            if table is not None:
                return self.s_For(self.table_loop(node, table))
            raise self.rep.syntax(it, "only `for ... in range(...)` loops are supported in kernels",
                                  hint="iterate over indices: for i in range(n)")
        assert isinstance(it, ast.Call)
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.rep.type(it, "range() takes 1 to 3 positional arguments")
        if not isinstance(node.target, ast.Name):
            raise self.rep.syntax(node.target, "the loop variable must be a plain name",
                                  hint="tuple unpacking is not supported in kernels")
        parts = [self.expr(a) for a in it.args]  # type: ignore[attr-defined]
        for p, a in zip(parts, it.args, strict=False):
            if p.type.is_float or p.type.is_complex:
                raise self.rep.type(a, f"range() arguments must be integers, not {p.type}",
                                    hint="convert with int(x)")
        loc = self.loc(node)  # type: ignore[attr-defined]
        if len(parts) == 1:
            start, stop, step = ir.Const(value=0, type=INT64, weak=True, loc=loc), parts[0], \
                ir.Const(value=1, type=INT64, weak=True, loc=loc)
        elif len(parts) == 2:
            start, stop, step = parts[0], parts[1], ir.Const(value=1, type=INT64, weak=True, loc=loc)
        else:
            start, stop, step = parts
        if isinstance(step, ir.Const) and step.value == 0:
            raise self.rep.type(it.args[2], "range() arg 3 must not be zero")
        t = self.range_type([start, stop, step])
        name = node.target.id
        sym = self.scope.get(name)  # type: ignore[attr-defined]
        if sym is None:
            var = self.declare(name, t, node.target)  # type: ignore[attr-defined]
            var.weak = True  # range() yields Python ints
        elif sym.kind != "local":
            raise self.rep.syntax(node.target, f"cannot use the parameter {name!r} as a loop variable")
        else:
            var = sym.var
            if var.type.is_int and promote(var.type, t) == t != var.type and not self.nesting:  # type: ignore[attr-defined]
                var = self.widen_loop_var(name, var, t, node)
            elif not var.type.is_int or promote(var.type, t) != var.type:
                raise self.rep.type(node.target, f"the loop variable {name!r} is a {var.type} but the range "
                                                 f"is {t}",
                                    hint="give this loop its own variable name, or convert the range "
                                         f"arguments to {var.type}")
            t = var.type
        bounds = [self.hoist(convert(p, t), a) for p, a in zip((start, stop, step), [it] * 3, strict=False)]
        counter = self.temp(t, node, "i")  # type: ignore[attr-defined]
        sign = 0
        if isinstance(bounds[2], ir.Const):
            sign = 1 if bounds[2].value > 0 else -1
        body = self.loop_body(node.body)
        self.emit(ir.For(var=var.name, counter=counter, start=bounds[0], stop=bounds[1], step=bounds[2],
                         step_sign=sign, body=body, loc=loc))

    def widen_loop_var(self, name: str, old: ir.LocalVar, t: ScalarType, node: ast.For) -> ir.LocalVar:
        """Re-declare ``name`` with the wider type ``t`` for a loop at the top of the body.

        ``for k in range(n32)`` followed by ``for k in range(i, n32)`` (int64 because of ``i``) is
        ordinary Python; at the top level nothing before this point can read the new variable, so
        later reads simply see the wider one. It starts from the old value, which is what ``k``
        holds after a loop that runs no iterations.
        """
        loc = self.loc(node)  # type: ignore[attr-defined]
        var = self.declare(name, t, node.target)  # type: ignore[attr-defined]
        var.weak = old.weak
        self.emit(ir.Assign(name=var.name, value=convert(ir.Var(name=old.name, type=old.type, loc=loc), t),
                            loc=loc))
        return var

    def range_type(self, parts: list[ir.Expr]) -> ScalarType:
        t = common_type(parts)
        return INT64 if t.is_bool else t

    def hoist(self, e: ir.Expr, node: ast.AST) -> ir.Expr:
        """``e`` if it cannot change during a loop (a constant or a parameter), else a temporary."""
        if isinstance(e, ir.Const):
            return ir.Const(value=e.value, type=e.type, loc=e.loc)
        if isinstance(e, ir.Var) and self.is_param_name(e.name):  # type: ignore[attr-defined]
            return e
        tmp = self.temp(e.type, node)  # type: ignore[attr-defined]
        self.emit(ir.Assign(name=tmp, value=e, loc=e.loc))
        return ir.Var(name=tmp, type=e.type, loc=e.loc)


__all__ = ["StmtLowering"]
