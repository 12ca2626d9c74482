"""The portable decompositions (ops/linalg/portable_decomp.py) on every device: eigh, eigvalsh, svd,
svdvals, pinv, matrix_rank, slogdet and qr, checked by what defines them (reconstruction,
orthogonality, ordering) and against numpy.linalg; cpu:0 runs them under prefer("portable")."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

import dotcompute as dc

L = dc.linalg
RS = np.random.default_rng(7)
X = RS.standard_normal((2, 3, 5, 5))
SYM = X + np.swapaxes(X, -1, -2)
TALL = RS.standard_normal((3, 6, 4))
# rank 2 of 4: products of thin factors, plus an all-zero matrix
LOW = RS.standard_normal((3, 5, 2)) @ RS.standard_normal((3, 2, 4))
LOW[2] = 0


def _portable(acc: dc.Accelerator):  # noqa: ANN202
    return dc.ops.prefer("portable") if dc.ops.dispatch.host_cpu(acc) else nullcontext()


def _dtypes(acc: dc.Accelerator) -> list[type]:
    return [np.float32] if acc.backend == "metal" else [np.float32, np.float64]


def _tol(t: type) -> float:
    return 5e-5 if t == np.float32 else 1e-12


def _on(acc: dc.Accelerator, b: dc.Buffer) -> np.ndarray:
    assert isinstance(b, dc.Buffer) and b.accelerator is acc
    return b.numpy()


def _orthonormal_columns(q: np.ndarray, tol: float) -> None:
    eye = np.eye(q.shape[-1])
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(eye, q.shape[:-2] + eye.shape),
                               atol=tol * 10)


def test_eigh_and_eigvalsh(accelerator: dc.Accelerator) -> None:
    for t in _dtypes(accelerator):
        h, tol = SYM.astype(t), _tol(t)
        scale = np.abs(SYM).max()
        with _portable(accelerator):
            w, v = (_on(accelerator, b) for b in L.eigh(accelerator.asarray(h)))
            wv = _on(accelerator, L.eigvalsh(accelerator.asarray(h)))
        assert w.shape == (2, 3, 5) and v.shape == (2, 3, 5, 5) and w.dtype == t
        assert np.all(np.diff(w, axis=-1) >= 0)  # ascending, as numpy
        np.testing.assert_allclose(w, np.linalg.eigvalsh(SYM), atol=tol * scale * 10)
        np.testing.assert_allclose(wv, w, atol=tol * scale)
        np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=tol * scale * 10)
        _orthonormal_columns(v, tol)


def test_complex_hermitian_eigh_reads_the_lower_triangle(accelerator: dc.Accelerator) -> None:
    z = X[0] + 1j * X[1]  # not Hermitian: numpy (and we) use its lower triangle only
    h = np.tril(z, -1) + np.conj(np.swapaxes(np.tril(z, -1), -1, -2)) + np.real(z) * np.eye(5)
    for t in [np.complex64] if accelerator.backend == "metal" else [np.complex64, np.complex128]:
        tol = 1e-4 if t == np.complex64 else 1e-12
        with _portable(accelerator):
            w, v = (_on(accelerator, b) for b in L.eigh(accelerator.asarray(z.astype(t))))
        assert w.dtype == np.finfo(t).dtype and v.dtype == t
        np.testing.assert_allclose(w, np.linalg.eigvalsh(z), atol=tol * 10)
        np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=tol * 10)
        eye = np.broadcast_to(np.eye(5), v.shape)
        np.testing.assert_allclose(np.conj(np.swapaxes(v, -1, -2)) @ v, eye, atol=tol)
    with _portable(accelerator):  # real: the upper triangle is ignored as well
        w = _on(accelerator, L.eigvalsh(accelerator.asarray(X[0].astype(np.float32))))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(X[0]), atol=1e-4)


def test_eigh_of_repeated_eigenvalues(accelerator: dc.Accelerator) -> None:
    q = np.linalg.qr(RS.standard_normal((4, 4)))[0]
    h = (q * np.array([2.0, 2.0, -1.0, 0.0])) @ q.T  # a double eigenvalue and a zero one
    with _portable(accelerator):
        w, v = (_on(accelerator, b) for b in L.eigh(accelerator.asarray(h.astype(np.float32))))
    np.testing.assert_allclose(w, [-1, 0, 2, 2], atol=1e-5)
    np.testing.assert_allclose(h @ v, v * w, atol=1e-5)
    _orthonormal_columns(v, 1e-5)


@pytest.mark.parametrize("x", [TALL, np.swapaxes(TALL, -1, -2), LOW], ids=["tall", "wide", "rank-deficient"])
def test_svd(accelerator: dc.Accelerator, x: np.ndarray) -> None:
    m, n = x.shape[-2:]
    k = min(m, n)
    for t in _dtypes(accelerator):
        a, tol = accelerator.asarray(np.ascontiguousarray(x, dtype=t)), _tol(t) * 10
        with _portable(accelerator):
            full = [_on(accelerator, b) for b in L.svd(a)]
            red = [_on(accelerator, b) for b in L.svd(a, full_matrices=False)]
            vals = _on(accelerator, L.svdvals(a))
        want = np.linalg.svdvals(x)
        for (u, s, vh), ku, kv in ((full, m, n), (red, k, k)):
            assert u.shape == x.shape[:-2] + (m, ku) and vh.shape == x.shape[:-2] + (kv, n) and s.dtype == t
            np.testing.assert_allclose(s, want, atol=tol * want.max())
            np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], x, atol=tol * want.max())
            _orthonormal_columns(u, tol)
            _orthonormal_columns(np.swapaxes(vh, -1, -2), tol)
        assert np.all(np.diff(vals, axis=-1) <= 0)  # descending
        np.testing.assert_allclose(vals, want, atol=tol * want.max())


def test_complex_svd_pinv_and_rank(accelerator: dc.Accelerator) -> None:
    z = TALL + 1j * RS.standard_normal(TALL.shape)
    wide = np.ascontiguousarray(np.swapaxes(z, -1, -2))
    for t in [np.complex64] if accelerator.backend == "metal" else [np.complex64, np.complex128]:
        tol = _tol(np.float32 if t == np.complex64 else np.float64) * 10
        for x in (z, wide):
            a = accelerator.asarray(x.astype(t))
            with _portable(accelerator):
                u, s, vh = (_on(accelerator, b) for b in L.svd(a, full_matrices=False))
                p = _on(accelerator, L.pinv(a))
                r = _on(accelerator, L.matrix_rank(a))
            assert s.dtype == np.finfo(t).dtype and u.dtype == t and p.dtype == t
            np.testing.assert_allclose(s, np.linalg.svdvals(x), atol=tol * 10)
            np.testing.assert_allclose((u * s[..., None, :]) @ vh, x, atol=tol * 10)
            np.testing.assert_allclose(np.conj(np.swapaxes(u, -1, -2)) @ u, np.broadcast_to(np.eye(4), (3, 4, 4)),
                                       atol=tol * 10)
            np.testing.assert_allclose(p, np.linalg.pinv(x, rtol=None), atol=tol * 100)
            np.testing.assert_array_equal(r, [4, 4, 4])


def test_pinv_and_matrix_rank(accelerator: dc.Accelerator) -> None:
    for t in _dtypes(accelerator):
        with _portable(accelerator):
            for x in (TALL, np.swapaxes(TALL, -1, -2), LOW):
                a = accelerator.asarray(np.ascontiguousarray(x, dtype=t))
                p = _on(accelerator, L.pinv(a))
                want = np.linalg.pinv(x.astype(t), rtol=None)  # None: the standard's default, max(M, N) * eps
                np.testing.assert_allclose(p, want, atol=_tol(t) * 100)
                r = _on(accelerator, L.matrix_rank(a))
                np.testing.assert_array_equal(r, np.linalg.matrix_rank(x.astype(t)))
            # rtol per matrix of the stack: the second one keeps only its largest value
            a = accelerator.asarray(TALL[:2].astype(t))
            r = _on(accelerator, L.matrix_rank(a, rtol=np.array([1e-3, 0.999])))
            np.testing.assert_array_equal(r, np.linalg.matrix_rank(TALL[:2], rtol=np.array([1e-3, 0.999])))
            np.testing.assert_allclose(_on(accelerator, L.pinv(a, rtol=0.5)),
                                       np.linalg.pinv(TALL[:2].astype(t), rtol=0.5), atol=_tol(t) * 100)


def test_slogdet(accelerator: dc.Accelerator) -> None:
    big = 1000 * np.eye(4) + RS.standard_normal((4, 4))  # det about 1e12
    twin = X[0, 1].copy()
    twin[3] = twin[1]  # two equal rows: elimination meets an exact zero pivot
    cases = np.stack([X[0, 0], X[1, 2], twin, np.zeros((5, 5))])
    for t in _dtypes(accelerator):
        with _portable(accelerator):
            sign, ld = (_on(accelerator, b) for b in L.slogdet(accelerator.asarray(cases.astype(t))))
            # a determinant past the dtype's range (1e360, 1e48): the log stays finite
            huge = np.kron(np.eye(30 if t == np.float64 else 4), big)
            hs, hl = (_on(accelerator, b) for b in L.slogdet(accelerator.asarray(huge.astype(t))))
        ws, wl = np.linalg.slogdet(cases)
        np.testing.assert_array_equal(sign, ws)  # singular ones: sign 0 ...
        np.testing.assert_array_equal(ld[2:], [-np.inf, -np.inf])  # ... and log|det| -inf
        np.testing.assert_allclose(ld[:2], wl[:2], rtol=_tol(t) * 10)
        hw = np.linalg.slogdet(huge)
        assert hs == hw[0] and np.isfinite(hl)
        np.testing.assert_allclose(hl, hw[1], rtol=_tol(t) * 10)


def test_complex_slogdet(accelerator: dc.Accelerator) -> None:
    z = X[0] + 1j * X[1]
    for t in [np.complex64] if accelerator.backend == "metal" else [np.complex64, np.complex128]:
        with _portable(accelerator):
            sign, ld = (_on(accelerator, b) for b in L.slogdet(accelerator.asarray(z.astype(t))))
        ws, wl = np.linalg.slogdet(z)
        assert sign.dtype == t and ld.dtype == np.finfo(t).dtype
        tol = 1e-4 if t == np.complex64 else 1e-12
        np.testing.assert_allclose(sign, ws, atol=tol)  # the unit-modulus phase of det
        np.testing.assert_allclose(ld, wl, rtol=tol)


@pytest.mark.parametrize("x", [TALL, np.swapaxes(TALL, -1, -2), LOW], ids=["tall", "wide", "rank-deficient"])
def test_qr(accelerator: dc.Accelerator, x: np.ndarray) -> None:
    m, n = x.shape[-2:]
    for t in _dtypes(accelerator):
        a, tol = accelerator.asarray(np.ascontiguousarray(x, dtype=t)), _tol(t) * 10
        for mode, kq in (("reduced", min(m, n)), ("complete", m)):
            with _portable(accelerator):
                q, r = (_on(accelerator, b) for b in L.qr(a, mode=mode))
            assert q.shape == x.shape[:-2] + (m, kq) and r.shape == x.shape[:-2] + (kq, n) and q.dtype == t
            np.testing.assert_allclose(q @ r, x, atol=tol * np.abs(x).max())
            _orthonormal_columns(q, tol)
            assert not np.tril(r, -1).any()  # R upper triangular
            # unique up to the signs of R's diagonal: |R| as numpy's where x has full rank
            if x is not LOW:
                np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(x, mode=mode)[1]), atol=tol * 10)


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_complex_qr(accelerator: dc.Accelerator, mode: str) -> None:
    wide_low = np.swapaxes(LOW, -1, -2)
    for x in (TALL + 1j * RS.standard_normal(TALL.shape), wide_low + 2j * wide_low[:, ::-1]):
        for t in [np.complex64] if accelerator.backend == "metal" else [np.complex64, np.complex128]:
            tol = 1e-5 if t == np.complex64 else 1e-13
            with _portable(accelerator):
                q, r = (_on(accelerator, b) for b in L.qr(accelerator.asarray(np.ascontiguousarray(x, t)), mode=mode))
            assert q.dtype == t and r.dtype == t
            np.testing.assert_allclose(q @ r, x, atol=tol * 10 * np.abs(x).max())
            eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
            np.testing.assert_allclose(np.conj(np.swapaxes(q, -1, -2)) @ q, eye, atol=tol * 10)
            assert not np.tril(r, -1).any()


def test_integer_input_and_empty_stacks(accelerator: dc.Accelerator) -> None:
    if accelerator.backend == "metal":
        pytest.skip("integers compute in float64, which Metal lacks")
    ints = np.array([[2, 1], [1, 3]])
    with _portable(accelerator):
        w = L.eigvalsh(accelerator.asarray(ints))
        assert w.dtype == np.float64
        np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(ints))
        e = accelerator.asarray(np.zeros((0, 3, 2), np.float32))
        assert L.svdvals(e).shape == (0, 2) and L.qr(e)[0].shape == (0, 3, 2)
        assert L.slogdet(accelerator.asarray(np.zeros((0, 3, 3), np.float32)))[1].shape == (0,)
        assert L.eigh(accelerator.asarray(np.zeros((2, 0, 0), np.float32)))[1].shape == (2, 0, 0)
        # no columns: U of the full SVD is any orthonormal basis (the identity here), S empty
        u, sv, vh = L.svd(accelerator.asarray(np.ones((2, 3, 0), np.float32)))
        assert sv.shape == (2, 0) and vh.shape == (2, 0, 0)
        np.testing.assert_array_equal(u.numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
        sign, ld = L.slogdet(accelerator.asarray(np.zeros((2, 0, 0), np.float32)))
        np.testing.assert_array_equal(sign.numpy(), [1, 1])  # numpy: the empty product
        np.testing.assert_array_equal(ld.numpy(), [0, 0])


def test_bad_input_is_a_clear_error(accelerator: dc.Accelerator) -> None:
    with _portable(accelerator):
        with pytest.raises(ValueError, match="rtol"):
            L.matrix_rank(accelerator.asarray(TALL.astype(np.float32)), rtol=np.ones(2))
        with pytest.raises(np.linalg.LinAlgError, match="square"):
            L.eigh(accelerator.asarray(TALL.astype(np.float32)))



def test_matrix_norms_from_singular_values(accelerator: dc.Accelerator) -> None:
    for t in _dtypes(accelerator):
        a = accelerator.asarray(TALL.astype(t))
        with _portable(accelerator):
            for o in (2, -2, "nuc"):
                got = _on(accelerator, L.matrix_norm(a, ord=o))
                np.testing.assert_allclose(got, np.linalg.matrix_norm(TALL, ord=o), rtol=_tol(t) * 10)
            assert L.matrix_norm(a, ord="nuc", keepdims=True).shape == (3, 1, 1)
