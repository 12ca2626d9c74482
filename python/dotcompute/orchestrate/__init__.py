"""Running kernels well: device choice from measured history, fallback, retries, circuit breakers,
validation and ahead-of-time compilation. See docs/orchestration.md.

Importing this package (``import dotcompute`` does) registers the orchestrated launch with
``dc.launch`` and gives kernels their ``precompile`` method.
"""

from __future__ import annotations

from . import choose, launching
from . import history as history_module
from . import precompile as _precompile
from .history import History, history
from .launching import orchestrated_launch, run_fallback
from .precompile import precompile
from .resilience import (
    BreakerState,
    CircuitBreakers,
    CircuitOpenError,
    breakers,
    is_device_failure,
    is_transient,
    run_with_retries,
)
from .validate import OutputReport, ValidationReport, compare, validate

launching.install()
_precompile.install()

__all__ = ["BreakerState", "CircuitBreakers", "CircuitOpenError", "History", "OutputReport", "ValidationReport",
           "breakers", "choose", "compare", "history", "history_module", "is_device_failure", "is_transient",
           "launching", "orchestrated_launch", "precompile", "run_fallback", "run_with_retries", "validate"]
