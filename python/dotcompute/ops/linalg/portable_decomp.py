"""Portable decompositions of dc.linalg: eigh, SVD, QR and slogdet in the kernel language.

Same layout as kernels.py: flat buffers holding a batch of row-major matrices one after another,
one work-item per matrix, the textbook unblocked algorithm inside it. The iterative ones are
Jacobi methods because they need nothing but plane rotations (no shifts, no deflation logic) and
are accurate to working precision on small matrices:

* ``jacobi_eigh``: cyclic two-sided Jacobi on a symmetric matrix, sweeps until the off-diagonal
  mass is below ``tol`` of the whole (or 30 sweeps), then eigenvalues sorted ascending with their
  eigenvector columns.
* ``hestenes_svd``: one-sided Jacobi (Hestenes) orthogonalising the columns of an m x n matrix,
  m >= n (the caller transposes otherwise); singular values are the column norms, sorted
  descending; columns of U for zero singular values and the m - n extra ones of a full U are
  completed by Gram-Schmidt against the unit vector that is farthest from the span so far.
* ``householder_qr``: Householder reflections, then Q formed by applying them to the identity.
* ``lu_slogdet``: partial-pivot LU keeping sign and sum of log |pivot| (no overflow of the product).

The host side (shapes, dtypes, transposes) is in functions.py, which calls the drivers below.
"""

from __future__ import annotations

import math

import numpy as np

from ...runtime import Buffer
from .. import klang as dc

SWEEPS = 30  # Jacobi converges quadratically: a handful of sweeps suffice; this only bounds bad input


@dc.kernel
def jacobi_eigh(a: dc.Buffer, v: dc.Buffer, w: dc.Buffer, batches: dc.int64, n: dc.int64, tol):
    # a: n x n, real symmetric or complex Hermitian as its lower triangle says (numpy's UPLO="L"),
    # destroyed (becomes diagonal); v: the eigenvectors as columns; w (real, tol's dtype): eigenvalues.
    # Complex pairs: column q is first turned by the conjugate phase of a[p, q] (row q by the phase),
    # which makes a[p, q] real, then the real rotation applies (dc.conj/.real: no-ops on reals).
    b = dc.global_id(0)
    if b < batches:
        o = b * n * n
        z = tol * 0
        for i in range(n):
            a[o + i * n + i] = z + a[o + i * n + i].real
            for j in range(n):
                v[o + i * n + j] = z + 1 if i == j else z
                if j > i:
                    a[o + i * n + j] = dc.conj(a[o + j * n + i])
        sweep = 0
        busy = 1
        while busy == 1 and sweep < SWEEPS:
            off = z
            tot = z
            for i in range(n):
                for j in range(n):
                    e = a[o + i * n + j]
                    e2 = (dc.conj(e) * e).real
                    tot += e2
                    if i != j:
                        off += e2
            if not off > tol * tol * tot:  # also an all-zero matrix
                busy = 0
            else:
                for p in range(n - 1):
                    for q in range(p + 1, n):
                        apq = a[o + p * n + q]
                        g = abs(apq)
                        if g != 0:
                            ph = dc.conj(apq / g)
                            th = (a[o + q * n + q].real - a[o + p * n + p].real) / (2 * g)
                            t = 1 / (abs(th) + dc.sqrt(th * th + 1))
                            if th < 0:
                                t = -t
                            c = 1 / dc.sqrt(t * t + 1)
                            s = t * c
                            for k in range(n):  # A <- A D J (columns p, q), V <- V D J
                                x = a[o + k * n + p]
                                y = a[o + k * n + q] * ph
                                a[o + k * n + p] = c * x - s * y
                                a[o + k * n + q] = s * x + c * y
                                x = v[o + k * n + p]
                                y = v[o + k * n + q] * ph
                                v[o + k * n + p] = c * x - s * y
                                v[o + k * n + q] = s * x + c * y
                            for k in range(n):  # A <- J^T D^H A (rows p, q)
                                x = a[o + p * n + k]
                                y = a[o + q * n + k] * dc.conj(ph)
                                a[o + p * n + k] = c * x - s * y
                                a[o + q * n + k] = s * x + c * y
                sweep += 1
        for i in range(n):
            w[b * n + i] = a[o + i * n + i].real
        for i in range(n):  # selection sort, ascending, moving the vectors along
            best = i
            for j in range(i + 1, n):
                if w[b * n + j] < w[b * n + best]:
                    best = j
            if best != i:
                tw = w[b * n + i]
                w[b * n + i] = w[b * n + best]
                w[b * n + best] = tw
                for k in range(n):
                    tv = v[o + k * n + i]
                    v[o + k * n + i] = v[o + k * n + best]
                    v[o + k * n + best] = tv


@dc.kernel
def hestenes_svd(a: dc.Buffer, u: dc.Buffer, s: dc.Buffer, vh: dc.Buffer, batches: dc.int64, m: dc.int64,
                 n: dc.int64, ku: dc.int64, tol, ucut):
    # a: m x n (m >= n), real or complex, destroyed (its columns become U S); s: n real values;
    # vh: n x n; u: m x ku (ku = 0: singular values only, n: reduced, m: full). tol (eps) and ucut
    # (m * eps, from the host: int64 * float32 would be float64, which Metal lacks): s's dtype.
    # Complex pairs: column q is first turned by the phase of a_p^H a_q, which makes that product
    # real, then the real rotation applies (dc.conj and .real are no-ops on real values).
    b = dc.global_id(0)
    if b < batches:
        o = b * m * n
        ov = b * n * n
        z = tol * 0
        for i in range(n):
            for j in range(n):
                vh[ov + i * n + j] = z + 1 if i == j else z  # rows: V's columns, conjugated at the end
        sweep = 0
        busy = 1
        while busy == 1 and sweep < SWEEPS:
            busy = 0
            for p in range(n - 1):
                for q in range(p + 1, n):
                    al = z
                    be = z
                    ga = a[o + p] * 0
                    for k in range(m):
                        x = a[o + k * n + p]
                        y = a[o + k * n + q]
                        al += (dc.conj(x) * x).real
                        be += (dc.conj(y) * y).real
                        ga += dc.conj(x) * y
                    g = abs(ga)
                    if g != 0 and g > tol * dc.sqrt(al * be):
                        busy = 1
                        ph = dc.conj(ga / g)
                        ze = (be - al) / (2 * g)
                        tr = 1 / (abs(ze) + dc.sqrt(ze * ze + 1))
                        if ze < 0:
                            tr = -tr
                        c = 1 / dc.sqrt(tr * tr + 1)
                        sn = tr * c
                        for k in range(m):
                            x = a[o + k * n + p]
                            y = a[o + k * n + q] * ph
                            a[o + k * n + p] = c * x - sn * y
                            a[o + k * n + q] = sn * x + c * y
                        for k in range(n):
                            x = vh[ov + p * n + k]
                            y = vh[ov + q * n + k] * ph
                            vh[ov + p * n + k] = c * x - sn * y
                            vh[ov + q * n + k] = sn * x + c * y
            sweep += 1
        for i in range(n * n):
            vh[ov + i] = dc.conj(vh[ov + i])
        for j in range(n):
            sq = z
            for k in range(m):
                sq += (dc.conj(a[o + k * n + j]) * a[o + k * n + j]).real
            s[b * n + j] = dc.sqrt(sq)
        for i in range(n):  # selection sort, descending, moving columns of a and rows of vh along
            best = i
            for j in range(i + 1, n):
                if s[b * n + j] > s[b * n + best]:
                    best = j
            if best != i:
                ts = s[b * n + i]
                s[b * n + i] = s[b * n + best]
                s[b * n + best] = ts
                for k in range(m):
                    ta = a[o + k * n + i]
                    a[o + k * n + i] = a[o + k * n + best]
                    a[o + k * n + best] = ta
                for k in range(n):
                    ta = vh[ov + i * n + k]
                    vh[ov + i * n + k] = vh[ov + best * n + k]
                    vh[ov + best * n + k] = ta
        if ku > 0:
            ou = b * m * ku
            cut = z
            if n > 0:
                cut = s[b * n] * ucut
            r = 0  # the numerical rank: columns of U that come from A
            for j in range(n):
                sj = s[b * n + j]
                if sj > cut and sj > 0:
                    r += 1
                    for k in range(m):
                        u[ou + k * ku + j] = a[o + k * n + j] / sj
            for j in range(r, ku):
                # complete the basis: of the unit vectors e_c, the one farthest from span(u_0..u_j-1),
                # orthogonalised twice (Gram-Schmidt loses orthogonality once, not twice)
                bestc = 0
                bestr = z - 1
                for cc in range(m):
                    res = z + 1
                    for l in range(j):
                        e = u[ou + cc * ku + l]
                        res -= (dc.conj(e) * e).real
                    if res > bestr:
                        bestr = res
                        bestc = cc
                for k in range(m):
                    u[ou + k * ku + j] = z + 1 if k == bestc else z
                for _rep in range(2):
                    for l in range(j):
                        d = u[ou + j] * 0  # u's element type (row 0 of column j is set: finite)
                        for k in range(m):
                            d += dc.conj(u[ou + k * ku + l]) * u[ou + k * ku + j]
                        for k in range(m):
                            u[ou + k * ku + j] -= d * u[ou + k * ku + l]
                nrm = z
                for k in range(m):
                    nrm += (dc.conj(u[ou + k * ku + j]) * u[ou + k * ku + j]).real
                nrm = dc.sqrt(nrm)
                for k in range(m):
                    u[ou + k * ku + j] = u[ou + k * ku + j] / nrm


@dc.kernel
def householder_qr(a: dc.Buffer, tau: dc.Buffer, q: dc.Buffer, r: dc.Buffer, batches: dc.int64, m: dc.int64,
                   n: dc.int64, kq: dc.int64):
    # a: m x n (m, n > 0), destroyed (R above the diagonal, the reflectors' tails below); q: m x kq;
    # r: kq x n. Real or complex: H = I - tau v v^H with a real beta on R's diagonal (H^H is what
    # reduces a column; dc.conj is a no-op on real values)
    b = dc.global_id(0)
    if b < batches:
        o = b * m * n
        k = min(m, n)
        ot = b * k
        z = a[o] * 0
        zr = abs(a[o]) * 0
        for j in range(k):
            nrm = zr
            for i in range(j, m):
                nrm += (dc.conj(a[o + i * n + j]) * a[o + i * n + j]).real
            nrm = dc.sqrt(nrm)
            tau[ot + j] = z
            if nrm > 0:
                al = a[o + j * n + j]
                be = nrm if al.real < 0 else -nrm  # the sign that avoids cancellation in al - be
                sc = al - be
                for i in range(j + 1, m):
                    a[o + i * n + j] = a[o + i * n + j] / sc
                tj = (be - al) / be
                tau[ot + j] = tj
                a[o + j * n + j] = z + be
                for c in range(j + 1, n):  # H^H applied, v = (1, a[j+1:, j])
                    w = a[o + j * n + c]
                    for i in range(j + 1, m):
                        w += dc.conj(a[o + i * n + j]) * a[o + i * n + c]
                    w = w * dc.conj(tj)
                    a[o + j * n + c] -= w
                    for i in range(j + 1, m):
                        a[o + i * n + c] -= w * a[o + i * n + j]
        oq = b * m * kq
        for i in range(m):
            for c in range(kq):
                q[oq + i * kq + c] = z + 1 if i == c else z
        for jj in range(k):  # Q = H_0 H_1 ... H_k-1 I, the last reflector applied first
            j = k - 1 - jj
            tj = tau[ot + j]
            if abs(tj) != 0:
                for c in range(kq):
                    w = q[oq + j * kq + c]
                    for i in range(j + 1, m):
                        w += dc.conj(a[o + i * n + j]) * q[oq + i * kq + c]
                    w = w * tj
                    q[oq + j * kq + c] -= w
                    for i in range(j + 1, m):
                        q[oq + i * kq + c] -= w * a[o + i * n + j]
        orr = b * kq * n
        for i in range(kq):
            for c in range(n):
                r[orr + i * n + c] = a[o + i * n + c] if c >= i else z


@dc.kernel
def lu_slogdet(a: dc.Buffer, sign: dc.Buffer, logdet: dc.Buffer, batches: dc.int64, n: dc.int64):
    # partial-pivot LU of matrix b in place; a zero pivot gives (0, -inf) as numpy does. Real or
    # complex: sign is the product of the pivots' d / |d| (and -1 per swap), logdet (real) the sum
    # of log |d|. sign and logdet are zeroed by the driver: their elements give typed zeros.
    b = dc.global_id(0)
    if b < batches:
        o = b * n * n
        z = logdet[b]
        sg = sign[b] + 1
        ld = z
        for j in range(n):
            piv = j
            best = abs(a[o + j * n + j])
            for i in range(j + 1, n):
                x = abs(a[o + i * n + j])
                if x > best:
                    best = x
                    piv = i
            if piv != j:
                sg = -sg
                for k in range(n):
                    t = a[o + j * n + k]
                    a[o + j * n + k] = a[o + piv * n + k]
                    a[o + piv * n + k] = t
            d = a[o + j * n + j]
            ad = abs(d)
            if ad == 0:
                sg = sg * 0
            else:
                sg = sg * (d / ad)
                ld += math.log(ad)
                for i in range(j + 1, n):
                    f = a[o + i * n + j] / d
                    for k in range(j + 1, n):
                        a[o + i * n + k] -= f * a[o + j * n + k]
        sign[b] = sg
        if abs(sg) == 0:
            logdet[b] = z - math.inf
        else:
            logdet[b] = ld


@dc.kernel
def pinv_assemble(u: dc.Buffer, s: dc.Buffer, vh: dc.Buffer, cut: dc.Buffer, out: dc.Buffer, m: dc.int64,
                  n: dc.int64, k: dc.int64):
    # out[b] (n x m) = V diag(1/s, 0 where s <= cut[b]) U^H, from the reduced SVD (u: m x k, vh: k x n)
    f = dc.global_id(0)
    if f < out.shape[0]:
        b = f // (n * m)
        e = f - b * n * m
        j = e // m
        i = e - j * m
        acc = vh[b * k * n + j] * 0  # out is uninitialised: its NaNs would survive * 0
        for l in range(k):
            sl = s[b * k + l]
            if sl > cut[b]:
                acc += dc.conj(vh[b * k * n + l * n + j]) * dc.conj(u[b * m * k + i * k + l]) / sl
        out[f] = acc


@dc.kernel
def count_above(s: dc.Buffer, cut: dc.Buffer, out: dc.Buffer[dc.int64], k: dc.int64):
    b = dc.global_id(0)
    if b < out.shape[0]:
        c = 0
        for l in range(k):
            if s[b * k + l] > cut[b]:
                c += 1
        out[b] = c


@dc.kernel
def scaled_max(s: dc.Buffer, rtol: dc.Buffer, cut: dc.Buffer, k: dc.int64):
    # cut[b] = rtol[b] * max(s[b]) (s descending: its first value)
    b = dc.global_id(0)
    if b < cut.shape[0]:
        if k > 0:
            cut[b] = rtol[b] * s[b * k]
        else:
            cut[b] = rtol[b] * 0


# ------------------------------------------------------------------------------------- drivers
def eigh(a: Buffer, batches: int, n: int, vectors: bool = True) -> tuple[Buffer, Buffer]:
    """(w, v) of the flat symmetric stack ``a`` (a private copy, destroyed)."""
    acc, dt = a.accelerator, a.dtype
    real = np.finfo(dt).dtype
    w = acc.empty((batches * n,), real)
    v = acc.empty((batches * n * n,), dt)
    if batches and n:
        acc.launch(jacobi_eigh, batches, a, v, w, batches, n, real.type(np.finfo(dt).eps))
    return w, v


def svd(a: Buffer, batches: int, m: int, n: int, ku: int) -> tuple[Buffer, Buffer, Buffer]:
    """(u, s, vh) of the flat m x n stack ``a`` (m >= n; a private copy, destroyed); u is m x ku.

    ``a`` real or complex; s is of the matching real dtype."""
    acc, dt = a.accelerator, a.dtype
    real = np.finfo(dt).dtype
    u = acc.empty((batches * m * ku,), dt)
    s = acc.empty((batches * n,), real)
    vh = acc.empty((batches * n * n,), dt)
    if batches:
        eps = np.finfo(dt).eps
        acc.launch(hestenes_svd, batches, a, u, s, vh, batches, m, n, ku, real.type(eps), real.type(m * eps))
    return u, s, vh


def qr(a: Buffer, batches: int, m: int, n: int, kq: int) -> tuple[Buffer, Buffer]:
    """(q, r) of the flat m x n stack ``a`` (destroyed): q is m x kq, r is kq x n."""
    acc, dt = a.accelerator, a.dtype
    tau = acc.empty((max(batches * min(m, n), 1),), dt)
    q = acc.empty((batches * m * kq,), dt)
    r = acc.empty((batches * kq * n,), dt)
    if batches and m * n:
        acc.launch(householder_qr, batches, a, tau, q, r, batches, m, n, kq)
    elif batches:  # no reflectors: Q is the identity's first kq columns, R all zeros
        eye = np.broadcast_to(np.eye(m, kq, dtype=dt), (batches, m, kq))
        q.copy_from(np.ascontiguousarray(eye).reshape(-1))
        r.copy_from(np.zeros(r.size, dt))
    return q, r


def slogdet(a: Buffer, batches: int, n: int) -> tuple[Buffer, Buffer]:
    acc, dt = a.accelerator, a.dtype
    sign, logdet = acc.zeros((batches,), dt), acc.zeros((batches,), np.finfo(dt).dtype)
    if batches:
        acc.launch(lu_slogdet, batches, a, sign, logdet, batches, n)
    return sign, logdet


def cutoffs(s: Buffer, rtol: Buffer, batches: int, k: int) -> Buffer:
    """rtol[b] * max(s[b]) per matrix on the device."""
    cut = s.accelerator.empty((batches,), s.dtype)
    if batches:
        s.accelerator.launch(scaled_max, batches, s, rtol, cut, k)
    return cut


def pinv(u: Buffer, s: Buffer, vh: Buffer, cut: Buffer, batches: int, m: int, n: int) -> Buffer:
    """The flat n x m pseudo-inverses from the reduced SVD of m x n matrices."""
    out = u.accelerator.empty((batches * n * m,), u.dtype)
    if out.size:
        u.accelerator.launch(pinv_assemble, out.size, u, s, vh, cut, out, m, n, min(m, n))
    return out


def rank(s: Buffer, cut: Buffer, batches: int, k: int) -> Buffer:
    out = s.accelerator.empty((batches,), np.int64)
    if batches:
        s.accelerator.launch(count_above, batches, s, cut, out, k)
    return out


__all__ = ["count_above", "cutoffs", "eigh", "hestenes_svd", "householder_qr", "jacobi_eigh", "lu_slogdet",
           "pinv", "pinv_assemble", "qr", "rank", "scaled_max", "slogdet", "svd"]
