"""Kernel checks of raw CUDA kernels (``dc.RawKernel(..., backend="cuda")``) on the CUDA simulator.

For a checked launch the kernel is built a second time by the simulator, as a *trace build*: the same
source with one more comment line (``//!dotcompute-sim-trace``, so a cache entry of its own), which the
simulator's builder compiles with clang's SanitizerCoverage load/store tracing and debug lines
(cuda/sim/builder.cpp). In that build every load and store of the kernel reports its address and code
address to the checker (cuda/sim/shim/dcsim_trace.h, dcsim_check_cuda.h; the engine, dcsim_check.h,
is not CUDA-specific), which keeps shadow memory for device allocations and shared memory and records
findings in a variable of the module, read here through ``cuModuleGetGlobal`` (``RawKernel.globals``).

The trace build runs on device copies of the arguments, with the launch's grid and block; the findings
are reported (``dc.KernelCheckError``, or logged with ``:warn``) and, when there are none, the real
launch runs as usual. Reports name the source line (``kernel.cu:LINE``, as the simulator's compiler
messages do) from the object's debug lines.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from typing import Any

import numpy as np

from ...errors import CompilationError, DotComputeError, LaunchError
from .debuglines import addr2line_tool, first_line, source_frames
from .raw_launch import RawLaunch, with_count
from .runner import Finding, fmt, log
from .spec import CheckSpec

SOURCE_NAME = "kernel.cu"  # what the simulator's host build calls the kernel's source
TRACE_MARKER = "//!dotcompute-sim-trace"
_MAGIC = 0x4B434344  # 'DCCK'
_KIND = {1: "memcheck", 2: "racecheck", 4: "synccheck", 8: "initcheck"}
_SPACE_GLOBAL, _SPACE_STATIC, _SPACE_DYNAMIC = 1, 2, 3
_SYNC_DIVERGENCE, _SYNC_DEADLOCK, _SYNC_EXITED, _SYNC_ABSENT = 1, 2, 3, 4

# dcsim_check.h's Finding and dcsim_check_cuda.h's report, field for field
_RECORD = np.dtype([("check", "<i4"), ("hazard", "<i4"), ("space", "<i4"), ("sync_kind", "<i4"),
                    ("region", "<u8"), ("region_bytes", "<u8"), ("offset", "<i8"), ("bytes", "<u4"),
                    ("mask", "<u4"), ("lanes", "<u4"), ("line", "<u4", 2), ("thread", "<u4", (2, 3)),
                    ("group", "<u4", (2, 3)), ("stores", "<u4"), ("site", "<u8", 2), ("count", "<u8"),
                    ("name", "S32")])
_HEADER = np.dtype([("magic", "<u4"), ("epoch", "<u4"), ("nrecords", "<u4"), ("dropped", "<u4"),
                    ("record_bytes", "<u4"), ("block", "<u4", 3), ("grid", "<u4", 3), ("shadow_full", "<u4"),
                    ("module", "S64")])
_epochs = itertools.count(1)
_epoch_lock = threading.Lock()


def clang_available() -> bool:
    """Whether the simulator can make a trace build: it needs clang++ (GCC has no load/store tracing)."""
    cxx = (os.environ.get("DOTCOMPUTE_CXX") or "").split()
    if cxx and "clang" in os.path.basename(cxx[0]) and shutil.which(cxx[0]):
        return True
    return any(shutil.which(n) for n in ("clang++", *(f"clang++-{v}" for v in range(14, 20))))


def _trace_kernel(kernel: Any) -> Any:
    """The trace build's RawKernel: the same source, name and options, plus the trace marker line."""
    got = kernel.__dict__.get("_cuda_trace_kernel")
    if got is None:
        from ...runtime.raw_kernel import RawKernel

        got = RawKernel(f"{kernel.source().rstrip()}\n{TRACE_MARKER}\n", kernel.name, backend="cuda",
                        options=kernel.options, read_only=tuple(kernel.read_only), shared_mem=kernel.shared_mem,
                        cooperative=kernel.cooperative)
        got.__dict__["_cuda_check_lines"] = {}
        kernel.__dict__["_cuda_trace_kernel"] = got
    return got


def _poison(a: Any) -> np.ndarray | None:
    """The per-element poison bytes of ``a`` when it is ``acc.empty`` memory some of which nothing has
    written (runtime/uninit.py), else None."""
    try:
        from ...runtime import uninit
    except ImportError:  # a runtime without acc.empty tracking
        return None
    ref = uninit.FRESH.get(id(a))
    if ref is None or ref() is not a:
        return None
    return uninit.pattern(a.dtype)


def _copies(acc: Any, args: tuple[Any, ...], initcheck: bool) -> tuple[list[Any], dict[int, tuple[int, np.dtype, int]],
                                                                       np.ndarray]:
    """Device copies of the array arguments (scalars as they are), {device address: (argument, dtype,
    bytes)}, and the checker's table of them (dcsim_check_extents: address, bytes, poison, its size)."""
    from ...runtime.buffer import Buffer

    out: list[Any] = []
    where: dict[int, tuple[int, np.dtype, int]] = {}
    table = np.zeros(128, np.uint64)
    for i, a in enumerate(args):
        if isinstance(a, (Buffer, np.ndarray)):
            host = np.array(a.numpy() if isinstance(a, Buffer) else a, copy=True)
            c = acc.asarray(host)
            ptr = int(c.__cuda_array_interface__["data"][0])
            where[ptr] = (i, host.dtype, host.nbytes)
            out.append(c)
            j = 4 * (len(where) - 1)
            if j < table.size:
                poison = _poison(a) if initcheck and isinstance(a, Buffer) else None
                word = np.zeros(8, np.uint8)
                if poison is not None:
                    word[:poison.size] = poison
                table[j:j + 4] = (ptr, host.nbytes, int(word.view("<u8")[0]), 0 if poison is None else poison.size)
        else:
            out.append(a)
    return out, where, table


def _lines(trace_kernel: Any, module: str, sites: set[int]) -> dict[int, int]:
    """The source line of each code offset (``kernel.cu``'s frame nearest the access, addr2line -i)."""
    cache: dict[tuple[str, int], int] = trace_kernel.__dict__["_cuda_check_lines"]
    want = sorted(s for s in sites if s and (module, s) not in cache)
    tool = addr2line_tool()
    if want and tool and module.startswith("/proc/self/fd/"):
        frames: dict[int, tuple[int, ...]] = {}
        try:
            with open(module, "rb") as f:  # the simulator keeps the module's memory file open
                image = f.read()
            with tempfile.NamedTemporaryFile(suffix=".so") as tmp:
                tmp.write(image)
                tmp.flush()
                frames = source_frames(tool, tmp.name, want, SOURCE_NAME)
        except OSError:
            pass
        for pc, chain in frames.items():
            cache[(module, pc)] = first_line(chain)
    for s in want:
        cache.setdefault((module, s), 0)
    return {s: cache.get((module, s), 0) for s in sites}


def _t(v: Any) -> tuple[int, int, int]:
    return (int(v[0]), int(v[1]), int(v[2]))


def run_raw_checks(kernel: Any, check: CheckSpec, acc: Any, global_size: tuple[int, ...],
                   local_size: tuple[int, ...] | None, args: tuple[Any, ...]) -> list[Finding]:
    """Run raw CUDA ``kernel``'s trace build on device copies of ``args``; its findings."""
    from ...runtime.raw_kernel import RawKernel, _parameter_names

    if not acc.info.get("simulated"):
        raise DotComputeError(f"check= on raw CUDA kernel {kernel.name!r} runs on the CUDA simulator "
                              "(DOTCOMPUTE_CUDA_SIM=1); on a GPU, NVIDIA's compute-sanitizer checks CUDA kernels")
    if not clang_available():
        raise DotComputeError(f"check= on raw CUDA kernel {kernel.name!r} needs clang++ (the simulator's trace "
                              "build uses clang's -fsanitize-coverage load/store tracing, which GCC lacks): "
                              "install the Debian/Ubuntu package clang (apt-get install clang)")
    if kernel.cooperative:
        raise DotComputeError(f"check= on raw CUDA kernel {kernel.name!r}: cooperative launches (all blocks "
                              "resident, grid.sync()) are not covered by the simulator's checks")
    tk = _trace_kernel(kernel)
    try:
        control = tk.globals.get("dcsim_check_control", dtype=np.uint32, accelerator=acc)
    except CompilationError as e:
        kernel.compile(acc)  # the kernel's own compile errors as an unchecked launch gives them, if any
        raise DotComputeError(f"check= on raw CUDA kernel {kernel.name!r}: its trace build failed: {e}") from e
    with _epoch_lock:
        epoch = next(_epochs) & 0xFFFFFFFF
    copies, where, extents = _copies(acc, args, "initcheck" in check.checks)
    failure: LaunchError | None = None
    with tk.__dict__.setdefault("_cuda_check_lock", threading.Lock()):  # one checked run of a module at a time
        tk.globals.get("dcsim_check_extents", dtype=np.uint64, accelerator=acc).copy_from(extents)
        control.copy_from(np.array([epoch, check.mask], np.uint32))
        try:
            RawKernel._dc_launch(tk, acc, global_size, local_size, tuple(copies), None)
            acc.synchronize()
        except LaunchError as e:
            failure = e
        raw = tk.globals.get("dcsim_check_report", dtype=np.uint8, accelerator=acc).numpy()
    head = raw[:_HEADER.itemsize].view(_HEADER)[0]
    if int(head["magic"]) != _MAGIC or int(head["epoch"]) != epoch:
        if failure is not None:
            raise failure
        raise DotComputeError(f"check= on raw CUDA kernel {kernel.name!r}: the trace build reported nothing")
    if int(head["record_bytes"]) != _RECORD.itemsize:
        raise DotComputeError(f"check= on raw CUDA kernel {kernel.name!r}: the simulator's finding records are "
                              f"{int(head['record_bytes'])} bytes, this package reads {_RECORD.itemsize}")
    n = int(head["nrecords"])
    recs = raw[_HEADER.itemsize:_HEADER.itemsize + n * _RECORD.itemsize].view(_RECORD)
    if int(head["shadow_full"]):
        log.warning("%s: racecheck/initcheck shadow memory reached its cap (8 Mi bytes tracked): accesses to "
                    "further bytes were not checked; check on smaller data", kernel.name)
    if int(head["dropped"]):
        log.warning("%s: %d more distinct findings were not recorded", kernel.name, int(head["dropped"]))
    names = _parameter_names(kernel.source(), kernel.name.split("<")[0].split("::")[-1])
    lines = _lines(tk, head["module"].decode(errors="replace"), {int(s) for r in recs for s in r["site"]})
    out = _decode(kernel, recs, lines, _t(head["block"]), len(global_size), where, names)
    if failure is not None and not out:
        raise failure
    if failure is not None and not any(f.kind in ("memcheck", "synccheck") for f in out):
        # memcheck stops the run at a bad access and a barrier problem ends it: any other failure is news
        log.warning("%s: the checked run failed after these findings: %s", kernel.name, failure)
    return out


def _decode(kernel: Any, recs: np.ndarray, lines: dict[int, int], block: tuple[int, int, int], dims: int,
            where: dict[int, tuple[int, np.dtype, int]], names: list[str]) -> list[Finding]:
    src = kernel.source().splitlines()

    def text(line: int) -> str:
        return f"\n    {src[line - 1].strip()}" if 0 < line <= len(src) and src[line - 1].strip() else ""

    def gid(t: tuple[int, int, int], g: tuple[int, int, int]) -> tuple[int, ...]:
        return tuple(g[d] * block[d] + t[d] for d in range(dims))

    def region(r: Any) -> tuple[str | None, str, int]:
        """(name, words, element size) of the record's memory."""
        space, name = int(r["space"]), r["name"].decode(errors="replace")
        if space == _SPACE_GLOBAL:
            arg = where.get(int(r["region"]))
            if arg is None:
                return None, "device memory outside every live allocation" if not r["region"] else \
                    f"the allocation at 0x{int(r['region']):x}", int(r["bytes"]) or 1
            i, dtype, _ = arg
            pname = names[i] if i < len(names) and names[i] else f"arg{i}"
            return pname, f"buffer '{pname}' (argument {i}, {int(r['region_bytes'])} bytes)", dtype.itemsize
        if space == _SPACE_STATIC:
            return name or None, f"__shared__ array '{name}' ({int(r['region_bytes'])} bytes)", int(r["bytes"]) or 1
        return "extern __shared__", f"dynamic shared memory ({int(r['region_bytes'])} bytes)", int(r["bytes"]) or 1

    merged: dict[tuple[Any, ...], int] = {}
    out: list[Finding] = []
    for r in recs:
        kind = _KIND.get(int(r["check"]), "memcheck")
        line, oline = lines.get(int(r["site"][1]), 0), lines.get(int(r["site"][0]), 0)
        t0, t1 = _t(r["thread"][0]), _t(r["thread"][1])
        g0, g1 = _t(r["group"][0]), _t(r["group"][1])
        count = int(r["count"])
        more = f" ({count} accesses)" if count > 1 else ""
        name, what, size = region(r)
        offset = int(r["offset"])
        element = offset // size if size else offset
        if kind == "memcheck":
            line = oline  # one party: [0]
            verb = "write" if int(r["stores"]) & 1 else "read"
            at = f" at byte offset {offset} (element {element})" if name is not None else ""
            msg = (f"{SOURCE_NAME}:{line}: out-of-bounds {verb} of {int(r['bytes'])} bytes of {what}{at} by thread "
                   f"{fmt(t0)} of block {fmt(g0)}{more}")
            f = Finding(kind, line, name, (element,), (gid(t0, g0),), msg + text(line), SOURCE_NAME, count=count,
                        groups=(g0[:dims],))
        elif kind == "initcheck":
            line = oline
            scope = ("before anything wrote it (acc.empty memory)" if int(r["space"]) == _SPACE_GLOBAL
                     else "before any thread of its block wrote it")
            msg = (f"{SOURCE_NAME}:{line}: thread {fmt(t0)} of block {fmt(g0)} read {what} at byte offset {offset} "
                   f"(element {element}) {scope}{more}")
            f = Finding(kind, line, name, (element,), (gid(t0, g0),), msg + text(line), SOURCE_NAME, count=count,
                        groups=(g0[:dims],))
        elif kind == "racecheck":
            hazard = "write-write" if int(r["hazard"]) == 1 else "read-write"
            first = "wrote" if int(r["stores"]) & 1 else "read"
            second = "wrote" if int(r["stores"]) & 2 else "read"
            apart = (f"from different blocks ({fmt(g0)} and {fmt(g1)}), which nothing orders within a launch"
                     if g0 != g1 else f"in block {fmt(g0)} with no __syncthreads (or __syncwarp) between them")
            msg = (f"{SOURCE_NAME}:{line}: {hazard} race on {what} at byte offset {offset} (element {element}): "
                   f"thread {fmt(t0)} {first} it at line {oline} and thread {fmt(t1)} {second} it at line {line}, "
                   f"{apart}{more}")
            f = Finding(kind, line, name, (element,), (gid(t0, g0), gid(t1, g1)), msg + text(line), SOURCE_NAME,
                        other_line=oline, hazard=hazard, count=count, groups=(g0[:dims], g1[:dims]))
        else:
            sk = int(r["sync_kind"])
            if sk in (_SYNC_DIVERGENCE, _SYNC_DEADLOCK):
                line, oline = int(r["line"][0]), int(r["line"][1])
                if sk == _SYNC_DIVERGENCE:
                    msg = (f"{SOURCE_NAME}:{line}: divergent __syncthreads in block {fmt(g0)}: thread {fmt(t0)} waits "
                           f"at the barrier of line {line} while thread {fmt(t1)} waits at the one of line {oline} "
                           "(a barrier in a branch not every thread of the block takes)")
                else:
                    msg = (f"{SOURCE_NAME}:{line}: thread {fmt(t0)} of block {fmt(g0)} waits at the __syncthreads of "
                           f"line {line} while other threads of its block wait at a warp-synchronous operation "
                           "whose lanes never all arrive (barrier divergence)")
                    oline = 0
            else:
                line = oline
                oline = 0
                why = "have exited" if sk == _SYNC_EXITED else "the block does not have"
                msg = (f"{SOURCE_NAME}:{line}: a warp collective of thread {fmt(t0)} in block {fmt(g0)} names lanes "
                       f"0x{int(r['lanes']):08x} in its mask 0x{int(r['mask']):08x} that {why} (first: thread "
                       f"{fmt(t1)}){more}")
            f = Finding(kind, line, None, None, (gid(t0, g0), gid(t1, g1)), msg + text(line), SOURCE_NAME,
                        other_line=oline or None, count=count, groups=(g0[:dims], g1[:dims]))
        key = (kind, f.hazard, f.buffer, f.line, f.other_line)
        if key in merged:  # several code addresses of one source line: one finding
            i = merged[key]
            prior = out[i]
            out[i] = with_count(prior, prior.count + count)
            continue
        merged[key] = len(out)
        out.append(f)
    return out


def _can_check(kernel: Any, acc: Any, raw: str) -> bool:
    # the checks need the simulator's trace build, which runs no cooperative launch: such a launch, or one on
    # a real GPU, goes on unchecked (said once)
    from ...runtime import accelerator as _accelerator

    if not hasattr(acc, "info"):
        acc = _accelerator(acc if acc is not None else "cuda")
    if acc.info.get("simulated") and not kernel.cooperative:
        return True
    if not _told_gpu:
        _told_gpu.append(True)
        log.warning("DOTCOMPUTE_CHECK: raw CUDA kernels are checked on the CUDA simulator only, and not "
                    "in cooperative launches; %s runs %r unchecked", acc.id, kernel.name)
    return False


_told_gpu: list[bool] = []

_launch = RawLaunch("cuda", run_raw_checks, _can_check)
#: ``dc.launch(raw_cuda_kernel, ..., check=check)``'s runner (False/"off": the plain launch)
checked_runner = _launch.checked_runner
#: the launch runner of a raw CUDA kernel under a check: the checked run, the report, the real launch
checked_raw_launch = _launch.checked_raw_launch
#: a raw CUDA kernel's launch: under ``DOTCOMPUTE_CHECK`` checked, else the plain one
env_launch = _launch.env_launch


__all__ = ["checked_runner", "checked_raw_launch", "env_launch", "run_raw_checks", "clang_available"]
