"""Compile generated MSL as C++ with the fake ``metal_stdlib`` beside this file and run it on the CPU.

    from runner import run_msl
    run_msl(kernel.source("metal"), [a, b, out, 2.5], global_size=100, local_size=None)

``run_msl`` takes the kernel's arguments as a user passes them (numpy arrays, Python scalars)
and expands them by the parameter ABI of docs/design.md (an array is followed by its extents
as int64); the kernel's signature, parsed from the source, says which ``[[buffer(i)]]`` each
one binds to and the exact scalar types. Arrays are written in place.

How it runs: a generated C++ driver is compiled together with the MSL into a shared object
(cached on disk by content hash) and called through ctypes. Work-groups run one after the
other. A kernel that calls ``threadgroup_barrier`` gets one OS thread per work-item of the
group and a real barrier (so keep its groups small); other kernels run their items in a
plain loop. ``[[threads_per_threadgroup]]`` is the size of the group the item is in, which is
smaller for the last group of a dimension that the local size does not divide (non-uniform
dispatch, as ``dispatchThreads`` does).

Environment: ``DOTCOMPUTE_SHIM_CXX`` picks the compiler (default clang++, else g++);
``DOTCOMPUTE_SHIM_CACHE`` the folder for compiled objects.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SHIM_DIR = Path(__file__).resolve().parent

BUILTINS = {
    "thread_position_in_grid": "gid",
    "thread_position_in_threadgroup": "lid",
    "threadgroup_position_in_grid": "grp",
    "threads_per_grid": "gsz",
    "threads_per_threadgroup": "lsz",
    # SIMD-groups of 32 by linear thread index (metal_stdlib's simd_* functions)
    "thread_index_in_simdgroup": "sgl",
    "threads_per_simdgroup": "sgw",
    "simdgroup_index_in_threadgroup": "sgi",
}

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
        super().__init__(f"{message}\n{log}\n--- driver source ---\n{numbered}")
        self.log = log
        self.source = source


class ShimIndexError(ShimError, IndexError):
    """A debug-mode bounds check in the kernel fired (the debug buffer's flag was set)."""


@dataclass
class Param:
    position: int          # position in the C++ parameter list
    kind: str              # "buffer", "scalar" or "builtin"
    index: int = -1        # [[buffer(index)]]
    dtype: Any = None      # element dtype of a buffer, or the scalar's dtype
    builtin: str = ""      # gid, lid, grp, gsz, lsz
    text: str = ""


@dataclass
class Signature:
    name: str
    params: list[Param]

    @property
    def bound(self) -> list[Param]:
        """The [[buffer(i)]] parameters ordered by i (the expanded parameter list)."""
        return sorted((p for p in self.params if p.kind != "builtin"), key=lambda p: p.index)


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def _dtype_of(type_text: str) -> Any:
    words = [w for w in re.findall(r"[A-Za-z_]\w*", type_text) if w not in _QUALIFIERS]
    key = " ".join(words)
    if key == "unsigned int":
        key = "uint"
    if key == "unsigned long":
        key = "ulong"
    if key not in _MSL_TYPES:
        raise ShimError(f"metal shim: unsupported MSL parameter type {type_text!r}")
    return np.dtype(_MSL_TYPES[key])


def parse_kernel(source: str, name: str | None = None) -> Signature:
    """The first ``kernel void NAME(...)`` in ``source`` (or the one called ``name``)."""
    pattern = r"\bkernel\s+void\s+(\w+)\s*\("
    for m in re.finditer(pattern, source):
        if name is not None and m.group(1) != name:
            continue
        depth, j = 1, m.end()
        while depth and j < len(source):
            depth += {"(": 1, ")": -1}.get(source[j], 0)
            j += 1
        plist = source[m.end(): j - 1]
        params = []
        for pos, text in enumerate(_split_top_level(plist)):
            attr = re.search(r"\[\[\s*(\w+)\s*(?:\(\s*(\d+)\s*\))?\s*\]\]", text)
            if attr is None:
                raise ShimError(f"metal shim: kernel parameter without an attribute: {text!r}")
            decl = text[: attr.start()] + text[attr.end():]
            decl = re.sub(r"\b\w+\s*$", "", decl.strip())  # drop the parameter's name
            kind = attr.group(1)
            if kind == "buffer":
                is_ptr = "*" in decl
                params.append(Param(pos, "buffer" if is_ptr else "scalar", int(attr.group(2)),
                                    _dtype_of(decl.replace("*", " ").replace("&", " ")), text=text))
            elif kind in BUILTINS:
                params.append(Param(pos, "builtin", builtin=BUILTINS[kind], text=text))
            else:
                raise ShimError(f"metal shim: unsupported kernel parameter attribute [[{kind}]] in {text!r}")
        return Signature(m.group(1), params)
    raise ShimError("metal shim: no `kernel void NAME(...)` function in the source")


_GLUE = r"""
// ---- driver generated by tests/support/metal_shim/runner.py ----

namespace dc_shim {
template <int I, class... P> struct nth;
template <class H, class... P> struct nth<0, H, P...> { typedef H type; };
template <int I, class H, class... P> struct nth<I, H, P...> { typedef typename nth<I - 1, P...>::type type; };
template <class F> struct params;
template <class R, class... P> struct params<R (*)(P...)> {
  template <int I> using at = typename nth<I, P...>::type;
};
template <class P> struct conv { static P get(void* p) { return *static_cast<P*>(p); } };
template <class T> struct conv<T*> { static T* get(void* p) { return static_cast<T*>(p); } };
template <class T> struct conv<T&> { static T& get(void* p) { return *static_cast<T*>(p); } };
template <class P> struct bconv { static P get(metal::uint3 v) { return P(v); } };
template <> struct bconv<uint> { static uint get(metal::uint3 v) { return v.x; } };
template <> struct bconv<ushort> { static ushort get(metal::uint3 v) { return ushort(v.x); } };

struct Item { void** args; metal::uint3 gid, lid, grp, gsz, lsz, sgl, sgw, sgi; unsigned linear; };

static void call(const Item& it) {
  typedef decltype(&@NAME@) F;
  (void)sizeof(F);
  @NAME@(@CALL_ARGS@);
}

struct Group {
  pthread_mutex_t m;
  pthread_cond_t c;
  unsigned size, arrived, exited;
  unsigned long generation;
  int broken;
  unsigned long long* slots;  // the SIMD-group functions' exchange, one slot per item
};

static thread_local Group* current = nullptr;
static thread_local const Item* current_item = nullptr;

static void item_done(Group* g) {
  pthread_mutex_lock(&g->m);
  g->exited++;
  if (g->arrived > 0 && g->arrived + g->exited == g->size) {
    g->broken = 1;  // the waiting items would wait for ever: some items left without the barrier
    pthread_cond_broadcast(&g->c);
  }
  pthread_mutex_unlock(&g->m);
}

struct Work { Item item; Group* group; };

static void* thread_main(void* p) {
  Work* w = static_cast<Work*>(p);
  current = w->group;
  current_item = &w->item;
  call(w->item);
  item_done(w->group);
  return nullptr;
}
}  // namespace dc_shim

extern "C" void dc_shim_barrier(void) {
  dc_shim::Group* g = dc_shim::current;
  if (!g) return;
  pthread_mutex_lock(&g->m);
  if (!g->broken) {
    unsigned long gen = g->generation;
    if (++g->arrived == g->size) {
      g->arrived = 0;
      g->generation++;
      pthread_cond_broadcast(&g->c);
    } else if (g->arrived + g->exited == g->size) {
      g->broken = 1;
      pthread_cond_broadcast(&g->c);
    } else {
      while (g->generation == gen && !g->broken) pthread_cond_wait(&g->c, &g->m);
    }
  }
  pthread_mutex_unlock(&g->m);
}

extern "C" unsigned dc_shim_linear_id(void) { return dc_shim::current_item ? dc_shim::current_item->linear : 0u; }
extern "C" unsigned dc_shim_group_items(void) { return dc_shim::current ? dc_shim::current->size : 1u; }
extern "C" unsigned long long* dc_shim_slots(void) {
  static thread_local unsigned long long single[1];  // an unthreaded run: a group of one
  return dc_shim::current ? dc_shim::current->slots : single;
}

extern "C" int dc_shim_run(void** args, const unsigned long long* gsz, const unsigned long long* lsz,
                           int threaded, char* err, int errlen) {
  using namespace dc_shim;
  unsigned long long ng[3];
  for (int d = 0; d < 3; ++d) ng[d] = (gsz[d] + lsz[d] - 1) / lsz[d];
  metal::uint3 grid = metal::uint3((uint)gsz[0], (uint)gsz[1], (uint)gsz[2]);
  for (unsigned long long gz = 0; gz < ng[2]; ++gz)
    for (unsigned long long gy = 0; gy < ng[1]; ++gy)
      for (unsigned long long gx = 0; gx < ng[0]; ++gx) {
        unsigned long long g[3] = {gx, gy, gz}, sz[3];
        for (int d = 0; d < 3; ++d) {
          unsigned long long rest = gsz[d] - g[d] * lsz[d];
          sz[d] = rest < lsz[d] ? rest : lsz[d];
        }
        unsigned count = unsigned(sz[0] * sz[1] * sz[2]);
        Work* work = new Work[count];
        unsigned n = 0;
        for (unsigned long long z = 0; z < sz[2]; ++z)
          for (unsigned long long y = 0; y < sz[1]; ++y)
            for (unsigned long long x = 0; x < sz[0]; ++x, ++n) {
              Item& it = work[n].item;
              it.args = args;
              it.lid = metal::uint3(uint(x), uint(y), uint(z));
              it.grp = metal::uint3(uint(gx), uint(gy), uint(gz));
              it.gid = metal::uint3(uint(gx * lsz[0] + x), uint(gy * lsz[1] + y), uint(gz * lsz[2] + z));
              it.gsz = grid;
              it.lsz = metal::uint3(uint(sz[0]), uint(sz[1]), uint(sz[2]));
              it.linear = n;  // x fastest: (z * sy + y) * sx + x
              it.sgl = metal::uint3(n % 32u, 0u, 0u);
              it.sgw = metal::uint3(32u, 0u, 0u);
              it.sgi = metal::uint3(n / 32u, 0u, 0u);
            }
        if (!threaded) {
          current = nullptr;
          for (unsigned i = 0; i < count; ++i) call(work[i].item);
          delete[] work;
          continue;
        }
        Group grp;
        pthread_mutex_init(&grp.m, nullptr);
        pthread_cond_init(&grp.c, nullptr);
        grp.size = count;
        grp.arrived = grp.exited = 0;
        grp.generation = 0;
        grp.broken = 0;
        grp.slots = new unsigned long long[count];
        pthread_t* threads = new pthread_t[count];
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 1 << 20);
        unsigned started = 0;
        int rc = 0;
        for (unsigned i = 0; i < count; ++i) {
          work[i].group = &grp;
          rc = pthread_create(&threads[i], &attr, thread_main, &work[i]);
          if (rc != 0) {
            // the items already started would wait at a barrier for the rest: release them
            pthread_mutex_lock(&grp.m);
            grp.broken = 1;
            pthread_cond_broadcast(&grp.c);
            pthread_mutex_unlock(&grp.m);
            break;
          }
          ++started;
        }
        for (unsigned i = 0; i < started; ++i) pthread_join(threads[i], nullptr);
        pthread_attr_destroy(&attr);
        pthread_mutex_destroy(&grp.m);
        pthread_cond_destroy(&grp.c);
        delete[] threads;
        delete[] work;
        delete[] grp.slots;
        if (rc != 0) {
          snprintf(err, errlen, "pthread_create failed (error %d) after %u of %u work-items", rc, started, count);
          return 1;
        }
        if (grp.broken) {
          snprintf(err, errlen,
                   "work-group (%llu, %llu, %llu): not every work-item reached threadgroup_barrier() "
                   "(a barrier in non-uniform control flow)", gx, gy, gz);
          return 2;
        }
      }
  return 0;
}
"""


_THREADGROUP_ARRAY = re.compile(r"\bthreadgroup\b(?=\s+[\w:<>]+\s+\w+\s*\[)")


def shared_arrays_static(msl: str) -> str:
    """``threadgroup T name[N];`` → ``static T name[N];``: one copy shared by the group's threads.

    Only array declarations: a macro cannot tell them from ``threadgroup T*`` parameters and
    casts, where the qualifier must simply vanish (the header defines it empty)."""
    return _THREADGROUP_ARRAY.sub("static", msl)


def driver_source(msl: str, sig: Signature) -> str:
    call_args = []
    for p in sig.params:
        at = f"params<F>::at<{p.position}>"
        if p.kind == "builtin":
            call_args.append(f"bconv<{at}>::get(it.{p.builtin})")
        else:
            call_args.append(f"conv<{at}>::get(it.args[{p.index}])")
    glue = _GLUE.replace("@NAME@", "::" + sig.name).replace("@CALL_ARGS@", ", ".join(call_args))
    # MSL has no double: refuse it in the kernel as a Metal compiler would
    prologue = "#include <pthread.h>\n#include <stdio.h>\n#include <metal_stdlib>\n#pragma GCC poison double\n"
    body = shared_arrays_static(msl)
    return f"{prologue}#line 1 \"kernel.metal\"\n{body}\n#line 1 \"driver\"\n{glue}"


def _compiler() -> list[str]:
    cxx = os.environ.get("DOTCOMPUTE_SHIM_CXX") or shutil.which("clang++") or shutil.which("g++")
    if not cxx:
        raise ShimError("metal shim: no C++ compiler (set DOTCOMPUTE_SHIM_CXX, or install clang++ or g++)")
    quiet = ["-Wno-unknown-attributes", "-Wno-ignored-attributes"] if "clang" in Path(cxx).name else \
        ["-Wno-attributes"]
    return [cxx, "-std=c++17", "-O0", "-ffp-contract=off", "-fPIC", "-shared", "-pthread", "-Wall",
            "-Wno-unused-variable", "-Wno-unused-parameter", "-Wno-unused-but-set-variable", *quiet,
            f"-I{SHIM_DIR}"]


def _cache_dir() -> Path:
    d = os.environ.get("DOTCOMPUTE_SHIM_CACHE")
    path = Path(d) if d else Path(tempfile.gettempdir()) / f"dotcompute-metal-shim-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


_loaded: dict[str, ctypes.CDLL] = {}


def compile_msl(msl: str, name: str | None = None) -> tuple[Signature, ctypes.CDLL]:
    """Compile ``msl`` (cached by content) and return its kernel's signature and library."""
    sig = parse_kernel(msl, name)
    src = driver_source(msl, sig)
    cmd = _compiler()
    header = (SHIM_DIR / "metal_stdlib").read_bytes()
    key = hashlib.sha256(src.encode() + b"\0" + " ".join(cmd).encode() + b"\0" + header).hexdigest()[:32]
    if key in _loaded:
        return sig, _loaded[key]
    cache = _cache_dir()
    so = cache / f"{key}.so"
    if not so.exists():
        cpp = cache / f"{key}.{os.getpid()}.cpp"
        tmp = cache / f"{key}.{os.getpid()}.so.tmp"
        cpp.write_text(src)
        proc = subprocess.run([*cmd, "-x", "c++", str(cpp), "-o", str(tmp)], capture_output=True, text=True)
        cpp.unlink(missing_ok=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise ShimCompileError(f"metal shim: {cmd[0]} rejected kernel {sig.name!r}", proc.stderr, src)
        os.replace(tmp, so)  # atomic: concurrent runs never load a half-written object
    lib = ctypes.CDLL(str(so))
    lib.dc_shim_run.restype = ctypes.c_int
    lib.dc_shim_run.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulonglong),
                                ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    _loaded[key] = lib
    return sig, lib


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
            local_size: int | tuple[int, ...] | None = None, name: str | None = None) -> None:
    """Run the MSL kernel on ``args`` (arrays are updated in place). Raises :class:`ShimError`."""
    sig, lib = compile_msl(msl, name)
    expanded = expand(args)
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
            if a.dtype != p.dtype or not a.flags.c_contiguous:
                raise ShimError(f"metal shim: [[buffer({p.index})]] of {sig.name} is {p.dtype}*, got a "
                                f"{a.dtype} array (contiguous={a.flags.c_contiguous})")
            keep.append(a)
            ptrs[p.index] = a.ctypes.data
        else:
            if isinstance(a, np.ndarray):
                raise ShimError(f"metal shim: [[buffer({p.index})]] of {sig.name} is a scalar, got an array")
            v = np.array(a, dtype=p.dtype)
            keep.append(v)
            ptrs[p.index] = v.ctypes.data
    threaded = "threadgroup_barrier" in msl or "simdgroup_barrier" in msl or "simd_" in msl
    g = _size3(global_size)
    lsz = _default_local(g, threaded) if local_size is None else _size3(local_size)
    err = ctypes.create_string_buffer(512)
    rc = lib.dc_shim_run(ptrs, (ctypes.c_ulonglong * 3)(*g), (ctypes.c_ulonglong * 3)(*lsz), int(threaded), err,
                         len(err))
    if rc != 0:
        raise ShimError(f"metal shim: running {sig.name}: {err.value.decode()}")
    if debug is not None and debug[0] != 0:
        raise ShimIndexError(f"metal shim: bounds check failed in {sig.name}: buffer parameter {debug[1]}, "
                             f"flat index {debug[2]}, python line {debug[3]}")


__all__ = ["SHIM_DIR", "ShimError", "ShimCompileError", "ShimIndexError", "Param", "Signature", "parse_kernel",
           "driver_source", "compile_msl", "expand", "run_msl"]
