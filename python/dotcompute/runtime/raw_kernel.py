"""``dc.RawKernel``: hand-written backend source launched like any kernel."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..cuda import cuda_include_dirs
from ..errors import CompilationError, DotComputeError, KernelTypeError, LaunchError
from .accelerator import Accelerator
from .buffer import Buffer
from .compile import compile_source
from .cuda_c_headers import C_LIBRARY_HEADERS, LIBRARY_HEADER_HINTS
from .fast_launch import NO_FAST
from .kernel_globals import KernelGlobals
from .msl_params import check_threadgroup_memory
from .params import ParamSpec
from .registry import KNOWN_BACKENDS
from .registry import accelerator as _accelerator
from .staging import NeedsStaging

_PY_SCALARS = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64)}
# numpy scalars whose own dtype differs from what the untyped path would pass (int64, float64, bool).
# A set of exact types: one hash lookup per argument on the launch path.
_NUMPY_SCALARS_NEEDING_TYPES = frozenset((np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.uint64,
                                          np.float16, np.float32, np.longdouble))


def _arg_spec(i: int, arg: Any) -> tuple[str, np.dtype, int]:
    """(kind, dtype, ndim) of one raw argument: buffers by their element type, scalars as CuPy types them."""
    if isinstance(arg, (Buffer, np.ndarray)):
        return ("buffer", arg.dtype, arg.ndim)
    kind = _PY_SCALARS.get(type(arg))
    if kind is not None:
        return ("scalar", kind, 0)
    if isinstance(arg, np.generic):
        return ("scalar", arg.dtype, 0)
    for base, dtype in _PY_SCALARS.items():  # subclasses of bool/int/float (IntEnum, np.float64)
        if isinstance(arg, base):
            return ("scalar", dtype, 0)
    raise TypeError(f"RawKernel argument {i}: expected a dc.Buffer, a numpy array or a scalar, "
                    f"got {type(arg).__name__}")


# Kernel checks of raw kernels, per backend (docs/kernel-safety.md). dotcompute.lang.check fills these at
# import (it sits above this module): RAW_CHECKERS[backend](kernel, check) is the launch runner of
# ``dc.launch(..., check=check)``; ENV_LAUNCH[backend] replaces a new kernel's ``_dc_launch`` so that
# DOTCOMPUTE_CHECK applies to that backend's raw kernels (other backends' launches are untouched).
RAW_CHECKERS: dict[str, Any] = {}
ENV_LAUNCH: dict[str, Any] = {}


class RawKernel:
    """A kernel written by hand in the backend's language (C++ against cpu_kernel_abi.h, CUDA C++,
    OpenCL C or MSL).

    Compiled lazily, once per accelerator, through the kernel cache. Arguments
    reach the kernel exactly as given: buffers (and numpy arrays) as pointers,
    numpy scalars as their dtype, Python ``int`` as int64, ``float`` as float64,
    ``bool`` as bool -- except that in CUDA C++ and OpenCL C source a Python scalar
    takes the type the kernel declares for a plain scalar parameter (``int n``,
    ``float a``, ``size_t count``), checked to fit. numpy arrays are staged through device buffers where the
    device cannot read host memory, and hold the results when the launch returns.

    A raw kernel cannot say what it writes, so every array argument is treated as
    written: a read-only numpy array is refused with a ``ValueError`` naming the
    argument (its results could not be given back). ``read_only`` declares the
    arguments the kernel only reads, by position or (except for ``backend="cpu"``,
    whose entry point has no named parameters) by parameter name; those may be
    read-only arrays and are never copied back.

    CUDA: ``name`` may be a name expression -- a template instantiation such as
    ``"MatrixMulCUDA<32>"`` or ``"reduce<float, 256>"``, or a namespace-qualified name;
    NVRTC instantiates it and the kernel is looked up under its lowered (mangled)
    name, on a GPU and on the CUDA simulator alike. ``shared_mem`` is the dynamic
    (``extern __shared__``) shared memory of each block in bytes, the third value of
    ``<<<grid, block, shared_mem>>>``. Metal: ``shared_mem`` is the length of the kernel's
    ``threadgroup T* [[threadgroup(0)]]`` parameter per threadgroup (``setThreadgroupMemoryLength:atIndex:0``;
    threadgroup parameters at other indices are refused). ``cooperative=True`` launches it as
    ``cuLaunchCooperativeKernel`` does (on a GPU and on the simulator alike): every
    block resident at once, for kernels that synchronise the grid; a grid larger
    than the device can hold is refused with ``CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE``
    (a ``LaunchError``).

    ``strided`` names the pointer arguments (positions or names, as ``read_only``) through which the
    kernel steps with strides of its own: a strided view of a Buffer there (``b[::2]``, ``m.T``,
    ``m[1:3, 2:]``; non-negative steps) is passed as the base's memory starting at the view's first
    element, so what the kernel writes lands in the base; the kernel must be given the view's strides
    (in elements) as arguments. Without it such a view that the kernel may write is refused
    (docs/views.md).
    """

    _fast = NO_FAST  # no launch fast path (runtime/fast_launch.py): raw launches take the normal one

    def __init__(self, source: str, name: str, backend: str = "cpu", options: str = "",
                 read_only: Iterable[int | str] = (), shared_mem: int = 0, cooperative: bool = False,
                 strided: Iterable[int | str] = ()) -> None:
        if not isinstance(source, str) or not source.strip():
            raise ValueError("RawKernel: source is empty")
        if backend not in KNOWN_BACKENDS:
            raise ValueError(f"RawKernel: backend must be one of {', '.join(KNOWN_BACKENDS)}, got {backend!r}")
        if not isinstance(name, str) or not (name.isidentifier() or (backend == "cuda" and _NAME_EXPR.match(name))):
            raise ValueError(f"RawKernel: name must be the kernel function's identifier"
                             f"{' (or, in CUDA, a name expression such as MatrixMul<32>)' if backend == 'cuda' else ''}"
                             f", got {name!r}")
        if backend == "cuda":
            _check_cuda_name(source, name)
        if isinstance(shared_mem, bool) or not isinstance(shared_mem, (int, np.integer)) or shared_mem < 0:
            raise ValueError(f"RawKernel: shared_mem is the dynamic shared memory of each block in bytes (an int "
                             f">= 0), got {shared_mem!r}")
        if shared_mem and backend not in ("cuda", "metal"):
            raise ValueError(f"RawKernel: shared_mem (dynamic `extern __shared__` memory in CUDA, the length of "
                             f"`threadgroup T* [[threadgroup(0)]]` in MSL) is for CUDA and Metal kernels, "
                             f"not {backend}")
        if backend == "metal":
            check_threadgroup_memory(source, name, int(shared_mem))
        if not isinstance(cooperative, bool):
            raise ValueError(f"RawKernel: cooperative must be True or False, got {cooperative!r}")
        if cooperative and backend != "cuda":
            raise ValueError(f"RawKernel: cooperative launches (cuLaunchCooperativeKernel) are for CUDA kernels, "
                             f"not {backend}")
        self._source = source
        self.name = name
        # every launch is cooperative: all blocks resident at once, or CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
        self.cooperative = cooperative
        # bytes of `extern __shared__` memory every launch gets (what <<<grid, block, shared_mem>>> says)
        self.shared_mem = int(shared_mem)
        self.backend = backend
        self.options = options
        self.read_only = _read_only_positions(source, _base_name(name), backend, read_only)
        # arguments the kernel steps through itself: a strided view of a Buffer is passed as its base's
        # memory from the view's first element (expr/views.py), the strides are the caller's to pass
        self.strided = _read_only_positions(source, _base_name(name), backend, strided, "strided")
        # the scalar parameter types the source declares (CUDA C++/OpenCL C), to type Python scalars by
        self._declared = _declared_scalar_types(source, name) if backend in ("cuda", "opencl") else ()
        self._lock = threading.Lock()
        self._kernels: dict[str, Any] = {}
        self._plans: dict[Any, Any] = {}  # (accelerator, signature) or accelerator -> plan
        env = ENV_LAUNCH.get(backend)
        if env is not None:
            self._dc_launch = functools.partial(env, self)  # type: ignore[method-assign]

    @property
    def globals(self) -> KernelGlobals:
        """The module's ``__constant__``/``__device__`` variables (CUDA): ``k.globals["c_Kernel"]`` or
        ``k.globals.get(name, dtype=, shape=, accelerator=)`` is a Buffer over the variable's device
        memory, as ``cudaMemcpyToSymbol``/``cudaMemcpyFromSymbol`` reach it (see kernel_globals.py)."""
        return KernelGlobals(self)

    def source(self, backend: str | None = None) -> str:
        """The hand-written source (only for the backend it was written for)."""
        if backend is not None and backend != self.backend:
            raise ValueError(f"RawKernel {self.name!r} is written for {self.backend}, it has no {backend} source")
        return self._source

    def compile(self, acc: Accelerator | str | None = None) -> Any:
        """The native kernel for ``acc`` (default: the first device of this kernel's backend)."""
        acc = _accelerator(acc if acc is not None else self.backend)
        if acc.backend != self.backend:
            raise LaunchError(f"RawKernel {self.name!r} is written for the {self.backend} backend and cannot run "
                              f"on {acc.id}")
        kernel = self._kernels.get(acc.id)
        if kernel is None:
            source = self._source
            if self.backend == "cuda":  # a kernel copied from a .cu file, as it is (see the helpers)
                source = _without_host_headers(source)
                linked = (_with_c_linkage(source, self.name)
                          if self.name.isidentifier() and _declared_in_sight(source, self.name) else None)
                if linked is not None and not _only_static(linked, self.name):
                    source = linked
                else:
                    # a template instantiation, a qualified name, or a kernel a macro defines: the plugin
                    # hands the line to NVRTC as a name expression (and the simulator instantiates it);
                    # kernel_get maps the name to NVRTC's lowered (mangled) name
                    source = f"{source.rstrip()}\n{_NAME_EXPR_MARKER}{self.name}\n"
            options = self.options
            if self.backend == "cuda" and _includes_cuda_headers(source):
                # NVRTC has no include path of its own: point it at CUDA's headers when installed
                # (the simulator's host build finds its own versions of them first)
                extra = " ".join(f"--include-path={d}" for d in cuda_include_dirs())
                options = f"{options} {extra}".strip()
            try:
                kernel = compile_source(acc, source, self.name, options)
            except DotComputeError as e:
                if self.backend != "cuda":
                    raise
                if isinstance(e, CompilationError) and "__nv_name_map" in e.log:
                    # NVRTC's words for a name expression naming nothing (or the wrong template
                    # arguments) quote a pragma the user never wrote: say which kernels there are
                    raise CompilationError(f"{_missing_kernel_message(self._source, self.name)}\n{e}", e.log,
                                           e.source) from e
                missing = _MISSING_HEADER.search(getattr(e, "log", "") or str(e))
                if missing and isinstance(e, CompilationError):
                    dirs = cuda_include_dirs()
                    hint = (f"it is not among CUDA's headers ({', '.join(dirs)}): a kernel's own headers must "
                            f"be pasted into its source" if dirs else
                            "CUDA's headers come with `pip install dotcompute[cuda]` (nvidia-cuda-runtime-cu12, "
                            "nvidia-cuda-cccl-cu12) or a CUDA toolkit ($CUDA_HOME)")
                    hint = LIBRARY_HEADER_HINTS.get(missing.group(1), hint)
                    raise CompilationError(f"{e}\nNVRTC could not find <{missing.group(1)}>: {hint}", e.log,
                                           e.source) from e
                if "no kernel named" in str(e):  # (the core's CompilationError, as on every backend)
                    raise CompilationError(f"{_missing_kernel_message(self._source, self.name)}\n{e}",
                                           getattr(e, "log", ""), getattr(e, "source", "")) from e
                raise
            with self._lock:
                kernel = self._kernels.setdefault(acc.id, kernel)
        return kernel

    def _typed_plan(self, acc: Accelerator, args: tuple[Any, ...]) -> Any:
        """A plan that passes each scalar as its own numpy dtype (needed once numpy scalars appear)."""
        specs = tuple(_arg_spec(i, a) for i, a in enumerate(args))
        key = (acc, specs)
        plan = self._plans.get(key)
        if plan is None:
            params = [ParamSpec(kind, f"arg{i}", dtype, ndim=ndim,
                                written=kind == "buffer" and i not in self.read_only)
                      for i, (kind, dtype, ndim) in enumerate(specs)]
            plan = self.compile(acc).plan(params, raw=True)
            with self._lock:
                plan = self._plans.setdefault(key, plan)
        return plan

    def _untyped_plan(self, acc: Accelerator) -> Any:
        """The plan for buffers, arrays and Python scalars: the core packs them as given (int64, float64,
        bool), so one plan serves every signature and the launch path builds no key."""
        plan = self._plans.get(acc)
        if plan is None:
            plan = self.compile(acc).plan([], raw=True)
            with self._lock:
                plan = self._plans.setdefault(acc, plan)
        return plan

    def _dc_launch(self, acc: Accelerator | str | None, global_size: tuple[int, ...],
                   local_size: tuple[int, ...] | None, args: tuple[Any, ...], stream: Any) -> None:
        """The launch protocol of ``dotcompute.launch`` (``acc`` None: the first device of this backend)."""
        if not isinstance(acc, Accelerator):
            acc = _accelerator(acc if acc is not None else self.backend)
        if stream is not None and stream.accelerator is not acc:
            raise LaunchError(f"RawKernel {self.name!r}: the stream belongs to {stream.accelerator.id}, "
                              f"the launch to {acc.id}")
        typed = False
        declared = self._declared
        converted: list[Any] | None = None
        for i, a in enumerate(args):
            t = type(a)
            if t in _NUMPY_SCALARS_NEEDING_TYPES:
                typed = True
            elif t in _PY_SCALARS and i < len(declared) and declared[i] is not None:
                # `dc.launch(k, n, x, y, n)` for `int n` / `float a`: a Python scalar is passed as the
                # parameter's declared type (as int64/float64 it did not fit a 4-byte parameter:
                # CUDA and OpenCL refused the launch)
                if converted is None:
                    converted = list(args)
                converted[i] = _as_declared(self.name, i, a, declared[i])
                typed = True
            elif t is np.ndarray and not a.flags.writeable and i not in self.read_only:
                raise ValueError(f"RawKernel {self.name!r}: argument {i} is a read-only numpy array, but a raw "
                                 f"kernel may write any pointer argument and its results could not be given "
                                 f"back; pass a writable array or declare RawKernel(..., read_only=({i},))")
        if converted is not None:
            args = tuple(converted)
        plan = self._typed_plan(acc, args) if typed else (self._plans.get(acc) or self._untyped_plan(acc))
        try:
            plan.launch(global_size, local_size, args, stream, self.shared_mem, self.cooperative)
        except NeedsStaging:  # host arrays the device cannot read in place (or non-contiguous ones)
            host = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
            self._launch_staged(acc, plan, global_size, local_size, args, stream, host)

    def _dc_checked(self, check: Any) -> Any:
        """The launch runner for ``dc.launch(..., check=check)`` (docs/kernel-safety.md)."""
        make = RAW_CHECKERS.get(self.backend)
        if make is None:
            raise DotComputeError(f"check={check!r}: kernel {self.name!r} is a raw kernel for {self.backend}, and "
                                  f"raw {self.backend} kernels support none of the checks yet (raw MSL kernels on "
                                  "the Metal test double do; see docs/kernel-safety.md)")
        return make(self, check)

    def _launch_staged(self, acc: Accelerator, plan: Any, global_size: Any, local_size: Any,
                       args: tuple[Any, ...], stream: Any, host: list[int]) -> None:
        staged = list(args)
        for i in host:
            if i in self.strided and not args[i].flags.c_contiguous:
                # staged, it would be a compact copy: the strides the kernel is given would not fit it
                raise ValueError(f"RawKernel {self.name!r}: argument {i} is declared strided, but a "
                                 f"non-contiguous numpy array is staged as a compact copy; pass a view of a "
                                 f"dc.Buffer (passed as the buffer's own memory) or a contiguous array")
            staged[i] = acc.asarray(args[i])
        plan.launch(global_size, local_size, staged, stream, self.shared_mem, self.cooperative)
        # Raw kernels do not say what they write: every writable array gets its results back.
        for i in host:
            out = args[i]
            if i in self.read_only or not out.flags.writeable:
                continue
            if out.flags.c_contiguous:
                staged[i].copy_to(out)
            else:
                np.copyto(out, staged[i].numpy())

    def __repr__(self) -> str:
        return f"<dc.RawKernel {self.name!r} ({self.backend})>"

    def __reduce__(self) -> tuple[Any, ...]:
        # the source travels; compiled kernels and plans are per process (Dask workers compile their own)
        return (RawKernel, (self._source, self.name, self.backend, self.options, tuple(sorted(self.read_only)),
                            self.shared_mem, self.cooperative, tuple(sorted(self.strided))))


def _read_only_positions(source: str, name: str, backend: str, read_only: Iterable[int | str],
                         what: str = "read_only") -> frozenset[int]:
    """Argument positions of ``read_only`` (positions, or parameter names looked up in ``source``);
    ``what`` names the keyword in messages (``strided`` is given the same way)."""
    if isinstance(read_only, (str, int)):
        read_only = (read_only,)
    try:
        items = tuple(read_only)
    except TypeError:
        raise TypeError(f"RawKernel: {what} must be a sequence of argument positions or names, "
                        f"got {type(read_only).__name__}") from None
    params: list[str] | None = None
    out = set()
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"RawKernel: {what} entries are argument positions (int) or names (str), got {item!r}")
        if isinstance(item, int):
            if item < 0:
                raise ValueError(f"RawKernel: {what} position {item} is negative")
            out.add(item)
            continue
        if backend == "cpu":
            raise ValueError(f"RawKernel: {what}={item!r}: a CPU raw kernel's parameters have no names (they "
                             f"arrive through dc_cpu_launch::args); give the argument's position")
        if params is None:
            params = _parameter_names(source, name)
        if item not in params:
            raise ValueError(f"RawKernel: {what} names {item!r}, which is not a parameter of {name}"
                             f"({', '.join(params)})")
        out.add(params.index(item))
    return frozenset(out)


_CUDA_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


# What a .cu file's standard includes give device code that NVRTC lacks (it ships no headers; the
# functions -- printf, sqrtf, assert, ... -- are built in). Each block is guarded: the CUDA simulator's
# host build already has the real headers.
_STDINT = """#if !defined(INT64_MAX)
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32767 - 1)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295u
#define INT64_MIN (-9223372036854775807ll - 1)
#define INT64_MAX 9223372036854775807ll
#define UINT64_MAX 18446744073709551615ull
#endif
"""
_LIMITS = """#if !defined(INT_MAX)
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define SHRT_MIN (-32767 - 1)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295u
#define LLONG_MIN (-9223372036854775807ll - 1)
#define LLONG_MAX 9223372036854775807ll
#define ULLONG_MAX 18446744073709551615ull
#endif
"""
_FLOAT = """#if !defined(FLT_MAX)
#define FLT_MAX 3.402823466e+38f
#define FLT_MIN 1.175494351e-38f
#define FLT_EPSILON 1.192092896e-07f
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-016
#endif
"""
_MATH = """#if !defined(M_PI)
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
#if !defined(INFINITY)
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define HUGE_VALF INFINITY
#endif
"""
_HOST_HEADERS = {
    "cuda_runtime.h": "", "cuda_runtime_api.h": "", "cuda.h": "", "device_launch_parameters.h": "",
    "device_functions.h": "", "sm_60_atomic_functions.h": "", "stdio.h": "", "cstdio": "",
    "assert.h": "", "cassert": "", "stdint.h": _STDINT, "cstdint": _STDINT, "inttypes.h": _STDINT,
    "limits.h": _LIMITS, "climits": _LIMITS, "float.h": _FLOAT, "cfloat": _FLOAT,
    "math.h": _MATH + _FLOAT, "cmath": _MATH + _FLOAT, "stdlib.h": "", "cstdlib": "",
    **C_LIBRARY_HEADERS,
}
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([\w./]+)[>"][^\n]*$', re.M)


_MISSING_HEADER = re.compile(r'(?:could not|cannot) open source file "([\w./]+)"')


def _includes_cuda_headers(source: str) -> bool:
    """Whether ``source`` includes a header NVRTC needs from CUDA's include folder (any include
    other than the host headers replaced by _without_host_headers)."""
    return any(m.group(1) not in _HOST_HEADERS for m in _INCLUDE.finditer(source))


def _without_host_headers(source: str) -> str:
    """``source`` with the standard includes of a ``.cu`` file replaced by what device code needs of them.

    DESIGN.md: a kernel copied from a ``.cu`` file works as it is. Such files start with
    ``#include <cuda_runtime.h>``, ``<stdio.h>``, ``<math.h>``, ``<stdint.h>``..., which NVRTC cannot
    open ("could not open source file"): it has no include path, and its built-ins already cover the
    device functions. Each such line becomes a comment plus, where the header also gives types or
    constants (``uint32_t``, ``INT_MAX``, ``FLT_MAX``, ``M_PI``), their definitions guarded by
    ``#if !defined``; a ``#line`` keeps the user's line numbers in compiler messages.
    """
    if "include" not in source:
        return source
    out, last, line = [], 0, 1
    for m in _INCLUDE.finditer(source):
        header = m.group(1)
        if header not in _HOST_HEADERS:
            continue
        line += source.count("\n", last, m.start())
        out.append(source[last:m.start()])
        extra = _HOST_HEADERS[header]
        out.append(f"// {m.group(0).strip()} (given to NVRTC by dotcompute)")
        if extra:
            out.append("\n" + extra + f"#line {line + 1}")
        last = m.end()
    if not out:
        return source
    out.append(source[last:])
    return "".join(out)


def _declared_in_sight(source: str, name: str) -> bool:
    """Whether ``name(`` is written in ``source`` outside comments and strings: false for a kernel
    that a macro defines (``DEFINE_SCALE(scale_f, float)``), whose declaration only the preprocessor
    writes -- then no ``extern "C"`` can be put before it, and NVRTC's name expression finds it."""
    plain = _CUDA_NOISE.sub(" ", source)
    return re.search(r"(?<![\w:])" + re.escape(name) + r"\s*\(", plain) is not None


def _with_c_linkage(source: str, name: str) -> str:
    """``source`` with ``extern "C"`` put before each ``__global__`` declaration of ``name`` that lacks it.

    DESIGN.md promises that a kernel copied from a ``.cu`` file runs as it is, whether or not it is
    declared ``extern "C"``: without it the compiled symbol is C++-mangled and the plugin's lookup by
    ``name`` found nothing ("no kernel named ..."). Giving the one kernel C linkage (on the same line, so
    compiler messages keep their line numbers) makes NVRTC and the simulator export it under ``name``.
    Templates (which cannot have C linkage) and ``static`` kernels are left as they are.
    """
    if "__global__" not in source or name not in source:
        return source
    # search a copy whose comments and string literals are blanked, same length, so offsets carry over
    plain = _CUDA_NOISE.sub(lambda m: " " * len(m.group(0)), source)
    # preprocessor lines blanked as well: the `>` of an `#include <curand.h>` just above a kernel is
    # not the end of a template header
    plain = re.sub(r"(?m)^[ \t]*#[^\n]*", lambda m: " " * len(m.group(0)), plain)
    # the words before the name, in any order: __global__ void, void __global__, __launch_bounds__(...)
    decl = re.compile(r"\b(?:(?:__global__|void|__launch_bounds__\s*\([^()]*\))\s*)+(?<![\w])" + re.escape(name)
                      + r"\s*\(")
    cuts = []
    for m in decl.finditer(plain):
        if "__global__" not in m.group(0) or "void" not in m.group(0):
            continue
        before = plain[:m.start()].rstrip()  # (its "C" of an extern "C" is blanked like every literal)
        if before.endswith(">") or re.search(r"\b(?:extern|static)$", before):
            continue
        cuts.append(m.start())
    if not cuts:
        return source
    out, last = [], 0
    for at in cuts:
        out.append(source[last:at])
        out.append('extern "C" ')
        last = at
    out.append(source[last:])
    return "".join(out)


def _only_static(source: str, name: str) -> bool:
    """Whether every ``__global__`` definition of ``name`` is ``static`` (cuda-samples' MonteCarlo
    kernels): C linkage cannot be given to them, so they are found through a name expression."""
    heads = re.findall(r"([^;{}]*)\b" + re.escape(name) + r"\s*\(", _CUDA_NOISE.sub(" ", source))
    kernels = [h for h in heads if "__global__" in h]
    return bool(kernels) and all(re.search(r"\bstatic\b", h) and "extern" not in h for h in kernels)


# A CUDA kernel name with template arguments and/or a namespace: NVRTC's "name expression".
_NAME_EXPR = re.compile(r"^\s*(?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*\s*(?:<.*>)?\s*$", re.S)
# cuda/compile_policy.hpp: the line the plugin reads name expressions from (and the simulator's builder)
_NAME_EXPR_MARKER = "//!dotcompute-name-expression "


def _base_name(name: str) -> str:
    """The function's own identifier in a name expression: ``ns::MatrixMul<32>`` -> ``MatrixMul``."""
    return name.split("<", 1)[0].split("::")[-1].strip()


def _template_args(name: str) -> list[str]:
    """The top-level template arguments of a name expression (``reduce<float, 256>`` -> float, 256)."""
    if "<" not in name:
        return []
    inner = name[name.index("<") + 1:name.rindex(">")]
    args, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


def _global_functions(source: str) -> list[tuple[str, str, str]]:
    """Every ``__global__`` function defined in CUDA C++ ``source``: (name, parameter list, template header).

    Found by scanning (comments and literals blanked), so a kernel produced by a macro is not seen; the
    callers use this for error messages and for the checks a scan can make without doubt.
    """
    plain = _CUDA_NOISE.sub(lambda m: " " * len(m.group(0)), source)
    plain = re.sub(r"__launch_bounds__\s*\([^()]*(?:\([^()]*\)[^()]*)*\)",
                   lambda m: " " * len(m.group(0)), plain)
    out = []
    for m in re.finditer(r"\b__global__\b", plain):
        head = m.end()
        paren = plain.find("(", head)
        if paren < 0:
            continue
        ident = re.search(r"([A-Za-z_]\w*)\s*$", plain[head:paren])
        if ident is None:
            continue
        depth, close = 0, paren
        while close < len(plain):
            depth += {"(": 1, ")": -1}.get(plain[close], 0)
            if depth == 0:
                break
            close += 1
        rest = plain[close + 1:close + 200].lstrip()
        if not rest.startswith("{"):
            continue  # a declaration; the definition is counted
        start = max(plain.rfind(";", 0, m.start()), plain.rfind("}", 0, m.start()), plain.rfind("{", 0, m.start()))
        before = plain[start + 1:m.start()]
        tmpl = re.search(r"\btemplate\s*<(.*)>", before, re.S)
        out.append((ident.group(1), " ".join(plain[paren + 1:close].split()), tmpl.group(1) if tmpl else ""))
    return out


_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else)\b", re.M)


def _describe(found: list[tuple[str, str, str]]) -> str:
    return ", ".join(f"{'template<' + t.strip() + '> ' if t else ''}{n}({p})" for n, p, t in found)


def _check_cuda_name(source: str, name: str) -> None:
    """Clear errors for the kernel names that cannot work: an overloaded kernel (which of them?) and a
    template named without its arguments (which instantiation?)."""
    base = _base_name(name)
    found = [f for f in _global_functions(source) if f[0] == base]
    plain_defs = [f for f in found if not f[2]]
    # (kernels of one name in two namespaces are not overloads; nor are alternatives under #if/#else,
    # which only the preprocessor tells apart: then NVRTC's own error stands)
    if len(plain_defs) > 1 and "::" not in name and not _CONDITIONAL.search(source):
        raise ValueError(f"RawKernel {name!r}: the kernel name is overloaded, so it names no single kernel; "
                         f"candidates: {_describe(plain_defs)}. Rename one of them")
    if "<" not in name and found and all(f[2] for f in found):
        raise ValueError(f"RawKernel {name!r} is a template kernel: name the instantiation to run, with its "
                         f"template arguments, e.g. {base}<...> (candidates: {_describe(found)})")


def _missing_kernel_message(source: str, name: str) -> str:
    found = _global_functions(source)
    base = _base_name(name)
    if any(f[0] == base for f in found):  # the kernel is there; its template arguments do not fit
        return (f"RawKernel {name!r}: no instantiation of that name fits the kernel's template parameters; "
                f"candidates: {_describe([f for f in found if f[0] == base])}")
    return (f"RawKernel {name!r}: the source defines no __global__ function of that name; "
            + (f"__global__ functions found: {_describe(found)}" if found else "it defines no __global__ function"))


_C_SCALARS = {
    "bool": np.bool_, "char": np.int8, "signed char": np.int8, "int8_t": np.int8,
    "unsigned char": np.uint8, "uchar": np.uint8, "uint8_t": np.uint8,
    "short": np.int16, "short int": np.int16, "int16_t": np.int16,
    "unsigned short": np.uint16, "ushort": np.uint16, "uint16_t": np.uint16,
    "int": np.int32, "signed": np.int32, "signed int": np.int32, "int32_t": np.int32,
    "unsigned": np.uint32, "unsigned int": np.uint32, "uint": np.uint32, "uint32_t": np.uint32,
    "long": np.int64, "long int": np.int64, "long long": np.int64, "long long int": np.int64, "int64_t": np.int64,
    "unsigned long": np.uint64, "ulong": np.uint64, "unsigned long long": np.uint64, "uint64_t": np.uint64,
    "size_t": np.uint64, "float": np.float32, "double": np.float64, "half": np.float16, "__half": np.float16,
}
_C_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "register", "__private", "private",
                 "__grid_constant__"}
_C_ADDRESS_SPACES = {"__global", "global", "__local", "local", "__constant", "constant"}


def _declared_scalar_types(source: str, name: str) -> tuple[np.dtype | None, ...]:
    """Per parameter of ``name`` in CUDA C++/OpenCL C source: the numpy dtype of a plain scalar parameter
    (``int n``, ``const float a``, ``size_t count``), None for pointers and types not known here."""
    plain = _CUDA_NOISE.sub(lambda m: " " * len(m.group(0)), source)
    base = _base_name(name)
    # a template kernel's parameters may be its type parameters (`T value`): read them as the name
    # expression's arguments (`reduce<float, 256>`: T is float)
    subst: dict[str, str] = {}
    if "<" in name:
        for fn, _params, tmpl in _global_functions(source):
            if fn == base and tmpl:
                names = [re.findall(r"[A-Za-z_]\w*", p.split("=")[0])[-1:] for p in tmpl.split(",")]
                subst = {n[0]: a for n, a in zip(names, _template_args(name), strict=False) if n}
                break
    m = re.search(r"\b" + re.escape(base) + r"\s*\(([^)]*)\)\s*\{", plain)
    if m is None or not m.group(1).strip() or m.group(1).strip() == "void":
        return ()
    out: list[np.dtype | None] = []
    for part in m.group(1).split(","):
        if subst:
            part = re.sub(r"[A-Za-z_]\w*", lambda w: subst.get(w.group(0), w.group(0)), part)
        words = re.findall(r"[A-Za-z_]\w*", part)
        if any(c in part for c in "*&[<") or _C_ADDRESS_SPACES.intersection(words):
            out.append(None)
            continue
        words = [w for w in words if w not in _C_QUALIFIERS]
        kind = _C_SCALARS.get(" ".join(words[:-1])) if len(words) > 1 else None  # type words, then the name
        out.append(np.dtype(kind) if kind is not None else None)
    return tuple(out)


def _as_declared(kernel: str, i: int, value: Any, dtype: np.dtype) -> Any:
    """A Python scalar as the numpy scalar of the parameter's declared type (checked: no silent change)."""
    if dtype.kind in "iub" and type(value) is float:
        raise KernelTypeError(f"RawKernel {kernel!r}: argument {i} is the float {value!r}, but the kernel "
                              f"declares that parameter {dtype}")
    try:
        converted = dtype.type(value)
    except OverflowError:
        raise KernelTypeError(f"RawKernel {kernel!r}: argument {i} = {value!r} does not fit the parameter's "
                              f"declared type {dtype}") from None
    return converted


def _parameter_names(source: str, name: str) -> list[str]:
    """The parameter names of the kernel function ``name`` (the identifier ending each parameter)."""
    m = re.search(r"\b" + re.escape(name) + r"\s*\(([^)]*)\)\s*\{", source)
    if m is None:
        return []
    names = []
    for part in m.group(1).split(","):
        ids = re.findall(r"[A-Za-z_]\w*", part.split("[")[0])
        names.append(ids[-1] if ids else "")
    return names


__all__ = ["RawKernel"]
