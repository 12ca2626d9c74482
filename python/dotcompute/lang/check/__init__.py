"""Kernel checks for ``@dc.kernel`` kernels: memcheck, racecheck, synccheck, initcheck (docs/kernel-safety.md).

``dc.launch(..., check="memcheck,racecheck")``, ``@dc.kernel(check="all")`` or ``DOTCOMPUTE_CHECK=all``
run the kernel instrumented on the host first (printer.py: the CPU emitter's source with checked
accesses; runner.py: the run over copies and the report). Importing this package registers the
checked launch with lang/launching.py, which only tests whether ``DOTCOMPUTE_CHECK`` is set.
"""

from __future__ import annotations

from .layout import ALL_CHECKS
from .runner import Finding, checked_launch, run_checks
from .spec import CheckSpec, parse_check

__all__ = ["ALL_CHECKS", "CheckSpec", "Finding", "checked_launch", "parse_check", "run_checks"]
