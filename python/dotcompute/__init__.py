"""dotcompute: write a compute kernel once in Python; run it on the CPU, CUDA, OpenCL or Metal.

The native runtime loads lazily: ``import dotcompute`` is cheap and works even
before any backend is touched; ``dc.devices()`` and friends start it.
"""

# ruff: noqa: I001 -- the import order is meaningful: later rooms (ops, expr) rebind numpy-named functions
# such as min/max/sum that the kernel language's star import also provides.
from __future__ import annotations

from .dtypes import (
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .errors import (
    BackendUnavailableError,
    CompilationError,
    DotComputeError,
    DotComputeWarning,
    KernelCheckError,
    KernelIndexError,
    KernelSyntaxError,
    KernelTypeError,
    LaunchError,
    OutOfMemoryError,
    PipelineError,
    PluginError,
)
from .lang import *  # noqa: F403 -- kernel, func, shared, global_id, ... (the language's own __all__)
from .lang import __all__ as _lang_all
from .launch import launch
from . import ops
from .ops import argsort, cumsum, fft, matmul, reduce, scan, sort, sort_by_key
from . import random  # dc.random: Philox4x32-10 generators on the device (random/)
from .ops import linalg  # dc.linalg: the Array API linalg extension (ops/linalg/)
# expr installs Buffer's operators; its reductions fuse pending expressions and hand the rest to ops
from . import expr
from .expr import argmax, argmin, clip, explain, fuse, max, mean, min, prod, sum, synchronize, where  # noqa: A004
from .orchestrate import validate  # importing orchestrate registers accelerator="best"/"gpu", fallback=, retries=
from .pipeline import Pipeline, PipelineRun
from .profile import profile
# the numpy / Array API namespace last: its names (sum, min, asarray, ...) are the top level's
from . import namespace as _namespace
from .namespace import *  # noqa: F403 -- the Array API's names (namespace/*.py __all__)
from .runtime import (
    Accelerator,
    BackendInfo,
    Buffer,
    Event,
    Memory,
    RawKernel,
    Stream,
    accelerator,
    backends,
    devices,
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dotcompute")
    except PackageNotFoundError:
        return "0.1.0"


# the Array API's constants and version (docs/array-api.md)
__array_api_version__ = "2024.12"
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
pi = 3.141592653589793
newaxis = None

# DESIGN.md spells the boolean type `bool`; numpy's name for it is bool_. Both work.
bool = bool_  # noqa: A001
del annotations  # the __future__ import is not part of the API

__version__ = _version()

__all__ = [
    "__version__",
    # runtime
    "Accelerator", "BackendInfo", "Buffer", "Event", "Memory", "RawKernel", "Stream",
    "accelerator", "backends", "devices", "launch",
    # running kernels well
    "profile", "validate",
    # pipelines
    "Pipeline", "PipelineRun",
    # errors
    "BackendUnavailableError", "CompilationError", "DotComputeError", "DotComputeWarning", "KernelIndexError",
    "KernelCheckError", "KernelSyntaxError",
    "KernelTypeError", "LaunchError", "OutOfMemoryError", "PluginError", "PipelineError",
    # dtypes
    "bool", "bool_", "complex64", "complex128", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    *_lang_all,
    # array operations (dc.min / dc.max also stay the kernel language's elementwise functions)
    "ops", "sum", "prod", "mean", "min", "max", "argmin", "argmax", "reduce", "cumsum", "scan", "matmul", "sort",
    "argsort", "sort_by_key", "fft",
    # array expressions (fusion)
    "expr", "explain", "fuse", "where", "clip", "synchronize",
]
__all__ += [name for name in _namespace.__all__ if name not in __all__]
__all__ += ["__array_api_version__", "e", "inf", "nan", "pi", "newaxis", "linalg", "random"]
