"""Array operations with numpy's names on every backend: reductions, scans, sorting, matmul, FFT.

Each family has its own module; ``dispatch`` picks, per call, the vendor fast path or the portable
kernel. See docs/operations.md.
"""

from . import dispatch, fft, linalg
from .dispatch import prefer
from .matmul import matmul
from .reduce import argmax, argmin, max, mean, min, prod, reduce, sum  # noqa: A004
from .scan import cumsum, scan
from .sort import argsort, sort, sort_by_key

__all__ = ["argmax", "argmin", "argsort", "cumsum", "dispatch", "fft", "linalg", "matmul", "max", "mean", "min",
           "prefer", "prod", "reduce", "scan", "sort", "sort_by_key", "sum"]
