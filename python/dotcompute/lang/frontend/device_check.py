"""``DeviceFunction.check`` for device functions that are inlined at their calls (vector, matrix or
struct parameters or results): their bodies are lowered as a call would lower them.

Apart from ``aggregates`` because it needs the ``ModuleBuilder`` (``module`` imports ``aggregates``).
"""

from __future__ import annotations

import sys
from typing import Any

from ...errors import KernelSyntaxError, KernelTypeError
from ..types import FLOAT32
from ..vectypes import VectorType, aggregate_type
from .aggregates import AggregateLowerer, NeedsInline
from .function import is_aggregate_param
from .module import ModuleBuilder
from .signature import return_spec_any


def check_device_function(fn: Any, decls: list[Any], types: tuple) -> bool:
    """``DeviceFunction.check`` for functions that are inlined (vector, matrix or struct parameters
    or results): lower the body as a call would. Returns False for other functions (checked the
    ordinary way). An unannotated parameter that the default (int64) does not fit is tried as a
    ``vec3`` too, as such functions are usually written for vectors."""
    parsed = fn.parsed()
    rspec = return_spec_any(parsed, None)
    agg = aggregate_type(rspec) is not None or any(is_aggregate_param(t) for t in types)
    if not agg:
        try:
            ModuleBuilder(debug=False).function_for(fn, types, parsed.tree, parsed.reporter)
            return True
        except NeedsInline:
            pass  # an unannotated function that returns an aggregate
        except (KernelSyntaxError, KernelTypeError):
            if not any(d.spec is None for d in decls):
                raise
            first = sys.exc_info()[1]
            alt = tuple(VectorType(3, FLOAT32) if d.spec is None else t for d, t in zip(decls, types, strict=True))
            try:
                _lower_inline_alone(fn, alt)
                return True
            except (KernelSyntaxError, KernelTypeError):
                raise first from None
    _lower_inline_alone(fn, types)
    return True


def _lower_inline_alone(fn: Any, types: tuple) -> None:
    parsed = fn.parsed()
    low = AggregateLowerer(parsed, ModuleBuilder(debug=False), list(types), is_kernel=False,
                           ir_name=f"{parsed.name}_check", inline=True)
    low.inline_body = low.stmts(parsed.tree.body)


__all__ = ["check_device_function"]
