"""Which global-id dimension walks memory contiguously, so the CPU can make it the inner loop.

numpy-minded authors write ``i = dc.global_id(0); j = dc.global_id(1); a[i, j]``: the last index,
the contiguous one in a C-ordered buffer, follows dimension 1. A CPU loop nest with dimension 0
innermost would then stride through memory a row at a time and not vectorise (30x slower in a
2-D copy). Order does not change a barrier-free kernel's meaning, so the CPU emitter puts the
dimension found here innermost and the launch path shapes CPU work-groups along it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

from .. import ir


def _children(node: ir.Node) -> Iterator[ir.Node]:
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, ir.Node):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, ir.Node))


def _walk(node: ir.Node) -> Iterator[ir.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(_children(n))


def _gid_dims(expr: ir.Node, var_dims: dict[str, set[int]]) -> set[int]:
    """The global-id dimensions ``expr`` depends on, through local variables too."""
    dims: set[int] = set()
    for n in _walk(expr):
        if isinstance(n, ir.BuiltinId) and n.kind == "global_id":
            dims.add(n.dim)
        elif isinstance(n, ir.Var):
            dims |= var_dims.get(n.name, set())
    return dims


def contiguous_dimension(kernel: ir.Kernel) -> int:
    """The global-id dimension most multi-dimensional accesses use in their last index (0 on a tie)."""
    var_dims: dict[str, set[int]] = {}
    votes = [0, 0, 0]
    # Twice, so that a variable assigned late in a loop body reaches the uses before it.
    for pass_no in range(2):
        for node in _walk_statements(kernel.body):
            if isinstance(node, ir.Assign):
                var_dims[node.name] = var_dims.get(node.name, set()) | _gid_dims(node.value, var_dims)
            elif isinstance(node, ir.Bind):
                var_dims[node.name] = var_dims.get(node.name, set()) | _gid_dims(node.value, var_dims)
            elif pass_no == 1 and isinstance(node, (ir.BufferLoad, ir.BufferStore, ir.AtomicOp)) \
                    and len(node.indices) >= 2:
                last = _gid_dims(node.indices[-1], var_dims)
                others = set().union(*(_gid_dims(e, var_dims) for e in node.indices[:-1]))
                for d in last - others:
                    votes[d] += 1
    best = max(range(3), key=lambda d: votes[d])
    return best if votes[best] > votes[0] else 0


def _walk_statements(body: list[ir.Stmt]) -> Iterator[ir.Node]:
    """Every node of ``body`` in program order (assignments before the statements after them)."""
    for stmt in body:
        yield from _preorder(stmt)


def _preorder(node: ir.Node) -> Iterator[ir.Node]:
    yield node
    for child in _children(node):
        yield from _preorder(child)


__all__ = ["contiguous_dimension"]
