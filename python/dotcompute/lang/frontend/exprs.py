"""Lowering of Python expressions to typed IR expressions."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import KernelSyntaxError, KernelTypeError
from .. import ir
from ..types import (
    BOOL,
    FLOAT64,
    INDEX,
    INT32,
    INT64,
    UINT64,
    ScalarType,
    promote,
    type_of_python_scalar,
    wrap_int,
)
from . import fold
from .resolve import MISSING
from .typing_rules import convert, implicit_ok, is_weak, strengthen, truth, unify, weakened

_BINOP_NAMES = {ast.Add: "Add", ast.Sub: "Sub", ast.Mult: "Mult", ast.Div: "TrueDiv", ast.FloorDiv: "FloorDiv",
                ast.Mod: "Mod", ast.Pow: "Pow", ast.LShift: "LShift", ast.RShift: "RShift",
                ast.BitAnd: "BitAnd", ast.BitOr: "BitOr", ast.BitXor: "BitXor"}
_BINOP_SYMBOLS = {"Add": "+", "Sub": "-", "Mult": "*", "TrueDiv": "/", "FloorDiv": "//", "Mod": "%",
                  "Pow": "**", "LShift": "<<", "RShift": ">>", "BitAnd": "&", "BitOr": "|", "BitXor": "^"}
_INT_FOLD = {"Add": lambda x, y: x + y, "Sub": lambda x, y: x - y, "Mult": lambda x, y: x * y,
             "FloorDiv": lambda x, y: x // y if y else 0, "Mod": lambda x, y: x % y if y else 0}
_CMP_NAMES = {ast.Eq: "Eq", ast.NotEq: "NotEq", ast.Lt: "Lt", ast.LtE: "LtE", ast.Gt: "Gt", ast.GtE: "GtE"}
_CMP_SYMBOLS = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">="}

_UNSUPPORTED_EXPR = {
    ast.List: ("lists are not supported in kernels", "use a buffer argument, or dc.shared for work-group arrays"),
    ast.ListComp: ("list comprehensions are not supported in kernels", "write a for loop over range()"),
    ast.SetComp: ("set comprehensions are not supported in kernels", None),
    ast.DictComp: ("dict comprehensions are not supported in kernels", None),
    ast.GeneratorExp: ("generator expressions are not supported in kernels", "write a for loop over range()"),
    ast.Dict: ("dicts are not supported in kernels", None),
    ast.Set: ("sets are not supported in kernels", None),
    ast.Lambda: ("lambdas are not supported in kernels", "define a device function with @dc.func"),
    ast.JoinedStr: ("strings are not supported in kernels", None),
    ast.Yield: ("yield is not supported in kernels", "kernels write results into buffers"),
    ast.YieldFrom: ("yield is not supported in kernels", "kernels write results into buffers"),
    ast.Await: ("await is not supported in kernels", None),
    ast.Starred: ("starred expressions are not supported in kernels", None),
    ast.Slice: ("slices are not supported in kernels", "index one element at a time: a[i, j]"),
}


@dataclass
class BufferValue:
    """A name that refers to a whole array (a buffer parameter or a dc.shared array)."""

    ref: ir.BufferRef
    node: ast.AST


@dataclass
class StaticValue:
    """A compile-time Python object (a module, a function, a dtype, a device function, ...)."""

    value: Any
    node: ast.AST


def mixed_sign_compare(op: str, a: ir.Expr, b: ir.Expr, s_again: ir.Expr, loc: ir.Loc) -> ir.Expr:
    """A signed int compared with a uint64: exact, as numpy 2 compares them (not through float64).

    A negative signed side decides the answer alone; otherwise both compare as uint64. The signed
    operand is read twice: ``s_again`` is its second reading (a Var bound by the first when it is
    not a plain name or constant)."""
    signed_left = a.type.is_signed
    s, u = (a, b) if signed_left else (b, a)
    neg = ir.Compare(op="Lt", left=convert(s, INT64), right=ir.Const(value=0, type=INT64, loc=loc), type=BOOL,
                     loc=loc)
    # a negative s is below every uint64: s < u, s <= u and s != u hold, the others do not
    if_neg = {"Lt": True, "LtE": True, "NotEq": True, "Gt": False, "GtE": False, "Eq": False}[op]
    if not signed_left and op not in ("Eq", "NotEq"):
        if_neg = not if_neg
    s2 = convert(s_again, UINT64)
    left, right = (s2, u) if signed_left else (u, s2)
    same = ir.Compare(op=op, left=left, right=right, type=BOOL, loc=loc)
    return ir.IfExp(cond=neg, then=ir.Const(value=if_neg, type=BOOL, loc=loc), orelse=same, type=BOOL, loc=loc)


def is_number_tuple(obj: Any) -> bool:
    """A non-empty tuple of Python/numpy numbers (a constant table a kernel may index by a literal)."""
    return (isinstance(obj, tuple) and len(obj) > 0
            and all(isinstance(v, (bool, int, float, np.generic)) for v in obj))


#: the most elements a constant table may have (numpy arrays captured as constants); a larger one
#: belongs in a buffer argument
TABLE_MAX_SIZE = 4096
#: the loop variable ``for x in TABLE`` is lowered with (stmts.table_loop): its index may select a
#: tuple's entries at run time
TABLE_LOOP_PREFIX = "_dc_it"
#: the most entries one run-time-indexed dimension of a constant table may have (it is a select chain)
TABLE_MAX_RUNTIME = 256


def is_table(obj: Any) -> bool:
    """A constant table: a non-empty tuple of numbers or of such tuples (``OFFSETS = ((-1, 0), (1, 0))``),
    or a small numeric numpy array of 1 to 3 dimensions (``WEIGHTS = np.array([...], np.float32)``)."""
    if isinstance(obj, np.ndarray):
        return obj.dtype.kind in "biufc" and 1 <= obj.ndim <= 3 and 0 < obj.size <= TABLE_MAX_SIZE
    return isinstance(obj, tuple) and len(obj) > 0 and all(
        isinstance(v, (bool, int, float, complex, np.generic)) or is_table(v) and isinstance(v, tuple) for v in obj)


def table_rows(obj: Any) -> tuple:
    """A table as nested tuples; a numpy array's elements stay numpy scalars (their dtype is theirs)."""
    if isinstance(obj, np.ndarray):
        return tuple(obj[i] if obj.ndim == 1 else table_rows(obj[i]) for i in range(obj.shape[0]))
    return obj


class ExprLowering:
    """Mixin of FunctionLowerer: every ``ast.expr`` → ``ir.Expr``."""

    # provided by FunctionLowerer
    rep: Any
    builder: Any

    def loc(self, node: ast.AST) -> ir.Loc:
        line, col = self.parsed.info.position(node)  # type: ignore[attr-defined]
        return ir.Loc(line, col)

    # ----------------------------------------------------------------------------- entry points

    def expr(self, node: ast.expr) -> ir.Expr:
        """A scalar-valued expression."""
        v = self.value(node)
        if isinstance(v, ir.Expr):
            if isinstance(v, ir.Call) and v.void:
                raise self.rep.type(node, f"{ast.unparse(node.func)}() returns no value",  # type: ignore[attr-defined]
                                    hint="call it as a statement, or make it return a value")
            return v
        if isinstance(v, BufferValue):
            raise self.rep.type(node, f"{v.ref.py_name!r} is an array and cannot be used as a number here",
                                hint=f"index it, e.g. {v.ref.py_name}[i]")
        return self.static_to_expr(v)

    def cond(self, node: ast.expr) -> ir.Expr:
        """An expression used for its truth (if/while/conditional tests, `not`): and/or of truth
        values stay bool, which is equivalent to testing the operand Python would return."""
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            return self.fold_boolop(op, [self.cond(v) for v in node.values], self.loc(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.cond(node.operand)
            if isinstance(inner, ir.Const):
                return ir.Const(value=not inner.value, type=BOOL, weak=inner.weak, loc=self.loc(node))
            return ir.UnaryOp(op="Not", operand=inner, type=BOOL, loc=self.loc(node))
        return truth(self.expr(node))

    def static_to_expr(self, v: StaticValue) -> ir.Expr:
        obj = v.value
        if isinstance(obj, (bool, int, float, complex)) and not isinstance(obj, np.generic):
            if isinstance(obj, int) and not isinstance(obj, bool) and not -(1 << 63) <= obj < 1 << 64:
                raise self.rep.type(v.node, f"the constant {obj} does not fit in 64 bits")
            t = type_of_python_scalar(obj)
            return ir.Const(value=obj, type=t, weak=True, loc=self.loc(v.node))
        if isinstance(obj, np.generic):
            t = type_of_python_scalar(obj)
            if t is not None:
                return ir.Const(value=obj.item(), type=t, loc=self.loc(v.node))
        if isinstance(obj, str):
            raise self.rep.syntax(v.node, "strings are not supported in kernels")
        if obj is None:
            raise self.rep.syntax(v.node, "None is not a value in kernels")
        what = type(obj).__name__
        name = ast.unparse(v.node) if isinstance(v.node, ast.expr) else "this"
        raise self.rep.type(v.node, f"{name!r} refers to a {what}, which is not a value in kernels",
                            hint="only numbers, buffers and work-group arrays are values in kernels")

    def value(self, node: ast.expr) -> ir.Expr | BufferValue | StaticValue:
        """Any expression, including names of arrays and compile-time objects."""
        kind = type(node)
        if kind in _UNSUPPORTED_EXPR:
            msg, hint = _UNSUPPORTED_EXPR[kind]
            raise self.rep.syntax(node, msg, hint=hint)
        method = getattr(self, f"x_{kind.__name__}", None)
        if method is None:
            raise self.rep.syntax(node, f"{kind.__name__} expressions are not supported in kernels")
        return method(node)

    # ----------------------------------------------------------------------------- leaves

    def x_Constant(self, node: ast.Constant) -> ir.Expr | StaticValue:
        v = node.value
        if isinstance(v, (bool, int, float)):
            return self.static_to_expr(StaticValue(v, node))
        if isinstance(v, str):
            raise self.rep.syntax(node, "strings are not supported in kernels")
        if isinstance(v, complex):
            return self.static_to_expr(StaticValue(v, node))
        return StaticValue(v, node)

    def x_Name(self, node: ast.Name) -> ir.Expr | BufferValue | StaticValue:
        sym = self.scope.get(node.id)  # type: ignore[attr-defined]
        if sym is not None:
            return self.symbol_value(sym, node)  # type: ignore[attr-defined]
        if node.id in self.local_names:  # type: ignore[attr-defined]
            raise self.rep.syntax(node, f"local variable {node.id!r} is used before it is assigned")
        obj = self.lookup(node.id, node)  # type: ignore[attr-defined]
        if isinstance(obj, (bool, int, float, np.generic)):
            return self.static_to_expr(StaticValue(obj, node))
        return StaticValue(obj, node)

    def x_Attribute(self, node: ast.Attribute) -> ir.Expr | BufferValue | StaticValue:
        base = self.value(node.value)
        if isinstance(base, BufferValue):
            return self.buffer_attribute(base, node)
        if isinstance(base, ir.Expr):
            if node.attr in ("real", "imag"):
                return self.real_imag(base, node.attr, node)
            raise self.rep.syntax(node, f"numbers have no attribute {node.attr!r} in kernels")
        obj = getattr(base.value, node.attr, MISSING)
        if obj is MISSING:
            # a misspelt builtin (dc.global_idx, math.sqr) is the usual cause: name the nearest ones
            import difflib

            public = [n for n in dir(base.value) if not n.startswith("_")]
            near = difflib.get_close_matches(node.attr, public, n=3)
            hint = f"did you mean {' or '.join(ast.unparse(node.value) + '.' + n for n in near)}?" if near else None
            raise self.rep.type(node, f"{ast.unparse(node.value)} has no attribute {node.attr!r}", hint=hint)
        if isinstance(obj, (bool, int, float, np.generic)):
            return self.static_to_expr(StaticValue(obj, node))
        return StaticValue(obj, node)

    def real_imag(self, e: ir.Expr, part: str, node: ast.AST) -> ir.Expr:
        """``z.real`` / ``z.imag``; of a real number, itself / zero (as numpy)."""
        loc = self.loc(node)
        if is_weak(e):
            return ir.Const(value=getattr(e.value, part), type=type_of_python_scalar(getattr(e.value, part)),  # type: ignore[attr-defined]
                            weak=True, loc=loc)
        if e.type.is_complex:
            return ir.MathCall(name=part, args=[e], type=e.type.real_type, loc=loc)
        if part == "real":
            return e
        return ir.Const(value=False if e.type.is_bool else (0.0 if e.type.is_float else 0), type=e.type, loc=loc)

    def buffer_attribute(self, buf: BufferValue, node: ast.Attribute) -> ir.Expr | StaticValue:
        ref = buf.ref
        if node.attr == "shape":
            return StaticValue(("shape", ref), node)
        if node.attr == "ndim":
            return ir.Const(value=ref.ndim, type=INT64, weak=True, loc=self.loc(node))
        if node.attr == "size":
            return self.buffer_size(ref, node)
        raise self.rep.syntax(node, f"arrays have no attribute {node.attr!r} in kernels",
                              hint="use .shape[d], .ndim or .size")

    def buffer_size(self, ref: ir.BufferRef, node: ast.AST) -> ir.Expr:
        loc = self.loc(node)
        if ref.shape is not None:
            n = 1
            for s in ref.shape:
                n *= s
            return ir.Const(value=n, type=INDEX, loc=loc)
        size: ir.Expr = ir.Shape(buffer=ref, dim=0, type=INDEX, weak=True, loc=loc)
        for d in range(1, ref.ndim):
            size = ir.BinOp(op="Mult", left=size, right=ir.Shape(buffer=ref, dim=d, type=INDEX, weak=True, loc=loc),
                            type=INDEX, weak=True, loc=loc)
        return size

    def shape_of(self, ref: ir.BufferRef, dim: int, node: ast.AST) -> ir.Expr:
        if not -ref.ndim <= dim < ref.ndim:
            raise self.rep.type(node, f"{ref.py_name!r} has {ref.ndim} dimension(s); shape[{dim}] is out of range")
        dim %= ref.ndim
        if ref.shape is not None:
            return ir.Const(value=ref.shape[dim], type=INDEX, loc=self.loc(node))
        return ir.Shape(buffer=ref, dim=dim, type=INDEX, weak=True, loc=self.loc(node))

    # ----------------------------------------------------------------------------- subscripts

    def x_Subscript(self, node: ast.Subscript) -> ir.Expr:
        chain = self.table_chain(node)
        if chain is not None:
            return self.table_item(chain[0], chain[1], node)
        self.refuse_chained_index(node)
        base = self.value(node.value)
        if isinstance(base, StaticValue) and isinstance(base.value, tuple) and base.value[:1] == ("shape",):
            d = self.constant_int(node.slice, "the dimension in .shape[d]")
            return self.shape_of(base.value[1], d, node)
        if isinstance(base, BufferValue):
            ref = base.ref
            self.note_access(ref, read=True)  # type: ignore[attr-defined]
            indices = self.indices(ref, node.slice, node)
            return ir.BufferLoad(buffer=ref, indices=indices, type=ref.dtype, loc=self.loc(node))
        if isinstance(base, StaticValue) and is_number_tuple(base.value):
            return self.constant_tuple_item(base.value, node)
        if isinstance(node.value, ast.Subscript):
            raise self.rep.syntax(node, "chained indexing a[i][j] is not supported",
                                  hint="index all dimensions at once: a[i, j]")
        raise self.rep.type(node, f"{ast.unparse(node.value)!r} cannot be indexed",
                            hint="only buffers and dc.shared arrays can be indexed in kernels")

    def refuse_chained_index(self, node: ast.Subscript) -> None:
        inner = node.value
        if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name):
            sym = self.scope.get(inner.value.id)  # type: ignore[attr-defined]
            if sym is not None and sym.ref is not None:
                raise self.rep.syntax(node, "chained indexing a[i][j] is not supported",
                                      hint="index all dimensions at once: a[i, j]")

    def indices(self, ref: ir.BufferRef, index: ast.expr, node: ast.AST) -> list[ir.Expr]:
        parts = list(index.elts) if isinstance(index, ast.Tuple) else [index]
        if len(parts) != ref.ndim:
            raise self.rep.type(node, f"{ref.py_name!r} has {ref.ndim} dimension(s) but is indexed with "
                                      f"{len(parts)} index(es)",
                                hint="give one index per dimension" if len(parts) < ref.ndim else None)
        out = []
        for d, p in enumerate(parts):
            if isinstance(p, ast.Slice):
                raise self.rep.syntax(p, "slices are not supported in kernels",
                                      hint="index one element at a time: a[i, j]")
            e = self.expr(p)
            if not (e.type.is_int or e.type.is_bool) or e.type.is_bool:
                raise self.rep.type(p, f"array indices must be integers, not {e.type}",
                                    hint="convert with int(x)" if e.type.is_float else None)
            if is_weak(e) and e.value < 0:  # type: ignore[attr-defined]
                # a constant negative index counts from the end, as in Python
                e = ir.BinOp(op="Add", left=self.shape_of(ref, d, p),
                             right=ir.Const(value=e.value, type=INDEX, loc=e.loc),  # type: ignore[attr-defined]
                             type=INDEX, loc=e.loc)
            out.append(convert(e, INDEX))
        return out

    def table_chain(self, node: ast.Subscript) -> tuple[Any, list[ast.expr]] | None:
        """``(table, index nodes)`` when ``node`` indexes a module/closure constant table, however
        the indices are written (``W[k]``, ``G[i, j]``, ``OFFS[d][0]``); None otherwise."""
        indices: list[ast.expr] = []
        root: ast.expr = node
        while isinstance(root, ast.Subscript):
            s = root.slice
            indices[:0] = list(s.elts) if isinstance(s, ast.Tuple) else [s]
            root = root.value
        if not isinstance(root, (ast.Name, ast.Attribute)):
            return None
        if isinstance(root, ast.Name) and root.id in self.scope:  # type: ignore[attr-defined]
            return None  # a local, a parameter or a dc.shared array
        try:
            base = self.value(root)
        except (KernelSyntaxError, KernelTypeError):
            return None  # the ordinary path reports it
        if not isinstance(base, StaticValue) or not is_table(base.value):
            return None
        return base.value, indices

    def table_item(self, table: Any, index_nodes: list[ast.expr], node: ast.Subscript) -> ir.Expr:
        """An element of a constant table. Constant indices fold to the element (a literal for
        Python numbers, a typed constant for a numpy array's); a run-time index selects among the
        entries (``W[k]`` in a stencil's ``for k in range(3)``), typed as numpy types the table."""
        rows = table_rows(table)
        name = ast.unparse(node.value) if not isinstance(node.value, ast.Subscript) else ast.unparse(node).split("[")[0]
        indices: list[ir.Expr] = []
        for p in index_nodes:
            if isinstance(p, ast.Slice):
                raise self.rep.syntax(p, "slices are not supported in kernels",
                                      hint="index one element at a time: t[i]")
            e = self.expr(p)
            if not e.type.is_int or e.type.is_bool:
                raise self.rep.type(p, f"indices of the constant table {name!r} must be integers, not {e.type}",
                                    hint="convert with int(x)" if e.type.is_float else None)
            if isinstance(table, tuple) and not isinstance(e, ir.Const) \
                    and not (isinstance(p, ast.Name) and p.id.startswith(TABLE_LOOP_PREFIX)):
                # a tuple's entries are folded as literals: only `for x in T` walks one at run time
                raise self.rep.type(p, f"the constant tuple {name!r} can only be indexed with a constant integer",
                                    hint=f"iterate it (for x in {name}), make it a numpy array (indexable at "
                                         "run time), or pass the table as a buffer argument")
            indices.append(e)
        return self.table_select(rows, indices, index_nodes, name, node)

    def table_select(self, rows: Any, indices: list[ir.Expr], nodes: list[ast.expr], name: str,
                     node: ast.AST) -> ir.Expr:
        if not indices:
            if isinstance(rows, tuple):
                raise self.rep.type(node, f"the constant table {name!r} needs more indices: this one is a row",
                                    hint="index every dimension (t[i][j] or t[i, j])")
            return self.static_to_expr(StaticValue(rows, node))
        if not isinstance(rows, tuple):
            raise self.rep.type(nodes[0], f"too many indices for the constant table {name!r}")
        e, n = indices[0], len(rows)
        if isinstance(e, ir.Const):
            k = int(e.value)
            if not -n <= k < n:
                raise self.rep.type(nodes[0], f"index {k} is out of range for the constant table {name!r} "
                                              f"of length {n}")
            return self.table_select(rows[k], indices[1:], nodes[1:], name, node)
        if n > TABLE_MAX_RUNTIME:
            raise self.rep.type(nodes[0], f"the constant table {name!r} has {n} entries, too many to index "
                                          "at run time", hint="pass the table as a buffer argument")
        items = [self.table_select(r, indices[1:], nodes[1:], name, node) for r in rows]
        t = items[0].type
        for it in items[1:]:
            t = promote(t, it.type)
        loc = self.loc(node)
        first: ir.Expr = e
        later: ir.Expr = e
        if n > 1 and not isinstance(e, ir.Var):
            # evaluate the index once: the outermost test binds it, the others reread it
            tmp = self.temp(e.type, nodes[0])  # type: ignore[attr-defined]
            first = ir.Bind(name=tmp, value=e, type=e.type, loc=e.loc)
            later = ir.Var(name=tmp, type=e.type, loc=e.loc)
        # index n-1 is the fallback (so -1 is the last entry, as in Python); 0 .. n-2 are tested
        out = convert(items[-1], t)
        for j in range(n - 2, -1, -1):
            idx = first if j == 0 else later
            cond = self.compare("Eq", idx, ir.Const(value=j, type=INT64, weak=True, loc=loc), nodes[0])
            out = ir.IfExp(cond=cond, then=convert(items[j], t), orelse=out, type=t, loc=loc)
        return out

    def constant_tuple_item(self, table: tuple, node: ast.Subscript) -> ir.Expr:
        """``WEIGHTS[1]`` for a module/closure tuple of numbers: folded to that number (a literal)."""
        e = self.expr(node.slice)
        if not isinstance(e, ir.Const) or not isinstance(e.value, int) or isinstance(e.value, bool):
            raise self.rep.type(node.slice, f"the constant tuple {ast.unparse(node.value)!r} can only be indexed "
                                            "with a constant integer",
                                hint="pass the table as a buffer argument to index it at run time")
        k = int(e.value)
        if not -len(table) <= k < len(table):
            raise self.rep.type(node, f"index {k} is out of range for the constant tuple "
                                      f"{ast.unparse(node.value)!r} of length {len(table)}")
        return self.static_to_expr(StaticValue(table[k], node))

    def constant_int(self, node: ast.expr, what: str) -> int:
        e = self.expr(node)
        if not isinstance(e, ir.Const) or not isinstance(e.value, int) or isinstance(e.value, bool):
            raise self.rep.type(node, f"{what} must be a constant integer")
        return int(e.value)

    # ----------------------------------------------------------------------------- operators

    def x_BinOp(self, node: ast.BinOp) -> ir.Expr:
        op = _BINOP_NAMES.get(type(node.op))
        if op is None:
            raise self.rep.syntax(node, f"the operator {type(node.op).__name__} is not supported in kernels")
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: str, a: ir.Expr, b: ir.Expr, node: ast.AST) -> ir.Expr:
        # Python numbers combine into a Python number (i * 2 + 1 is still weak)
        return weakened(self.typed_binop(op, a, b, node), a, b)

    def typed_binop(self, op: str, a: ir.Expr, b: ir.Expr, node: ast.AST) -> ir.Expr:
        loc = self.loc(node)
        if is_weak(a) and is_weak(b):
            try:
                value = fold.binop(op, a.value, b.value)  # type: ignore[attr-defined]
            except fold.FoldError as e:
                raise self.rep.type(node, f"invalid constant expression: {e}") from None
            return ir.Const(value=value, type=type_of_python_scalar(value), weak=True, loc=loc)
        sym = _BINOP_SYMBOLS[op]
        t = unify(a, b)
        if t.is_complex and op not in ("Add", "Sub", "Mult", "TrueDiv", "Pow"):
            raise self.rep.type(node, f"unsupported operand types for {sym}: {a.type} and {b.type}",
                                hint="complex numbers take + - * / and ** with a small int exponent")
        if t.is_complex and op == "Pow":
            if not (is_weak(b) and isinstance(b.value, int) and 0 <= b.value <= 3):  # type: ignore[attr-defined]
                raise self.rep.type(node, "a complex power needs a literal exponent 0, 1, 2 or 3",
                                    hint="write z * z, or dc.exp(w * log-of-z) by hand")
            n = int(b.value)  # type: ignore[attr-defined]
            z = convert(a, t)
            if n == 0:
                return ir.Const(value=1 + 0j, type=t, loc=loc)
            out = z
            for _ in range(n - 1):
                out = ir.BinOp(op="Mult", left=out, right=z, type=t, loc=loc)
            return out
        if op in ("LShift", "RShift", "BitAnd", "BitOr", "BitXor"):
            if a.type.is_float or b.type.is_float:
                raise self.rep.type(node, f"unsupported operand types for {sym}: {a.type} and {b.type}",
                                    hint="bitwise operators need integers")
            if t.is_bool and op in ("LShift", "RShift"):
                t = INT64
            if t.is_float:  # int64 with uint64 meet in float64 (NEP 50): numpy refuses these too
                raise self.rep.type(node, f"unsupported operand types for {sym}: {a.type} and {b.type}",
                                    hint="signed and uint64 operands have no common integer type; cast "
                                         "one side (dc.uint64(x) or dc.int64(x))")
            return ir.BinOp(op=op, left=convert(a, t), right=convert(b, t), type=t, loc=loc)
        if op == "TrueDiv":
            ft = t if t.is_float or t.is_complex else FLOAT64
            return ir.BinOp(op=op, left=convert(a, ft), right=convert(b, ft), type=ft, loc=loc)
        if op == "Pow":
            return self.power(a, b, t, loc)
        if t.is_bool:
            t = INT64
        left, right = convert(a, t), convert(b, t)
        if t.is_int and isinstance(left, ir.Const) and isinstance(right, ir.Const) and op in _INT_FOLD:
            # typed constants (e.g. a shared array's extent): fold as the generated code would compute
            return ir.Const(value=wrap_int(_INT_FOLD[op](int(left.value), int(right.value)), t), type=t, loc=loc)
        return ir.BinOp(op=op, left=left, right=right, type=t, loc=loc)

    def power(self, a: ir.Expr, b: ir.Expr, t: ScalarType, loc: ir.Loc) -> ir.Expr:
        if t.is_bool:
            t = INT64
        if t.is_int:
            if is_weak(b) and b.value < 0:  # type: ignore[attr-defined]
                # Python: an int to a negative power is a float
                return ir.BinOp(op="Pow", left=convert(a, FLOAT64), right=convert(b, INT32), type=FLOAT64, loc=loc)
            return ir.BinOp(op="Pow", left=convert(a, t), right=convert(b, t), type=t, loc=loc)
        # float base: keep an integral exponent integral (x ** 2 stays exact and cheap)
        if is_weak(b) and isinstance(b.value, int) and not isinstance(b.value, bool):  # type: ignore[attr-defined]
            exp_t = INT32 if -(1 << 31) <= b.value < 1 << 31 else INT64  # type: ignore[attr-defined]
            return ir.BinOp(op="Pow", left=convert(a, t), right=convert(b, exp_t), type=t, loc=loc)
        if not is_weak(b) and (b.type.is_int or b.type.is_bool):
            right = convert(b, INT32) if b.type.is_bool else b
            return ir.BinOp(op="Pow", left=convert(a, t), right=right, type=t, loc=loc)
        return ir.BinOp(op="Pow", left=convert(a, t), right=convert(b, t), type=t, loc=loc)

    def x_UnaryOp(self, node: ast.UnaryOp) -> ir.Expr:
        op = type(node.op).__name__
        if op == "Not":
            return self.cond(node)
        e = self.expr(node.operand)
        loc = self.loc(node)
        if is_weak(e):
            try:
                value = fold.unary(op, e.value)  # type: ignore[attr-defined]
            except fold.FoldError as err:
                raise self.rep.type(node, f"invalid constant expression: {err}") from None
            return ir.Const(value=value, type=type_of_python_scalar(value), weak=True, loc=loc)
        if op == "Not":
            return ir.UnaryOp(op="Not", operand=truth(e), type=BOOL, loc=loc)
        if op == "UAdd":
            return weakened(convert(e, INT64), e) if e.type.is_bool else e
        if op == "USub":
            operand = convert(e, INT64) if e.type.is_bool else e
            return weakened(ir.UnaryOp(op="USub", operand=operand, type=operand.type, loc=loc), e)
        if op == "Invert":
            if e.type.is_float or e.type.is_complex:
                raise self.rep.type(node, f"bad operand type for unary ~: {e.type}")
            operand = convert(e, INT64) if e.type.is_bool else e
            return weakened(ir.UnaryOp(op="Invert", operand=operand, type=operand.type, loc=loc), e)
        raise self.rep.syntax(node, f"the operator {op} is not supported in kernels")

    def x_Compare(self, node: ast.Compare) -> ir.Expr:
        operands = [node.left, *node.comparators]
        pairs: list[ir.Expr] = []
        left = self.expr(operands[0])
        for i, (op_node, right_node) in enumerate(zip(node.ops, operands[1:], strict=False)):
            op = _CMP_NAMES.get(type(op_node))
            if op is None:
                word = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}.get(type(op_node), "?")
                raise self.rep.syntax(node, f"the comparison {word!r} is not supported in kernels",
                                      hint="compare numbers with == or !=" if "is" in word else None)
            right = self.expr(right_node)
            later: ir.Expr = right
            if i < len(node.ops) - 1 and not isinstance(right, (ir.Const, ir.Var)):
                # evaluate the middle operand once: bind it on first use, reread it after
                tmp = self.temp(right.type, right_node)  # type: ignore[attr-defined]
                right_first: ir.Expr = ir.Bind(name=tmp, value=right, type=right.type, loc=right.loc)
                later = ir.Var(name=tmp, type=right.type, loc=right.loc)
            else:
                right_first = right
            pairs.append(self.compare(op, left, right_first, right_node if i else node))
            left = later
        if len(pairs) == 1:
            return pairs[0]
        if all(isinstance(p, ir.Const) for p in pairs):
            return ir.Const(value=all(p.value for p in pairs), type=BOOL, weak=True,  # type: ignore[attr-defined]
                            loc=self.loc(node))
        return ir.BoolOp(op="and", values=pairs, type=BOOL, loc=self.loc(node))

    def compare(self, op: str, a: ir.Expr, b: ir.Expr, node: ast.AST) -> ir.Expr:
        return weakened(self.typed_compare(op, a, b, node), a, b)

    def typed_compare(self, op: str, a: ir.Expr, b: ir.Expr, node: ast.AST) -> ir.Expr:
        loc = self.loc(node)
        if is_weak(a) and is_weak(b):
            try:
                value = fold.compare(op, a.value, b.value)  # type: ignore[attr-defined]
            except fold.FoldError as e:
                raise self.rep.type(node, f"invalid constant comparison: {e}") from None
            return ir.Const(value=value, type=BOOL, weak=True, loc=loc)
        t = unify(a, b)
        if t.is_complex and op not in ("Eq", "NotEq"):
            raise self.rep.type(node, f"complex numbers have no order: {_CMP_SYMBOLS.get(op, op)} is not "
                                      f"defined for {a.type} and {b.type}",
                                hint="compare abs(z), z.real or z.imag")
        if t.is_float and a.type.is_int and b.type.is_int and not (is_weak(a) or is_weak(b)):
            s = a if a.type.is_signed else b
            again: ir.Expr = s
            if not isinstance(s, (ir.Const, ir.Var)):
                tmp = self.temp(s.type, node)  # type: ignore[attr-defined]
                bound = ir.Bind(name=tmp, value=s, type=s.type, loc=s.loc)
                again = ir.Var(name=tmp, type=s.type, loc=s.loc)
                a, b = (bound, b) if s is a else (a, bound)
            return mixed_sign_compare(op, a, b, again, loc)
        return ir.Compare(op=op, left=convert(a, t), right=convert(b, t), type=BOOL, loc=loc)

    def x_BoolOp(self, node: ast.BoolOp) -> ir.Expr:
        op = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.expr(v) for v in node.values]
        loc = self.loc(node)
        if all(v.type.is_bool for v in values):
            return self.fold_boolop(op, values, loc)
        # Python returns an operand, not a bool: lower pairwise from the right
        result = values[-1]
        for v in reversed(values[:-1]):
            result = self.value_boolop(op, v, result, node)
        return result

    def fold_boolop(self, op: str, values: list[ir.Expr], loc: ir.Loc) -> ir.Expr:
        kept: list[ir.Expr] = []
        for v in values:
            if isinstance(v, ir.Const):
                if bool(v.value) == (op == "or"):
                    # short-circuits here: later operands never run
                    kept.append(ir.Const(value=bool(v.value), type=BOOL, loc=v.loc))
                    break
                continue  # a neutral constant
            kept.append(strengthen(v))
        if not kept:
            return ir.Const(value=op == "and", type=BOOL, weak=True, loc=loc)
        if len(kept) == 1:
            return kept[0]
        return ir.BoolOp(op=op, values=kept, type=BOOL, loc=loc)

    def value_boolop(self, op: str, a: ir.Expr, b: ir.Expr, node: ast.AST) -> ir.Expr:
        t = unify(a, b)
        loc = self.loc(node)
        if isinstance(a, ir.Const):
            chosen = (b if a.value else a) if op == "and" else (a if a.value else b)
            return convert(chosen, t)
        if isinstance(a, ir.Var):
            first: ir.Expr = a
            again: ir.Expr = a
        else:
            tmp = self.temp(a.type, node)  # type: ignore[attr-defined]
            first = ir.Bind(name=tmp, value=a, type=a.type, loc=a.loc)
            again = ir.Var(name=tmp, type=a.type, loc=a.loc)
        cond = truth(first)
        if op == "and":
            return ir.IfExp(cond=cond, then=convert(b, t), orelse=convert(again, t), type=t, loc=loc)
        return ir.IfExp(cond=cond, then=convert(again, t), orelse=convert(b, t), type=t, loc=loc)

    def x_IfExp(self, node: ast.IfExp) -> ir.Expr:
        cond = self.cond(node.test)
        a = self.expr(node.body)
        b = self.expr(node.orelse)
        if isinstance(cond, ir.Const):
            return a if cond.value else b
        t = unify(a, b)
        return ir.IfExp(cond=cond, then=convert(a, t), orelse=convert(b, t), type=t, loc=self.loc(node))

    def x_NamedExpr(self, node: ast.NamedExpr) -> ir.Expr:
        value = self.expr(node.value)
        name = self.assign_name(node.target, value, node)  # type: ignore[attr-defined]
        var = self.scope[node.target.id].var  # type: ignore[attr-defined]
        return ir.Bind(name=name, value=self.coerce_assign(value, var.type, node.target, node.target.id),  # type: ignore[attr-defined]
                       type=var.type, loc=self.loc(node))

    def x_Tuple(self, node: ast.Tuple) -> ir.Expr:
        raise self.rep.syntax(node, "tuples are not values in kernels",
                              hint="tuples may only index arrays (a[i, j]) or be assigned element-wise")

    def x_Call(self, node: ast.Call) -> ir.Expr:
        return self.call(node)  # type: ignore[attr-defined]

    # ----------------------------------------------------------------------------- helpers

    def coerce_assign(self, value: ir.Expr, t: ScalarType, node: ast.AST, what: str) -> ir.Expr:
        reason = implicit_ok(value, t)
        if reason is not None:
            hint = f"convert explicitly, e.g. dc.{t.name}(...)" if t.name != "bool" else "use bool(...)"
            if value.type.is_float and t.is_int:
                hint += f", or give {what!r} a float initial value (0.0)"
            raise self.rep.type(node, f"cannot assign to {what!r} of type {t}: {reason}", hint=hint)
        return convert(value, t)

    def buffer_arg(self, v: BufferValue) -> ir.BufferArg:
        return ir.BufferArg(buffer=v.ref, loc=self.loc(v.node))


__all__ = ["ExprLowering", "BufferValue", "StaticValue"]
