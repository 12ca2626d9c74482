"""CUDA ahead-of-time compilation with NVRTC, needing no GPU and no driver.

``dotcompute.cuda.compile(source_or_kernel, arch="sm_90")`` returns a CUBIN (an
ELF image) for that exact architecture, or PTX text with ``output="ptx"``. It
calls NVRTC through ctypes directly, so it works on machines without an NVIDIA
driver, and it is also where the package finds NVRTC for the native CUDA
plugin: :func:`export_nvrtc_path` puts the library it finds into
``DOTCOMPUTE_NVRTC`` before the native runtime starts (the plugin cannot run
Python to look into site-packages itself).

NVRTC is looked for in this order: ``DOTCOMPUTE_NVRTC``; the
``nvidia-cuda-nvrtc`` / ``nvidia-cuda-nvrtc-cu12`` wheels (``nvidia/*/lib``
through the ``nvidia`` namespace package); ``$CUDA_PATH/lib64``,
``$CUDA_HOME/lib64``, ``/usr/local/cuda/lib64``; the dynamic loader's own search.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import config
from .errors import BackendUnavailableError, CompilationError, DotComputeError

INSTALL_HINT = "pip install dotcompute[cuda]  (installs nvidia-cuda-nvrtc-cu12)"
ELF_MAGIC = b"\x7fELF"

_NVRTC_FILE = re.compile(r"^libnvrtc\.so(\.\d+)*$")
_BUILTINS_FILE = re.compile(r"^libnvrtc-builtins\.so(\.\d+)*$")
_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(p) for p in path.name.split(".so")[-1].split(".") if p.isdigit())


def _nvrtc_in(directory: Path) -> list[Path]:
    """NVRTC libraries in ``directory``, newest first (no builtins, no ``alt`` variants)."""
    if not directory.is_dir():
        return []
    found = [p for p in directory.iterdir() if _NVRTC_FILE.match(p.name)]
    return sorted(found, key=_version_key, reverse=True)


def _wheel_lib_dirs() -> list[Path]:
    try:
        import nvidia  # the namespace package of NVIDIA's wheels
    except ImportError:
        return []
    dirs: list[Path] = []
    for root in getattr(nvidia, "__path__", []):
        base = Path(root)
        if base.is_dir():
            dirs.extend(sorted(p / "lib" for p in base.iterdir() if (p / "lib").is_dir()))
    return dirs


def nvrtc_candidates() -> list[str]:
    """Every place NVRTC is looked for, in order (files, then sonames for the loader)."""
    explicit = config.nvrtc()
    if explicit:
        return [explicit]
    out: list[str] = []
    for d in _wheel_lib_dirs():
        out.extend(str(p) for p in _nvrtc_in(d))
    for var in ("CUDA_PATH", "CUDA_HOME"):
        root = os.environ.get(var)
        if root:
            out.extend(str(p) for p in _nvrtc_in(Path(root) / "lib64"))
    out.extend(str(p) for p in _nvrtc_in(Path("/usr/local/cuda/lib64")))
    out.extend(_SONAMES)
    return out


#: NVIDIA's wheels that hold CUDA's device headers: nvidia-cuda-runtime-cu12 (cuda_fp16.h,
#: cooperative_groups.h) and nvidia-cuda-cccl-cu12 (libcu++'s <nv/target>, which the cooperative
#: groups need, CUB, Thrust); CUDA 13 puts everything into one nvidia/cu13 tree.
_HEADER_PACKAGES = (("cuda_runtime", "cuda_cccl"), ("cu13",))


@functools.cache
def cuda_include_dirs() -> tuple[str, ...]:
    """The folders of CUDA's device headers (``cuda_fp16.h``, ``cooperative_groups.h``, ``cub/``...),
    which NVRTC does not carry: NVIDIA's wheels (``dotcompute[cuda]`` installs them), else a toolkit
    ($CUDA_PATH, $CUDA_HOME, /usr/local/cuda); empty when there is none."""
    candidates: list[list[Path]] = []
    try:
        import nvidia  # the namespace package of NVIDIA's wheels

        for base in getattr(nvidia, "__path__", []):
            for packages in _HEADER_PACKAGES:
                candidates.append([Path(base) / pkg / "include" for pkg in packages])
    except ImportError:
        pass
    roots = [os.environ[v] for v in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(v)] + ["/usr/local/cuda"]
    # a toolkit's CCCL is in include/ (CUDA 12) or include/cccl (CUDA 13)
    candidates.extend([Path(r) / "include", Path(r) / "include" / "cccl"] for r in roots)
    for dirs in candidates:
        if (dirs[0] / "cuda_fp16.h").is_file():
            return tuple(str(d) for d in dirs if d.is_dir()) + _curand_include_dirs(dirs[0])
    return ()


def _curand_include_dirs(cuda_include: Path) -> tuple[str, ...]:
    """cuRAND's device headers (curand_kernel.h): in a toolkit beside CUDA's own, from a wheel in
    nvidia/curand/include (nvidia-curand-cu12, which dotcompute[cuda-libs] installs)."""
    if (cuda_include / "curand_kernel.h").is_file():
        return ()
    try:
        import nvidia
    except ImportError:
        return ()
    for base in getattr(nvidia, "__path__", []):
        folder = Path(base) / "curand" / "include"
        if (folder / "curand_kernel.h").is_file():
            return (str(folder),)
    return ()


def nvrtc_library_path() -> str | None:
    """The NVRTC library file this package would use, or None when none is installed."""
    try:
        return _nvrtc().path
    except BackendUnavailableError:
        return None


def export_nvrtc_path() -> str | None:
    """Sets ``DOTCOMPUTE_NVRTC`` for the native CUDA plugin when it is unset and NVRTC is found.

    Called by the runtime before the native module starts. Only a file found in
    a wheel or toolkit folder is exported; a soname the loader resolves needs no help.
    """
    if config.nvrtc():
        return config.nvrtc()
    for candidate in nvrtc_candidates():
        if os.path.isabs(candidate) and os.path.exists(candidate):
            os.environ["DOTCOMPUTE_NVRTC"] = candidate
            return candidate
    return None


@dataclass
class _Nvrtc:
    """A loaded NVRTC: the library, its version and the architectures it can target."""

    path: str
    lib: ctypes.CDLL
    builtins: ctypes.CDLL | None
    version: tuple[int, int]
    archs: tuple[int, ...]

    def check(self, result: int, what: str) -> None:
        if result != 0:
            text = self.lib.nvrtcGetErrorString(result)
            raise DotComputeError(f"{what} failed: {text.decode() if text else result}")


def _preload_builtins(directory: Path) -> ctypes.CDLL | None:
    # NVRTC 13 wheels have no RPATH to their builtins library: load it first, globally.
    if not directory.is_dir():
        return None
    for p in sorted((p for p in directory.iterdir() if _BUILTINS_FILE.match(p.name)), key=_version_key,
                    reverse=True):
        try:
            return ctypes.CDLL(str(p), mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
    return None


def _declare(lib: ctypes.CDLL) -> None:
    c_int, c_size_t, c_char_p, c_void_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p
    prog_p = ctypes.POINTER(c_void_p)
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "nvrtcVersion": (c_int, [ctypes.POINTER(c_int), ctypes.POINTER(c_int)]),
        "nvrtcGetErrorString": (c_char_p, [c_int]),
        "nvrtcGetNumSupportedArchs": (c_int, [ctypes.POINTER(c_int)]),
        "nvrtcGetSupportedArchs": (c_int, [ctypes.POINTER(c_int)]),
        "nvrtcCreateProgram": (c_int, [prog_p, c_char_p, c_char_p, c_int, c_void_p, c_void_p]),
        "nvrtcDestroyProgram": (c_int, [prog_p]),
        "nvrtcCompileProgram": (c_int, [c_void_p, c_int, ctypes.POINTER(c_char_p)]),
        "nvrtcGetProgramLogSize": (c_int, [c_void_p, ctypes.POINTER(c_size_t)]),
        "nvrtcGetProgramLog": (c_int, [c_void_p, c_char_p]),
        "nvrtcGetCUBINSize": (c_int, [c_void_p, ctypes.POINTER(c_size_t)]),
        "nvrtcGetCUBIN": (c_int, [c_void_p, c_char_p]),
        "nvrtcGetPTXSize": (c_int, [c_void_p, ctypes.POINTER(c_size_t)]),
        "nvrtcGetPTX": (c_int, [c_void_p, c_char_p]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)  # AttributeError names the missing entry point
        fn.restype = restype
        fn.argtypes = argtypes


def _load(candidate: str) -> _Nvrtc:
    builtins = _preload_builtins(Path(candidate).parent) if os.path.isabs(candidate) else None
    lib = ctypes.CDLL(candidate)
    _declare(lib)
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    count = ctypes.c_int()
    archs: tuple[int, ...] = ()
    if lib.nvrtcGetNumSupportedArchs(ctypes.byref(count)) == 0 and count.value > 0:
        buf = (ctypes.c_int * count.value)()
        if lib.nvrtcGetSupportedArchs(buf) == 0:
            archs = tuple(buf)
    path = candidate
    if not os.path.isabs(candidate):
        path = _loaded_path(lib) or candidate
    return _Nvrtc(path, lib, builtins, (major.value, minor.value), archs)


def _loaded_path(lib: ctypes.CDLL) -> str | None:
    """The file the loader picked for a soname (read from /proc/self/maps on Linux)."""
    try:
        text = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        path = line.split()[-1] if line.split() else ""
        if "/libnvrtc.so" in path:
            return path
    return None


_load_lock = threading.Lock()


@functools.cache
def _nvrtc_from(candidates: tuple[str, ...]) -> _Nvrtc:
    tried: list[str] = []
    for candidate in candidates:
        try:
            return _load(candidate)
        except (OSError, AttributeError) as e:
            tried.append(f"  {candidate}: {e}")
    reason = "NVRTC not found; " + INSTALL_HINT + ", or set DOTCOMPUTE_NVRTC to libnvrtc.so. Tried:\n" + "\n".join(
        tried)
    raise BackendUnavailableError(reason, reason=reason)


def _nvrtc() -> _Nvrtc:
    with _load_lock:
        return _nvrtc_from(tuple(nvrtc_candidates()))


def nvrtc_version() -> tuple[int, int]:
    """NVRTC's (major, minor) version; BackendUnavailableError when NVRTC is not installed."""
    return _nvrtc().version


def supported_archs() -> tuple[int, ...]:
    """The SM numbers NVRTC can generate code for (e.g. 90 for sm_90)."""
    return _nvrtc().archs


def _target(arch: str | int, output: str) -> str:
    if output not in ("cubin", "ptx"):
        raise ValueError(f"output must be 'cubin' or 'ptx', got {output!r}")
    text = f"sm_{arch}" if isinstance(arch, int) else str(arch)
    m = _ARCH.match(text)
    if not m:
        raise ValueError(f"arch must look like 'sm_90' (or 'compute_90' for PTX), got {arch!r}")
    kind, number, suffix = m.groups()
    if output == "cubin":
        if kind == "compute":
            raise ValueError(f"a CUBIN needs a real architecture like 'sm_{number}', not {text!r}")
        return text
    return f"compute_{number}{suffix}"  # PTX is for a virtual architecture


def _source_of(kernel_or_source: Any, signature: Sequence[Any] | None, args: Sequence[Any]) -> tuple[str, str]:
    """(CUDA C++ source, default program name) for raw source or a ``dc.kernel``."""
    if isinstance(kernel_or_source, (bytes, bytearray)):
        kernel_or_source = kernel_or_source.decode()
    if isinstance(kernel_or_source, str):
        return kernel_or_source, "dotcompute_kernel.cu"
    source = getattr(kernel_or_source, "source", None)
    if not callable(source):
        raise TypeError("compile() takes CUDA C++ source text or a dc.kernel, "
                        f"got {type(kernel_or_source).__name__}")
    if signature is not None:
        text = source("cuda", *args, signature=signature)
    else:
        text = source("cuda", *args)
    name = getattr(kernel_or_source, "name", None) or getattr(kernel_or_source, "__name__", "dotcompute_kernel")
    return text, f"{name}.cu"


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "error" in line:
            return line.strip()
    return log.strip().splitlines()[0] if log.strip() else "no log"


def compile(kernel_or_source: Any, arch: str | int = "sm_90", output: str = "cubin", name: str | None = None,
            options: Sequence[str] = (), *, signature: Sequence[Any] | None = None,
            args: Sequence[Any] = ()) -> bytes:
    """Compile CUDA C++ (or a ``dc.kernel``'s generated CUDA source) with NVRTC.

    ``arch`` is the target (``"sm_90"``, or the number 90). ``output="cubin"``
    returns the CUBIN, an ELF image for exactly that architecture;
    ``output="ptx"`` returns the PTX text (for ``compute_XY``, no trailing NUL).
    ``name`` is the file name NVRTC uses in its messages (default: the
    kernel's name + ``.cu``, or ``dotcompute_kernel.cu``). ``options`` are
    extra NVRTC options (``"-DN=4"``, ``"--use_fast_math"``); CUDA's header folders
    (:func:`cuda_include_dirs`) are on the include path. A generic
    ``dc.kernel`` is specialised with ``signature`` (one entry per parameter) or
    example ``args``. Needs no GPU and no driver.

    Raises ``CompilationError`` (with ``.log`` and ``.source``) when NVRTC rejects
    the source, ``BackendUnavailableError`` when NVRTC is not installed.
    """
    target = _target(arch, output)
    source, default_name = _source_of(kernel_or_source, signature, args)
    program_name = name or default_name
    nv = _nvrtc()
    lib = nv.lib
    prog = ctypes.c_void_p()
    nv.check(lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), program_name.encode(), 0, None, None),
             "nvrtcCreateProgram")
    try:
        # NVRTC has no include path: CUDA's own headers (cuda_fp16.h, cooperative_groups.h, cub/) where
        # installed; they are only opened by an #include, so giving them costs nothing otherwise
        opts = [f"--gpu-architecture={target}", *options, *(f"--include-path={d}" for d in cuda_include_dirs())]
        argv = (ctypes.c_char_p * len(opts))(*(o.encode() for o in opts))
        result = lib.nvrtcCompileProgram(prog, len(opts), argv)
        log_size = ctypes.c_size_t()
        log = ""
        if lib.nvrtcGetProgramLogSize(prog, ctypes.byref(log_size)) == 0 and log_size.value > 1:
            buf = ctypes.create_string_buffer(log_size.value)
            lib.nvrtcGetProgramLog(prog, buf)
            log = buf.value.decode(errors="replace")
        if result != 0:
            text = lib.nvrtcGetErrorString(result)
            log = log or (text.decode() if text else f"nvrtcCompileProgram returned {result}")
            version = ".".join(map(str, nv.version))
            raise CompilationError(f"NVRTC {version} failed to compile {program_name} for {target}: "
                                   f"{_first_error(log)}", log=log, source=source)
        size = ctypes.c_size_t()
        if output == "cubin":
            nv.check(lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
            out = ctypes.create_string_buffer(size.value)
            nv.check(lib.nvrtcGetCUBIN(prog, out), "nvrtcGetCUBIN")
            binary = out.raw[: size.value]
            if not binary.startswith(ELF_MAGIC):
                raise DotComputeError(f"NVRTC returned a CUBIN for {target} that is not an ELF image")
            return binary
        nv.check(lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
        out = ctypes.create_string_buffer(size.value)
        nv.check(lib.nvrtcGetPTX(prog, out), "nvrtcGetPTX")
        return out.raw[: size.value].rstrip(b"\0")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


__all__ = ["compile", "nvrtc_version", "supported_archs", "nvrtc_library_path", "nvrtc_candidates",
           "export_nvrtc_path", "INSTALL_HINT", "ELF_MAGIC"]
