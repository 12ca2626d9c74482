"""Quaternions for rotations: ``dc.quat`` and a few device functions on it.

A quaternion is a ``vec4`` ``(x, y, z, w)`` with ``w`` the real part (so a buffer of them is a
float32 ``(n, 4)`` array, as numpy-quaternion users store them with the real part last). The
helpers are ordinary ``@dc.func`` device functions written in the kernel language, so they work
in kernels on every backend and, called on the host, on numpy arrays.
"""

from __future__ import annotations

import math

from .kernel import func
from .types import FLOAT32
from .vectypes import cross, mat33, normalize, vec3, vec4

#: the quaternion type: ``dc.quat(x, y, z, w)``, the identity rotation is ``dc.quat(0, 0, 0, 1)``
quat = vec4


@func
def quat_mul(a: quat, b: quat) -> quat:
    """The Hamilton product ``a * b`` (rotate by ``b``, then by ``a``)."""
    return quat(a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2])


@func
def quat_conjugate(q: quat) -> quat:
    """The inverse rotation of a unit quaternion."""
    return quat(-q[0], -q[1], -q[2], q[3])


@func
def quat_from_axis_angle(axis: vec3, angle: FLOAT32) -> quat:
    """The rotation by ``angle`` radians about ``axis`` (any length but zero)."""
    u = normalize(axis)
    s = math.sin(angle * 0.5)
    return quat(u[0] * s, u[1] * s, u[2] * s, math.cos(angle * 0.5))


@func
def quat_rotate(q: quat, v: vec3) -> vec3:
    """``v`` rotated by the unit quaternion ``q`` (two cross products, no matrix)."""
    u = vec3(q[0], q[1], q[2])
    t = 2.0 * cross(u, v)
    return v + q[3] * t + cross(u, t)


@func
def quat_to_matrix(q: quat) -> mat33:
    """The rotation matrix of the unit quaternion ``q`` (``quat_to_matrix(q) @ v == quat_rotate(q, v)``)."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    return mat33(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
                 2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
                 2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y))


__all__ = ["quat", "quat_mul", "quat_conjugate", "quat_from_axis_angle", "quat_rotate", "quat_to_matrix"]
