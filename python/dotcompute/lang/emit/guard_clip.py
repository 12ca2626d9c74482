"""The bounds guard of a flat CPU kernel, folded into its innermost loop's bound.

Nearly every elementwise kernel starts ``i = dc.global_id(0)`` and then guards its work with
``if i < n:`` (or leaves early with ``if i >= n: return``), because a launch may be rounded up to
whole work-groups. Emitted as written, that test sits inside the CPU backend's vectorised loop
over the work-items, and GCC if-converts it into masked loads and stores (``vmaskmovps``), which
AMD's Zen 1 microcodes: a vector add ran at 4.5 GB/s on one Zen 1 core against numpy's 14 (issue
24, round 13), and at 13-15 GB/s with the loop ended at n. The CPU emitter instead ends the loop at
``min(group end, n)`` and drops the test, so the loop is a plain one.

Only what is provably the same program is rewritten (:func:`clip_guard`): the guard's other
operand must not change across the loop (constants, shapes, scalar parameters the kernel never
assigns, ids of the other dimensions and launch sizes, integer arithmetic of those), and the
statements before the guard must do nothing a skipped work-item could be seen doing (assignments
of locals from loads and arithmetic: no stores, atomics, calls or sub-group operations).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ir
from ..types import INT64

# Integer operators defined for every operand (the generated code wraps: -fwrapv). The bound is
# computed once before the loop rather than per item, and, in an `and` chain, even where a test
# before it would have been false: so no division or shift, which some operands make undefined.
_INT_OPS = frozenset({"Add", "Sub", "Mult", "BitAnd", "BitOr", "BitXor"})
# Reads a skipped item may drop: they have no effect of their own.
_PURE = (ir.Const, ir.Var, ir.BuiltinId, ir.BinOp, ir.UnaryOp, ir.Cast, ir.Compare, ir.BoolOp,
         ir.IfExp, ir.Shape, ir.BufferLoad, ir.MathCall)


@dataclass
class ClippedBody:
    """The kernel's statements with the guard's bound tests removed, and those bounds: the
    innermost loop runs while its id is below every one of them."""

    body: list[ir.Stmt]
    bounds: list[ir.Expr]


def clip_guard(kernel: ir.Kernel, inner: int) -> ClippedBody | None:
    """The rewrite of ``kernel``'s flat body for the innermost loop over dimension ``inner``, or
    None when the body does not have that shape."""
    body = kernel.body
    assigned = _assigned_names(kernel)
    k = 0
    ids: set[str] = set()  # locals that hold the inner dimension's global id
    while k < len(body) and isinstance(body[k], ir.Assign):
        s = body[k]
        if not all(isinstance(n, _PURE) for n in ir.walk(s.value)):
            return None
        if _is_inner_id(s.value, inner, ids) and assigned.count(s.name) == 1:
            ids.add(s.name)
        k += 1
    if k == len(body):
        return None
    guard = body[k]
    if not isinstance(guard, ir.If) or guard.orelse:
        return None
    prologue, rest = body[:k], body[k + 1:]
    if not rest:  # `if i < n: work`: the conjuncts that bound i go, the others stay
        bounds, kept = _split(guard.cond, "and", _upper_bound, inner, ids, assigned)
        if not bounds:
            return None
        inside = guard.then if kept is None else [ir.If(cond=kept, then=guard.then, loc=guard.loc)]
        return ClippedBody(prologue + inside, bounds)
    # `if i >= n: return` and then the work: the disjuncts that say i is past its bound go
    if len(guard.then) != 1 or not isinstance(guard.then[0], ir.Return) or guard.then[0].value is not None:
        return None
    bounds, kept = _split(guard.cond, "or", _past_bound, inner, ids, assigned)
    if not bounds:
        return None
    early = [] if kept is None else [ir.If(cond=kept, then=guard.then, loc=guard.loc)]
    return ClippedBody(prologue + early + rest, bounds)


def _split(cond: ir.Expr, joiner: str, match, inner: int, ids: set[str],
           assigned: list[str]) -> tuple[list[ir.Expr], ir.Expr | None]:
    """The bounds that ``match`` finds among ``cond``'s ``joiner`` operands (``cond`` itself when it
    is not such a chain), and what is left of ``cond`` without them (None: nothing)."""
    parts = cond.values if isinstance(cond, ir.BoolOp) and cond.op == joiner else [cond]
    bounds: list[ir.Expr] = []
    kept: list[ir.Expr] = []
    for p in parts:
        b = match(p, inner, ids)
        if b is not None and _invariant(b, inner, assigned):
            bounds.append(b)
        else:
            kept.append(p)
    if not kept:
        return bounds, None
    if len(kept) == 1:
        return bounds, kept[0]
    return bounds, ir.BoolOp(op=joiner, values=kept, type=cond.type, loc=cond.loc)


def _upper_bound(c: ir.Expr, inner: int, ids: set[str]) -> ir.Expr | None:
    """B of ``id < B`` or ``B > id``."""
    return _bound_of(c, inner, ids, "Lt", "Gt")


def _past_bound(c: ir.Expr, inner: int, ids: set[str]) -> ir.Expr | None:
    """B of ``id >= B`` or ``B <= id`` (the item is past its bound)."""
    return _bound_of(c, inner, ids, "GtE", "LtE")


def _bound_of(c: ir.Expr, inner: int, ids: set[str], id_first: str, id_second: str) -> ir.Expr | None:
    """The other operand of the int64 comparison ``c`` when it is ``id <id_first> B`` or
    ``B <id_second> id``."""
    if not isinstance(c, ir.Compare) or c.left.type != INT64 or c.right.type != INT64:
        return None
    if c.op == id_first and _is_inner_id(c.left, inner, ids):
        return c.right
    if c.op == id_second and _is_inner_id(c.right, inner, ids):
        return c.left
    return None


def _is_inner_id(e: ir.Expr, inner: int, ids: set[str]) -> bool:
    if isinstance(e, ir.BuiltinId):
        return e.kind == "global_id" and e.dim == inner
    return isinstance(e, ir.Var) and e.name in ids


def _invariant(e: ir.Expr, inner: int, assigned: list[str]) -> bool:
    """Whether ``e`` has one value for every item of the innermost loop."""
    for n in ir.walk(e):
        if isinstance(n, ir.Const | ir.Shape):
            continue
        if isinstance(n, ir.Var):
            if n.name in assigned:  # a local, or a parameter the kernel assigns
                return False
            continue
        if isinstance(n, ir.BuiltinId):
            if n.kind in ("global_id", "local_id") and n.dim == inner:
                return False
            continue
        if isinstance(n, ir.BinOp) and n.op in _INT_OPS and n.type.kind in "iu":
            continue
        if isinstance(n, ir.UnaryOp) and n.op in ("USub", "Invert"):
            continue
        if isinstance(n, ir.Cast) and n.type.kind in "iu" and n.value.type.kind in "iub":
            continue
        return False
    return True


def _assigned_names(kernel: ir.Kernel) -> list[str]:
    """Every name the kernel writes, once per write (locals, loop variables, assigned parameters)."""
    names: list[str] = []
    for n in ir.walk(kernel):
        if isinstance(n, ir.Assign | ir.Bind):
            names.append(n.name)
        elif isinstance(n, ir.For):
            names += [n.var, n.counter]
    return names


__all__ = ["ClippedBody", "clip_guard"]
