"""Array API 2024.12: the linear-algebra functions of the main namespace (matmul, matrix_transpose,
tensordot, vecdot), built on manipulation's functions (see docs/array-api.md).

``matmul`` is ``dotcompute.ops.matmul`` (OpenBLAS on host memory, CLBlast/cuBLAS or the tiled
kernel on devices), with numpy on host memory for what the kernels do not take (more than 3
dimensions, broadcast batches). ``tensordot`` moves the contracted axes together and makes one
matrix product; ``vecdot`` is a fused multiply-and-sum.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import expr as _expr
from .. import ops as _ops
from ..expr.types import SUPPORTED
from ..runtime import Buffer
from ._common import (
    as_buffer,
    concrete,
    fill,
    host,
    kernel_ok,
    no_device_path,
    normalize_axis,
    on_device,
    on_host,
    same_device,
    wrap,
)
from .manipulation import permute_dims, reshape

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def _ops_takes(a: Buffer, b: Buffer) -> bool:
    # ops.matmul: 1-D, 2-D, 3-D batches of one size or a 2-D side broadcast
    if a.ndim > 3 or b.ndim > 3:
        return False
    if a.ndim == 3 and b.ndim == 3:
        return a.shape[0] == b.shape[0]
    return True


def matmul(x1: Buffer, x2: Buffer, /, out: Buffer | None = None, *, accelerator: Any = "auto",
           kernel: str = "tiled") -> Any:
    """numpy's matmul: vectors, matrices and broadcast batches of them; numpy's result dtype."""
    if out is not None or not (isinstance(x1, Buffer) and isinstance(x2, Buffer)) or kernel != "tiled" \
            or accelerator not in (None, "auto"):
        return _ops.matmul(x1, x2, out, accelerator=accelerator, kernel=kernel)  # dotcompute's older form
    acc = same_device("dc.matmul", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("dc.matmul: operands must have at least one dimension (use * for scalars)")
    k1 = x1.shape[-1]
    k2 = x2.shape[-2] if x2.ndim > 1 else x2.shape[0]
    if k1 != k2:
        raise ValueError(f"dc.matmul: shapes {x1.shape} and {x2.shape} do not align ({k1} != {k2})")
    if _ops_takes(x1, x2) and (not on_host(x1) or x1.dtype.kind != "b"):
        if not on_host(x1) and x1.dtype != x2.dtype:
            # one dtype first, cast on the device (ops would cast through the host copy)
            t = np.result_type(x1.dtype, x2.dtype)
            x1, x2 = (x if x.dtype == t else concrete(x.astype(t)) for x in (x1, x2))
        with on_device(x1):
            return _ops.matmul(x1, x2)
    if on_host(x1) and on_host(x2):
        a, b = host(x1), host(x2)
        res = np.matmul(a, b)
        return fill(acc, res.shape, res.dtype, lambda v: v.__setitem__(..., res))
    if x1.ndim > 3 or x2.ndim > 3 or (x1.ndim >= 2 and x2.ndim >= 2 and x1.shape[:-2] != x2.shape[:-2]):
        return _batched_matmul(x1, x2)
    return _ops.matmul(x1, x2)  # dc.matmul's older path (batches broadcast by ops), which refuses the rest


def _batched_matmul(x1: Buffer, x2: Buffer) -> Buffer:
    """numpy's matmul over broadcast batch dimensions of any number, on the device: each operand
    broadcast to the common batch (an expression store, N-d by strides) and seen as one 3-d stack
    (a reshape of the same memory), one batched product, and the result reshaped back."""
    a = reshape(x1, (1, x1.shape[0])) if x1.ndim == 1 else x1  # numpy: a vector is a 1-row matrix,
    b = reshape(x2, (x2.shape[0], 1)) if x2.ndim == 1 else x2  # ... or a 1-column one, dropped after
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ValueError(f"dc.matmul: the batch dimensions of {x1.shape} and {x2.shape} do not broadcast") from None
    count = math.prod(batch)
    with on_device(a):
        product = _ops.matmul(_stacked(a, batch, count), _stacked(b, batch, count))
    shape = batch + (a.shape[-2], b.shape[-1])
    if x1.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if x2.ndim == 1:
        shape = shape[:-1]
    return reshape(product, shape)


def _stacked(x: Buffer, batch: tuple[int, ...], count: int) -> Buffer:
    full = batch + tuple(x.shape[-2:])
    if tuple(x.shape) != full:
        spread = x.accelerator.empty(full, x.dtype)
        spread[...] = x  # the broadcast, written by one generated kernel
        x = spread
    return reshape(x, (count, *x.shape[-2:]))


def matrix_transpose(x: Buffer, /) -> Buffer:
    """``x`` with its last two axes swapped (a stack of matrices transposed)."""
    x = as_buffer("dc.matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"dc.matrix_transpose: x must have at least 2 dimensions, got shape {x.shape}")

    return permute_dims(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _axes_pair(axes: int | tuple[Sequence[int], Sequence[int]], n1: int, n2: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, tuple | list):
        if len(axes) != 2:
            raise ValueError("dc.tensordot: axes must be an int or a pair of axis sequences")
        a1, a2 = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                  [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
        if len(a1) != len(a2):
            raise ValueError("dc.tensordot: the two axis sequences need the same length")
        return ([normalize_axis("dc.tensordot", a, n1) for a in a1],
                [normalize_axis("dc.tensordot", a, n2) for a in a2])
    k = operator.index(axes)
    if k < 0 or k > min(n1, n2):
        raise ValueError(f"dc.tensordot: axes={k} does not fit arrays of {n1} and {n2} dimensions")
    return list(range(n1 - k, n1)), list(range(k))


def tensordot(x1: Buffer, x2: Buffer, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Buffer:
    """Sum of products over the paired ``axes`` (the last ``axes`` of x1 with the first of x2)."""
    x1 = as_buffer("dc.tensordot", x1)
    x2 = as_buffer("dc.tensordot", x2, x1.accelerator)
    acc = same_device("dc.tensordot", x1, x2)
    a1, a2 = _axes_pair(axes, x1.ndim, x2.ndim)
    for p, q in zip(a1, a2, strict=True):
        if x1.shape[p] != x2.shape[q]:
            raise ValueError(f"dc.tensordot: axis {p} of x1 ({x1.shape[p]}) and axis {q} of x2 ({x2.shape[q]}) differ")
    if on_host(x1) and on_host(x2):
        return wrap(acc, np.tensordot(host(x1), host(x2), axes=(a1, a2)))
    free1 = [d for d in range(x1.ndim) if d not in a1]
    free2 = [d for d in range(x2.ndim) if d not in a2]
    k = math.prod(x1.shape[d] for d in a1)
    m, n = math.prod(x1.shape[d] for d in free1), math.prod(x2.shape[d] for d in free2)
    shape = tuple(x1.shape[d] for d in free1) + tuple(x2.shape[d] for d in free2)
    if not all(x.dtype in SUPPORTED and x.ndim <= 3 for x in (x1, x2)):
        raise no_device_path("dc.tensordot", acc, f"operands of shapes {x1.shape} and {x2.shape}")
    dtype = np.result_type(x1.dtype, x2.dtype)
    if 0 in (m, n, k):  # nothing to multiply: an empty result, or sums of no products (zeros)
        return acc.zeros(shape, dtype)

    def arranged(x: Buffer, order: list[int], rows: int, cols: int) -> Buffer:
        # 0-d operands and axes already in order need no transpose; reshape takes any dimensionality
        moved = x if order == list(range(x.ndim)) else permute_dims(x, tuple(order))
        return reshape(moved, (rows, cols))

    left = arranged(x1, [*free1, *a1], m, k)
    right = arranged(x2, [*a2, *free2], k, n)
    return reshape(_ops.matmul(left, right), shape)


def vecdot(x1: Buffer, x2: Buffer, /, *, axis: int = -1) -> Buffer:
    """The dot product of vectors along ``axis`` (x1 conjugated), broadcast over the other axes."""
    x1 = as_buffer("dc.vecdot", x1)
    x2 = as_buffer("dc.vecdot", x2, x1.accelerator)
    acc = same_device("dc.vecdot", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("dc.vecdot: operands must have at least one dimension")
    nd = max(x1.ndim, x2.ndim)
    ax = normalize_axis("dc.vecdot", axis, nd)
    s1 = (1,) * (nd - x1.ndim) + x1.shape
    s2 = (1,) * (nd - x2.ndim) + x2.shape
    if s1[ax] != s2[ax]:
        raise ValueError(f"dc.vecdot: axis {axis} has length {s1[ax]} in x1 and {s2[ax]} in x2")
    if on_host(x1) and on_host(x2):
        return wrap(acc, np.vecdot(host(x1), host(x2), axis=ax - nd))
    if not kernel_ok(x1, x2) or x1.dtype.kind == "c":
        raise no_device_path("dc.vecdot", acc, f"operands of {x1.dtype} and {x2.dtype}")
    # the product fuses into the reduction's input; numpy's vecdot keeps the operands' type
    # (uint8 stays uint8, where sum alone would accumulate in uint64)
    return _expr.sum(x1 * x2, ax, dtype=np.result_type(x1.dtype, x2.dtype))
