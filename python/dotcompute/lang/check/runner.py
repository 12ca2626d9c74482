"""A launch under checks: run the instrumented kernel on the host over copies, report, then launch.

Whatever the target accelerator (cpu:0, opencl:0, the simulated cuda:0, metal:0), the checked run is
the CPU backend's execution of the same kernel (same IR, same work-group size, the CPU's loop
fission for barriers), on host copies of the arguments, so the real arguments are untouched by it.
With no finding (or ``:warn``) the real launch follows on the target as usual.
"""

from __future__ import annotations

import linecache
import logging
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import KernelCheckError, LaunchError
from ...runtime import uninit as _uninit
from .. import launching as _launching
from ..compile_options import compile_options
from ..launching import barrier_local_size, shared_caps
from ..types import BufferType
from . import layout as L
from .printer import emit_checked
from .spec import CheckSpec, env_check

log = logging.getLogger("dotcompute.check")
_INT64 = np.dtype(np.int64)
#: the shadow of one launch must fit here (6 int64 words per checked element)
MAX_SHADOW_BYTES = 1 << 30


@dataclass(frozen=True)
class Finding:
    """One problem a check found. ``threads`` holds global ids: the two work-items of a race (first
    access, then the conflicting one) or of a divergent barrier, else the one that failed."""

    kind: str                # "memcheck", "racecheck", "synccheck", "initcheck"
    line: int                # the user's Python line of the access (or of the divergent if/for/while)
    buffer: str | None       # the buffer or dc.shared array's Python name (None for synccheck)
    index: tuple[int, ...] | None  # the index used (memcheck: per dimension; else the element number)
    threads: tuple[tuple[int, ...], ...]
    message: str
    filename: str = ""
    other_line: int | None = None  # the race's first access, or the barrier a divergent branch holds
    hazard: str | None = None      # racecheck: "write-write" or "read-write"
    count: int = 1                 # how many accesses showed this same problem
    groups: tuple[tuple[int, ...], ...] = ()  # the work-group (block) of each of ``threads``

    def __str__(self) -> str:
        return self.message


class _CheckedEntry:
    __slots__ = ("spec", "plan", "printer", "nbuf")

    def __init__(self, spec: Any, plan: Any, printer: Any) -> None:
        self.spec = spec
        self.plan = plan
        self.printer = printer
        self.nbuf = sum(1 for p in spec.module.kernel.params if p.is_buffer)


def _entry(kernel: Any, types: list[Any]) -> _CheckedEntry:
    from ...runtime import ParamSpec, accelerator, compile_source

    cache = kernel.__dict__.setdefault("_check_entries", {})
    key = tuple(types)
    got = cache.get(key)
    if got is not None and (not got.spec.captures or got.spec.valid()):
        return got
    spec = kernel.specialize(types, True)
    text, printer = emit_checked(spec.module)
    params = spec.module.kernel.params
    specs = []
    for p in printer.expanded_params():
        if p.kind in ("buffer", "scalar"):
            specs.append(_launching.argument_spec(params, p))
        elif p.kind == "extent":
            specs.append(ParamSpec("scalar", p.name, _INT64))
        elif p.kind == "debug":
            specs.append(ParamSpec("buffer", "<check context>", _INT64, ndim=1, written=True))
        else:
            raise LaunchError(f"{kernel.name}: the checked CPU source has an unknown parameter kind {p.kind!r}")
    cpu = accelerator("cpu")
    # -O1: the instrumented kernel cannot vectorise anyway, and compiles in about 60% of -O3's time
    native = compile_source(cpu, text, spec.module.kernel.name, compile_options(kernel, "cpu") + " -O1")
    entry = _CheckedEntry(spec, native.plan(specs, raw=True), printer)
    cache[key] = entry
    return entry


def _host_copy(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        return np.array(a, copy=True, order="C")
    if hasattr(a, "numpy") and hasattr(a, "accelerator"):  # a dc.Buffer (views too): its elements, copied
        return np.ascontiguousarray(a.numpy())
    return a


def _local_size(kernel: Any, k: Any, acc: Any, global_size: tuple[int, ...],
                local_size: tuple[int, ...] | None) -> tuple[int, ...]:
    if k.uses_barrier or k.shared:
        max_group = int(acc.info.get("max_work_group_size", 256) or 256)
        return tuple(barrier_local_size(kernel.name, global_size, local_size, max_group, shared_caps(k)))
    if local_size is not None:
        return tuple(local_size)
    # any partition gives the same answers without barriers: rows of up to 256 items
    return (min(global_size[0], 256),) + (1,) * (len(global_size) - 1)


def run_checks(kernel: Any, check: CheckSpec, acc: Any, global_size: tuple[int, ...],
               local_size: tuple[int, ...] | None, args: tuple[Any, ...]) -> tuple[list[Finding], tuple[int, ...]]:
    """Run ``kernel`` instrumented on the host over copies of ``args``; the findings and the local size used."""
    types = kernel.types_from_args(args)
    entry = _entry(kernel, types)
    k = entry.spec.module.kernel
    ls = _local_size(kernel, k, acc, global_size, local_size)
    from ..aggargs import expander

    decls = kernel.decls()
    expand = expander(kernel.name, k.params, [(d.name, t) for d, t in zip(decls, types, strict=False)])
    host = tuple(_host_copy(a) for a in args)
    expanded = expand(host) if expand is not None else host
    if len(expanded) != len(k.params):
        raise LaunchError(f"{kernel.name}: {len(expanded)} arguments for {len(k.params)} parameters")
    unwritten: dict[int, np.ndarray] = {}  # buffer parameter -> elements acc.empty left unwritten
    if "initcheck" in check.checks and _uninit.FRESH and expand is None:
        for p, a, h in zip(k.params, args, host, strict=True):
            mask = _uninit.unwritten(a, h) if p.is_buffer else None
            if mask is not None:
                unwritten[p.index] = mask
    ctx, sizes = _context(kernel, check, k, expanded, global_size, ls, unwritten)
    call: list[Any] = []
    for p, a in zip(k.params, expanded, strict=True):
        call.append(a)
        if isinstance(p.type, BufferType):
            call.extend(np.int64(s) for s in a.shape)
    call.append(ctx)
    from ...runtime import accelerator

    cpu = accelerator("cpu")
    entry.plan.launch(global_size, ls, tuple(call), None)
    # the checked kernel only: pending array expressions are not ours to run (one of them may be the
    # launch being checked, which would then check itself again)
    cpu._native.synchronize()
    return decode(kernel, entry, ctx, global_size, sizes, ls), ls


def _context(kernel: Any, check: CheckSpec, k: Any, expanded: tuple[Any, ...], global_size: tuple[int, ...],
             ls: tuple[int, ...], unwritten: dict[int, np.ndarray] | None = None,
             ) -> tuple[np.ndarray, dict[int, tuple[int, ...]]]:
    regions: list[tuple[int, int, bool, np.ndarray | None]] = []  # (elements, element bytes, shared, unwritten)
    sizes: dict[int, tuple[int, ...]] = {}
    for p, a in zip(k.params, expanded, strict=True):
        if p.is_buffer:
            regions.append((int(a.size), int(a.dtype.itemsize), False, (unwritten or {}).get(p.index)))
            sizes[p.index] = tuple(int(s) for s in a.shape)
    for s in k.shared:
        regions.append((int(s.type.size), int(s.dtype.itemsize), True, None))
    if len(regions) > L.MAX_SLOTS:
        raise LaunchError(f"{kernel.name}: check= covers at most {L.MAX_SLOTS} buffers and dc.shared arrays")
    items = 1
    for d in ls:
        items *= d
    bar = L.FINDINGS + L.CAPACITY * L.REC
    offset = bar + items
    total = offset + sum(L.SHADOW * n for n, _, _, _ in regions)
    if total * 8 > MAX_SHADOW_BYTES:
        raise LaunchError(f"{kernel.name}: checking this launch needs {total * 8 >> 20} MiB of shadow memory "
                          f"(over {MAX_SHADOW_BYTES >> 20} MiB): check it on smaller buffers")
    ctx = np.zeros(total, dtype=np.int64)
    ctx[L.H_CAP] = L.CAPACITY
    ctx[L.H_MASK] = check.mask
    ctx[L.H_NSLOTS] = len(regions)
    g = tuple(global_size) + (1,) * (3 - len(global_size))
    ctx[L.H_GS:L.H_GS + 3] = g[:3]
    ctx[L.H_BAR] = bar
    ctx[L.H_MAX_ITEMS] = items
    for slot, (n, esz, shared, fresh) in enumerate(regions):
        base = L.SLOTS + L.SLOT_WORDS * slot
        ctx[base:base + 4] = (offset, n, 0, esz)
        if not shared:  # buffers come written, except acc.empty elements nothing wrote yet (runtime/uninit.py)
            ctx[offset + 5:offset + L.SHADOW * n:L.SHADOW] = 1 if fresh is None else ~fresh
        offset += L.SHADOW * n
    return ctx, sizes


def global_id(tid: int, global_size: tuple[int, ...]) -> tuple[int, ...]:
    """The work-item id of linear thread number ``tid`` (dimension 0 fastest), as reports print it."""
    out = []
    for g in global_size:
        out.append(tid % g)
        tid //= g
    return tuple(out)


def decode(kernel: Any, entry: _CheckedEntry, ctx: np.ndarray, global_size: tuple[int, ...],
           sizes: dict[int, tuple[int, ...]], ls: tuple[int, ...]) -> list[Finding]:
    def group(t: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(i // n for i, n in zip(t, ls, strict=False))

    module = entry.spec.module
    k = module.kernel
    out: list[Finding] = []
    for r in range(int(ctx[L.H_STORED])):
        rec = [int(v) for v in ctx[L.FINDINGS + L.REC * r:L.FINDINGS + L.REC * (r + 1)]]
        kind = L.KIND_NAMES[rec[L.F_KIND]]
        did, line, count = rec[L.F_ID], rec[L.F_LINE], rec[L.F_COUNT]
        what = module.debug_names.get(did, f"array #{did}")
        name = what.split("'")[1] if what.count("'") >= 2 else what
        filename = entry.spec.debug_files.get(did, k.filename)
        me = global_id(rec[L.F_TID], global_size)
        more = f" ({count} accesses)" if count > 1 else ""
        if kind == "memcheck":
            idx = tuple(rec[L.F_I0:L.F_I0 + rec[L.F_NDIM]])
            verb = {0: "read", 1: "write", 2: "atomic update"}.get(rec[L.F_SUB], "access")
            shape = sizes.get(did)
            ext = f" (shape {shape})" if shape is not None else ""
            msg = (f"{filename}:{line}: out-of-bounds {verb} of {what}{ext} at index {fmt(idx)} "
                   f"by work-item {fmt(me)} (work-group {fmt(group(me))}){more}")
            out.append(Finding(kind, line, name, idx, (me,), _with_text(msg, filename, line), filename,
                               count=count, groups=(group(me),)))
        elif kind == "initcheck":
            elem = rec[L.F_I0]
            if did in sizes:  # a buffer: acc.empty memory
                msg = (f"{filename}:{line}: work-item {fmt(me)} read {what} element {elem}, which nothing has "
                       f"written since acc.empty allocated it{more}")
            else:
                msg = (f"{filename}:{line}: work-item {fmt(me)} read {what} element {elem} before any work-item of "
                       f"its work-group ({fmt(group(me))}) wrote it{more}")
            out.append(Finding(kind, line, name, (elem,), (me,), _with_text(msg, filename, line), filename,
                               count=count, groups=(group(me),)))
        elif kind == "racecheck":
            other = global_id(rec[L.F_OTID], global_size)
            oline, elem = rec[L.F_OLINE], rec[L.F_I0]
            hazard = L.RACE_SUB[rec[L.F_SUB]]
            first, second = {1: ("wrote", "wrote"), 2: ("wrote", "read"), 3: ("read", "wrote")}[rec[L.F_SUB]]
            g0, g1 = group(other), group(me)
            apart = (f"from different work-groups ({fmt(g0)} and {fmt(g1)}), which no barrier orders"
                     if g0 != g1 else f"in work-group {fmt(g0)} with no barrier between them")
            msg = (f"{filename}:{line}: {hazard} race on {what} element {elem}: work-item {fmt(other)} {first} it "
                   f"at line {oline} and work-item {fmt(me)} {second} it at line {line}, {apart}{more}")
            out.append(Finding(kind, line, name, (elem,), (other, me), _with_text(msg, filename, line), filename,
                               other_line=oline, hazard=hazard, count=count, groups=(g0, g1)))
        else:
            other = global_id(rec[L.F_OTID], global_size)
            construct = L.SYNC_SUB.get(rec[L.F_SUB], "branch")
            bline = rec[L.F_OLINE]
            part = "condition" if construct != "for" else "range"
            if construct == "return":
                msg = (f"{k.filename}:{line}: divergent barrier: work-item {fmt(other)} returns at line {line}, "
                       f"but work-item {fmt(me)} of its work-group goes on to the barrier at line {bline}, so not "
                       "every item reaches that barrier")
                out.append(Finding(kind, line, None, None, (other, me), _with_text(msg, k.filename, line),
                                   k.filename, other_line=bline, count=count, groups=(group(other), group(me))))
                continue
            if construct in ("break", "continue"):
                msg = (f"{k.filename}:{line}: divergent barrier: work-item {fmt(me)} takes the {construct} at line "
                       f"{line} out of a loop holding the barrier at line {bline}, but work-item {fmt(other)} of its "
                       "work-group does not, so not every item reaches that barrier")
            else:
                msg = (f"{k.filename}:{line}: divergent barrier: the {construct} at line {line} holds the barrier at "
                       f"line {bline}, but its {part} differs between work-items {fmt(me)} and {fmt(other)} of one "
                       "work-group, so not every item reaches that barrier")
            out.append(Finding(kind, line, None, None, (me, other), _with_text(msg, k.filename, line), k.filename,
                               other_line=bline, count=count, groups=(group(me), group(other))))
    dropped = int(ctx[L.H_DROPPED])
    if dropped:
        log.warning("%s: %d more distinct findings were not recorded", kernel.name, dropped)
    return out


def fmt(t: tuple[int, ...]) -> str:
    """An index or id as reports print it: a bare number in one dimension, else the tuple."""
    return str(t[0]) if len(t) == 1 else str(t)


def _with_text(msg: str, filename: str, line: int) -> str:
    text = linecache.getline(filename, line).strip()
    return f"{msg}\n    {text}" if text else msg


def report(kernel: Any, check: CheckSpec, findings: list[Finding]) -> None:
    """Raise :class:`KernelCheckError` with ``findings`` (or log them, for ``:warn``); an open
    ``dc.profile()`` gets a ``kernel_check`` note either way."""
    from ...runtime import trace

    if trace.active is not None:
        trace.note("kernel_check", kernel=kernel.name, checks=check.text(), findings=len(findings),
                   details=[{"kind": f.kind, "line": f.line, "buffer": f.buffer, "index": list(f.index or ()),
                             "threads": [list(t) for t in f.threads], "message": f.message} for f in findings])
    if not findings:
        return
    head = f"kernel {kernel.name!r}: {len(findings)} finding(s) under check={check.text()!r}"
    body = "\n".join(f"[{f.kind}] {f.message}" for f in findings)
    if check.warn:
        log.warning("%s\n%s", head, body)
        return
    raise KernelCheckError(f"{head}; the launch did not run\n{body}", findings)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _internal(kernel: Any) -> bool:
    """Whether ``kernel`` is one of dotcompute's own (array operations, expressions, random): those are
    checked by the project's tests, and ``DOTCOMPUTE_CHECK`` is for the user's kernels (``check=``
    passed explicitly still applies)."""
    got = kernel.__dict__.get("_check_internal")
    if got is None:
        code = getattr(getattr(kernel, "pyfunc", None), "__code__", None)
        filename = code.co_filename if code is not None else ""
        # the package's own kernels, and the ones array expressions generate (expr/codegen.py's file names)
        got = bool(code is not None and (os.path.abspath(filename).startswith(_PACKAGE)
                                         or filename.startswith("<dotcompute expression ")))
        kernel.__dict__["_check_internal"] = got
    return got


def checked_launch(kernel: Any, check: CheckSpec | None, acc: Any, global_size: tuple[int, ...],
                   local_size: tuple[int, ...] | None, args: tuple[Any, ...], stream: Any) -> None:
    """The launch runner for a language kernel under ``check`` (None: ``DOTCOMPUTE_CHECK``'s value)."""
    state = _launching.CHECK_STATE
    if check is None and not state.busy:
        check = env_check(os.environ.get("DOTCOMPUTE_CHECK"))
        if check is not None and not check.library and _internal(kernel):
            check = None  # dotcompute's own kernels only when DOTCOMPUTE_CHECK names "library"
    if check is not None and not state.busy:
        if kernel._decls is None:
            kernel.decls()
        findings, ls = run_checks(kernel, check, acc, global_size, local_size, args)
        report(kernel, check, findings)
        if local_size is None and kernel.specialize(kernel.types_from_args(args), None).module.kernel.uses_barrier:
            local_size = ls  # the partition the check saw is the one the target runs
    # the real launch, on the normal path (busy: DOTCOMPUTE_CHECK is not looked at again)
    outer, state.busy = state.busy, True
    try:
        _launching.launch_kernel(kernel, acc, global_size, local_size, args, stream)
    finally:
        state.busy = outer


_launching.CHECKED_LAUNCH = checked_launch

__all__ = ["Finding", "checked_launch", "run_checks", "report", "MAX_SHADOW_BYTES"]
