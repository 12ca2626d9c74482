"""The launch-time bounds proof: an unguarded ``out[i] = x[i]`` launched over too many items.

A kernel whose body, before anything that could skip it (an ``if``, a loop, a ``return``), indexes a
buffer with ``global_id(d)`` or an affine function of it with constant coefficients (``i``,
``2 * i + 1``, ``i - 1`` where ``i = dc.global_id(0)``) reaches a known largest index for a known
``global_size``. If that index is past the buffer's extent the launch is refused with
:class:`LaunchError` before anything runs. Anything the analysis cannot follow (guards, indices
from parameters or loaded values, device functions) is simply not a fact: no proof, no warning.

:func:`facts` runs once per launch entry (one specialisation on one device); :func:`prove` runs on
each launch of an entry that has facts (a dozen integer operations per fact).
"""

from __future__ import annotations

import linecache
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import LaunchError
from . import ir


@dataclass(frozen=True)
class Fact:
    """``buffer`` (argument ``arg``) is indexed in dimension ``dim`` by ``scale * global_id(gid) + offset``
    on every work-item, at ``line``."""

    arg: int
    dim: int
    gid: int
    scale: int
    offset: int
    line: int
    buffer: str
    text: str


Affine = tuple[int, int, int] | int  # (gid dimension, scale, offset), or a constant


def _affine(e: ir.Expr, env: dict[str, Affine | None]) -> Affine | None:
    if isinstance(e, ir.Const):
        return e.value if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, ir.BuiltinId):
        return (e.dim, 1, 0) if e.kind == "global_id" else None
    if isinstance(e, ir.Var):
        return env.get(e.name)
    if isinstance(e, ir.Cast):
        if not e.type.is_int or e.type.itemsize < 4:  # a narrowing cast may wrap: not followed
            return None
        return _affine(e.value, env)
    if isinstance(e, ir.BinOp) and e.op in ("Add", "Sub", "Mult"):
        a, b = _affine(e.left, env), _affine(e.right, env)
        if a is None or b is None:
            return None
        if isinstance(a, int) and isinstance(b, int):
            return a + b if e.op == "Add" else a - b if e.op == "Sub" else a * b
        if e.op == "Mult":
            if isinstance(a, int) and isinstance(b, tuple):
                a, b = b, a
            if isinstance(a, tuple) and isinstance(b, int):
                return (a[0], a[1] * b, a[2] * b)
            return None
        sign = 1 if e.op == "Add" else -1
        if isinstance(a, tuple) and isinstance(b, int):
            return (a[0], a[1], a[2] + sign * b)
        if isinstance(a, int) and isinstance(b, tuple):
            return (b[0], sign * b[1], a + sign * b[2])
        if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
            return (a[0], a[1] + sign * b[1], a[2] + sign * b[2])
    return None


def _accesses(node: ir.Node) -> Iterator[ir.BufferLoad | ir.BufferStore | ir.AtomicOp]:
    """Buffer accesses ``node`` makes every time it runs (not those behind ``x if c else y`` or the
    later operands of ``and``/``or``)."""
    if isinstance(node, ir.IfExp):
        yield from _accesses(node.cond)
        return
    if isinstance(node, ir.BoolOp):
        yield from _accesses(node.values[0])
        return
    if isinstance(node, (ir.BufferLoad, ir.BufferStore, ir.AtomicOp)):
        yield node
    for child in ir.children(node):
        yield from _accesses(child)


def _writes(kernel: ir.Kernel) -> dict[str, int]:
    counts: dict[str, int] = {}
    for s in kernel.body:
        for n in ir.walk(s):
            if isinstance(n, (ir.Assign, ir.Bind)):
                counts[n.name] = counts.get(n.name, 0) + 1
            elif isinstance(n, ir.For):
                for name in (n.var, n.counter):
                    counts[name] = counts.get(name, 0) + 2
    return counts


def _render(e: ir.Expr, names: dict[str, str]) -> str:
    if isinstance(e, ir.Const):
        return repr(e.value)
    if isinstance(e, ir.BuiltinId):
        return f"dc.{e.kind}({e.dim})"
    if isinstance(e, ir.Var):
        return names.get(e.name, e.name)
    if isinstance(e, ir.Cast):
        return _render(e.value, names)
    if isinstance(e, ir.BinOp):
        op = {"Add": "+", "Sub": "-", "Mult": "*"}.get(e.op, e.op)
        return f"{_render(e.left, names)} {op} {_render(e.right, names)}"
    return "..."


def facts(kernel: ir.Kernel) -> tuple[Fact, ...]:
    """The unconditional affine ``global_id`` indexings of ``kernel``'s buffers (see the module doc)."""
    writes = _writes(kernel)
    env: dict[str, Affine | None] = {}
    names = {v.name: v.py_name for v in kernel.locals}
    names.update({p.name: p.py_name for p in kernel.params})
    params = {p.name: p for p in kernel.params}
    out: list[Fact] = []
    for s in kernel.body:
        if any(isinstance(n, (ir.Return, ir.Break, ir.Continue)) for n in ir.walk(s)):
            break  # what follows may not run on every item
        if isinstance(s, ir.While):
            break  # may never end: what follows is not certain to run
        if isinstance(s, (ir.If, ir.For)):
            continue  # its body is conditional; what follows runs
        for acc in _accesses(s):
            ref = acc.buffer
            p = params.get(ref.name)
            if ref.space != "global" or p is None or getattr(acc, "member", ()) or ref.struct is not None:
                continue
            for dim, idx in enumerate(acc.indices):
                a = _affine(idx, env)
                if isinstance(a, tuple) and a[1] > 0:
                    out.append(Fact(p.index, dim, a[0], a[1], a[2], acc.loc.line, p.py_name, _render(idx, names)))
        if isinstance(s, ir.Assign) and writes.get(s.name) == 1:
            env[s.name] = _affine(s.value, env)
    return tuple(out)


def prove(kernel_name: str, filename: str, found: tuple[Fact, ...], global_size: tuple[int, ...],
          args: tuple[Any, ...]) -> None:
    """Raise :class:`LaunchError` when a fact's largest index is past its buffer's extent."""
    for f in found:
        g = global_size[f.gid] if f.gid < len(global_size) else 1
        top = f.scale * (g - 1) + f.offset
        shape = getattr(args[f.arg], "shape", None) if f.arg < len(args) else None
        if shape is None or f.dim >= len(shape) or top < shape[f.dim]:
            continue
        extent = int(shape[f.dim])
        fits = (extent - 1 - f.offset) // f.scale + 1 if extent - 1 - f.offset >= 0 else 0
        text = linecache.getline(filename, f.line).strip()
        shown = f"\n    {text}" if text else ""
        where = f" along dimension {f.dim}" if len(shape) > 1 else ""
        err = LaunchError(
            f"{filename}:{f.line}: kernel {kernel_name!r} would index buffer {f.buffer!r} out of bounds: "
            f"{f.buffer}[{f.text}] reaches index {top}{where} with global_size {tuple(global_size)}, but "
            f"{f.buffer!r} has shape {tuple(int(s) for s in shape)}; nothing ran{shown}\n"
            f"hint: guard the access (if {f.text} < {f.buffer}.shape[{f.dim}]:) or launch at most {fits} "
            f"work-items along dimension {f.gid}")
        err.lineno, err.buffer, err.index = f.line, f.buffer, f.text  # type: ignore[attr-defined]
        raise err


class Prover:
    """:func:`prove` for one launch entry, remembering the last proof: a ``dc.Buffer``'s shape never
    changes, so the same buffers (held weakly) at the same ``global_size`` need no new look at their
    shapes (which cost a native call each). numpy arguments are looked at every time (an array's
    ``shape`` can be assigned)."""

    __slots__ = ("facts", "args", "last")

    def __init__(self, found: tuple[Fact, ...]) -> None:
        self.facts = found
        self.args = tuple(sorted({f.arg for f in found}))
        self.last: tuple[tuple[int, ...], tuple[Any, ...]] | None = None

    def holds(self, global_size: tuple[int, ...], args: tuple[Any, ...]) -> bool:
        """Whether the last proof covers this launch (the same global_size and dc.Buffers): the launch
        hot path's test for an entry whose only extra is this proof (lang/launching.py)."""
        last = self.last
        if last is None or last[0] != global_size:
            return False
        refs = last[1]
        if len(refs) == 1:  # one buffer indexed unguarded, the common case: no loop, ~0.2 us less
            i = self.args[0]
            return i < len(args) and refs[0]() is args[i]
        for i, ref in zip(self.args, refs, strict=True):
            if i >= len(args) or ref() is not args[i]:
                return False
        return True

    def check(self, kernel_name: str, filename: str, global_size: tuple[int, ...], args: tuple[Any, ...]) -> None:
        if self.holds(global_size, args):
            return
        prove(kernel_name, filename, self.facts, global_size, args)
        refs = []
        for i in self.args:
            a = args[i] if i < len(args) else None
            if a is None or not hasattr(a, "_native"):  # numpy (mutable shape) or unknown: no memory
                self.last = None
                return
            refs.append(weakref.ref(a))
        self.last = (global_size, tuple(refs))


__all__ = ["Fact", "Prover", "facts", "prove"]
