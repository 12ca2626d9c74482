"""Kernel checks for ``@dc.kernel`` kernels: memcheck, racecheck, synccheck, initcheck (docs/kernel-safety.md).

``dc.launch(..., check="memcheck,racecheck")``, ``@dc.kernel(check="all")`` or ``DOTCOMPUTE_CHECK=all``
run the kernel instrumented on the host first (printer.py: the CPU emitter's source with checked
accesses; runner.py: the run over copies and the report). Importing this package registers the
checked launch with lang/launching.py, which only tests whether ``DOTCOMPUTE_CHECK`` is set, and the
raw MSL and CUDA kernels' checked launches with runtime/raw_kernel.py (raw_metal.py, raw_cuda.py).
"""

from __future__ import annotations

import os as _os

from ...runtime import raw_kernel as _raw_kernel
from . import raw_cuda as _raw_cuda
from . import raw_metal as _raw_metal
from .layout import ALL_CHECKS
from .runner import Finding, checked_launch, run_checks
from .spec import CheckSpec, env_check, parse_check

# DOTCOMPUTE_CHECK set when dotcompute starts: acc.empty memory is tracked for initcheck from the first
# buffer on (a bad value is reported by the first launch that reads it)
if _os.environ.get("DOTCOMPUTE_CHECK"):
    try:
        env_check(_os.environ["DOTCOMPUTE_CHECK"])
    except (TypeError, ValueError):
        pass

# raw MSL kernels: checked on the Metal test double (raw_metal.py)
_raw_kernel.RAW_CHECKERS["metal"] = _raw_metal.checked_runner
_raw_kernel.ENV_LAUNCH["metal"] = _raw_metal.env_launch
# raw CUDA kernels: checked on the CUDA simulator's trace build (raw_cuda.py)
_raw_kernel.RAW_CHECKERS["cuda"] = _raw_cuda.checked_runner
_raw_kernel.ENV_LAUNCH["cuda"] = _raw_cuda.env_launch

__all__ = ["ALL_CHECKS", "CheckSpec", "Finding", "checked_launch", "parse_check", "run_checks"]
