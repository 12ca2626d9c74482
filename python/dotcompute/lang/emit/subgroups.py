"""Sub-group operations on each target (``ir.SubgroupOp``).

A sub-group is a run of consecutive work-items of a work-group, by linear local id
``(l2 * L1 + l1) * L0 + l0``; the last one of a group is partial when the group size is not a
multiple of the width.

* CUDA: the warp (32 lanes). ``__shfl_sync`` / ``__shfl_down_sync`` over the mask of the lanes
  that exist in this warp (a partial last warp has fewer), reductions as a shuffle-down tree whose
  steps ignore lanes past the end, then a broadcast from lane 0; the exclusive sum as a
  ``__shfl_up_sync`` scan. ``__reduce_*_sync`` is not used: it exists for 32-bit ints on sm_80+
  only, and the tree is as fast on everything else.
* Metal: SIMD-groups (``simd_sum``, ``simd_shuffle``, ``[[thread_index_in_simdgroup]]``...): the
  hardware width (32 on Apple GPUs), partial SIMD-groups handled by the hardware.
* OpenCL: emulated with width ``EMULATED_WIDTH`` through work-group memory: each item stores its
  value, a barrier, each item reads its sub-group's values (the exclusive sum: those of lower
  lanes). Every item of the work-group must reach the operation (the language's rule for
  sub-group operations, as for barriers).
* CPU: emulated with the same width. ``hoist_collectives`` moves each collective into a statement
  of its own between barriers, so the loop fission of cpu_regions.py runs it as one step over the
  group (``Collective``), reading and writing per-item arrays.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..types import INDEX, ScalarType

#: the sub-group width where the device has no sub-groups of its own (CPU, OpenCL emulation)
EMULATED_WIDTH = 32
#: work-group memory of the OpenCL emulation, in 8-byte slots: the largest work-group it serves
OPENCL_MAX_GROUP = 1024


def width_for(backend: str) -> int:
    """The sub-group width a kernel sees on ``backend`` (Metal: Apple GPUs' SIMD-group width)."""
    return 32 if backend in ("cuda", "metal") else EMULATED_WIDTH


# ---------------------------------------------------------------------------------------------
# GPU targets: one expression per operation


def gpu_expr(p: Any, e: ir.SubgroupOp) -> str:
    """``e`` printed by the CUDA, OpenCL or Metal printer ``p``."""
    if p.backend == "cuda":
        return _cuda(p, e)
    if p.backend == "metal":
        return _metal(p, e)
    if p.backend == "opencl":
        return _opencl(p, e)
    raise AssertionError(f"sub-group operation on backend {p.backend!r}")


def _cuda(p: Any, e: ir.SubgroupOp) -> str:
    q = "static __device__ __forceinline__"
    p.need("dc_sg", (
        f"{q} unsigned dc_sg_lin() {{ return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }}\n"
        f"{q} unsigned dc_sg_count() {{\n"
        "  const unsigned n = blockDim.x * blockDim.y * blockDim.z, base = dc_sg_lin() & ~31u;\n"
        "  return n - base < 32u ? n - base : 32u;\n}\n"
        f"{q} unsigned dc_sg_mask() {{ const unsigned c = dc_sg_count(); "
        "return c >= 32u ? 0xffffffffu : (1u << c) - 1u; }"))
    if e.op == "size":
        return "32LL"
    if e.op == "local_id":
        return "((long long)(dc_sg_lin() & 31u))"
    if e.op == "id":
        return "((long long)(dc_sg_lin() >> 5))"
    if e.op == "count":
        return "((long long)dc_sg_count())"
    assert e.value is not None
    t = e.type
    T = p.tname(t)
    # __shfl_*_sync take int, unsigned, long long, unsigned long long, float, double (and halves)
    wide = T if T in ("int", "unsigned int", "long long", "unsigned long long", "float", "double") else "int"
    name = f"dc_sg_{e.op}_{_suffix(t)}"
    if e.op == "shuffle":
        p.need(name, f"{q} {T} {name}({T} v, long long lane) {{\n"
                     f"  return ({T})__shfl_sync(dc_sg_mask(), ({wide})v, (int)(lane & 31));\n}}")
        return f"{name}({p.expr(e.value)}, {p.expr(e.lane)})"
    if e.op == "exclusive_sum":
        # an inclusive shuffle-up scan, then each lane takes its lower neighbour's (exact: no subtraction)
        p.need(name, (f"{q} {T} {name}({T} v) {{\n"
                      "  const unsigned m = dc_sg_mask(), lane = dc_sg_lin() & 31u;\n"
                      "  for (unsigned o = 1u; o < 32u; o <<= 1) {\n"
                      f"    const {T} y = __shfl_up_sync(m, v, o);\n"
                      "    if (lane >= o) v = v + y;\n"
                      "  }\n"
                      f"  const {T} below = __shfl_up_sync(m, v, 1u);\n"
                      f"  return lane == 0u ? ({T})0 : below;\n}}"))
        return f"{name}({p.expr(e.value)})"
    combine = {"sum": "v + y", "min": "y < v ? y : v", "max": "y > v ? y : v"}[e.op]
    p.need(name, (f"{q} {T} {name}({T} v) {{\n"
                  "  const unsigned m = dc_sg_mask(), c = dc_sg_count(), lane = dc_sg_lin() & 31u;\n"
                  "  for (unsigned o = 16u; o > 0u; o >>= 1) {\n"
                  f"    const {T} y = __shfl_down_sync(m, v, o);\n"
                  f"    if (lane + o < c) v = {combine};  // lanes past a partial warp's end hold nothing\n"
                  "  }\n"
                  "  return __shfl_sync(m, v, 0);\n}"))
    return f"{name}({p.expr(e.value)})"


def _metal(p: Any, e: ir.SubgroupOp) -> str:
    if e.op == "size":
        return "((long)dc_sg_width)"
    if e.op == "local_id":
        return "((long)dc_sg_lane)"
    if e.op == "id":
        return "((long)dc_sg_index)"
    if e.op == "count":
        return ("((long)min(dc_sg_width, dc_lsz.x * dc_lsz.y * dc_lsz.z - dc_sg_index * dc_sg_width))")
    assert e.value is not None
    t = e.type
    if t.bits == 64:
        raise p.type_error(e, f"dc.subgroup_{e.op}() of {t} is not supported on Metal (SIMD-group functions take "
                              "32-bit and smaller values)", hint="convert to dc.int32/dc.uint32/dc.float32 first")
    v = p.expr(e.value)
    if e.op == "shuffle":
        if t.is_bool:
            return f"(simd_shuffle((ushort){v}, (ushort)({p.expr(e.lane)} & 31)) != 0)"
        return f"simd_shuffle({v}, (ushort)({p.expr(e.lane)} & 31))"
    if e.op == "exclusive_sum":
        return f"simd_prefix_exclusive_sum({v})"
    return f"simd_{e.op}({v})"


def metal_params() -> list[str]:
    return ["uint dc_sg_lane [[thread_index_in_simdgroup]]", "uint dc_sg_width [[threads_per_simdgroup]]",
            "uint dc_sg_index [[simdgroup_index_in_threadgroup]]"]


def _opencl(p: Any, e: ir.SubgroupOp) -> str:
    W = EMULATED_WIDTH
    p.need("dc_sg", (
        "static inline size_t dc_sg_lin(void) {\n"
        "  return (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0);\n}\n"
        "static inline size_t dc_sg_count(void) {\n"
        "  const size_t n = get_local_size(0) * get_local_size(1) * get_local_size(2);\n"
        f"  const size_t base = dc_sg_lin() / {W} * {W};\n"
        f"  return n - base < {W} ? n - base : {W};\n}}"))
    if e.op == "size":
        return f"{W}L"
    if e.op == "local_id":
        return f"((long)(dc_sg_lin() % {W}))"
    if e.op == "id":
        return f"((long)(dc_sg_lin() / {W}))"
    if e.op == "count":
        return "((long)dc_sg_count())"
    assert e.value is not None
    t = e.type
    T = p.tname(t)
    name = f"dc_sg_{e.op}_{_suffix(t)}"
    head = (f"static {T} {name}({T} v, {'long lane, ' if e.op == 'shuffle' else ''}__local ulong* buf) {{\n"
            f"  __local {T}* s = (__local {T}*)buf;\n"
            f"  const size_t l = dc_sg_lin(), b = l / {W} * {W}, c = dc_sg_count();\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);  // every item has read what the previous operation stored\n"
            "  s[l] = v;\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n")
    if e.op == "shuffle":
        body = f"  const size_t k = (size_t)(lane & {W - 1});\n  return k < c ? s[b + k] : v;\n}}"
        p.need(name, head + body)
        return f"{name}({p.expr(e.value)}, {p.expr(e.lane)}, dc_sg_buf)"
    if e.op == "exclusive_sum":
        body = (f"  {T} r = 0;\n"
                "  for (size_t k = b; k < l; ++k) r += s[k];\n"
                "  return r;\n}")
        p.need(name, head + body)
        return f"{name}({p.expr(e.value)}, dc_sg_buf)"
    combine = {"sum": "r + y", "min": "y < r ? y : r", "max": "y > r ? y : r"}[e.op]
    body = (f"  {T} r = s[b];\n"
            f"  for (size_t k = 1; k < c; ++k) {{ const {T} y = s[b + k]; r = {combine}; }}\n"
            "  return r;\n}")
    p.need(name, head + body)
    return f"{name}({p.expr(e.value)}, dc_sg_buf)"


def opencl_kernel_decls() -> list[str]:
    return [f"__local ulong dc_sg_buf[{OPENCL_MAX_GROUP}];  // the sub-group emulation's exchange slots"]


def _suffix(t: ScalarType) -> str:
    return t.name


# ---------------------------------------------------------------------------------------------
# CPU: collectives as group steps between barriers


@dataclasses.dataclass(kw_only=True, eq=False)
class Collective(ir.Barrier):
    """CPU only: ``dst = op over the sub-group of src`` (``lane``: the shuffle's source lane), run
    once per work-group between two regions; a Barrier, so the loop fission cuts around it."""

    op: str
    dst: str
    src: str
    lane: str | None
    type: ScalarType


def hoist_collectives(kernel: ir.Kernel) -> ir.Kernel:
    """A copy of ``kernel`` whose collective sub-group operations are statements of their own:
    ``t = x; barrier; Collective(r, t); barrier; ... r ...``. The original IR (shared with the
    other targets) is not changed."""
    locals_ = list(kernel.locals)
    taken = {v.name for v in locals_} | {p.name for p in kernel.params}
    counter = [0]

    def fresh(prefix: str, t: ScalarType) -> str:
        while True:
            counter[0] += 1
            name = f"sg{counter[0]}_{prefix}"
            if name not in taken:
                taken.add(name)
                locals_.append(ir.LocalVar(name=name, py_name=name, type=t))
                return name

    def expr(e: Any, pre: list[ir.Stmt]) -> Any:
        """``e`` with its collectives replaced by temporaries, their statements added to ``pre``."""
        if isinstance(e, ir.SubgroupOp) and e.op in ir.SUBGROUP_COLLECTIVES:
            value = expr(e.value, pre)
            src = fresh("in", e.type)
            pre.append(ir.Assign(name=src, value=value, loc=e.loc))
            lane = None
            if e.lane is not None:
                lane = fresh("lane", INDEX)
                pre.append(ir.Assign(name=lane, value=expr(e.lane, pre), loc=e.loc))
            dst = fresh("out", e.type)
            pre += [ir.Barrier(loc=e.loc), Collective(op=e.op, dst=dst, src=src, lane=lane, type=e.type, loc=e.loc),
                    ir.Barrier(loc=e.loc)]
            return ir.Var(name=dst, type=e.type, loc=e.loc)
        if not isinstance(e, ir.Node) or not any(isinstance(n, ir.SubgroupOp) for n in ir.walk(e)):
            return e
        changes = {}
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, ir.Node):
                changes[f.name] = expr(v, pre)
            elif isinstance(v, list):
                changes[f.name] = [expr(x, pre) for x in v]
        return dataclasses.replace(e, **changes)

    def stmts(body: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            pre: list[ir.Stmt] = []
            if isinstance(s, ir.If):
                s = dataclasses.replace(s, cond=expr(s.cond, pre), then=stmts(s.then), orelse=stmts(s.orelse))
            elif isinstance(s, ir.For):
                s = dataclasses.replace(s, body=stmts(s.body))  # its bounds are Consts or Vars
            elif isinstance(s, ir.While):
                s = dataclasses.replace(s, body=stmts(s.body))  # the frontend refused collectives in cond
            else:
                s = expr(s, pre)
            out += pre
            out.append(s)
        return out

    body = stmts(kernel.body)
    return dataclasses.replace(kernel, body=body, locals=locals_)


def cpu_query(p: Any, e: ir.SubgroupOp) -> str:
    """size / local_id / id / count in the CPU printer (the linear id is ``dc_li`` inside a region's
    item loop; group-level code stands for item 0)."""
    W = EMULATED_WIDTH
    li = "dc_li" if p.mode == "item" else "((int64_t)0)"
    if e.op == "size":
        return f"((int64_t){W})"
    if e.op == "local_id":
        return f"({li} % {W})"
    if e.op == "id":
        return f"({li} / {W})"
    if e.op == "count":
        return f"(dc_nitems - {li} / {W} * {W} < {W} ? dc_nitems - {li} / {W} * {W} : (int64_t){W})"
    raise AssertionError(f"collective {e.op} left in the CPU kernel body")


def cpu_collective(p: Any, c: Collective, tname: str) -> None:
    """Print one collective step: for every sub-group of the group, combine the per-item slots."""
    W = EMULATED_WIDTH
    src, dst = f"dc_pi_{c.src}.p", f"dc_pi_{c.dst}.p"
    p.emit(f"for (int64_t dc_sb = 0; dc_sb < dc_nitems; dc_sb += {W}) {{  // dc.subgroup_{c.op}, sub-group by "
           "sub-group")
    p.indent += 1
    p.emit(f"const int64_t dc_se = dc_nitems - dc_sb < {W} ? dc_nitems : dc_sb + {W};")
    if c.op == "shuffle":
        p.emit("for (int64_t dc_k = dc_sb; dc_k < dc_se; ++dc_k) {")
        p.emit(f"  const int64_t dc_from = dc_sb + (dc_pi_{c.lane}.p[dc_k] & {W - 1});")
        p.emit(f"  {dst}[dc_k] = dc_from < dc_se ? {src}[dc_from] : {src}[dc_k];")
        p.emit("}")
    elif c.op == "exclusive_sum":
        p.emit(f"{tname} dc_r = {p.literal(0, c.type)};")
        p.emit("for (int64_t dc_k = dc_sb; dc_k < dc_se; ++dc_k) {")
        p.emit(f"  const {tname} dc_y = {src}[dc_k];")
        p.emit(f"  {dst}[dc_k] = dc_r;")
        if p.plan.has_return:
            p.emit("  if (dc_dead.p[dc_k]) continue;  // an item that returned adds nothing")
        p.emit("  dc_r = dc_r + dc_y;")
        p.emit("}")
    else:
        combine = {"sum": "dc_r + dc_y", "min": "dc_y < dc_r ? dc_y : dc_r", "max": "dc_y > dc_r ? dc_y : dc_r"}[c.op]
        p.emit(f"{tname} dc_r = {p.literal(0, c.type)};")
        p.emit("bool dc_first = true;")
        p.emit("for (int64_t dc_k = dc_sb; dc_k < dc_se; ++dc_k) {")
        if p.plan.has_return:
            p.emit("  if (dc_dead.p[dc_k]) continue;  // an item that returned takes no part")
        p.emit(f"  const {tname} dc_y = {src}[dc_k];")
        p.emit(f"  dc_r = dc_first ? dc_y : ({combine});")
        p.emit("  dc_first = false;")
        p.emit("}")
        p.emit(f"for (int64_t dc_k = dc_sb; dc_k < dc_se; ++dc_k) {dst}[dc_k] = dc_r;")
    p.indent -= 1
    p.emit("}")


__all__ = ["EMULATED_WIDTH", "OPENCL_MAX_GROUP", "width_for", "gpu_expr", "metal_params", "opencl_kernel_decls",
           "Collective", "hoist_collectives", "cpu_query", "cpu_collective"]
