"""Run MSL on the CPU with the shim beside this file: the Python face of ``msl_runner.cpp``.

    from runner import run_msl
    run_msl(kernel.source("metal"), [a, b, out, 2.5], global_size=100, local_size=None)

``run_msl`` takes the kernel's arguments as a user passes them (numpy arrays, Python scalars)
and expands them by the parameter ABI of docs/design.md (an array is followed by its extents
as int64); the kernel's signature, parsed from the source, says which ``[[buffer(i)]]`` each
one binds to and the exact scalar types. Arrays are written in place.

How it runs: the same runner the Metal test double links (``msl_runner.cpp``), built once into a
small library here and called through ctypes, parses the kernels, generates the driver and
compiles everything into a shared object in a private cache folder (created 0700; its owner and
mode, and the object's, are checked before anything is loaded from it), cached by the hash of the
driver source, the compiler and every shim header's text. Threadgroups run one after another;
kernels with barriers or SIMD-group functions run each work-item as a fiber. A fault in the kernel
(out-of-bounds access, stack overflow) is a :class:`ShimError`, not a crash.
``[[threads_per_threadgroup]]`` is the size of the group the item is in, which is smaller for the
last group of a dimension that the local size does not divide (as ``dispatchThreads`` does).

Environment: ``DOTCOMPUTE_SHIM_CXX`` picks the compiler (default clang++, else c++);
``DOTCOMPUTE_SHIM_CACHE`` the folder for compiled objects (default ``metal-shim`` in the kernel
cache's folder: ``$DOTCOMPUTE_CACHE_DIR``, ``$XDG_CACHE_HOME/dotcompute`` or ``~/.cache/dotcompute``;
not size-bounded: delete it to start afresh).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import stat
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SHIM_DIR = Path(__file__).resolve().parent
THREADGROUP_MEMORY = 32768  # bytes per threadgroup, as the Metal test double's device reports

_MSL_TYPES = {
    "bool": np.bool_, "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
    "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "half": np.float16,
    "float": np.float32, "double": np.float64, "int8_t": np.int8, "uint8_t": np.uint8, "int16_t": np.int16,
    "uint16_t": np.uint16, "int32_t": np.int32, "uint32_t": np.uint32, "int64_t": np.int64,
    "uint64_t": np.uint64, "unsigned": np.uint32,
    # the kernel language's complex64 is a float2 (real in .x, imaginary in .y), numpy's layout
    "float2": np.complex64,
}
_QUALIFIERS = {"const", "constant", "device", "thread", "threadgroup", "volatile", "metal", "restrict",
               "__restrict", "__restrict__"}


class ShimError(RuntimeError):
    """The shim could not compile or run a kernel (the message says what and why)."""


class ShimCompileError(ShimError):
    def __init__(self, message: str, log: str, source: str) -> None:
        numbered = "\n".join(f"{n + 1:4d}  {line}" for n, line in enumerate(source.splitlines()))
        super().__init__(f"{message}\n{log}\n--- MSL source ---\n{numbered}")
        self.log = log
        self.source = source


class ShimIndexError(ShimError, IndexError):
    """A debug-mode bounds check in the kernel fired (the debug buffer's flag was set)."""


@dataclass
class Param:
    position: int          # position in the C++ parameter list
    kind: str              # "buffer", "scalar", "threadgroup" or "builtin"
    index: int = -1        # [[buffer(index)]] / [[threadgroup(index)]], explicit or in declaration order
    dtype: Any = None      # element dtype of a buffer, or the scalar's dtype
    builtin: str = ""      # the builtin attribute's name
    text: str = ""         # the declared type


@dataclass
class Signature:
    name: str
    params: list[Param]
    symbol: str = ""
    threaded: bool = False

    @property
    def bound(self) -> list[Param]:
        """The [[buffer(i)]] parameters ordered by i (the expanded parameter list)."""
        return sorted((p for p in self.params if p.kind in ("buffer", "scalar")), key=lambda p: p.index)


def _dtype_of(type_text: str) -> Any:
    words = [w for w in re.findall(r"[A-Za-z_]\w*", type_text) if w not in _QUALIFIERS]
    key = " ".join(words)
    if key == "unsigned int":
        key = "uint"
    if key == "unsigned long":
        key = "ulong"
    if key not in _MSL_TYPES:
        return None  # a struct or vector the caller passes as bytes
    return np.dtype(_MSL_TYPES[key])


class _Launch(ctypes.Structure):
    """msl_launch.h's DcMslLaunch."""

    _fields_ = [("args", ctypes.POINTER(ctypes.c_void_p)), ("grid", ctypes.c_ulonglong * 3),
                ("group", ctypes.c_ulonglong * 3), ("tg_len", ctypes.c_ulonglong * 16),
                ("tg_limit", ctypes.c_ulonglong), ("threaded", ctypes.c_int), ("host", ctypes.c_void_p),
                ("err", ctypes.c_char_p), ("errlen", ctypes.c_int), ("check", ctypes.c_void_p)]


def _compiler() -> str:
    cxx = os.environ.get("DOTCOMPUTE_SHIM_CXX") or shutil.which("clang++") or shutil.which("c++") or \
        shutil.which("g++")
    if not cxx:
        raise ShimError("metal shim: no C++ compiler (set DOTCOMPUTE_SHIM_CXX, or install clang++ or g++)")
    return cxx


def cache_dir() -> Path:
    """The private folder compiled objects live in (the same rule as msl_runner.cpp's)."""
    given = os.environ.get("DOTCOMPUTE_SHIM_CACHE")
    if given:
        path = Path(given)
    elif os.environ.get("DOTCOMPUTE_CACHE_DIR", "").startswith("/"):
        path = Path(os.environ["DOTCOMPUTE_CACHE_DIR"]) / "metal-shim"
    elif os.environ.get("XDG_CACHE_HOME", "").startswith("/"):
        path = Path(os.environ["XDG_CACHE_HOME"]) / "dotcompute" / "metal-shim"
    else:
        path = Path.home() / ".cache" / "dotcompute" / "metal-shim"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ShimError(f"metal shim: {path} is not a private folder of this user (a directory owned by uid "
                        f"{os.getuid()}, mode 0700): refusing to load code from it")
    return path


def _check_private_file(path: Path) -> None:
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise ShimError(f"metal shim: {path} is not this user's private file: refusing to load it")


_lock = threading.Lock()
_runner: ctypes.CDLL | None = None
_loaded: dict[str, ctypes.CDLL] = {}


def _runner_library() -> ctypes.CDLL:
    """msl_runner.cpp built into a library (once per content; cached in the private folder)."""
    global _runner
    if _runner is not None:
        return _runner
    cxx = _compiler()
    sources = ["msl_runner.cpp", "msl_runner.h", "msl_launch.h", "msl_glue.inc"]
    digest = hashlib.sha256(cxx.encode())
    for name in sources:
        digest.update(b"\0" + (SHIM_DIR / name).read_bytes())
    cache = cache_dir()
    so = cache / f"runner-{digest.hexdigest()[:32]}.so"
    if not so.exists():
        tmp = cache / f"{so.name}.{os.getpid()}.tmp"
        cmd = [cxx, "-std=c++17", "-O1", "-fPIC", "-shared", "-pthread", f"-I{SHIM_DIR}",
               f'-DDC_MTL_SHIM_DIR="{SHIM_DIR}"', str(SHIM_DIR / "msl_runner.cpp"), "-o", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise ShimError(f"metal shim: cannot build msl_runner.cpp:\n{proc.stderr}")
        os.replace(tmp, so)  # atomic: a concurrent run never loads half a file
    _check_private_file(so)
    lib = ctypes.CDLL(str(so))
    lib.dc_msl_compile.restype = ctypes.c_void_p
    lib.dc_msl_compile.argtypes = [ctypes.c_char_p]
    lib.dc_msl_free.argtypes = [ctypes.c_void_p]
    lib.dc_msl_host.restype = ctypes.c_void_p
    _runner = lib
    return lib


def _parse_description(lines: list[str]) -> list[Signature]:
    sigs: list[Signature] = []
    for line in lines:
        fields = line.split("\t")
        if fields[0] == "kernel":
            sigs.append(Signature(fields[1], [], symbol=fields[2], threaded=fields[3] == "1"))
        elif fields[0] == "param":
            pos, kind, index, builtin, text = int(fields[1]), fields[2], int(fields[3]), fields[4], fields[5]
            if kind == "buffer":
                is_ptr = "*" in text
                dtype = _dtype_of(text.replace("*", " ").replace("&", " "))
                sigs[-1].params.append(Param(pos, "buffer" if is_ptr else "scalar", index, dtype, text=text))
            elif kind == "threadgroup":
                sigs[-1].params.append(Param(pos, "threadgroup", index, text=text))
            else:
                sigs[-1].params.append(Param(pos, "builtin", builtin=builtin, text=text))
    return sigs


def compile_msl(msl: str, name: str | None = None) -> tuple[Signature, ctypes.CDLL]:
    """Compile ``msl`` (cached by content) and return its kernel's signature and library."""
    with _lock:
        runner = _runner_library()
        raw = runner.dc_msl_compile(msl.encode())
        try:
            text = ctypes.string_at(raw).decode(errors="replace")
        finally:
            runner.dc_msl_free(raw)
        status, _, rest = text.partition("\n")
        if status != "OK":
            raise ShimCompileError("metal shim: the host compiler rejected the MSL", rest, msl)
        so, *lines = rest.rstrip("\n").split("\n")
        sigs = _parse_description(lines)
        chosen = [s for s in sigs if name is None or s.name == name]
        if not chosen:
            raise ShimError(f"metal shim: no kernel {name!r} in the source (kernels: {[s.name for s in sigs]})")
        if so not in _loaded:
            _check_private_file(Path(so))
            _loaded[so] = ctypes.CDLL(so)
        return chosen[0], _loaded[so]


def expand(args: list[Any]) -> list[Any]:
    """Arrays followed by their extents, scalars as they are (docs/design.md, parameter ABI)."""
    out: list[Any] = []
    for a in args:
        out.append(a)
        if isinstance(a, np.ndarray):
            out.extend(int(s) for s in a.shape)
    return out


def _size3(size: int | tuple[int, ...] | list[int]) -> tuple[int, int, int]:
    t = (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if not 1 <= len(t) <= 3 or any(s < 1 for s in t):
        raise ShimError(f"metal shim: bad size {size!r}")
    return (*t, *(1,) * (3 - len(t)))  # type: ignore[return-value]


def _default_local(g: tuple[int, int, int], threaded: bool) -> tuple[int, int, int]:
    if not threaded:
        return (min(g[0], 64), 1, 1)
    best = max(d for d in range(1, 65) if g[0] % d == 0)
    return (best, 1, 1)


def run_msl(msl: str, args: list[Any], global_size: int | tuple[int, ...],
            local_size: int | tuple[int, ...] | None = None, name: str | None = None,
            threadgroup_memory: dict[int, int] | None = None, extents: bool = True) -> None:
    """Run the MSL kernel on ``args`` (arrays are updated in place). Raises :class:`ShimError`.

    ``threadgroup_memory`` gives the bytes of each ``[[threadgroup(i)]]`` parameter, as
    ``setThreadgroupMemoryLength:atIndex:`` does. ``extents=False`` binds the arguments as they are
    (hand-written MSL), without the extents the emitted kernels take after each array."""
    sig, lib = compile_msl(msl, name)
    expanded = expand(args) if extents else list(args)
    bound = sig.bound
    debug = None
    if len(bound) == len(expanded) + 1 and bound[-1].kind == "buffer" and bound[-1].dtype == np.int64:
        debug = np.zeros(4, np.int64)  # the debug-mode report buffer [flag, buffer, index, line]
        expanded.append(debug)
    if len(bound) != len(expanded):
        raise ShimError(f"metal shim: kernel {sig.name} takes {len(bound)} [[buffer]] parameters, "
                        f"the expanded arguments are {len(expanded)}")
    keep: list[Any] = []
    ptrs = (ctypes.c_void_p * max(1, len(bound)))()
    for p, a in zip(bound, expanded, strict=True):
        if p.index != len(keep):
            raise ShimError(f"metal shim: [[buffer({p.index})]] out of order in {sig.name}")
        if p.kind == "buffer":
            if not isinstance(a, np.ndarray):
                raise ShimError(f"metal shim: [[buffer({p.index})]] of {sig.name} is a pointer, got {a!r}")
            if (p.dtype is not None and a.dtype != p.dtype) or not a.flags.c_contiguous:
                raise ShimError(f"metal shim: [[buffer({p.index})]] of {sig.name} is {p.dtype}*, got a "
                                f"{a.dtype} array (contiguous={a.flags.c_contiguous})")
            keep.append(a)
            ptrs[p.index] = a.ctypes.data
        else:
            if isinstance(a, np.ndarray) and p.dtype is not None:
                raise ShimError(f"metal shim: [[buffer({p.index})]] of {sig.name} is a scalar, got an array")
            v = np.ascontiguousarray(a) if p.dtype is None else np.array(a, dtype=p.dtype)
            keep.append(v)
            ptrs[p.index] = v.ctypes.data
    g = _size3(global_size)
    lsz = _default_local(g, sig.threaded) if local_size is None else _size3(local_size)
    tg = dict(threadgroup_memory or {})
    if any(not 0 <= i < 16 or n <= 0 for i, n in tg.items()):
        raise ShimError(f"metal shim: threadgroup_memory maps indices 0..15 to positive byte counts, got {tg!r}")
    err = ctypes.create_string_buffer(512)
    launch = _Launch(args=ptrs, grid=(ctypes.c_ulonglong * 3)(*g), group=(ctypes.c_ulonglong * 3)(*lsz),
                     tg_len=(ctypes.c_ulonglong * 16)(*[(tg.get(i, 0) + 15) // 16 * 16 for i in range(16)]),
                     tg_limit=THREADGROUP_MEMORY, threaded=int(sig.threaded), host=_runner_library().dc_msl_host(),
                     err=ctypes.cast(err, ctypes.c_char_p), errlen=len(err))
    fn = getattr(lib, sig.symbol)
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(_Launch)]
    if fn(ctypes.byref(launch)) != 0:
        raise ShimError(f"metal shim: running {sig.name}: {err.value.decode()}")
    if debug is not None and debug[0] != 0:
        raise ShimIndexError(f"metal shim: bounds check failed in {sig.name}: buffer parameter {debug[1]}, "
                             f"flat index {debug[2]}, python line {debug[3]}")


__all__ = ["SHIM_DIR", "ShimError", "ShimCompileError", "ShimIndexError", "Param", "Signature", "cache_dir",
           "compile_msl", "expand", "run_msl"]
