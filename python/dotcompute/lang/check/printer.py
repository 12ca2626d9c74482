"""The instrumented CPU source: the CPU emitter's own output, with every access checked.

:class:`CheckPrinter` is the CPU printer in debug mode (which already routes every buffer and
``dc.shared`` access through an index helper carrying the array's id and the Python line) with
these changes:

* the index helpers are the checking ones of runtime_cpp.py: bounds (memcheck), then the per-element
  shadow (racecheck, initcheck), keyed by address so device functions' accesses count too;
* each work-item announces itself (linear global and local id) before its statements run, each
  work-group resets its ``dc.shared`` shadow and barrier counters, and each ``barrier()`` bumps the
  passing item's barrier count (a ``CheckBarrier`` statement put after it in a copy of the IR);
* synccheck: before a group-level ``if``/``for``/``while`` (one containing a barrier, which the loop
  fission of emit/cpu_regions.py evaluates once, for the group's first item) the condition or
  bounds are evaluated for every live item, and a disagreement is a finding;
* the entry runs one call at a time (a spin lock in the context) and nothing is marked ``ivdep``.

Execution otherwise is exactly the CPU backend's: same regions, same per-item storage, same
arithmetic, so what the checks see is what the CPU backend runs.
"""

from __future__ import annotations

import dataclasses

from .. import ir
from ..emit import cpu_regions as cr
from ..emit.c_like import strip_parens
from ..emit.cpu import CpuPrinter
from ..types import BufferType, ScalarType
from .layout import SYNC_SUB
from .runtime_cpp import CORE, access_helper

_SYNC_CODE = {v: k for k, v in SYNC_SUB.items()}


@dataclasses.dataclass(kw_only=True, eq=False)
class CheckBarrier(ir.Stmt):
    """Put after each ``barrier()``: the item that passes it counts one more barrier."""


def with_barrier_marks(module: ir.Module) -> ir.Module:
    """A copy of ``module`` whose kernel has a :class:`CheckBarrier` after every barrier."""

    def stmts(body: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.If):
                s = dataclasses.replace(s, then=stmts(s.then), orelse=stmts(s.orelse))
            elif isinstance(s, (ir.For, ir.While)):
                s = dataclasses.replace(s, body=stmts(s.body))
            out.append(s)
            if type(s) is ir.Barrier:
                out.append(CheckBarrier(loc=s.loc))
        return out

    k = module.kernel
    if not k.uses_barrier:
        return module
    return dataclasses.replace(module, kernel=dataclasses.replace(k, body=stmts(k.body)))


def first_barrier_line(stmt: ir.Stmt) -> int:
    for n in ir.walk(stmt):
        if isinstance(n, ir.Barrier):
            return n.loc.line
    return 0


def slot_order(kernel: ir.Kernel) -> list[str]:
    """The memory regions the shadow covers, in slot order: buffer parameters, then dc.shared arrays."""
    return [p.name for p in kernel.params if p.is_buffer] + [s.name for s in kernel.shared]


class CheckPrinter(CpuPrinter):
    def __init__(self, module: ir.Module) -> None:
        super().__init__(with_barrier_marks(module), True)
        self.need("dc_ck_core", CORE)
        self.slots = slot_order(self.kernel)
        self._ck_region: cr.Region | None = None
        self._ck_jumps: dict[int, tuple[int, int]] = {}

    # ------------------------------------------------------------------ accesses
    def checked_index(self, ref: ir.BufferRef, idx: list[str], node: ir.Node, load: bool = False) -> str:
        if not self.is_checked(ref):
            return self.flat_index(ref, idx)
        kind = 0 if isinstance(node, ir.BufferLoad) else 2 if isinstance(node, ir.AtomicOp) else 1
        name, text = access_helper(ref.ndim, zero=load and ref.space == "shared")
        self.need(name, text)
        if ref.struct is not None:
            from ..emit.structs import struct_name

            esz = f"(int64_t)sizeof({struct_name(self, ref.struct)})"
        else:
            esz = f"(int64_t)sizeof({self.storage(ref.dtype)})"
        shape = [self.shape_of(ref, d) for d in range(ref.ndim)]
        pairs = ", ".join(f"{i}, {n}" for i, n in zip(idx, shape, strict=False))
        return (f"{name}({self.debug_param()}, (const void*){self.buffer_ptr(ref)}, {esz}, {ref.debug_id}, "
                f"{node.loc.line}, {kind}, {pairs})")

    def s_BufferStore(self, s: ir.BufferStore) -> None:
        super().s_BufferStore(s)
        if self.is_checked(s.buffer):
            self.emit(f"dc_ck_post({self.debug_param()});")  # a held write-write conflict: same value?

    def s_CheckBarrier(self, s: CheckBarrier) -> None:
        if self.plan is not None and self.plan.has_return and self.mode == "item":
            # an item passing a barrier that an item of its group returned before: divergent
            total = "((dc_e0 - dc_b0) * (dc_e1 - dc_b1) * (dc_e2 - dc_b2))"
            self.emit(f"dc_ck_bar_live({self.debug_param()}, dc_nlive, {total}, {s.loc.line});")
            return
        self.emit(f"dc_ck_bar({self.debug_param()});")

    def s_Return(self, s: ir.Return) -> None:
        if isinstance(self.fn, ir.Kernel) and self.mode == "item" and self.plan is not None and self.plan.has_return:
            self.emit(f"dc_ck_ret({self.debug_param()}, {s.loc.line});")  # who returned where (synccheck)
        super().s_Return(s)

    # ------------------------------------------------------------------ who is running
    def used_names(self, fn: ir.Function) -> set[str]:
        names = super().used_names(fn)
        if fn is self.kernel:  # every buffer's pointer and extents: the entry registers them all
            for p in fn.params:
                if isinstance(p.type, BufferType):
                    names.add(p.name)
                    names.update(self.extent(p.name, d) for d in range(p.type.ndim))
        return names

    def unpack(self, used: set[str]) -> list[str]:
        lines = super().unpack(used)
        dbg = self.debug_param()
        lines.append(f"dc_ck_guard dc_ckg({dbg});")
        for slot, p in enumerate(p for p in self.kernel.params if p.is_buffer):
            lines.append(f"dc_ck_base({dbg}, {slot}, (const void*){p.name}, 0);")
        return lines

    def group_prologue(self) -> None:
        super().group_prologue()
        dbg = self.debug_param()
        self.emit(f"dc_ck_group({dbg}, (int64_t)dc_g, dc_ls0 * dc_ls1 * dc_ls2);")
        nbuf = sum(1 for p in self.kernel.params if p.is_buffer)
        for i, s in enumerate(self.kernel.shared):  # fresh work-group memory: nothing written yet
            self.emit(f"dc_ck_base({dbg}, {nbuf + i}, (const void*){s.name}, 1);")

    def declare_locals(self, fn: ir.Function, used: set[str], skip: set[str] | None = None) -> None:
        super().declare_locals(fn, used, skip)
        if fn is self.kernel and self.mode == "flat":
            li = "(dc_gid0 - dc_b0) + dc_ls0 * ((dc_gid1 - dc_b1) + dc_ls1 * (dc_gid2 - dc_b2))"
            self.emit(f"dc_ck_item({self.debug_param()}, dc_gid0, dc_gid1, dc_gid2, {li});")

    def emit(self, text: str) -> None:
        r = getattr(self, "_ck_region", None)
        if r is not None and text == f"dc_exit{r.rid}:;":
            # only items that took no group jump fall through to here
            super().emit(f"if (dc_ck_s{r.rid} < 0) dc_ck_s{r.rid} = {self.debug_param()}[4];")
        super().emit(text)
        if self.mode == "item" and text.startswith("[[maybe_unused]] const int64_t dc_li = "):
            # a fission region's item loop: the item is known from here on
            super().emit(f"dc_ck_item({self.debug_param()}, dc_b0 + dc_l0, dc_b1 + dc_l1, dc_b2 + dc_l2, dc_li);")

    # ------------------------------------------------------------------ synccheck
    def group_jump(self, s: ir.Stmt, code: int) -> bool:
        r = self.cur_region
        if self.mode == "item" and self.region_loop_depth == self.loop_depth and r is not None:
            # count the items leaving the group loop here: all of them, or it is a divergent exit
            self.emit(f"{{ ++dc_ck_j{r.rid}; if (dc_ck_t{r.rid} < 0) dc_ck_t{r.rid} = {self.debug_param()}[4]; }}")
            self._ck_jumps.setdefault(r.rid, (s.loc.line, 4 if code == 1 else 5))
        return super().group_jump(s, code)

    def region(self, r: cr.Region, types: dict[str, ScalarType]) -> None:
        if not r.exits:
            super().region(r, types)
            return
        assert self.plan is not None
        live = "dc_nlive" if self.plan.has_return else "((dc_e0 - dc_b0) * (dc_e1 - dc_b1) * (dc_e2 - dc_b2))"
        self.emit(f"int64_t dc_ck_j{r.rid} = 0, dc_ck_t{r.rid} = -1, dc_ck_s{r.rid} = -1;")
        self._ck_region = r
        super().region(r, types)
        self._ck_region = None
        line, sub = self._ck_jumps.get(r.rid, (0, 4))
        bline = first_barrier_line(r.loop.stmt) if r.loop is not None else 0
        self.emit(f"if (dc_ck_j{r.rid} > 0 && dc_ck_j{r.rid} < {live} && dc_ck_s{r.rid} >= 0) "
                  f"dc_ck_sync({self.debug_param()}, {sub}, {line}, dc_ck_t{r.rid}, dc_ck_s{r.rid}, {bline});")

    def var(self, name: str) -> str:
        if self.mode == "itemcheck" and self.plan is not None:
            if name in self.plan.per_item:
                return f"dc_pi_{name}.p[dc_li]"
            if name in self.plan.remat:
                return f"({strip_parens(self.expr(self.plan.remat[name]))})"
            return name
        return super().var(name)

    def builtin(self, kind: str, dim: int) -> str:
        if self.mode == "itemcheck":
            self.mode = "item"
            try:
                return super().builtin(kind, dim)
            finally:
                self.mode = "itemcheck"
        return super().builtin(kind, dim)

    def uniform(self, e: ir.Expr, sub: str, line: int, bline: int, truth: bool) -> None:
        """Evaluate ``e`` for every live item of the group; record a synccheck finding when two differ."""
        assert self.plan is not None
        dbg = self.debug_param()
        saved = self.mode
        self.mode = "itemcheck"
        self.emit("{")
        self.indent += 1
        self.emit("int64_t dc_ck_v0 = 0, dc_ck_t0 = -1, dc_ck_t1 = -1;")
        self.emit("for (int64_t dc_l2 = 0; dc_l2 < dc_e2 - dc_b2; ++dc_l2)")
        self.emit("for (int64_t dc_l1 = 0; dc_l1 < dc_e1 - dc_b1; ++dc_l1)")
        self.emit("for (int64_t dc_l0 = 0; dc_l0 < dc_e0 - dc_b0; ++dc_l0) {")
        self.indent += 1
        self.emit("const int64_t dc_li = (dc_l2 * dc_ls1 + dc_l1) * dc_ls0 + dc_l0;")
        if self.plan.has_return:
            self.emit("if (dc_dead.p[dc_li]) continue;")
        self.emit(f"dc_ck_item({dbg}, dc_b0 + dc_l0, dc_b1 + dc_l1, dc_b2 + dc_l2, dc_li);")
        value = strip_parens(self.expr(e))
        cast = f"({value}) ? 1 : 0" if truth else f"(int64_t)({value})"
        self.emit(f"const int64_t dc_ck_v = {cast};")
        self.emit(f"if (dc_ck_t0 < 0) {{ dc_ck_t0 = {dbg}[4]; dc_ck_v0 = dc_ck_v; }}")
        self.emit(f"else if (dc_ck_t1 < 0 && dc_ck_v != dc_ck_v0) dc_ck_t1 = {dbg}[4];")
        self.indent -= 1
        self.emit("}")
        self.emit(f"if (dc_ck_t1 >= 0) dc_ck_sync({dbg}, {_SYNC_CODE[sub]}, {line}, dc_ck_t0, dc_ck_t1, {bline});")
        self.indent -= 1
        self.emit("}")
        self.mode = saved

    def pieces(self, pieces: list[cr.Piece], types: dict[str, object]) -> None:  # type: ignore[override]
        # the CPU printer's, with a uniformity check before each group-level construct
        for p in pieces:
            if isinstance(p, cr.GroupIf):
                self.mode = "group"
                self.uniform(p.stmt.cond, "if", p.stmt.loc.line, first_barrier_line(p.stmt), True)
                super().pieces([p], types)  # type: ignore[arg-type]
            elif isinstance(p, cr.GroupLoop) and isinstance(p.stmt, ir.For):
                self.mode = "group"
                for bound in (p.stmt.start, p.stmt.stop, p.stmt.step):
                    if not isinstance(bound, ir.Const):
                        self.uniform(bound, "for", p.stmt.loc.line, first_barrier_line(p.stmt), False)
                super().pieces([p], types)  # type: ignore[arg-type]
            elif isinstance(p, cr.GroupLoop):
                self.mode = "group"
                s = p.stmt
                assert isinstance(s, ir.While)
                self.mark(s)
                self.emit("for (;;) {")
                self.indent += 1
                self.uniform(s.cond, "while", s.loc.line, first_barrier_line(s), True)
                self.mode = "group"
                self.emit(f"if (!{self.expr(s.cond)}) break;")
                self.pieces(p.body, types)
                self.indent -= 1
                self.emit("}")
            else:
                super().pieces([p], types)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ module
    def source(self) -> str:
        text = super().source()
        # the checking helpers write shared state: no loop may be vectorised as if items were independent
        return text.replace("\nDC_IVDEP\n", "\n")


def emit_checked(module: ir.Module) -> tuple[str, CheckPrinter]:
    p = CheckPrinter(module)
    return p.source(), p


__all__ = ["CheckPrinter", "CheckBarrier", "emit_checked", "slot_order", "with_barrier_marks"]
