"""Launching a kernel-language kernel: specialisation → compiled kernel → launch plan → launch.

Per (accelerator, argument signature, debug) the work is done once and kept in a
:class:`LaunchEntry`; a launch then only looks the entry up and calls ``plan.launch``
(which validates and packs the arguments in C++). Debug launches and launches that must
stage numpy arrays through device buffers take the slower paths below.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import numpy as np

from .. import config
from ..errors import KernelIndexError, KernelTypeError, LaunchError
from ..runtime import fast_launch as _fast_launch
from . import launch_index
from .bounds import Prover
from .bounds import facts as bound_facts
from .compile_options import compile_options
from .types import BufferType

_INT64 = np.dtype(np.int64)
log = logging.getLogger("dotcompute.launch")


class LaunchEntry:
    """Everything a launch needs for one kernel specialisation on one accelerator."""

    __slots__ = ("spec", "emitted", "plan", "nparams", "written", "buffers", "uses_barrier", "gs_params",
                 "debug", "ndims", "names", "max_group", "caps", "cpu_inner", "hw_swap", "expand", "plain",
                 "bounds", "proved", "fast", "filename", "captures")

    def __init__(self, spec: Any, emitted: Any, plan: Any, written: tuple[int, ...], buffers: tuple[int, ...],
                 ndims: tuple[int, ...], names: tuple[str, ...], max_group: int) -> None:
        self.spec = spec
        self.emitted = emitted
        self.filename = spec.module.kernel.filename
        self.captures = bool(spec.captures)  # re-checked (spec.valid()) before a launch off the hot path
        self.plan = plan
        self.nparams = len(names)
        self.written = written
        self.buffers = buffers
        self.ndims = ndims
        self.names = names
        # whole work-groups only: barriers cannot be met by partial groups, shared arrays are per group
        self.uses_barrier = emitted.uses_barrier or bool(spec.module.kernel.shared)
        self.gs_params = emitted.global_size_params
        self.debug = emitted.debug
        self.max_group = max_group
        self.caps = shared_caps(spec.module.kernel)
        # CPU work-groups chosen by us are rows along the loop nest's inner (contiguous) dimension
        self.cpu_inner = emitted.contiguous_dim if emitted.backend == "cpu" else 0
        # GPU targets put that dimension on hardware dimension 0 (EmittedSource.hardware_sizes)
        self.hw_swap = emitted.contiguous_dim if emitted.backend in ("cuda", "opencl") else 0
        # vector/matrix/struct parameters: Python arguments -> the expanded ones (lang/aggargs.py)
        self.expand: Any = None
        self.plain = False  # set by prepare(): see there
        # unguarded global_id indexings whose range each launch checks against the buffers (lang/bounds.py)
        self.bounds: Any = ()
        # set by prepare() when the bounds proof is all that keeps the entry from being plain: its
        # Prover.holds, which the hot path asks (the same Buffers and global_size as the last proof)
        self.proved: Any = None
        # the native fast path (runtime/fast_launch.py), for an entry that is plain or needs only the
        # bounds proof, which the native side then makes from the same facts
        self.fast: Any = None


def signature_key(kernel: Any, args: tuple[Any, ...]) -> tuple | None:
    """The part of the launch-cache key that depends on the arguments (None: fully annotated)."""
    generic = kernel._generic
    if not generic:
        return None
    key = []
    for i in generic:
        if i >= len(args):
            return ("<count>", len(args))
        a = args[i]
        dt = getattr(a, "dtype", None)
        if dt is not None and hasattr(a, "shape"):
            key.append((type(a), dt, len(a.shape)))
        elif type(a) is int and a >= 9223372036854775808:
            key.append("uint64 int")  # a Python int past int64 gives the parameter uint64 (type_of_argument)
        else:
            key.append(type(a))
    return tuple(key)


_UNSET: Any = object()


def prepare(kernel: Any, acc: Any, args: tuple[Any, ...], debug: bool, index_key: Any = _UNSET) -> LaunchEntry:
    from ..runtime import ParamSpec, compile_source

    if index_key is _UNSET:
        index_key = None if debug else _index_key(kernel, acc, args)
        if index_key is not None:
            hit = _from_index(kernel, acc, args, index_key)
            if hit is not None:
                return hit
    types = kernel.types_from_args(args)
    spec = kernel.specialize(types, debug)
    emitted = spec.emit(acc.backend)
    k = spec.module.kernel
    params = k.params
    specs = []
    for p in emitted.params:
        if p.kind in ("buffer", "scalar"):
            specs.append(argument_spec(params, p))
        elif p.kind == "extent":
            if debug:
                specs.append(ParamSpec("scalar", p.name, _INT64))
        elif p.kind == "debug":
            specs.append(ParamSpec("buffer", "<debug report>", _INT64, ndim=1, written=True))
        elif p.kind == "global_size":
            specs.append(ParamSpec("scalar", p.name, _INT64))
        else:
            raise LaunchError(f"{kernel.name}: the emitter produced an unknown parameter kind {p.kind!r}")
    check_shared_memory(kernel.name, k, acc)
    options = compile_options(kernel, acc.backend)
    if "grid_barrier" in emitted.features:  # the CUDA source includes <cooperative_groups.h>
        from ..cuda import cuda_include_dirs

        options = " ".join([options, *(f"--include-path={d}" for d in cuda_include_dirs())]).strip()
    native_kernel = compile_source(acc, emitted.text, emitted.entry, options)
    # debug launches pass every expanded argument themselves (the report buffer has no extents)
    plan = native_kernel.plan(specs, raw=debug)
    if "grid_barrier" in emitted.features:
        plan = _CooperativePlan(plan)
    written = tuple(p.index for p in params if p.is_buffer and p.written)
    buffers = tuple(p.index for p in params if p.is_buffer)
    ndims = tuple(p.type.ndim if isinstance(p.type, BufferType) else 0 for p in params)
    max_group = int(acc.info.get("max_work_group_size", 256) or 256)
    if spec.module.kernel.uses_subgroups and acc.backend == "opencl":
        from .emit.subgroups import OPENCL_MAX_GROUP

        max_group = min(max_group, OPENCL_MAX_GROUP)  # the sub-group emulation's exchange slots
    entry = LaunchEntry(spec, emitted, plan, written, buffers, ndims, tuple(p.py_name for p in params), max_group)
    from .aggargs import expander

    decls = kernel.decls()
    entry.expand = expander(kernel.name, params, [(d.name, t) for d, t in zip(decls, types, strict=False)])
    if entry.expand is not None:
        entry.nparams = len(decls)
    # (debug mode checks every access itself and reports the first bad one after the launch)
    found = () if debug else bound_facts(k)
    entry.bounds = Prover(found) if found else ()
    # What only the Python launch path does: argument expansion, work-group sizes to choose, extra
    # size arguments, debug launches. An entry needing none of it is plain when it also has no captured
    # names to re-check and no unguarded indexing to prove in range: its launch is the native call with
    # the arguments as given.
    needs_python = bool(entry.expand is not None or entry.uses_barrier or entry.cpu_inner or entry.debug
                        or entry.gs_params or entry.hw_swap)
    entry.plain = not (needs_python or spec.captures or entry.bounds)
    if not (needs_python or spec.captures) and entry.bounds:
        # plain once proved: an unguarded x[i] kernel relaunched on the same Buffers (issue 24: the
        # slow path's checks cost ~1 us per launch, a third of it)
        entry.proved = entry.bounds.holds
    if entry.plain or entry.proved is not None:
        entry.fast = _fast_path(kernel, entry, args, found)
        if index_key is not None and all(getattr(t, "elem", None) is None for t in types):
            _to_index(index_key, kernel, entry, specs, types, found)
    elif spec.captures and not needs_python:
        # plain but for its captured names (the operations' kernels read their module's constants) and
        # perhaps an unguarded index, which the native side proves from the same facts: the fast path
        # after the re-check of the names the normal path makes (issue 24: 10.5 -> ~4 us a launch)
        fast = _fast_path(kernel, entry, args, found)
        if fast is not None:
            entry.fast = _captures_checked(spec.valid, fast)
    return entry


def _captures_checked(valid: Any, fast: Any) -> Any:
    """``fast`` for a kernel with captured names: False (the normal path, which lowers the kernel
    again) once one of them refers to another value, as every launch through the entry checks."""

    def launch(global_size: Any, args: tuple[Any, ...]) -> bool:
        return valid() and fast(global_size, args)

    return launch


# ----------------------------------------------------------------------------- the launch index

def argument_spec(params: list[Any], p: Any) -> Any:
    """The ParamSpec of an emitted buffer or scalar parameter ``p`` (plain and checked launches alike).

    A buffer takes the dtype, rank and written flag of the kernel parameter it expands (``params``, the
    kernel's); the other kinds (extents, report buffers, grid sizes) differ per launch and are mapped there.
    """
    from ..runtime import ParamSpec

    if p.kind == "buffer":
        src = params[[q.py_name for q in params].index(p.source)]
        assert isinstance(src.type, BufferType)
        return ParamSpec("buffer", src.py_name, src.type.dtype.np_dtype, ndim=src.type.ndim, written=src.written)
    if p.kind == "scalar":
        return ParamSpec("scalar", p.source or p.name, p.dtype.np_dtype)
    raise ValueError(f"argument_spec: parameter {p.name!r} is a {p.kind!r}, not a buffer or scalar")


def _index_key(kernel: Any, acc: Any, args: tuple[Any, ...]) -> str | None:
    if getattr(kernel, "check_spec", None) is not None:
        return None
    try:
        return launch_index.source_key(kernel, acc, args)
    except launch_index.Unindexable as e:
        log.debug("%s is not in the launch index: %s", kernel.name, e)
        return None


def _to_index(key: str, kernel: Any, entry: LaunchEntry, specs: list[Any], types: list[Any],
              found: tuple[Any, ...]) -> None:
    k = entry.spec.module.kernel
    launch_index.write_record(key, {
        "text": entry.emitted.text, "entry": entry.emitted.entry,
        "options": compile_options(kernel, entry.emitted.backend), "generic": list(kernel._generic),
        "specs": [[p.kind, p.name, p.dtype.str, p.ndim, bool(p.written)] for p in specs],
        "types": [[t.dtype.name, t.ndim] if isinstance(t, BufferType) else [t.name, 0] for t in types],
        "written": list(entry.written), "buffers": list(entry.buffers), "ndims": list(entry.ndims),
        "names": list(entry.names), "filename": k.filename, "subgroups": bool(k.uses_subgroups),
        "facts": [[f.arg, f.dim, f.gid, f.scale, f.offset, f.line, f.buffer, f.text] for f in found]})


class IndexedEntry(LaunchEntry):
    """A launch entry made from a launch-index record (lang/launch_index.py): the kernel was not
    parsed. ``spec`` and ``emitted`` (error messages, staging) are made on first use."""

    __slots__ = ("_kernel", "_types", "_backend")

    @property  # type: ignore[override]
    def spec(self) -> Any:
        try:
            return LaunchEntry.spec.__get__(self)  # type: ignore[attr-defined]
        except AttributeError:
            made = self._kernel.specialize(self._types, False)
            LaunchEntry.spec.__set__(self, made)  # type: ignore[attr-defined]
            return made

    @property  # type: ignore[override]
    def emitted(self) -> Any:
        try:
            return LaunchEntry.emitted.__get__(self)  # type: ignore[attr-defined]
        except AttributeError:
            made = self.spec.emit(self._backend)
            LaunchEntry.emitted.__set__(self, made)  # type: ignore[attr-defined]
            return made


def _from_index(kernel: Any, acc: Any, args: tuple[Any, ...], key: str) -> LaunchEntry | None:
    """The entry the record under ``key`` describes (its binary from the kernel cache), or None."""
    from ..runtime import ParamSpec, compile_source
    from .bounds import Fact
    from .types import scalar_type

    rec = launch_index.read_record(key)
    if rec is None:
        return None
    try:
        specs = [ParamSpec(kind, name, np.dtype(dt), ndim=nd, written=w) for kind, name, dt, nd, w in rec["specs"]]
        types = [BufferType(scalar_type(np.dtype(dt)), nd) if nd else scalar_type(np.dtype(dt))
                 for dt, nd in rec["types"]]
        found = tuple(Fact(*f) for f in rec["facts"])
        text, entry_name, options = rec["text"], rec["entry"], rec["options"]
        generic = tuple(int(i) for i in rec["generic"])
        names = tuple(rec["names"])
    except (KeyError, TypeError, ValueError) as e:  # a record of another layout: compile as usual
        log.debug("launch index record %s unusable: %s", key, e)
        return None
    plan = compile_source(acc, text, entry_name, options).plan(specs, raw=False)
    entry = IndexedEntry.__new__(IndexedEntry)
    entry._kernel, entry._types, entry._backend = kernel, types, acc.backend
    entry.plan, entry.names, entry.nparams = plan, names, len(names)
    entry.written, entry.buffers = tuple(rec["written"]), tuple(rec["buffers"])
    entry.ndims, entry.filename, entry.captures = tuple(rec["ndims"]), rec["filename"], False
    # only plain entries are filed (see prepare): none of the extras apply
    entry.uses_barrier, entry.gs_params, entry.debug, entry.cpu_inner, entry.hw_swap = False, (), False, 0, 0
    entry.expand, entry.caps = None, (1 << 30,) * 3
    max_group = int(acc.info.get("max_work_group_size", 256) or 256)
    if rec.get("subgroups") and acc.backend == "opencl":
        from .emit.subgroups import OPENCL_MAX_GROUP

        max_group = min(max_group, OPENCL_MAX_GROUP)
    entry.max_group = max_group
    entry.bounds = Prover(found) if found else ()
    entry.plain = not entry.bounds
    entry.proved = entry.bounds.holds if entry.bounds else None
    kernel._generic = generic  # what decls() would find (the source is the key's): the hot path's key
    entry.fast = _fast_path(kernel, entry, args, found)
    log.debug("launch plan for %s on %s from the launch index: %s", kernel.name, acc.id, entry_name)
    return entry


class _CooperativePlan:
    """The plan of a kernel that calls ``dc.grid_barrier()``: every launch is cooperative
    (``cuLaunchCooperativeKernel``: all blocks resident, or CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
    as the barrier needs; such an entry never takes the fast path (it is not plain: uses_barrier)."""

    __slots__ = ("plan",)

    def __init__(self, plan: Any) -> None:
        self.plan = plan

    def launch(self, global_size: Any, local_size: Any, args: Any, stream: Any) -> None:
        self.plan.launch(global_size, local_size, args, stream, 0, True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.plan, name)


def _fast_path(kernel: Any, entry: LaunchEntry, args: tuple[Any, ...], found: tuple[Any, ...]) -> Any:
    """The entry's native FastLaunch (runtime/fast_launch.py), or None for a kernel whose launches
    must go through Python (``check=`` given to @dc.kernel)."""
    if getattr(kernel, "check_spec", None) is not None:
        return None
    from ..runtime.buffer import Buffer

    # a parameter typed by its argument takes, on this entry, only arguments of that exact type
    # (the entry's signature_key); the native side checks a buffer's dtype and rank itself
    want: list[Any] = [None] * entry.nparams
    for i in kernel._generic:
        if i < len(args) and i not in entry.buffers:
            want[i] = type(args[i])
    facts = tuple((f.arg, f.dim, f.gid, f.scale, f.offset) for f in found)
    return entry.plan.fast(Buffer, tuple(want), facts)


def _file_fast(kernel: Any, acc: Any, entry: LaunchEntry) -> None:
    """After a launch through ``entry`` succeeded: its fast path becomes the kernel's on ``acc``,
    unless DOTCOMPUTE_DEBUG now asks for debug launches or a checked launch is running."""
    if CHECK_STATE.busy or _env_debug():
        return
    raw = _fast_launch.env_debug_raw()
    if raw is _last_env[0] or raw == _last_env[0]:  # (not changed since _env_debug read it)
        _fast_launch.file(kernel, acc, entry.fast, raw)


def launch_kernel(kernel: Any, acc: Any, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
                  args: tuple[Any, ...], stream: Any) -> None:
    if _CHECK_KEY in _CHECK_ENV and not CHECK_STATE.busy and CHECKED_LAUNCH is not None:  # DOTCOMPUTE_CHECK
        CHECKED_LAUNCH(kernel, None, acc, global_size, local_size, args, stream)
        return
    debug = kernel.debug
    if debug is None:  # DOTCOMPUTE_DEBUG: the unchanged text (the common case) is tested here, without a call
        raw = _ENV_DATA.get(_ENV_KEY) if _ENV_DATA is not None else os.environ.get("DOTCOMPUTE_DEBUG")
        debug = _last_env[1] if raw is _last_env[0] else _env_debug()
    index_key: Any = _UNSET
    if kernel._decls is None and not kernel._indexed:
        # a kernel's first launch in this process: from the launch index without parsing when its
        # record is there (lang/launch_index.py), else parsed as usual
        first = None
        if not debug:
            index_key = _index_key(kernel, acc, args)
            first = _from_index(kernel, acc, args, index_key) if index_key is not None else None
        if first is None:
            kernel.decls()
        else:
            kernel._indexed = True
            kernel._launches[(acc, signature_key(kernel, args) if kernel._generic else None, False)] = first
    key = (acc, signature_key(kernel, args) if kernel._generic else None, debug)
    entry = kernel._launches.get(key)
    if entry is not None and len(args) == entry.nparams and (
            entry.plain or (entry.proved is not None and entry.proved(global_size, args))):  # the hot path
        try:
            try:
                entry.plan.launch(global_size, local_size, args, stream)
            except _needs_staging():
                launch_staged(entry, acc, global_size, local_size, args, stream)
        except KernelTypeError as e:
            user_kernel_name(e, entry.emitted.entry, kernel.name)
            raise
        if entry.fast is not None and kernel._fast.get(acc) is not entry.fast:
            _file_fast(kernel, acc, entry)
        return
    if entry is None or (entry.captures and not entry.spec.valid()):
        entry = prepare(kernel, acc, args, debug, index_key if entry is None else _UNSET)
        kernel._launches[key] = entry
        # once per (kernel, accelerator, signature): the per-launch path itself never logs
        log.debug("launch plan for %s on %s: %s%s", kernel.name, acc.id, entry.emitted.entry,
                  " (debug)" if debug else "")
    if len(args) != entry.nparams:
        names = entry.names if entry.expand is None else [d.name for d in kernel.decls()]
        raise KernelTypeError(f"{kernel.name}() takes {entry.nparams} argument(s) ({', '.join(names)}), "
                              f"got {len(args)}")
    if entry.bounds:  # before anything runs: an unguarded index past a buffer's end (lang/bounds.py)
        entry.bounds.check(kernel.name, entry.filename, global_size, args)
    if entry.expand is not None:
        args = entry.expand(args)
    if entry.uses_barrier:
        local_size = barrier_local_size(kernel.name, global_size, local_size, entry.max_group, entry.caps)
    elif entry.cpu_inner and local_size is None and entry.cpu_inner < len(global_size):
        local_size = cpu_rows(global_size, entry.cpu_inner)
    try:
        if entry.debug:
            launch_debug(kernel, entry, acc, global_size, local_size, args, stream)
            return
        # the hot path: no helper calls (call_args builds the same tuple for a non-debug entry)
        full = args + entry.emitted.global_size_args(global_size) if entry.gs_params else args
        try:
            if entry.hw_swap:
                entry.plan.launch(*entry.emitted.hardware_sizes(global_size, local_size), full, stream)
            else:
                entry.plan.launch(global_size, local_size, full, stream)
        except _needs_staging():
            launch_staged(entry, acc, global_size, local_size, args, stream)
    except KernelTypeError as e:
        user_kernel_name(e, entry.emitted.entry, kernel.name)
        raise
    if entry.fast is not None and not debug:
        _file_fast(kernel, acc, entry)


def user_kernel_name(e: KernelTypeError, entry: str, name: str) -> None:
    """The native argument checks name the generated entry point (``saxpy_1a2b3c4d``); the user
    wrote ``saxpy``, which the first launch's checks (in Python) name too. Rewritten in place."""
    msg = getattr(e, "msg_only", None)
    if isinstance(msg, str) and entry != name and f"'{entry}'" in msg:
        e.msg_only = msg.replace(f"'{entry}'", f"'{name}'")
        e.args = (e.msg_only, *e.args[1:])


def cpu_rows(global_size: tuple[int, ...], inner: int) -> tuple[int, ...]:
    """Work-groups one row long along dimension ``inner``: each is a single long inner loop."""
    return tuple(min(g, 16384) if d == inner else 1 for d, g in enumerate(global_size))


_last_env: tuple[object, bool] = (None, False)
# os.environ.get costs microseconds (key encoding, a KeyError when unset); launches are benchmarked,
# so read the mapping's backing dict where CPython has one, and parse only when the text changes.
_ENV_DATA: dict | None = getattr(os.environ, "_data", None)
try:
    _ENV_KEY: object = os.environ.encodekey("DOTCOMPUTE_DEBUG")  # type: ignore[attr-defined]
except AttributeError:
    _ENV_DATA = None
    _ENV_KEY = "DOTCOMPUTE_DEBUG"


def _env_debug() -> bool:
    global _last_env
    raw = _ENV_DATA.get(_ENV_KEY) if _ENV_DATA is not None else os.environ.get("DOTCOMPUTE_DEBUG")
    if raw is not _last_env[0] and raw != _last_env[0]:
        from .. import config

        _last_env = (raw, config.debug())
    return _last_env[1]


# DOTCOMPUTE_CHECK: its presence is the one test a launch makes (lang/check reads the value and runs the
# checked launch, registered here at its import: this module sits below it)
_CHECK_ENV: Any = _ENV_DATA if _ENV_DATA is not None else os.environ
_CHECK_KEY: object = os.environ.encodekey("DOTCOMPUTE_CHECK") if _ENV_DATA is not None \
    else "DOTCOMPUTE_CHECK"  # type: ignore[attr-defined]
CHECKED_LAUNCH: Any = None


class _CheckState(threading.local):
    busy = False  # inside a checked launch: its real launch takes the normal path


CHECK_STATE = _CheckState()

_NEEDS_STAGING: Any = None


def _needs_staging() -> type[BaseException]:
    global _NEEDS_STAGING
    if _NEEDS_STAGING is None:
        from ..runtime import NeedsStaging

        _NEEDS_STAGING = NeedsStaging
    return _NEEDS_STAGING


def check_shared_memory(name: str, k: Any, acc: Any) -> None:
    """Refuses a kernel whose ``dc.shared`` arrays need more work-group memory than ``acc`` has
    (``acc.info["local_memory"]``). On the CPU the arrays live on the worker's stack, so an
    unchecked large one would overflow it and crash the process instead of raising."""
    if not k.shared:
        return
    limit = int(acc.info.get("local_memory") or 0)
    if limit <= 0:
        return
    total = 0
    for s in k.shared:
        nbytes = int(s.type.size) * int(s.dtype.itemsize)
        total += nbytes
        if total > limit:
            raise LaunchError(f"{name}: dc.shared array {s.name!r} ({nbytes} bytes) brings the kernel's work-group "
                              f"memory to {total} bytes, over the limit of {limit} bytes on {acc.id} "
                              f"(acc.info['local_memory'])")


def shared_caps(k: Any) -> tuple[int, ...]:
    """Upper bounds for a chosen local size: work-group arrays are usually sized by the group, so
    dimension d of the group is at most dimension d of every ``dc.shared`` array."""
    caps = [1 << 30, 1 << 30, 1 << 30]
    for s in k.shared:
        for d, n in enumerate(s.shape):
            caps[d] = min(caps[d], n)
    return tuple(caps)


def barrier_local_size(name: str, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
                       max_group: int, caps: tuple[int, ...] = (1 << 30,) * 3) -> tuple[int, ...]:
    """A kernel with barriers runs whole groups only: check or choose a dividing local size."""
    if local_size is not None:
        if len(local_size) != len(global_size):
            raise LaunchError(f"{name}: local_size {local_size} and global_size {global_size} have different "
                              "numbers of dimensions")
        for g, loc in zip(global_size, local_size, strict=False):
            if g % loc:
                raise LaunchError(f"{name} uses barrier() or dc.shared, so global_size {global_size} must be a "
                                  f"multiple of local_size {local_size} (a partial work-group cannot meet at a "
                                  "barrier)")
        items = 1
        for loc in local_size:
            items *= loc
        if items > max_group:
            raise LaunchError(f"{name}: local_size {local_size} has {items} work-items; this kernel runs at most "
                              f"{max_group} per work-group on this device")
        return local_size
    budget = max(1, min(max_group, 256))
    out = []
    for dim, g in enumerate(global_size):
        best = 1
        for d in range(min(g, budget, caps[dim]), 0, -1):
            if g % d == 0:
                best = d
                break
        out.append(best)
        budget = max(1, budget // best)
    chosen = tuple(out)
    if any(d & (d - 1) for d in chosen) and (name, global_size) not in _odd_groups_warned:
        # a tree over work-group memory usually halves the group size each step, which loses
        # elements when it is not a power of two: say what was chosen rather than be silently wrong
        _odd_groups_warned.add((name, global_size))
        config.warn_user(f"{name} uses barrier() or dc.shared and was launched without local_size: its "
                         f"work-groups have {chosen} items (the largest that divide global_size "
                         f"{global_size}); pass local_size= if the kernel assumes a power of two")
    return chosen


_odd_groups_warned: set[tuple[str, tuple[int, ...]]] = set()


def _stage(acc: Any, args: tuple[Any, ...], buffers: tuple[int, ...], entry: LaunchEntry | None = None,
           kernel: str = "") -> tuple[list[Any], list[int]]:
    staged = list(args)
    host = []
    for i in buffers:
        a = args[i]
        if isinstance(a, np.ndarray):
            if entry is not None and i in entry.written and not a.flags.writeable:
                # refuse before anything runs: the results could not be copied back
                raise KernelTypeError(f"{kernel}(): argument {entry.names[i]!r} is written by the kernel but the "
                                      "numpy array is read-only")
            staged[i] = acc.asarray(np.ascontiguousarray(a))
            host.append(i)
    return staged, host


def launch_staged(entry: LaunchEntry, acc: Any, global_size: tuple[int, ...], local_size: Any,
                  args: tuple[Any, ...], stream: Any, report: Any = None) -> None:
    """numpy arrays the device cannot take as they are (no unified memory, or not C-contiguous): copy
    them into buffers, launch, copy the written ones back into the originals (strided views included).

    Both the normal and the debug launch end up here after ``plan.launch`` raised ``NeedsStaging``;
    ``report`` is the debug report buffer (None for a normal launch)."""
    staged, host = _stage(acc, args, entry.buffers, entry, entry.spec.module.kernel.py_name)
    sizes = entry.emitted.hardware_sizes(global_size, local_size)
    entry.plan.launch(*sizes, call_args(entry, staged, global_size, report), stream)
    _copy_back(acc, entry, args, staged, host, stream)


def call_args(entry: LaunchEntry, args: Any, global_size: tuple[int, ...], report: Any = None) -> tuple[Any, ...]:
    """The arguments ``plan.launch`` takes: the kernel's own, then the global-size scalars; a debug
    (raw) plan also wants each buffer's extents after it and the report buffer."""
    extra = entry.emitted.global_size_args(global_size) if entry.gs_params else ()
    if not entry.debug:
        return tuple(args) + tuple(extra)
    expanded: list[Any] = []
    for i, a in enumerate(args):
        expanded.append(a)
        if entry.ndims[i]:
            shape = getattr(a, "shape", None)
            if shape is None or len(shape) != entry.ndims[i]:
                raise KernelTypeError(f"{entry.spec.module.kernel.py_name}(): parameter {entry.names[i]!r} "
                                      f"expects a {entry.ndims[i]}-d buffer")
            expanded.extend(np.int64(s) for s in shape)
    expanded.append(report)
    expanded.extend(extra)
    return tuple(expanded)


def _copy_back(acc: Any, entry: LaunchEntry, args: tuple[Any, ...], staged: list[Any], host: list[int],
               stream: Any) -> None:
    _sync(acc, stream)
    for i in host:
        if i in entry.written:
            out = args[i]
            out[...] = staged[i].numpy()
    _sync(acc, stream)


def _sync(acc: Any, stream: Any) -> None:
    if stream is not None and hasattr(stream, "synchronize"):
        stream.synchronize()
    else:
        acc.synchronize()


def launch_debug(kernel: Any, entry: LaunchEntry, acc: Any, global_size: tuple[int, ...], local_size: Any,
                 args: tuple[Any, ...], stream: Any) -> None:
    """Launch with the bounds-check report buffer, staging exactly as a normal launch does, then read
    the report."""
    unified = bool(getattr(acc, "unified_memory", False))
    report = np.zeros(4, dtype=np.int64) if unified else acc.zeros((4,), np.int64)
    try:
        sizes = entry.emitted.hardware_sizes(global_size, local_size)
        entry.plan.launch(*sizes, call_args(entry, args, global_size, report), stream)
    except _needs_staging():
        launch_staged(entry, acc, global_size, local_size, args, stream, report)
    else:
        _sync(acc, stream)
    values = report if unified else report.numpy()
    if int(values[0]):
        raise index_error(kernel, entry, int(values[1]), int(values[2]), int(values[3]))


def index_error(kernel: Any, entry: LaunchEntry, debug_id: int, flat: int, line: int) -> KernelIndexError:
    import linecache

    module = entry.spec.module
    what = module.debug_names.get(debug_id, f"buffer #{debug_id}")
    filename = entry.spec.debug_files.get(debug_id, module.kernel.filename)
    text = linecache.getline(filename, line).strip()
    shown = f"\n    {text}" if text else ""
    err = KernelIndexError(f"{filename}:{line}: index out of bounds in kernel {kernel.name!r}: {what} "
                           f"accessed at flat index {flat}{shown}")
    # structured copies of what the message says, for tools and tests
    err.filename, err.lineno, err.buffer, err.index = filename, line, what, flat  # type: ignore[attr-defined]
    return err


__all__ = ["launch_kernel", "prepare", "LaunchEntry", "barrier_local_size", "signature_key", "index_error"]
