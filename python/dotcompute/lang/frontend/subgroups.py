"""Lowering of the sub-group builtins (``dc.subgroup_size()``, ``dc.subgroup_sum(x)``, ...) and the
checks that keep every work-item of a group evaluating the same sub-group operations.

A sub-group operation is a collective: every item of the sub-group must reach it. The language
asks for more, the rule of ``dc.barrier()``: every item of the *work-group* reaches it. That is
what lets the CPU run it as a barrier-delimited step over the group (emit/subgroups.py) and the
OpenCL emulation exchange values through work-group memory. Control flow the frontend can see is
checked here: an operation whose evaluation depends on a value (``and``/``or`` operands after the
first, conditional expressions, ``while`` conditions) is refused; conditions of enclosing ``if``s
and loops must be uniform, as for barriers (documented, not checkable).
"""

from __future__ import annotations

import ast
from typing import Any

from ...errors import KernelSyntaxError
from .. import builtins as dcb
from .. import ir
from ..diagnostics import SourceInfo
from ..types import INDEX, ScalarType
from .typing_rules import convert, strengthen

#: element types of subgroup_sum/min/max: the ones every target reduces natively or with shuffles
REDUCIBLE = ("int32", "uint32", "int64", "uint64", "float32", "float64")


def lower_subgroup(low: Any, fn: dcb.Builtin, node: ast.Call) -> ir.Expr:
    """The IR of one call of a sub-group builtin (``low`` is the FunctionLowerer)."""
    op = dcb.SUBGROUP[fn]
    name = f"dc.{fn.name}"
    loc = low.loc(node)
    if not low.is_kernel:
        raise low.rep.syntax(node, f"{name}() is only available in kernels",
                             hint="call it in the kernel and pass the result to the device function")
    if op in ir.SUBGROUP_QUERIES:
        if node.args:
            raise low.rep.type(node, f"{name}() takes no arguments")
        return ir.SubgroupOp(op=op, type=INDEX, loc=loc)
    n = 2 if op == "shuffle" else 1
    if len(node.args) != n:
        shape = "(x, lane)" if op == "shuffle" else "(x)"
        raise low.rep.type(node, f"{name}{shape} takes {n} argument(s), got {len(node.args)}")
    value = strengthen(low.expr(node.args[0]))  # a literal alone: int64 / float64 / bool
    t = value.type
    if not isinstance(t, ScalarType) or t.is_complex:
        raise low.rep.type(node.args[0], f"{name}() takes a real number, not {t}",
                           hint="apply it to each part (z.real, z.imag) or component separately")
    if op != "shuffle" and t.name not in REDUCIBLE:
        raise low.rep.type(node.args[0], f"{name}() of {t} is not supported",
                           hint="convert the value first: dc.int32(x), dc.float32(x) (sub-group reductions "
                                "take int32, uint32, int64, uint64, float32 or float64)")
    lane = None
    if op == "shuffle":
        lane = strengthen(low.expr(node.args[1]))
        if not isinstance(lane.type, ScalarType) or not lane.type.is_int:
            raise low.rep.type(node.args[1], f"the lane of {name}() must be an integer, not {lane.type}")
        lane = convert(lane, INDEX)
    return ir.SubgroupOp(op=op, value=value, lane=lane, type=t, loc=loc)


def finish_kernel(kernel: ir.Kernel, info: SourceInfo) -> None:
    """Mark a kernel that uses sub-group operations (it then runs whole work-groups, like a kernel
    with a barrier) and refuse operations that not every item would evaluate."""
    found = False
    for node in ir.walk(kernel):
        if isinstance(node, ir.SubgroupOp):
            found = True
        conditional: list[ir.Node] = []
        what = ""
        if isinstance(node, ir.While):
            conditional, what = [node.cond], "in a while condition"
        elif isinstance(node, ir.IfExp):
            conditional, what = [node.then, node.orelse], "in a branch of a conditional expression"
        elif isinstance(node, ir.BoolOp):
            conditional, what = node.values[1:], "after the first operand of `and`/`or`"
        for sub in conditional:
            for n in ir.walk(sub):
                if isinstance(n, ir.SubgroupOp) and n.op in ir.SUBGROUP_COLLECTIVES:
                    hint = ("compute it into a variable before the loop and again at the end of its body"
                            if isinstance(node, ir.While) else "compute it into a variable first, unconditionally")
                    raise KernelSyntaxError(
                        f"dc.subgroup_{n.op}() {what}: every work-item of the group must evaluate sub-group "
                        "operations", filename=info.filename, lineno=n.loc.line, offset=n.loc.col,
                        text=info.line_text(n.loc.line), hint=hint)
    if found:
        kernel.uses_subgroups = True
        kernel.uses_barrier = True


__all__ = ["lower_subgroup", "finish_kernel", "REDUCIBLE"]
