"""Lowering one Python function (kernel or device function) to an IR function."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import ir
from ..kinds import DeviceFunctionBase
from ..types import FLOAT16, FLOAT32, VOID, BufferType, ScalarType, scalar_type
from .calls import CallLowering
from .exprs import BufferValue, ExprLowering, StaticValue, is_number_tuple, is_table
from .names import NameAllocator
from .resolve import MISSING, lookup, static_eval
from .signature import LiteralArg, WeakScalar
from .source import ParsedFunction
from .stmts import StmtLowering
from .typing_rules import common_type, convert


@dataclass
class Sym:
    """What a name in the function's scope is: ``kind`` is "param", "local" or "shared"."""

    kind: str
    var: Any  # ir.Param | ir.LocalVar | ir.SharedDecl
    ref: ir.BufferRef | None = None
    literal: LiteralArg | None = None  # a device-function parameter given a Python number


def tracked(value: Any) -> bool:
    """Whether rebinding the name would change the generated code in a way a launch must notice:
    folded numbers (also tuples of them) and device functions. Modules and dtypes are taken as fixed."""
    return isinstance(value, (bool, int, float, np.generic, DeviceFunctionBase)) or is_number_tuple(value) \
        or is_table(value)


def assigned_names(tree: ast.FunctionDef) -> set[str]:
    """Names bound anywhere in the function body (Python makes them local to it)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


class FunctionLowerer(ExprLowering, CallLowering, StmtLowering):
    def __init__(self, parsed: ParsedFunction, builder: Any, param_types: list[ScalarType | BufferType],
                 is_kernel: bool, ir_name: str, debug_ids: list[int] | None = None,
                 return_spec: ScalarType | None | str = None, retype: dict[str, ScalarType] | None = None) -> None:
        self.parsed = parsed
        # names first bound to a float literal, stored in the type of their later (strong) values: see
        # narrowable(); filled by a first lowering, applied by a second
        self.retype = dict(retype or {})
        self.float_literal_vars: dict[str, set[Any]] = {}  # name -> its literal values and strong types
        self.rep = parsed.reporter
        self.builder = builder
        self.is_kernel = is_kernel
        self.ir_name = ir_name
        self.scope: dict[str, Sym] = {}
        self.local_names = assigned_names(parsed.tree)
        self.names = NameAllocator()
        self.locals: list[ir.LocalVar] = []
        self.shared: list[ir.SharedDecl] = []
        self.params: list[ir.Param] = []
        self.block: list[ir.Stmt] = []
        self.prologue: list[ir.Stmt] = []  # statements before the body (complex parameters put together)
        self.loop_depth = 0
        self.nesting = 0
        self.uses_barrier = False
        self.uses_grid_barrier = False
        self.uses_atomics = False
        self.returns: list[tuple[ir.Return, ast.Return]] = []
        self.return_spec = return_spec
        self._param_names: set[str] = set()
        args = parsed.tree.args
        for i, (a, t) in enumerate(zip(args.args, param_types, strict=False)):
            if isinstance(t, LiteralArg):
                # no IR parameter: the name reads as the literal (see LiteralArg)
                self.scope[a.arg] = Sym("param", None, literal=t)
                continue
            weak = isinstance(t, WeakScalar)
            if weak:
                t = t.type
            if is_aggregate_param(t):
                # vectors, matrices, structs and buffers of them (frontend/aggregates.py)
                self.aggregate_param(a, t, i, debug_ids)  # type: ignore[attr-defined]
                continue
            if is_kernel and not isinstance(t, BufferType) and t.is_complex:
                self.complex_param(a, t)
                continue
            name = self.names.fresh(a.arg)
            # index: the position in the expanded argument list (an aggregate scalar takes one per leaf)
            p = ir.Param(name=name, py_name=a.arg, type=t, index=len(self.params), weak=weak, loc=self.loc(a))
            self.params.append(p)
            self._param_names.add(name)
            ref = None
            if isinstance(t, BufferType):
                did = debug_ids[i] if debug_ids else i
                ref = ir.BufferRef(name=name, py_name=a.arg, space="global", dtype=t.dtype, ndim=t.ndim,
                                   param_index=p.index, debug_id=did)
            self.scope[a.arg] = Sym("param", p, ref)

    def complex_param(self, a: ast.arg, t: ScalarType) -> None:
        """A complex scalar kernel parameter: launched as its real and imaginary parts (two real IR
        parameters; the native launch path packs real scalars), put together in a local at entry."""
        loc = self.loc(a)
        parts = []
        for part in ("real", "imag"):
            name = self.names.fresh(f"{a.arg}_{part[:2]}")
            p = ir.Param(name=name, py_name=f"{a.arg}.{part}", type=t.real_type, index=len(self.params), loc=loc)
            self.params.append(p)
            self._param_names.add(name)
            parts.append(ir.Var(name=name, type=t.real_type, loc=loc))
        var = ir.LocalVar(name=self.names.fresh(a.arg), py_name=a.arg, type=t, loc=loc)
        self.locals.append(var)
        self.prologue.append(ir.Assign(name=var.name, value=ir.MathCall(name="complex", args=parts, type=t, loc=loc),
                                       loc=loc))
        self.scope[a.arg] = Sym("local", var)

    # ----------------------------------------------------------------------------- scope

    def lookup(self, name: str, node: ast.AST) -> Any:
        value, cap = lookup(self.parsed, name)
        if value is MISSING:
            raise self.rep.syntax(node, f"name {name!r} is not defined")
        if cap is not None and tracked(value):
            self.builder.captures.append(cap)
        return value

    def symbol_value(self, sym: Sym, node: ast.Name) -> ir.Expr | BufferValue:
        if sym.literal is not None:
            return self.static_to_expr(StaticValue(sym.literal.value, node))  # type: ignore[attr-defined]
        if sym.ref is not None:
            return BufferValue(sym.ref, node)
        return ir.Var(name=sym.var.name, type=sym.var.type, weak=getattr(sym.var, "weak", False), loc=self.loc(node))

    def is_param_name(self, name: str) -> bool:
        return name in self._param_names

    def declare(self, py_name: str, t: ScalarType, node: ast.AST) -> ir.LocalVar:
        var = ir.LocalVar(name=self.names.fresh(py_name), py_name=py_name, type=t, loc=self.loc(node))
        self.locals.append(var)
        self.scope[py_name] = Sym("local", var)
        return var

    def temp(self, t: ScalarType, node: ast.AST, hint: str = "t") -> str:
        var = ir.LocalVar(name=self.names.fresh(f"tmp_{hint}"), py_name=f"<{hint}>", type=t, loc=self.loc(node))
        self.locals.append(var)
        return var.name

    def declare_shared(self, py_name: str, shape: tuple[int, ...], dtype: ScalarType, node: ast.AST) -> None:
        name = self.names.fresh(py_name)
        decl = ir.SharedDecl(name=name, py_name=py_name, dtype=dtype, shape=shape, loc=self.loc(node))
        self.shared.append(decl)
        # debug mode checks work-group arrays too (a tile indexed one past its edge is the classic bug)
        did = self.builder._next_debug_id
        self.builder._next_debug_id += 1
        self.builder.debug_names[did] = f"dc.shared array {py_name!r}"
        self.builder.debug_files[did] = self.parsed.info.filename
        ref = ir.BufferRef(name=name, py_name=py_name, space="shared", dtype=dtype, ndim=len(shape), shape=shape,
                           debug_id=did)
        self.scope[py_name] = Sym("shared", decl, ref)

    def note_access(self, ref: ir.BufferRef, read: bool = False, written: bool = False) -> None:
        if ref.space != "global" or ref.param_index is None:
            return
        p = self.params[ref.param_index]
        p.read |= read
        p.written |= written

    def annotation_type(self, node: ast.expr) -> ScalarType:
        obj = static_eval(self.parsed, node, self.builder.captures)
        t = scalar_type(obj)
        if t is None:
            raise self.rep.type(node, f"{ast.unparse(node)} is not a kernel scalar type",
                                hint="use dc.bool_, dc.int32, dc.int64, dc.uint32, dc.float32 or dc.float64")
        return t

    # ----------------------------------------------------------------------------- whole function

    def narrowable(self) -> dict[str, ScalarType]:
        """Names first bound to a float literal (``acc = 0.0``) whose every later value is a strong
        float32 (or float16) or a literal: in Python the name holds a float32 after its first update,
        so it is stored as one (weak, so that its literal values meet other operands as the Python
        float would: they must be exact in float32). A float32 kernel's accumulator then needs no
        float64 (Metal)."""
        out = {}
        for name, seen in self.float_literal_vars.items():
            types = {v for v in seen if isinstance(v, ScalarType)}
            literals = [v for v in seen if isinstance(v, float)]
            if len(types) != 1 or len(types) + len(literals) != len(seen):
                continue
            (t,) = types
            if t in (FLOAT16, FLOAT32) and all(float(t.np_dtype.type(v)) == v for v in literals):
                out[name] = t
        return out

    def lower(self) -> ir.Function:
        for name in self.names_for_reserve():
            self.names.reserve(name)
        body = self.prologue + self.stmts(self.parsed.tree.body)
        loc = self.loc(self.parsed.tree)
        if self.is_kernel:
            return ir.Kernel(name=self.ir_name, py_name=self.parsed.name, params=self.params, return_type=VOID,
                             body=body, locals=self.locals, filename=self.parsed.info.filename, loc=loc,
                             shared=self.shared, uses_barrier=self.uses_barrier, uses_atomics=self.uses_atomics,
                             uses_grid_barrier=self.uses_grid_barrier)
        rt = self.finish_returns(body)
        return ir.Function(name=self.ir_name, py_name=self.parsed.name, params=self.params, return_type=rt,
                           body=body, locals=self.locals, filename=self.parsed.info.filename, loc=loc)

    def names_for_reserve(self) -> list[str]:
        return [self.ir_name]

    def finish_returns(self, body: list[ir.Stmt]) -> ScalarType | Any:
        valued = [(r, n) for r, n in self.returns if r.value is not None]
        bare = [(r, n) for r, n in self.returns if r.value is None]
        spec = self.return_spec
        if isinstance(spec, ScalarType):
            if bare:
                raise self.rep.type(bare[0][1], f"{self.parsed.name}() must return a {spec} value")
            for r, _ in valued:
                assert r.value is not None
                r.value = convert(r.value, spec)  # the annotation is an explicit conversion
            rt: ScalarType = spec
        elif spec == "void" or not valued:
            if valued:
                raise self.rep.type(valued[0][1], f"{self.parsed.name}() is declared to return None")
            return VOID
        else:
            if bare:
                raise self.rep.type(bare[0][1], f"{self.parsed.name}() returns a value elsewhere; "
                                                "every return must give one")
            rt = common_type([r.value for r, _ in valued if r.value is not None])
            for r, _ in valued:
                assert r.value is not None
                r.value = convert(r.value, rt)
        if not always_returns(body):
            zero_value = 0.0 if rt.is_float else (False if rt.is_bool else 0)
            zero = ir.Const(value=zero_value, type=rt, loc=self.loc(self.parsed.tree))
            body.append(ir.Return(value=zero, loc=zero.loc))
        return rt


def is_aggregate_param(t: Any) -> bool:
    """A vector/matrix/struct parameter type, or a buffer of them."""
    from ..vectypes import aggregate_type

    return aggregate_type(t) is not None or (isinstance(t, BufferType) and t.elem is not None)


def always_returns(body: list[ir.Stmt]) -> bool:
    """Whether every path through ``body`` ends in a return (conservatively)."""
    for s in body:
        if isinstance(s, ir.Return):
            return True
        if isinstance(s, ir.If) and always_returns(s.then) and always_returns(s.orelse):
            return True
    return False


__all__ = ["FunctionLowerer", "Sym", "assigned_names", "always_returns"]
