"""``dc.explain(expr, backend=None)``: the fused kernel that evaluating ``expr`` runs, as source text."""

from __future__ import annotations

from typing import Any

from .codegen import compile_kernel
from .evaluate import plan_elementwise
from .lazy import EVALUATE, LazyBuffer


def explain(expr: Any, backend: str | None = None) -> str:
    """The generated kernel-language source of the ONE kernel that computes ``expr``, and, with
    ``backend`` ("cpu", "cuda", "opencl", "metal"), the backend source it is compiled from."""
    if not isinstance(expr, LazyBuffer) or expr._op is None:
        return "# not a pending expression: evaluating it runs no kernel\n"
    key, lines, _, _ = plan_elementwise([expr], extras=False)
    kernel, text = compile_kernel(key, "dc_expr", lines)
    if backend is None:
        return text
    return text + "\n# ---- " + backend + " ----\n" + kernel.source(backend)


EVALUATE["explain"] = explain

__all__ = ["explain"]
