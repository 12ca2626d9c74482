"""Lazy array expressions on Buffers, fused into one generated kernel per expression.

``a * x + y * y - 3.0`` on Buffers builds a graph; its value is computed when needed by one
kernel generated in the kernel language (see docs/expressions.md). Importing this package
installs Buffer's operators (``runtime.array_hooks``) and the ``dc.*`` math functions' Buffer
path (``lang.builtins.ARRAY_CALL``); ``import dotcompute`` does it.
"""

from __future__ import annotations

from ..lang import builtins as _lang_builtins
from ..runtime import array_hooks as _hooks
from . import build, evaluate, indexing, ufuncs
from .build import clip, where
from .codegen import STATS
from .explain import explain
from .fuse import fuse
from .lazy import LazyBuffer
from .reduce import REDUCTIONS, argmax, argmin, max, mean, min, prod, sum  # noqa: A004
from .sync import synchronize


def stats() -> dict[str, int]:
    """Counters: ``kernels_generated`` (distinct kernels built), ``launches`` (generated kernels run) and
    ``values_written`` (arrays written by elementwise expression kernels)."""
    return dict(STATS)


_hooks.install(
    binary=build.binary, unary=build.unary, inplace=build.inplace, astype=build.astype,
    getitem=indexing.getitem, setitem=indexing.setitem, transpose=indexing.transpose, reshape=indexing.reshape,
    ufunc=ufuncs.array_ufunc, before_write=evaluate.before_write, before_launch=evaluate.before_launch,
    synchronize=evaluate.evaluate_all,
)
if not _lang_builtins.ARRAY_CALL:
    _lang_builtins.ARRAY_CALL.append(build.math_call)

__all__ = ["LazyBuffer", "explain", "fuse", "where", "clip", "stats", "synchronize", "sum", "prod", "min", "max",
           "mean", "argmin", "argmax", "REDUCTIONS"]
