"""Every ``DOTCOMPUTE_*`` environment variable, read in this one place.

The native core reads a few of them too (it runs without Python in C++
programs), but inside the Python package nothing else looks at ``os.environ``
for them: callers ask this module, and ``dotcompute info`` lists what it says.
Values are read when asked for, not at import, so tests can change the
environment and see the effect.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from .errors import DotComputeWarning

#: Every variable dotcompute understands, with what it does (shown by ``dotcompute info``).
VARIABLES: dict[str, str] = {
    "DOTCOMPUTE_CACHE_DIR": "kernel cache folder (default: the user cache dir + /dotcompute)",
    "DOTCOMPUTE_CACHE_MAX_BYTES": "size bound of the on-disk kernel cache in bytes (default 536870912)",
    "DOTCOMPUTE_PLUGIN_DIR": "the package's own plugin folder (set by the Python package itself)",
    "DOTCOMPUTE_PLUGIN_PATH": "extra folders searched for *.plugin.json backend manifests (os.pathsep list)",
    "DOTCOMPUTE_BACKENDS": "comma list of backends to enable (default: all found)",
    "DOTCOMPUTE_CXX": "host C++ compiler used by the CPU backend (before CXX, c++, g++, clang++)",
    "DOTCOMPUTE_DEBUG": "1 turns on bounds checks in every kernel",
    # read by dotcompute.lang.check (each launch tests whether it is set; the value is parsed on change)
    "DOTCOMPUTE_CHECK": "kernel checks for every @dc.kernel launch: all, or a comma list of memcheck, racecheck, "
                        "synccheck, initcheck; ':warn' logs instead of raising (docs/kernel-safety.md)",
    "DOTCOMPUTE_LOG": "log level of the 'dotcompute' logger (debug, info, warning, error)",
    "DOTCOMPUTE_CUDA_DRIVER": "explicit path of libcuda",
    "DOTCOMPUTE_NVRTC": "explicit path of libnvrtc",
    "DOTCOMPUTE_CUDA_SIM": "1 runs the CUDA backend on the CUDA simulator (kernels on the CPU; no GPU or driver)",
    "DOTCOMPUTE_CUDA_SIM_DEVICES": "simulated CUDA devices: a count, or key=value lists (cc, memory, sms) split by ;",
    "DOTCOMPUTE_CUDA_SIM_THREADS": "CPU threads that run simulated CUDA blocks (default: the number of cores)",
    # read by the simulator at each launch (cuda/sim/config.cpp; docs/cuda-simulator.md)
    "DOTCOMPUTE_CUDA_SIM_SCHEDULE": "order of a simulated block's threads between barriers: forward (default), "
                                    "reverse, random[:seed] or lockstep",
    "DOTCOMPUTE_CUDA_SIM_TIMEOUT_S": "seconds a simulated kernel may run before CUDA_ERROR_LAUNCH_TIMEOUT "
                                     "(default: no limit)",
    # read once, when the simulator builds its first kernel (cuda/sim/builder.cpp); the model by
    # dotcompute.profile.gpu_model (docs/cuda-simulator.md, "GPU-model counters")
    "DOTCOMPUTE_CUDA_SIM_COUNTERS": "1 builds simulated CUDA kernels with GPU-model counters (coalescing, bank "
                                    "conflicts, divergence, occupancy; needs clang++), shown by dc.profile()",
    "DOTCOMPUTE_CUDA_SIM_MODEL": "the GPU the simulator's counters are modelled for: h100 (default) or a100",
    "DOTCOMPUTE_CUDA_SIM_SHIM_DIR": "work on the simulator: read its shim headers from this folder (a checkout's "
                                    "cuda/sim/shim) instead of the copies built into it",
    # read by the test suite only (tests/python/cuda_sim/test_outside_cuda_samples.py)
    "DOTCOMPUTE_CUDA_SAMPLES_DIR": "tests: an unpacked NVIDIA/cuda-samples checkout whose kernels the "
                                   "simulator tests run (skipped when unset)",
    # read by the test suite only (tests/python/cuda_sim/test_outside_rodinia.py)
    "DOTCOMPUTE_RODINIA_DIR": "tests: an unpacked yuhc/gpu-rodinia checkout whose CUDA kernels the "
                              "simulator tests run (skipped when unset)",
    # read by the test suite only (tests/python/metal/test_outside_msl_kernels.py)
    "DOTCOMPUTE_MLX_DIR": "tests: an unpacked ml-explore/mlx Metal kernels folder whose kernels the Metal "
                          "double runs (skipped when unset)",
    "DOTCOMPUTE_GGML_DIR": "tests: an unpacked ggml-org/ggml src folder whose Metal kernels the Metal double "
                           "runs (skipped when unset)",
    "DOTCOMPUTE_CPU_THREADS": "size of the CPU backend's thread pool (default: the number of cores)",
    "DOTCOMPUTE_CPU_SPIN_US": "microseconds CPU worker threads spin for new work before sleeping",
    "DOTCOMPUTE_INCLUDE_DIR": "folder holding dotcompute/*.h for run-time compiled CPU kernels",
    # read by dotcompute.ops.native (not through this module: ops checks it on each vendor-library load);
    # listed here so `dotcompute info` does not call a documented setting "unknown to dotcompute"
    "DOTCOMPUTE_OPS_DISABLE": "comma list of vendor libraries never loaded by dc.matmul/dc.fft "
                              "(clblast, clfft, cublas, cufft, or all)",
    # read by dotcompute.ops.selfcheck and ops.native at a vendor library's first use
    "DOTCOMPUTE_VENDOR_SELFCHECK": "0 skips the check of cuBLAS/cuFFT/CLBlast/clFFT against the portable kernels "
                                   "at their first use per device and routine (default 1)",
    "DOTCOMPUTE_CLBLAST_LIBRARY": "explicit path of libclblast (the only file tried)",
    "DOTCOMPUTE_CLFFT_LIBRARY": "explicit path of libclFFT (the only file tried)",
    "DOTCOMPUTE_CUBLAS_LIBRARY": "explicit path of libcublas (the only file tried)",
    "DOTCOMPUTE_CUFFT_LIBRARY": "explicit path of libcufft (the only file tried)",
    "DOTCOMPUTE_PROFILE": "a path: profile the whole program (dc.profile) and write a Chrome/Perfetto trace there "
                          "at exit",
    "DOTCOMPUTE_DEFAULT_DEVICE": "the Array API functions' default device (dc.asarray, dc.zeros, ...): an accelerator "
                                 "spec such as cpu:0 (default: what 'auto' gives)",
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


#: The backends dotcompute ships (third-party plugins add more names; see :func:`check_backends`).
BUILTIN_BACKENDS = ("cpu", "opencl", "cuda", "metal")

_warned_lock = threading.Lock()
_warned: set[tuple[str, str]] = set()
# While problems() runs on a thread: the list its accessors' complaints go to instead of warnings.
_collecting = threading.local()


def _warn_once(name: str, value: str, message: str) -> None:
    """One DotComputeWarning per (variable, value) and process: settings are read on every call of
    their accessor, and a bad value should be pointed out once, not on every launch."""
    sink = getattr(_collecting, "sink", None)
    if sink is not None:
        sink.append(message)
        return
    with _warned_lock:
        if (name, value) in _warned:
            return
        _warned.add((name, value))
    warnings.warn(message, DotComputeWarning, stacklevel=_user_stacklevel())


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def warn_user(message: str) -> None:
    """A DotComputeWarning pointing at the user's line that led here (the first frame outside the
    package), not at the dotcompute module that noticed the problem."""
    warnings.warn(message, DotComputeWarning, stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """The stacklevel of the first frame outside the dotcompute package, so that the warning points
    at the user's line that started the runtime (``dc.devices()``), not at this module."""
    frame = sys._getframe(2)  # the accessor that called _warn_once: stacklevel 2 of warnings.warn there
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1


#: the whitespace stripped from around a setting's value: the C++ runtime strips the same ASCII set
#: (cpp/src/runtime.cpp, env()), so both sides see one value (str.strip() would also take \x1c-\x1f
#: and Unicode spaces, which the runtime keeps)
_SPACE = " \t\n\r\f\v"


def _get(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip(_SPACE) == "":
        return None
    return value.strip(_SPACE)


def _flag(name: str) -> bool:
    value = (_get(name) or "").lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name}={os.environ[name]!r} is not a boolean; use 1 or 0")


def default_cache_dir() -> Path:
    """The platform's user cache folder for dotcompute."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "dotcompute"
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else Path.home() / "AppData" / "Local") / "dotcompute" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dotcompute"


def cache_dir() -> Path:
    value = _get("DOTCOMPUTE_CACHE_DIR")
    return Path(value).expanduser() if value else default_cache_dir()


def cache_max_bytes() -> int | None:
    """``DOTCOMPUTE_CACHE_MAX_BYTES`` as a whole number of bytes, or None (not set, or not such a number:
    the native kernel cache then keeps its default bound, and the runtime warns once at start)."""
    value = _get("DOTCOMPUTE_CACHE_MAX_BYTES")
    # the native parse (cpp/src/runtime.cpp) takes digits only, fewer than 20 of them, after the same
    # strip of surrounding whitespace (tests/python/reliability/test_settings_agree.py)
    if value is None or not (value.isascii() and value.isdigit() and len(value) < 20):
        return None
    return int(value)


def cache_max_bytes_is_bad() -> str | None:
    """The raw ``DOTCOMPUTE_CACHE_MAX_BYTES`` when it is set but not a byte count, else None."""
    value = _get("DOTCOMPUTE_CACHE_MAX_BYTES")
    return value if value is not None and cache_max_bytes() is None else None


def default_device() -> str | None:
    """``DOTCOMPUTE_DEFAULT_DEVICE``: the accelerator spec the Array API functions use by default, or None."""
    return _get("DOTCOMPUTE_DEFAULT_DEVICE")


def plugin_dir() -> Path | None:
    value = _get("DOTCOMPUTE_PLUGIN_DIR")
    return Path(value) if value else None


def plugin_path() -> list[Path]:
    value = _get("DOTCOMPUTE_PLUGIN_PATH")
    if not value:
        return []
    return [Path(p).expanduser() for p in value.split(os.pathsep) if p]


def backends() -> list[str] | None:
    """The enabled backends, or None when every backend found is enabled."""
    value = _get("DOTCOMPUTE_BACKENDS")
    if value is None:
        return None
    return [b.strip().lower() for b in value.split(",") if b.strip()]


def unknown_backends(found: list[str] | None = None) -> list[str]:
    """Entries of ``DOTCOMPUTE_BACKENDS`` that name no backend: neither one dotcompute ships nor a
    plugin in ``found`` (the names the runtime discovered). A typo there ("opnecl") would otherwise
    silently disable the backend the user meant to keep."""
    known = set(BUILTIN_BACKENDS) | {name.lower() for name in (found or [])}
    return [b for b in (backends() or []) if b not in known]


def check_backends(found: list[str] | None = None) -> list[str]:
    """Warns once (DotComputeWarning) about each unknown ``DOTCOMPUTE_BACKENDS`` entry; returns them."""
    unknown_entries = unknown_backends(found)
    if unknown_entries:
        known = sorted(set(BUILTIN_BACKENDS) | set(found or []))
        names = ", ".join(repr(b) for b in unknown_entries)
        _warn_once("DOTCOMPUTE_BACKENDS", ",".join(unknown_entries),
                   f"DOTCOMPUTE_BACKENDS={os.environ.get('DOTCOMPUTE_BACKENDS', '')!r}: {names} "
                   f"{'is not a backend' if len(unknown_entries) == 1 else 'are not backends'} and "
                   f"{'is' if len(unknown_entries) == 1 else 'are'} ignored; known backends: {', '.join(known)}")
    return unknown_entries


def cxx() -> str | None:
    return _get("DOTCOMPUTE_CXX")


def debug() -> bool:
    return _flag("DOTCOMPUTE_DEBUG")


def log_level() -> int | None:
    """``DOTCOMPUTE_LOG`` as a ``logging`` level, or None (not set, or not a level: the logger keeps its
    default level and one DotComputeWarning says so -- a typo in a log setting must not stop the runtime)."""
    value = _get("DOTCOMPUTE_LOG")
    if value is None:
        return None
    if value.isdigit():
        return int(value)
    level = logging.getLevelName(value.upper())
    if not isinstance(level, int):
        _warn_once("DOTCOMPUTE_LOG", value,
                   f"DOTCOMPUTE_LOG={value!r} is not a log level (use debug, info, warning or error); "
                   f"the default level is used")
        return None
    return level


def cuda_driver() -> str | None:
    return _get("DOTCOMPUTE_CUDA_DRIVER")


def cuda_sim() -> bool:
    """DOTCOMPUTE_CUDA_SIM: the CUDA plugin runs on the CUDA simulator instead of a driver."""
    return _flag("DOTCOMPUTE_CUDA_SIM")


def cuda_sim_counters() -> bool:
    """DOTCOMPUTE_CUDA_SIM_COUNTERS: simulated kernels are built with the GPU-model counters."""
    return _flag("DOTCOMPUTE_CUDA_SIM_COUNTERS")


def nvrtc() -> str | None:
    return _get("DOTCOMPUTE_NVRTC")


#: The CPU backend's limit on its pool (cpp/backends/cpu: 1..4096 participants).
MAX_CPU_THREADS = 4096


def cpu_threads() -> int | None:
    """``DOTCOMPUTE_CPU_THREADS``, or None for the default (the number of cores).

    A value that is not a whole number in 1..4096 ("abc", "0", "-1") does not make ``cpu:0``
    unavailable -- it is the one device always present -- the CPU backend keeps its default thread
    count and one DotComputeWarning says so here.
    """
    value = _get("DOTCOMPUTE_CPU_THREADS")
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_CPU_THREADS:
        _warn_once("DOTCOMPUTE_CPU_THREADS", value,
                   f"DOTCOMPUTE_CPU_THREADS={value!r} is not a thread count in 1..{MAX_CPU_THREADS}; "
                   f"the default (the number of cores) is used")
        return None
    return number


def check_environment(found_backends: list[str] | None = None) -> None:
    """Reads every setting that has a fallback for a bad value, so that each bad value is warned
    about once when the runtime starts (not first when some later call happens to read it)."""
    cpu_threads()
    log_level()
    check_backends(found_backends)


def problems(found_backends: list[str] | None = None) -> list[str]:
    """What :func:`check_environment` warns about, as messages (``dotcompute info`` shows them every
    time, while the warnings come once per process)."""
    sink: list[str] = []
    _collecting.sink = sink
    try:
        check_environment(found_backends)
    finally:
        _collecting.sink = None
    # settings without a fallback raise when they are used (a kernel compile, the CUDA plugin's
    # start); info names them up front instead of listing them as if they were fine
    bad_bound = cache_max_bytes_is_bad()
    if bad_bound is not None:
        sink.append(f"DOTCOMPUTE_CACHE_MAX_BYTES={bad_bound!r} is not a whole number of bytes; the kernel cache "
                    f"keeps its default bound")
    for accessor in (debug, cuda_sim, cuda_sim_counters, cpu_spin_us):
        try:
            accessor()
        except ValueError as e:
            sink.append(f"{e} (an error when it is used)")
    return sink


def cpu_spin_us() -> int | None:
    value = _get("DOTCOMPUTE_CPU_SPIN_US")
    if value is None:
        return None
    if not value.isdigit():
        raise ValueError(f"DOTCOMPUTE_CPU_SPIN_US={value!r} must be a whole number of microseconds")
    return int(value)


def include_dir() -> Path | None:
    value = _get("DOTCOMPUTE_INCLUDE_DIR")
    return Path(value) if value else None


def profile_path() -> Path | None:
    """Where ``DOTCOMPUTE_PROFILE`` asks for the whole-program trace, or None."""
    value = _get("DOTCOMPUTE_PROFILE")
    return Path(value).expanduser() if value else None


def in_effect() -> dict[str, str]:
    """The ``DOTCOMPUTE_*`` variables set in the environment, known or not."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("DOTCOMPUTE_")}


def unknown() -> list[str]:
    """Set ``DOTCOMPUTE_*`` names that dotcompute does not understand (likely typos)."""
    return [k for k in in_effect() if k not in VARIABLES]


def configure_logging() -> None:
    """Apply ``DOTCOMPUTE_LOG`` to the ``dotcompute`` logger, with a stderr handler."""
    level = log_level()
    if level is None:
        return
    logger = logging.getLogger("dotcompute")
    logger.setLevel(level)
    if not any(getattr(h, "_dotcompute", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("dotcompute %(levelname)s %(name)s: %(message)s"))
        handler._dotcompute = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


@dataclass(frozen=True)
class Snapshot:
    """Every setting at one moment, as ``dotcompute info`` shows them."""

    cache_dir: Path
    plugin_dir: Path | None
    plugin_path: list[Path]
    backends: list[str] | None
    cxx: str | None
    debug: bool
    log_level: int | None
    cuda_driver: str | None
    nvrtc: str | None
    cpu_threads: int | None
    cpu_spin_us: int | None
    include_dir: Path | None


def snapshot() -> Snapshot:
    return Snapshot(cache_dir=cache_dir(), plugin_dir=plugin_dir(), plugin_path=plugin_path(), backends=backends(),
                    cxx=cxx(), debug=debug(), log_level=log_level(), cuda_driver=cuda_driver(), nvrtc=nvrtc(),
                    cpu_threads=cpu_threads(), cpu_spin_us=cpu_spin_us(), include_dir=include_dir())


__all__ = ["VARIABLES", "default_cache_dir", "cache_dir", "plugin_dir", "plugin_path", "backends", "cxx", "debug",
           "log_level", "cuda_driver", "nvrtc", "cpu_threads", "BUILTIN_BACKENDS", "MAX_CPU_THREADS",
           "unknown_backends", "check_backends", "check_environment", "problems", "warn_user", "cpu_spin_us",
           "include_dir", "profile_path", "cache_max_bytes", "cache_max_bytes_is_bad",
           "in_effect", "unknown", "configure_logging", "Snapshot", "snapshot"]
