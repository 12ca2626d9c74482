"""The kernel language: ``@dc.kernel`` / ``@dc.func`` Python functions → typed IR → backend source.

See docs/kernel-language.md for the language itself.
"""

# The emitters are loaded with the package, not at the first launch: a kernel whose binary is
# already in the disk cache should start in a few milliseconds.
from ..runtime.layer_hooks import provide as _provide
from . import emit as _emit  # noqa: F401
from .builtins import (
    MATH,
    atomic_add,
    atomic_cas,
    atomic_exchange,
    atomic_max,
    atomic_min,
    atomic_sub,
    barrier,
    bitcast,
    global_id,
    global_size,
    grid_barrier,
    group_id,
    local_id,
    local_size,
    num_groups,
    shared,
    subgroup_count,
    subgroup_exclusive_sum,
    subgroup_id,
    subgroup_local_id,
    subgroup_max,
    subgroup_min,
    subgroup_shuffle,
    subgroup_size,
    subgroup_sum,
)
from .kernel import DeviceFunction, Kernel, func, kernel
from .quat import quat, quat_conjugate, quat_from_axis_angle, quat_mul, quat_rotate, quat_to_matrix
from .vectypes import buffer_annotation as _buffer_annotation
from .vectypes import (
    cross,
    determinant,
    dot,
    length,
    length_sq,
    mat22,
    mat33,
    mat44,
    matrix,
    normalize,
    outer,
    struct,
    transpose,
    vec2,
    vec3,
    vec4,
    vector,
)

_provide(buffer_annotation=_buffer_annotation)  # dc.Buffer[dtype, ndim] (the runtime must not import lang)

globals().update(MATH)

_MATH_EXPORTS = sorted(MATH)

__all__ = [
    "kernel", "func", "Kernel", "DeviceFunction",
    "global_id", "local_id", "group_id", "global_size", "local_size", "num_groups", "barrier", "grid_barrier",
    "shared", "atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_exchange", "atomic_cas",
    "bitcast",
    # vectors, matrices, structs (lang/vectypes.py)
    "vec2", "vec3", "vec4", "vector", "mat22", "mat33", "mat44", "matrix", "struct",
    "dot", "cross", "length", "length_sq", "normalize", "transpose", "outer", "determinant",
    "quat", "quat_mul", "quat_conjugate", "quat_from_axis_angle", "quat_rotate", "quat_to_matrix",
    "subgroup_size", "subgroup_local_id", "subgroup_id", "subgroup_count", "subgroup_sum", "subgroup_min",
    "subgroup_max", "subgroup_shuffle", "subgroup_exclusive_sum",
    *_MATH_EXPORTS,
]
