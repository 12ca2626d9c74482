"""Kernel checks of raw MSL kernels (``dc.RawKernel(..., backend="metal")``) on the Metal test double.

The double runs MSL on the CPU (tests/metal_double, tests/support/metal_shim). For a checked launch the
kernel is compiled a second time by the same MSL runner, with clang's SanitizerCoverage load/store
tracing and debug lines, so every load and store of the kernel reports its address and its code
address first (msl_check.h: memcheck, racecheck, initcheck; synccheck is the double's scheduler's).
That object runs here, on host copies of the arguments placed between red zones, with the launch's
grid and threadgroup size; then the findings are reported (``dc.KernelCheckError``, or logged with
``:warn``) and, when there are none, the real launch runs on metal:0 as usual. Reports name the MSL
source line (``program_source:LINE``, as Metal's compiler does) through the object's debug lines.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import shutil
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import DotComputeError, LaunchError
from .debuglines import addr2line_tool, first_line, source_frames
from .layout import KIND_NAMES
from .raw_launch import RawLaunch, with_count
from .runner import Finding, fmt, global_id, log
from .spec import CheckSpec

MAX_ARGS = 31
CAPACITY = 64
#: shadow memory one checked run may use (80 bytes per granule of 1 to 4 bytes)
MAX_SHADOW_BYTES = 1 << 30
SOURCE_NAME = "program_source"  # what Metal's compiler (and the double) call the library's source


class _Arg(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("bytes", ctypes.c_ulonglong), ("elem", ctypes.c_ulonglong),
                ("kind", ctypes.c_int), ("uninit", ctypes.c_int), ("unwritten", ctypes.c_void_p)]


class _Finding(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("sub", ctypes.c_int), ("space", ctypes.c_int), ("region", ctypes.c_int),
                ("index", ctypes.c_longlong), ("pc", ctypes.c_ulonglong), ("opc", ctypes.c_ulonglong),
                ("tid", ctypes.c_ulonglong), ("otid", ctypes.c_ulonglong), ("count", ctypes.c_longlong),
                ("other_atomic", ctypes.c_int), ("pad", ctypes.c_int)]


class _Check(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("mask", ctypes.c_int), ("nargs", ctypes.c_int), ("stored", ctypes.c_int),
                ("args", ctypes.POINTER(_Arg)), ("findings", ctypes.POINTER(_Finding)), ("capacity", ctypes.c_int),
                ("faulted", ctypes.c_int), ("dropped", ctypes.c_longlong), ("max_shadow", ctypes.c_ulonglong)]


class _Launch(ctypes.Structure):  # msl_launch.h's DcMslLaunch
    _fields_ = [("args", ctypes.POINTER(ctypes.c_void_p)), ("grid", ctypes.c_ulonglong * 3),
                ("group", ctypes.c_ulonglong * 3), ("tg_len", ctypes.c_ulonglong * 16),
                ("tg_limit", ctypes.c_ulonglong), ("threaded", ctypes.c_int), ("host", ctypes.c_void_p),
                ("err", ctypes.c_char_p), ("errlen", ctypes.c_int), ("check", ctypes.POINTER(_Check))]


@dataclass
class _Param:
    kind: str
    index: int
    name: str


@dataclass
class _Object:
    path: str
    lib: Any
    fn: Any
    threaded: bool
    params: list[_Param]
    sites: dict[int, str]
    lines: dict[int, int]  # code offset -> MSL line (0: none found)
    lock: threading.Lock
    chains: dict[int, tuple[int, ...]] = dataclasses.field(default_factory=dict)  # every MSL line, innermost first


_double: Any = None


def _double_library() -> Any:
    """The loaded Metal test double (its MSL runner's C entry points), found among this process's mappings."""
    global _double
    if _double is not None:
        return _double
    path = None
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.rstrip().endswith("/libdotcompute_metal_double.so"):
                    path = line.split(None, 5)[5].strip()
                    break
    except OSError:
        path = None
    if path is None:
        raise DotComputeError("check= on a raw MSL kernel needs the Metal test double (tests/metal_double), whose "
                              "CPU run of the MSL the checks instrument; this metal device is not the double")
    lib = ctypes.CDLL(path)
    lib.dc_msl_compile2.restype = ctypes.c_void_p
    lib.dc_msl_compile2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.dc_msl_free.argtypes = [ctypes.c_void_p]
    lib.dc_msl_host.restype = ctypes.c_void_p
    _double = lib
    return lib


def clang_available() -> bool:
    """Whether the checked build can be made: the MSL runner's compiler must be clang (SanitizerCoverage)."""
    cxx = os.environ.get("DOTCOMPUTE_SHIM_CXX") or ("/usr/bin/clang++" if os.access("/usr/bin/clang++", os.X_OK)
                                                    else "c++")
    return "clang" in os.path.basename(cxx) and shutil.which(cxx) is not None


def _compile(kernel: Any, lib: Any) -> _Object:
    if not clang_available():
        raise DotComputeError(f"check= on raw MSL kernel {kernel.name!r} needs clang++ (the checked build uses "
                              "clang's SanitizerCoverage); set DOTCOMPUTE_SHIM_CXX to a clang++")
    raw = lib.dc_msl_compile2(kernel.source().encode(), 2)
    try:
        text = ctypes.string_at(raw).decode("utf-8", "replace")
    finally:
        lib.dc_msl_free(raw)
    if not text.startswith("OK\n"):
        raise DotComputeError(f"check= on raw MSL kernel {kernel.name!r}: its checked build failed:\n{text[6:]}")
    lines = text.split("\n")
    path = lines[1]
    symbol, threaded, params, sites, mine = None, False, [], {}, False
    for ln in lines[2:]:
        f = ln.split("\t")
        if f[0] == "kernel":
            mine = f[1] == kernel.name
            if mine:
                symbol, threaded = f[2], f[3] == "1"
        elif f[0] == "param" and mine:
            params.append(_Param(f[2], int(f[3]), f[6] if len(f) > 6 else "-"))
        elif f[0] == "site":
            sites[int(f[1])] = f[2]
    if symbol is None:
        raise DotComputeError(f"check= on raw MSL kernel {kernel.name!r}: no kernel of that name in its source")
    obj_lib = ctypes.CDLL(path)
    fn = getattr(obj_lib, symbol)
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(_Launch)]
    return _Object(path, obj_lib, fn, threaded, params, sites, {}, threading.Lock())


def _object(kernel: Any) -> _Object:
    got = kernel.__dict__.get("_metal_check_object")
    if got is None:
        got = _compile(kernel, _double_library())
        kernel.__dict__["_metal_check_object"] = got
    return got


def _choose_group(grid: list[int], dims: int, limit: int, must_divide: bool) -> list[int]:
    """metal/launch.mm's choose_group: the threadgroup the plugin picks when the launch gives none."""
    group = [1, 1, 1]
    budget = max(limit, 1)
    for d in range(dims):
        want = min(budget, 32 if d == 0 else 8) if d + 1 < dims else budget
        g = min(grid[d], max(want, 1))
        if must_divide:
            while g > 1 and grid[d] % g:
                g -= 1
        group[d] = max(g, 1)
        budget = max(budget // group[d], 1)
    return group


def _arg_bytes(i: int, a: Any) -> tuple[np.ndarray, int, int, np.ndarray | None]:
    """(bytes, element size, kind, the elements acc.empty left unwritten or None) of raw argument ``i`` as
    the plugin binds it."""
    from ...runtime import uninit
    from ...runtime.buffer import Buffer
    from ...runtime.raw_kernel import _arg_spec

    if isinstance(a, Buffer):
        data = np.ascontiguousarray(a.numpy())
        mask = uninit.unwritten(a, data) if uninit.FRESH else None
        return data.reshape(-1).view(np.uint8), data.dtype.itemsize, 1, mask
    if isinstance(a, np.ndarray):
        data = np.ascontiguousarray(a)
        return data.reshape(-1).view(np.uint8), data.dtype.itemsize, 1, None
    _, dtype, _ = _arg_spec(i, a)
    data = np.asarray(a, dtype=dtype).reshape(1)
    return data.view(np.uint8), data.dtype.itemsize, 2, None


def run_raw_checks(kernel: Any, check: CheckSpec, acc: Any, global_size: tuple[int, ...],
                   local_size: tuple[int, ...] | None, args: tuple[Any, ...]) -> list[Finding]:
    """Run raw MSL ``kernel`` instrumented on host copies of ``args``; its findings."""
    if len(args) > MAX_ARGS:
        raise LaunchError(f"{kernel.name}: check= covers at most {MAX_ARGS} arguments")
    obj = _object(kernel)
    lib = _double_library()
    info = acc.info
    dims = len(global_size)
    grid = list(global_size) + [1] * (3 - dims)
    if local_size is None:
        limit = int(info.get("max_work_group_size") or info.get("max_threads_per_threadgroup") or 1024)
        group = _choose_group(grid, dims, limit, not info.get("nonuniform_threadgroups", True))
    else:
        group = list(local_size) + [1] * (3 - dims)
    keep = []
    cargs = (_Arg * max(1, len(args)))()
    for i, a in enumerate(args):
        data, elem, kind, unwritten = _arg_bytes(i, a)
        keep.append(data)
        fresh = unwritten is not None and "initcheck" in check.checks
        mask = np.ascontiguousarray(unwritten, dtype=np.uint8) if fresh else None
        keep.append(mask)
        cargs[i] = _Arg(data.ctypes.data, data.nbytes, elem, kind, int(fresh),
                        mask.ctypes.data if mask is not None else None)
    found = (_Finding * CAPACITY)()
    ck = _Check(version=1, mask=check.mask, nargs=len(args), stored=0, args=cargs, findings=found,
                capacity=CAPACITY, faulted=0, dropped=0, max_shadow=MAX_SHADOW_BYTES)
    err = ctypes.create_string_buffer(512)
    ptrs = (ctypes.c_void_p * max(1, len(args)))()
    launch = _Launch(args=ptrs, tg_limit=int(info.get("max_threadgroup_memory") or 32768), threaded=int(obj.threaded),
                     host=lib.dc_msl_host(), err=ctypes.cast(err, ctypes.c_char_p), errlen=len(err),
                     check=ctypes.pointer(ck))
    for d in range(3):
        launch.grid[d], launch.group[d] = grid[d], group[d]
    shared = int(getattr(kernel, "shared_mem", 0) or 0)
    if shared:  # RawKernel(shared_mem=): [[threadgroup(0)]]'s length, in 16-byte steps as the plugin sets it
        launch.tg_len[0] = (shared + 15) & ~15
    with obj.lock:  # one checked run of an object at a time (its shadow state is not shared)
        rc = obj.fn(ctypes.byref(launch))
    message = err.value.decode("utf-8", "replace")
    if rc != 0 and ck.stored == 0:
        raise LaunchError(f"{kernel.name}: the checked run on the host failed: {message}")
    if ck.faulted == 2:
        log.warning("%s: some buffers were too large for racecheck/initcheck shadow memory (%d MiB): "
                    "those checks skipped them", kernel.name, MAX_SHADOW_BYTES >> 20)
    if ck.dropped:
        log.warning("%s: %d more distinct findings were not recorded", kernel.name, ck.dropped)
    out = _decode(kernel, obj, [found[k] for k in range(ck.stored)], tuple(global_size), tuple(group[:dims]))
    if rc != 0 and out:
        log.warning("%s: the checked run stopped at a fault after these findings: %s", kernel.name, message)
    return out


def _lines(obj: _Object, pcs: set[int]) -> None:
    """The MSL line of each code offset: the innermost inlined frame in program_source (addr2line -i)."""
    want = sorted(pc for pc in pcs if pc and pc not in obj.lines)
    if not want:
        return
    tool = addr2line_tool()
    frames = source_frames(tool, obj.path, want, SOURCE_NAME) if tool else {}
    for pc in want:
        chain = frames.get(pc, ())
        if chain:  # every frame's line: one barrier inlined into two paths has one chain (see _decode)
            obj.chains[pc] = chain
        obj.lines[pc] = first_line(chain)


def _decode(kernel: Any, obj: _Object, recs: list[Any], global_size: tuple[int, ...],
            group: tuple[int, ...]) -> list[Finding]:
    _lines(obj, {int(r.pc) for r in recs} | {int(r.opc) for r in recs})
    src = kernel.source().splitlines()

    def text(line: int) -> str:
        return f"\n    {src[line - 1].strip()}" if 0 < line <= len(src) and src[line - 1].strip() else ""

    def grp(t: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(i // n for i, n in zip(t, group, strict=False))

    def region(r: Any) -> tuple[str | None, str]:
        if r.space == 0:
            name = next((p.name for p in obj.params if p.kind == "buffer" and p.index == r.region), None)
            name = name or f"buffer({r.region})"
            return name, f"buffer '{name}' ([[buffer({r.region})]])"
        if r.space == 1:
            name = obj.sites.get(r.region, f"#{r.region}")
            return name, f"threadgroup variable '{name}'"
        if r.space == 2:
            name = next((p.name for p in obj.params if p.kind == "threadgroup" and p.index == r.region), None)
            name = name or f"threadgroup({r.region})"
            return name, f"threadgroup argument '{name}'"
        return None, "memory"

    merged: dict[tuple[Any, ...], Finding] = {}
    out: list[Finding] = []
    for r in recs:
        kind = KIND_NAMES[r.kind]
        line, oline = obj.lines.get(int(r.pc), 0), obj.lines.get(int(r.opc), 0)
        if kind == "synccheck" and r.sub == 2 and obj.chains.get(int(r.pc), (line,)) == obj.chains.get(int(r.opc)):
            continue  # one barrier of the source that the compiler copied into two paths: the same barrier
        key = (r.kind, r.sub, r.space, r.region, line, oline)
        prior = merged.get(key)
        if prior is not None:  # several code addresses of one line: one finding
            i = out.index(prior)
            out[i] = merged[key] = with_count(prior, prior.count + int(r.count),
                                              "times" if prior.kind == "synccheck" else "accesses")
            continue
        me = global_id(int(r.tid), global_size)
        count = int(r.count)
        more = f" ({count} {'times' if kind == 'synccheck' else 'accesses'})" if count > 1 else ""
        where = f"{SOURCE_NAME}:{line}"
        name, what = region(r)
        if kind == "memcheck":
            verb = {0: "read", 1: "write", 2: "atomic update"}.get(r.sub, "access")
            msg = (f"{where}: out-of-bounds {verb} of {what} at element {r.index} by thread {fmt(me)} "
                   f"(threadgroup {fmt(grp(me))}){more}")
            f = Finding(kind, line, name, (int(r.index),), (me,), msg + text(line), SOURCE_NAME, count=count,
                        groups=(grp(me),))
        elif kind == "initcheck":
            if r.space == 0:
                msg = (f"{where}: thread {fmt(me)} read {what} element {r.index}, which nothing has written since "
                       f"acc.empty allocated it{more}")
            else:
                msg = (f"{where}: thread {fmt(me)} read {what} element {r.index} before any thread of its "
                       f"threadgroup ({fmt(grp(me))}) wrote it{more}")
            f = Finding(kind, line, name, (int(r.index),), (me,), msg + text(line), SOURCE_NAME, count=count,
                        groups=(grp(me),))
        elif kind == "racecheck":
            other = global_id(int(r.otid), global_size)
            hazard = "write-write" if r.sub == 1 else "read-write"
            first, second = {1: ("wrote", "wrote"), 2: ("wrote", "read"), 3: ("read", "wrote")}[r.sub]
            if r.other_atomic:
                first = "atomically updated"
            g0, g1 = grp(other), grp(me)
            apart = (f"from different threadgroups ({fmt(g0)} and {fmt(g1)}), which no barrier orders"
                     if g0 != g1 else f"in threadgroup {fmt(g0)} with no barrier between them")
            msg = (f"{where}: {hazard} race on {what} element {r.index}: thread {fmt(other)} {first} it at line "
                   f"{oline} and thread {fmt(me)} {second} it at line {line}, {apart}{more}")
            f = Finding(kind, line, name, (int(r.index),), (other, me), msg + text(line), SOURCE_NAME,
                        other_line=oline, hazard=hazard, count=count, groups=(g0, g1))
        else:
            other = global_id(int(r.otid), global_size)
            if r.sub == 1:
                msg = (f"{where}: divergent barrier: thread {fmt(me)} waits at the threadgroup_barrier at line "
                       f"{line}, but thread {fmt(other)} of its threadgroup returned without reaching it{more}")
            else:
                msg = (f"{where}: divergent barrier: thread {fmt(me)} waits at the threadgroup_barrier at line "
                       f"{line} while thread {fmt(other)} of its threadgroup waits at the one at line {oline}{more}")
            f = Finding(kind, line, None, None, (me, other), msg + text(line), SOURCE_NAME,
                        other_line=oline or None, count=count, groups=(grp(me), grp(other)))
        merged[key] = f
        out.append(f)
    return out


def _can_check(kernel: Any, acc: Any, raw: str) -> bool:
    # checks run on the test double's MSL runner; on a real Metal GPU there is none: say so once, then
    # launch as asked
    global _told
    if _double is not None:
        return True
    if _told:
        return False
    try:
        _double_library()
    except DotComputeError as e:
        _told = True
        log.warning("DOTCOMPUTE_CHECK=%s: raw MSL kernels run unchecked here: %s", raw, e)
        return False
    return True


_told = False

_launch = RawLaunch("metal", run_raw_checks, _can_check)
#: ``dc.launch(raw_msl_kernel, ..., check=check)``'s runner (False/"off": the plain launch)
checked_runner = _launch.checked_runner
#: the launch runner of a raw MSL kernel under a check: the checked run, the report, the real launch
checked_raw_launch = _launch.checked_raw_launch
#: a raw MSL kernel's launch: under ``DOTCOMPUTE_CHECK`` checked, else the plain one
env_launch = _launch.env_launch


__all__ = ["checked_runner", "checked_raw_launch", "env_launch", "run_raw_checks", "clang_available"]
