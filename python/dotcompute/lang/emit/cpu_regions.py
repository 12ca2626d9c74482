"""Loop fission for barriers on the CPU: cutting a kernel body into regions.

On the CPU one call runs every work-item of a work-group, so a barrier cannot
block a thread. Instead the body is cut at each ``barrier()``:

    body            pieces
    ----            ------
    a = ...         Region[a = ..., s[l] = a]            (a loop over the group's items)
    s[l] = a
    barrier()       --
    for t in ...:   GroupLoop(for t in ...)              (runs once per group, not per item)
      x = s[...]      Region[x = s[...], acc += x]
      acc += x
      barrier()       --
      ...             Region[...]
    out[i] = acc    Region[out[i] = acc]

Every Region becomes ``for each local item { statements }``; a loop or ``if``
that contains a barrier becomes a GroupLoop/GroupIf executed once per group
(its condition/bounds are uniform across the group, as barrier semantics
require on every target, so they are evaluated for local item 0) with its
own body cut into pieces recursively.

Variables, cheapest first:

* rematerialised: a local assigned once, at the kernel's top level, from ids,
  shapes, scalar parameters and constants (``i = global_id(0)``) is recomputed
  at the start of every region that reads it, so the compiler still sees
  ``li`` as the item number (contiguous accesses, no gathers);
* region-local: used in one region only (and, inside a group loop, assigned
  before it is read there): a plain scalar of that region's item loop;
* per item: anything else (used in several regions, in a group-level
  condition, or carried across passes of a group loop) lives in an array with
  one slot per work-item (``dc_pi_NAME``); a region copies the slot into a
  register at its start and writes it back at its end if it assigned it;
* the loop variable and counter of a group ``for`` are group scalars.

A ``return`` marks the item dead (skipped by every later region), counts it
off the group's live items (``dc_nlive``) and jumps to the end of the current
region. Inside a group loop, once no item is live the group ends: a loop
whose condition reads dead items' values would otherwise never stop.

A ``break``/``continue`` aimed at a group loop is uniform (barriers are only
legal in uniform control flow, so every item takes it at the same point).
Inside the region's item loop it sets the loop's group flag (``dc_jmpN``) and
jumps past the rest of that item's statements to the region's write-back of
per-item values; after the region's item loop the group code tests the flag,
clears it and runs the real ``break``/``continue``, so the remaining regions of
that pass are skipped for every item.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ir
from .subgroups import Collective


@dataclass(eq=False)
class Region:
    stmts: list[ir.Stmt]
    rid: int = 0
    in_group_loop: bool = False
    loop: GroupLoop | None = None  # the innermost group loop around the region
    exits: set[str] = field(default_factory=set)  # "break"/"continue" aimed at ``loop``


@dataclass(eq=False)
class GroupLoop:
    stmt: ir.For | ir.While
    body: list[Piece] = field(default_factory=list)
    rid: int = 0  # the id under which the loop's own bounds/condition count as a use
    exits: set[str] = field(default_factory=set)  # jumps its own regions aim at it


@dataclass(eq=False)
class GroupIf:
    stmt: ir.If
    then: list[Piece] = field(default_factory=list)
    orelse: list[Piece] = field(default_factory=list)
    rid: int = 0


@dataclass(eq=False)
class Step:
    """A sub-group collective (emit/subgroups.py ``Collective``): group code between two regions."""

    stmt: ir.Barrier
    rid: int = 0


Piece = Region | GroupLoop | GroupIf | Step


def has_barrier(node: ir.Node) -> bool:
    return any(isinstance(n, ir.Barrier) for n in ir.walk(node))


def loop_exits(stmts: list[ir.Stmt]) -> set[str]:
    """``break``/``continue`` in ``stmts`` that leave the enclosing loop (not an inner one)."""
    out: set[str] = set()
    todo = list(stmts)
    while todo:
        s = todo.pop()
        if isinstance(s, ir.Break):
            out.add("break")
        elif isinstance(s, ir.Continue):
            out.add("continue")
        elif isinstance(s, ir.If):  # loops are the only other statements with a body
            todo += s.then + s.orelse
    return out


class Splitter:
    def __init__(self) -> None:
        self.next_id = 0
        self.regions: list[Region] = []
        self.loop: GroupLoop | None = None

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def split(self, stmts: list[ir.Stmt], in_loop: bool = False) -> list[Piece]:
        pieces: list[Piece] = []
        current: list[ir.Stmt] = []

        def close() -> None:
            if current:
                r = Region(list(current), self._id(), in_loop, self.loop, loop_exits(current))
                if self.loop is not None:
                    self.loop.exits |= r.exits
                self.regions.append(r)
                pieces.append(r)
                current.clear()

        for s in stmts:
            if isinstance(s, ir.Barrier):
                close()
                if isinstance(s, Collective):
                    pieces.append(Step(s, self._id()))
            elif isinstance(s, (ir.For, ir.While)) and has_barrier(s):
                close()
                loop = GroupLoop(s, rid=self._id())
                outer, self.loop = self.loop, loop
                loop.body = self.split(s.body, True)
                self.loop = outer
                pieces.append(loop)
            elif isinstance(s, ir.If) and has_barrier(s):
                close()
                g = GroupIf(s, rid=self._id())
                g.then = self.split(s.then, in_loop)
                g.orelse = self.split(s.orelse, in_loop)
                pieces.append(g)
            else:
                current.append(s)
        close()
        return pieces


def names_in(node: ir.Node) -> set[str]:
    out: set[str] = set()
    for n in ir.walk(node):
        if isinstance(n, (ir.Var, ir.Bind, ir.Assign)):
            out.add(n.name)
        elif isinstance(n, ir.For):
            out.add(n.var)
            out.add(n.counter)
    return out


def assigned_in(stmts: list[ir.Stmt]) -> set[str]:
    """Locals that ``stmts`` may write."""
    out: set[str] = set()
    for s in stmts:
        for n in ir.walk(s):
            if isinstance(n, (ir.Assign, ir.Bind)):
                out.add(n.name)
            elif isinstance(n, ir.For):
                out.update((n.var, n.counter))
    return out


def defined_first(stmts: list[ir.Stmt]) -> set[str]:
    """Locals that a region's straight-line code assigns before anything reads them.

    Such a local needs no per-item array even in a region that a group loop
    repeats: each pass recomputes it. A ``for`` loop's variable and counter
    count as assigned by the loop header.
    """
    seen: set[str] = set()
    fresh: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Assign) and s.name not in seen and s.name not in names_in(s.value):
            fresh.add(s.name)
        elif isinstance(s, ir.For):
            header = names_in(s.start) | names_in(s.stop) | names_in(s.step)
            for n in (s.var, s.counter):
                if n not in seen and n not in header:
                    fresh.add(n)
        seen |= names_in(s)
    return fresh


@dataclass
class Plan:
    pieces: list[Piece]
    regions: list[Region]
    per_item: set[str]       # locals kept in per-item arrays
    group_scalars: set[str]  # loop variables/counters of group loops
    region_locals: dict[int, set[str]]  # region id -> locals declared inside its item loop
    has_return: bool
    remat: dict[str, ir.Expr] = field(default_factory=dict)  # recomputed per region, in order


_PURE = (ir.Const, ir.Var, ir.BuiltinId, ir.Shape, ir.BinOp, ir.UnaryOp, ir.Cast, ir.Compare, ir.BoolOp,
         ir.IfExp, ir.MathCall)


def rematerialisable(kernel: ir.Kernel) -> dict[str, ir.Expr]:
    """Locals assigned exactly once, at the top level of the kernel, from ids, shapes, scalar
    parameters, constants and other such locals (``i = dc.global_id(0)``, ``li = local_id(1)``).

    Recomputing them in each region costs a few integer operations and keeps the compiler
    aware that, e.g., ``li`` is the item number: shared-array accesses stay contiguous
    instead of becoming gathers from a per-item array.
    """
    writes: dict[str, int] = {}
    for s in kernel.body:
        for n in ir.walk(s):
            if isinstance(n, (ir.Assign, ir.Bind)):
                writes[n.name] = writes.get(n.name, 0) + 1
            elif isinstance(n, ir.For):
                for name in (n.var, n.counter):
                    writes[name] = writes.get(name, 0) + 2
    scalars = {p.name for p in kernel.params if not p.is_buffer}
    out: dict[str, ir.Expr] = {}
    for s in kernel.body:
        if not isinstance(s, ir.Assign) or writes.get(s.name) != 1:
            continue
        nodes = list(ir.walk(s.value))
        if not all(isinstance(n, _PURE) for n in nodes):
            continue
        if all(n.name in scalars or n.name in out for n in nodes if isinstance(n, ir.Var)):
            out[s.name] = s.value
    return out


def plan(kernel: ir.Kernel) -> Plan:
    sp = Splitter()
    pieces = sp.split(kernel.body)
    local_names = {v.name for v in kernel.locals}
    uses: dict[str, set[int]] = {}
    in_loop_use: set[str] = set()
    group_scalars: set[str] = set()
    collective_names: set[str] = set()

    def note(names: set[str], rid: int, looped: bool) -> None:
        for n in names & local_names:
            uses.setdefault(n, set()).add(rid)
            if looped:
                in_loop_use.add(n)

    def visit(ps: list[Piece]) -> None:
        for p in ps:
            if isinstance(p, Region):
                names: set[str] = set()
                for s in p.stmts:
                    names |= names_in(s)
                note(names, p.rid, p.in_group_loop)
            elif isinstance(p, Step):
                # its operands and result live in per-item arrays: it reads and writes every item's slot
                c = p.stmt
                assert isinstance(c, Collective)
                names = {c.src, c.dst} | ({c.lane} if c.lane else set())
                collective_names.update(names)
                note(names, p.rid, False)
            elif isinstance(p, GroupLoop):
                s = p.stmt
                if isinstance(s, ir.For):
                    group_scalars.update((s.var, s.counter))
                    bounds: set[str] = set()
                    for e in (s.start, s.stop, s.step):
                        bounds |= names_in(e)
                    note(bounds, p.rid, False)
                else:
                    note(names_in(s.cond), p.rid, False)
                visit(p.body)
            else:
                note(names_in(p.stmt.cond), p.rid, False)
                visit(p.then)
                visit(p.orelse)

    visit(pieces)
    remat = rematerialisable(kernel)
    for n in collective_names:
        remat.pop(n, None)
    for n in remat:
        uses.pop(n, None)
    for n in collective_names:  # even one used in a single region besides the step needs its array
        uses.setdefault(n, set()).add(-1)
    fresh: dict[int, set[str]] = {r.rid: defined_first(r.stmts) for r in sp.regions}
    per_item = set()
    for n, rids in uses.items():
        if n in group_scalars:
            continue
        if len(rids) > 1 or (n in in_loop_use and n not in fresh.get(next(iter(rids)), set())):
            per_item.add(n)
    region_locals: dict[int, set[str]] = {}
    for n, rids in uses.items():
        if n in per_item or n in group_scalars:
            continue
        (rid,) = rids
        region_locals.setdefault(rid, set()).add(n)
    has_return = any(isinstance(n, ir.Return) for s in kernel.body for n in ir.walk(s))
    return Plan(pieces, sp.regions, per_item, group_scalars, region_locals, has_return, remat)
