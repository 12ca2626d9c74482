"""Kernels shared by the dask tests (defined in a test-suite module: they reach the workers by value)."""

from __future__ import annotations

import dotcompute as dc

OFFSET = 0.5


@dc.func
def square(v):
    return v * v


@dc.kernel
def axpb(x, a: dc.float32, b: dc.float32, out):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + b


@dc.kernel
def affine2d(x: dc.Buffer[dc.float32, 2], y: dc.Buffer[dc.float32, 2], s: dc.float32,
             out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = s * x[i, j] - y[i, j] + square(x[i, j]) + OFFSET


@dc.kernel
def split(x: dc.Buffer[dc.float64], lo: dc.Buffer[dc.int32], sq: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        lo[i] = dc.int32(x[i] // 1.0)
        sq[i] = x[i] * x[i]


@dc.kernel
def laplace(u: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    # the grown block's edge rows/columns have no neighbours: they are trimmed away after
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        if i > 0 and j > 0 and i < n - 1 and j < m - 1:
            out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
        else:
            out[i, j] = 0.0


@dc.kernel
def laplace_and_copy(u: dc.Buffer[dc.float32, 2], s: dc.float32, lap: dc.Buffer[dc.float32, 2],
                     copy: dc.Buffer[dc.float64, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        copy[i, j] = u[i, j]
        if i > 0 and j > 0 and i < n - 1 and j < m - 1:
            lap[i, j] = s * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        else:
            lap[i, j] = 0.0


@dc.kernel
def accumulate(x, out):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] += x[i]  # read and written: not an output


@dc.kernel(debug=True)
def out_of_bounds(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i + 1]  # the last item reads past the end


@dc.kernel
def heat(u: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    # clamped reads: only the grown block's outer ring (trimmed later) differs from a periodic step
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        lap = u[max(i - 1, 0), j] + u[min(i + 1, n - 1), j] + u[i, max(j - 1, 0)] + u[i, min(j + 1, m - 1)]
        out[i, j] = u[i, j] + 0.125 * (lap - 4.0 * u[i, j])
