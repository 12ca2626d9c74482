"""The options a kernel-language kernel is compiled with, per backend.

Empty but for ``@dc.kernel(fastmath=True)``, which lets the backend compiler reorder float arithmetic,
use approximate division, square roots and transcendentals, and assume no NaN or infinity -- what
Numba's ``fastmath=True`` and Taichi's default ``fast_math`` allow. The options are part of the
kernel-cache key, so a fast-math build never stands in for an IEEE one. Metal compiles every kernel
with IEEE math (the plugin's fixed compile options), so there the flag changes nothing.
"""

from __future__ import annotations

from typing import Any

#: On the CPU backend, -ffast-math's parts rather than the flag itself: GCC before 13 (and Clang) link
#: crtfastmath.o into a shared object built with -ffast-math (or -funsafe-math-optimizations), whose
#: constructor turns on flush-to-zero for the whole process when the kernel is loaded -- numpy would
#: then silently compute subnormals as 0. These flags give the same freedom to the kernel's code only.
_CPU_FAST_MATH = ("-fno-math-errno -fno-trapping-math -fno-signed-zeros -fassociative-math -freciprocal-math "
                  "-ffinite-math-only")

FAST_MATH_OPTIONS = {"cpu": _CPU_FAST_MATH, "cuda": "--use_fast_math", "opencl": "-cl-fast-relaxed-math"}


def compile_options(kernel: Any, backend: str) -> str:
    """The compiler options ``kernel`` is compiled with on ``backend``."""
    return FAST_MATH_OPTIONS.get(backend, "") if getattr(kernel, "fastmath", False) else ""


__all__ = ["FAST_MATH_OPTIONS", "compile_options"]
