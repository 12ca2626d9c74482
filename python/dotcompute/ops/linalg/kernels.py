"""The portable kernels of dc.linalg: flat buffers, a batch of matrices one after another.

The factorizations (Cholesky, LU with partial pivoting and the triangular solves after them) take
one work-item per matrix of the batch and run the textbook unblocked algorithm in it: right for the
stacks of small matrices that device code meets most (and exact in what numpy checks: pivots,
non-positive-definite and singular matrices are reported per matrix in ``info``); large single
matrices want the blocked version that is not written yet (docs/operations.md).
"""

from __future__ import annotations

import math

from .. import klang as dc


@dc.kernel
def diagonal(x: dc.Buffer, out: dc.Buffer, rows: dc.int64, cols: dc.int64, r0: dc.int64, c0: dc.int64,
             dlen: dc.int64):
    f = dc.global_id(0)
    if f < out.shape[0]:
        b = f // dlen
        i = f - b * dlen
        out[f] = x[b * rows * cols + (r0 + i) * cols + c0 + i]


@dc.kernel
def outer(a: dc.Buffer, b: dc.Buffer, out: dc.Buffer, m: dc.int64):
    f = dc.global_id(0)
    if f < out.shape[0]:
        out[f] = a[f // m] * b[f % m]


@dc.kernel
def cross3(a: dc.Buffer, b: dc.Buffer, out: dc.Buffer):
    # rows of 3 (the vector axis moved last): out = a x b, numpy's component order
    f = dc.global_id(0)
    if f < out.shape[0]:
        r = (f // 3) * 3
        k = f % 3
        i = r + (k + 1) % 3
        j = r + (k + 2) % 3
        out[f] = a[i] * b[j] - a[j] * b[i]


@dc.kernel
def rowdot(a: dc.Buffer, b: dc.Buffer, out: dc.Buffer, n: dc.int64):
    # out[r] = sum_k a[r, k] * b[r, k] (real dtypes: vecdot's conjugate is the value itself)
    r = dc.global_id(0)
    if r < out.shape[0]:
        s = out[r] * 0
        for k in range(n):
            s += a[r * n + k] * b[r * n + k]
        out[r] = s


@dc.kernel
def rowdot_conj(a: dc.Buffer, b: dc.Buffer, out: dc.Buffer, n: dc.int64):
    # complex vecdot: out[r] = sum_k conj(a[r, k]) * b[r, k] (out zeroed by the caller)
    r = dc.global_id(0)
    if r < out.shape[0]:
        s = out[r]
        for k in range(n):
            s += dc.conj(a[r * n + k]) * b[r * n + k]
        out[r] = s


@dc.kernel
def broadcast_copy(x: dc.Buffer, out: dc.Buffer, dims: dc.Buffer[dc.int64], strides: dc.Buffer[dc.int64],
                   nd: dc.int64):
    # out (C order, shape dims) = x broadcast: strides[d] is x's element stride, 0 on broadcast axes
    f = dc.global_id(0)
    if f < out.shape[0]:
        rem = f
        src = f * 0
        for d in range(nd):
            k = nd - 1 - d
            i = rem % dims[k]
            rem = rem // dims[k]
            src += i * strides[k]
        out[f] = x[src]


@dc.kernel
def rownorm(x: dc.Buffer, out: dc.Buffer, n: dc.int64, kind: dc.int32, p):  # p: the output's dtype
    # kind: 0 the 2-norm, 1 sum |x|, 2 max |x|, 3 min |x|, 4 count of non-zeros, 5 (sum |x|^p)^(1/p)
    r = dc.global_id(0)
    if r < out.shape[0]:
        s = out[r] * 0
        if kind == 3 and n > 0:
            s = abs(x[r * n])
        for k in range(n):
            v = abs(x[r * n + k])
            if kind == 0:
                s += v * v
            elif kind == 1:
                s += v
            elif kind == 2:
                s = max(s, v)
            elif kind == 3:
                s = min(s, v)
            elif kind == 4:
                if v != 0:
                    s += 1
            else:
                s += v ** p
        if kind == 0:
            s = dc.sqrt(s)
        elif kind == 5:
            s = s ** (1.0 / p)
        out[r] = s


@dc.kernel
def cast(x: dc.Buffer, out: dc.Buffer):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i]


@dc.kernel
def cholesky(a: dc.Buffer, info: dc.Buffer[dc.int32], n: dc.int64):
    # in place, lower triangle (the upper one zeroed); info[b] = 1 when matrix b is not positive definite.
    # Real symmetric or complex Hermitian (A = L L^H, numpy's lower factor): the diagonal is real,
    # L[i, j] = (A[i, j] - sum_k L[i, k] conj(L[j, k])) / L[j, j]; dc.conj and .real are no-ops on reals
    b = dc.global_id(0)
    if b < info.shape[0]:
        o = b * n * n
        info[b] = 0
        for j in range(n):
            d = a[o + j * n + j].real
            for k in range(j):
                d -= (dc.conj(a[o + j * n + k]) * a[o + j * n + k]).real
            if not d > 0:  # also NaN
                info[b] = 1
                d = d * 0 + math.nan
            else:
                d = dc.sqrt(d)
            a[o + j * n + j] = a[o] * 0 + d
            for i in range(j + 1, n):
                s = a[o + i * n + j]
                for k in range(j):
                    s -= a[o + i * n + k] * dc.conj(a[o + j * n + k])
                a[o + i * n + j] = s / d
            for i in range(j):
                a[o + i * n + j] = a[o] * 0


@dc.kernel
def lu_solve(a: dc.Buffer, rhs: dc.Buffer, info: dc.Buffer[dc.int32], det: dc.Buffer, n: dc.int64, m: dc.int64):
    # Gaussian elimination with partial pivoting of matrix b (n x n) applied to its m right-hand
    # sides (n x m, rows swapped alongside), then back substitution: rhs becomes the solution.
    # det[b] = the determinant (the pivots' product, its sign from the swaps); info[b] = 1 if singular.
    b = dc.global_id(0)
    if b < info.shape[0]:
        o = b * n * n
        q = b * n * m
        info[b] = 0
        dt = a[o] * 0 + 1
        for j in range(n):
            piv = j
            best = abs(a[o + j * n + j])
            for i in range(j + 1, n):
                v = abs(a[o + i * n + j])
                if v > best:
                    best = v
                    piv = i
            if piv != j:
                dt = -dt
                for k in range(n):
                    t = a[o + j * n + k]
                    a[o + j * n + k] = a[o + piv * n + k]
                    a[o + piv * n + k] = t
                for k in range(m):
                    t = rhs[q + j * m + k]
                    rhs[q + j * m + k] = rhs[q + piv * m + k]
                    rhs[q + piv * m + k] = t
            d = a[o + j * n + j]
            dt = dt * d
            if d == 0:
                info[b] = 1
            else:
                for i in range(j + 1, n):
                    f = a[o + i * n + j] / d
                    a[o + i * n + j] = f
                    for k in range(j + 1, n):
                        a[o + i * n + k] -= f * a[o + j * n + k]
                    for k in range(m):
                        rhs[q + i * m + k] -= f * rhs[q + j * m + k]
        det[b] = dt
        if info[b] == 0:
            for jj in range(n):
                j = n - 1 - jj
                d = a[o + j * n + j]
                for k in range(m):
                    s = rhs[q + j * m + k]
                    for i in range(j + 1, n):
                        s -= a[o + j * n + i] * rhs[q + i * m + k]
                    rhs[q + j * m + k] = s / d


@dc.kernel
def conj_transpose(x: dc.Buffer, out: dc.Buffer, n: dc.int64):
    # out[b, i, j] = conj(x[b, j, i]) for a batch of n x n matrices (the upper Cholesky factor L^H)
    f = dc.global_id(0)
    if f < out.shape[0]:
        b = f // (n * n)
        r = f - b * n * n
        i = r // n
        j = r - i * n
        out[f] = dc.conj(x[b * n * n + j * n + i])


@dc.kernel
def tri_solve(t: dc.Buffer, rhs: dc.Buffer, batches: dc.int64, n: dc.int64, m: dc.int64, lower: dc.int32,
              trans: dc.int32):
    # solves T X = B in place for matrix b's m right-hand sides: T lower or upper triangular as
    # stored; trans = 1 uses T's transpose (so one lower factor L serves L and L^T)
    b = dc.global_id(0)
    if b < batches:
        o = b * n * n
        q = b * n * m
        forward = (lower == 1) != (trans == 1)
        for jj in range(n):
            j = jj if forward else n - 1 - jj
            d = t[o + j * n + j]
            for k in range(m):
                s = rhs[q + j * m + k]
                for ii in range(jj):
                    i = ii if forward else n - 1 - ii
                    e = t[o + i * n + j] if trans == 1 else t[o + j * n + i]
                    s -= e * rhs[q + i * m + k]
                rhs[q + j * m + k] = s / d


__all__ = ["broadcast_copy", "cast", "cholesky", "conj_transpose", "cross3", "diagonal", "lu_solve", "outer", "rowdot",
           "rowdot_conj", "rownorm", "tri_solve"]
