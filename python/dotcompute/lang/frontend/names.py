"""Identifiers that are safe in every target language (C++, CUDA C++, OpenCL C, MSL)."""

from __future__ import annotations

import hashlib
import re

from ..ir import MATH_FUNCTIONS

_C_WORDS = """
alignas alignof and and_eq asm atomic auto bitand bitor bool break case catch char char16_t char32_t
char8_t class compl complex concept const consteval constexpr constinit const_cast continue co_await
co_return co_yield decltype default delete do double dynamic_cast else enum explicit export extern
false float for friend goto half if imaginary inline int long mutable namespace new noexcept not
not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires restrict
return short signed sizeof static static_assert static_cast struct switch template this thread
thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while xor xor_eq main std NULL
__global __local __constant __private __kernel global local constant kernel device threadgroup
vertex fragment uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t int8_t int16_t int32_t
int64_t uint8_t uint16_t uint32_t uint64_t float2 float3 float4 int2 int3 int4 uint2 uint3 uint4
sampler image2d_t image3d_t event_t metal select clamp mix dot cross length normalize sign step
smoothstep mad fma native half_ rint nan INFINITY NAN assert printf memcpy memset malloc free
blockIdx blockDim threadIdx gridDim warpSize dim3 atomicAdd atomicCAS get_global_id get_local_id
get_group_id get_global_size get_local_size barrier mem_fence
"""

RESERVED: frozenset[str] = frozenset(_C_WORDS.split()) | frozenset(MATH_FUNCTIONS) | frozenset(
    {"fabsf", "sqrtf", "expf", "logf", "powf", "floorf", "ceilf", "isnan", "isinf", "isfinite", "signbit"})

_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")

# Names the targets' headers may define as macros (M_PI, FLT_MAX, INT_MAX, CL_VERSION_1_2,
# cl_khr_fp64, __CUDA_ARCH__, MAXFLOAT, ...): a macro would replace the identifier before the
# compiler sees it, so such names are never used as they are.
_MACRO_LIKE = re.compile(r"(?:[A-Z][A-Z0-9]*_[A-Z0-9_]*|cl_[A-Za-z0-9_]*|CL_[A-Za-z0-9_]*|MAXFLOAT|HUGE_VAL[FL]?|"
                         r"TRUE|FALSE|EOF|CUDART_[A-Z0-9_]*)\Z")


def is_safe_identifier(wanted: str) -> bool:
    """Whether ``wanted`` can appear as it is in every target's source."""
    return bool(_IDENT.match(wanted)) and wanted not in RESERVED and not wanted.startswith("dc_") \
        and not _MACRO_LIKE.match(wanted)


class NameAllocator:
    """Hands out unique, target-safe identifiers within one function (or module)."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self._taken: set[str] = set(taken or ())

    def reserve(self, name: str) -> None:
        self._taken.add(name)

    def fresh(self, wanted: str) -> str:
        base = wanted if is_safe_identifier(wanted) else _mangle(wanted)
        name = base
        n = 1
        while name in self._taken:
            name = f"{base}_{n}"
            n += 1
        self._taken.add(name)
        return name


def _mangle(wanted: str) -> str:
    ascii_part = re.sub(r"[^A-Za-z0-9_]", "", wanted).strip("_")
    if not ascii_part or not ascii_part[0].isalpha():
        ascii_part = "v" + ascii_part
    return f"v_{ascii_part}"


def short_hash(text: str, n: int = 8) -> str:
    """A stable (not process-randomised) hex digest used in specialisation suffixes."""
    return hashlib.sha1(text.encode()).hexdigest()[:n]


__all__ = ["RESERVED", "NameAllocator", "short_hash", "is_safe_identifier"]
