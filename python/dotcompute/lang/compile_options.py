"""The options a kernel-language kernel is compiled with, per backend.

By default every backend computes ``+ - * /`` as numpy does, bit for bit: no floating-point
contraction (no FMA formed from ``a*b+c``). The CPU backend's compiler runs with
``-ffp-contract=off`` (its fixed flags, cpp/backends/cpu/src/compiler.cpp; repeated here so the
generated code carries what it relies on), NVRTC with ``--fmad=false``, OpenCL C sources start with
``#pragma OPENCL FP_CONTRACT OFF`` (the emitter prints it from ``ir.Kernel.contract``), and Metal
compiles with fast math off (the plugin's default: ``fastMathEnabled = NO``, MTLMathModeSafe).

``@dc.kernel(contract=True)`` allows only FMA contraction (``-ffp-contract=fast``, ``--fmad=true``,
``FP_CONTRACT ON``). ``@dc.kernel(fastmath=True)`` lets the backend compiler reorder float arithmetic,
contract, use approximate division, square roots and transcendentals, and assume no NaN or infinity --
what Numba's ``fastmath=True`` and Taichi's default ``fast_math`` allow; on Metal it is ``-ffast-math``,
which the plugin turns into ``fastMathEnabled = YES`` (Metal's own default). Metal has no
contraction-only mode (its math modes are safe, relaxed and fast), so ``contract=True`` compiles in the
safe mode there: contraction is a permission, never an obligation. The options are part of the
kernel-cache key, so a build never stands in for another.

The CPU backend's generated code also relies on ``-fwrapv`` (signed overflow wraps): it writes
wrapping integer arithmetic with the plain signed operators (lang/emit/helpers.py says why).
"""

from __future__ import annotations

import platform
from typing import Any

#: On the CPU backend, -ffast-math's parts rather than the flag itself: GCC before 13 (and Clang) link
#: crtfastmath.o into a shared object built with -ffast-math (or -funsafe-math-optimizations), whose
#: constructor turns on flush-to-zero for the whole process when the kernel is loaded -- numpy would
#: then silently compute subnormals as 0. These flags give the same freedom to the kernel's code only.
_CPU_FAST_MATH = ("-fno-math-errno -fno-trapping-math -fno-signed-zeros -fassociative-math -freciprocal-math "
                  "-ffinite-math-only -ffp-contract=fast")
#: x86-64 only (the CPU backend compiles for the host; GCC on other targets refuses the flag): fastmath
#: kernels are vectorised with 256-bit rather than 512-bit vectors, LLVM's default on Intel cores and so
#: what Numba's fastmath code uses. Measured on an AVX-512 Xeon (bench/speed_goals.py, one core, GCC 12):
#: the n-body inner loop's rsqrt/rcp estimates and Newton steps run ~0.82x Numba in zmm registers and
#: ~1.0x in ymm. Only the rounding of reductions the compiler reorders may change, which fastmath allows; IEEE kernels
#: keep the compiler's own choice.
if platform.machine().lower() in ("x86_64", "amd64"):
    _CPU_FAST_MATH += " -mprefer-vector-width=256"

#: Both GCC and Clang take these; the later of two -ffp-contract flags wins.
_CPU_BASE = "-fwrapv"
_CPU_IEEE = "-ffp-contract=off"
_CPU_CONTRACT = "-ffp-contract=fast"

FAST_MATH_OPTIONS = {"cpu": _CPU_FAST_MATH, "cuda": "--use_fast_math", "opencl": "-cl-fast-relaxed-math",
                     "metal": "-ffast-math"}
#: OpenCL: the source's FP_CONTRACT ON pragma alone (-cl-mad-enable would also allow a less accurate mad)
CONTRACT_OPTIONS = {"cpu": _CPU_CONTRACT, "cuda": "--fmad=true"}
IEEE_OPTIONS = {"cpu": _CPU_IEEE, "cuda": "--fmad=false"}


def contracts(kernel: Any) -> bool:
    """Whether ``kernel`` may have ``a*b+c`` fused into one rounding (``fastmath`` or ``contract``)."""
    return bool(getattr(kernel, "fastmath", False) or getattr(kernel, "contract", False))


def compile_options(kernel: Any, backend: str) -> str:
    """The compiler options ``kernel`` is compiled with on ``backend``."""
    if getattr(kernel, "fastmath", False):
        mode = FAST_MATH_OPTIONS.get(backend, "")
    elif getattr(kernel, "contract", False):
        mode = CONTRACT_OPTIONS.get(backend, "")
    else:
        mode = IEEE_OPTIONS.get(backend, "")
    if backend == "cpu":
        return f"{_CPU_BASE} {mode}"
    return mode


__all__ = ["FAST_MATH_OPTIONS", "CONTRACT_OPTIONS", "IEEE_OPTIONS", "compile_options", "contracts"]
