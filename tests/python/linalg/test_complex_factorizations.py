"""Complex cholesky, solve, inv and det on every device (ops/linalg: the Hermitian Cholesky kernel
and the LU kernel with complex pivots) against numpy.linalg; cpu:0 runs them under
prefer("portable") so the kernels, not LAPACK, are what is checked there."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

import dotcompute as dc

L = dc.linalg
RS = np.random.default_rng(21)
Z = RS.standard_normal((3, 4, 4)) + 1j * RS.standard_normal((3, 4, 4))
HPD = Z @ np.conj(np.swapaxes(Z, -1, -2)) + 4 * np.eye(4)  # Hermitian positive definite
RHS = RS.standard_normal((3, 4, 2)) - 1j * RS.standard_normal((3, 4, 2))


def _portable(acc: dc.Accelerator):  # noqa: ANN202
    return dc.ops.prefer("portable") if dc.ops.dispatch.host_cpu(acc) else nullcontext()


def _complex(acc: dc.Accelerator) -> list[tuple[type, float]]:
    # Metal has no complex128 (no float64)
    pairs = [(np.complex64, 2e-4), (np.complex128, 1e-11)]
    return pairs[:1] if acc.backend == "metal" else pairs


def _on(acc: dc.Accelerator, b: dc.Buffer) -> np.ndarray:
    assert isinstance(b, dc.Buffer) and b.accelerator is acc
    return b.numpy()


def test_hermitian_cholesky_lower_and_upper(accelerator: dc.Accelerator) -> None:
    for t, tol in _complex(accelerator):
        a = accelerator.asarray(HPD.astype(t))
        # numpy reads only the lower triangle: garbage above the diagonal must not matter
        junk = accelerator.asarray((HPD + np.triu(np.full((4, 4), 5 + 7j), 1)).astype(t))
        with _portable(accelerator):
            low, up, low_junk = (_on(accelerator, L.cholesky(x, upper=u)) for x, u in ((a, False), (a, True),
                                                                                        (junk, False)))
        want = np.linalg.cholesky(HPD)
        assert low.dtype == t and low.shape == HPD.shape
        np.testing.assert_allclose(low, want, atol=tol * 10)
        np.testing.assert_allclose(up, np.linalg.cholesky(HPD, upper=True), atol=tol * 10)
        np.testing.assert_allclose(low_junk, want, atol=tol * 10)
        assert not np.triu(low, 1).any() and not np.tril(up, -1).any()
        np.testing.assert_allclose(np.diagonal(low, axis1=-2, axis2=-1).imag, 0, atol=0)  # real diagonal


def test_complex_cholesky_refuses_what_is_not_positive_definite(accelerator: dc.Accelerator) -> None:
    bad = HPD.copy()
    bad[1] = -bad[1]  # negative definite
    for t, _ in _complex(accelerator):
        with _portable(accelerator), pytest.raises(np.linalg.LinAlgError, match="positive definite"):
            L.cholesky(accelerator.asarray(bad.astype(t)))


def test_complex_solve_inv_det(accelerator: dc.Accelerator) -> None:
    for t, tol in _complex(accelerator):
        a = accelerator.asarray(Z.astype(t))
        with _portable(accelerator):
            x = _on(accelerator, L.solve(a, accelerator.asarray(RHS.astype(t))))
            xv = _on(accelerator, L.solve(a[0], accelerator.asarray(RHS[0, :, 0].astype(t))))
            inv = _on(accelerator, L.inv(a))
            det = _on(accelerator, L.det(a))
            mixed = _on(accelerator, L.solve(a, accelerator.asarray(RHS.real.astype(np.finfo(t).dtype))))
        assert x.dtype == t and inv.dtype == t and det.dtype == t and mixed.dtype == t
        scale = np.abs(np.linalg.solve(Z, RHS)).max()
        np.testing.assert_allclose(x, np.linalg.solve(Z, RHS), atol=tol * 10 * scale)
        np.testing.assert_allclose(xv, np.linalg.solve(Z[0], RHS[0, :, 0]), atol=tol * 10 * scale)
        np.testing.assert_allclose(mixed, np.linalg.solve(Z, RHS.real), atol=tol * 10 * scale)
        np.testing.assert_allclose(inv, np.linalg.inv(Z), atol=tol * 10 * np.abs(np.linalg.inv(Z)).max())
        np.testing.assert_allclose(det, np.linalg.det(Z), rtol=tol * 10)


def test_complex_singular_matrices(accelerator: dc.Accelerator) -> None:
    sing = Z.copy()
    sing[2, 1] = 0  # a zero row: exactly singular (a zero pivot, det 0) for LAPACK and the kernel
    for t, _ in _complex(accelerator):
        a = accelerator.asarray(sing.astype(t))
        with _portable(accelerator):
            det = _on(accelerator, L.det(a))
            with pytest.raises(np.linalg.LinAlgError, match="Singular"):
                L.inv(a)
        assert det[2] == 0 and np.all(det[:2] != 0)
