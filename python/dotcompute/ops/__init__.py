"""Array operations with numpy's names on every backend: reductions, scans, sorting, matmul, FFT.

Each family has its own module; ``dispatch`` picks, per call, the vendor fast path or the portable
kernel. See docs/operations.md.
"""

from . import dispatch
from .dispatch import prefer
from .reduce import argmax, argmin, max, mean, min, prod, reduce, sum  # noqa: A004

__all__ = ["argmax", "argmin", "dispatch", "max", "mean", "min", "prefer", "prod", "reduce", "sum"]
