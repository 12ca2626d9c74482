"""dc.linalg against numpy.linalg on every device: LAPACK on cpu:0, the kernels elsewhere and on
cpu:0 under prefer("portable"); stacks, empty stacks, dtypes and numpy's errors."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops.linalg import LinAlgError, NoDevicePath

L = dc.linalg
RS = np.random.default_rng(1)
A = RS.standard_normal((2, 3, 4, 4))
SPD = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4)
B = RS.standard_normal((2, 3, 4, 2))
V = RS.standard_normal((5, 3))
W = RS.standard_normal((5, 3))


@pytest.fixture(params=["auto", "portable"])
def path(request: pytest.FixtureRequest) -> str:
    return request.param


def _run(path: str):  # noqa: ANN202
    return dc.ops.prefer("portable") if path == "portable" else nullcontext()


def _dtypes(acc: dc.Accelerator) -> list[type]:
    return [np.float32] if acc.backend == "metal" else [np.float32, np.float64]


def _close(got, want, dtype) -> None:  # noqa: ANN001
    assert isinstance(got, dc.Buffer)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
    assert got.shape == np.shape(want)


def test_elementary(accelerator: dc.Accelerator, path: str) -> None:
    for t in _dtypes(accelerator):
        a, b, v, w = (accelerator.asarray(x.astype(t)) for x in (A, B, V, W))
        with _run(path):
            _close(L.diagonal(a), np.linalg.diagonal(A.astype(t)), t)
            _close(L.diagonal(b, offset=-1), np.linalg.diagonal(B.astype(t), offset=-1), t)
            _close(L.diagonal(b, offset=5), np.linalg.diagonal(B.astype(t), offset=5), t)
            _close(L.trace(a), np.linalg.trace(A.astype(t)), t)
            _close(L.matrix_transpose(b), np.matrix_transpose(B.astype(t)), t)
            _close(L.outer(v[0], w[1]), np.outer(V[0], W[1]).astype(t), t)
            _close(L.cross(v, w), np.linalg.cross(V, W).astype(t), t)
            vt, wt = accelerator.asarray(V.T.astype(t).copy()), accelerator.asarray(W.T.astype(t).copy())
            _close(L.cross(vt, wt, axis=0), np.linalg.cross(V.T, W.T, axis=0).astype(t), t)
            _close(L.vecdot(v, w), np.linalg.vecdot(V, W).astype(t), t)
            _close(L.vecdot(a, a, axis=-2), np.linalg.vecdot(A, A, axis=-2).astype(t), t)
            _close(L.matmul(a, b), (A @ B).astype(t), t)
            x3 = RS.standard_normal((4, 2, 3))
            _close(L.tensordot(b, accelerator.asarray(x3.astype(t)), axes=2), np.tensordot(B, x3, axes=2).astype(t), t)
            _close(L.tensordot(accelerator.asarray(V.T.astype(t).copy()), w, axes=1), (V.T @ W).astype(t), t)


def test_broadcasting_cross_and_vecdot_and_complex_vecdot(accelerator: dc.Accelerator, path: str) -> None:
    a, b = RS.standard_normal((4, 1, 3)), RS.standard_normal((5, 3))
    c, d = RS.standard_normal((3, 1, 4)), RS.standard_normal((3, 2, 4))
    z = RS.standard_normal((4, 3)) + 1j * RS.standard_normal((4, 3))
    zt = np.complex64 if accelerator.backend == "metal" else np.complex128
    for t in _dtypes(accelerator):
        da, db, dc_ = (accelerator.asarray(x.astype(t)) for x in (a, b, c))
        with _run(path):
            _close(L.cross(da, db), np.linalg.cross(a, b).astype(t), t)
            _close(L.cross(dc_, accelerator.asarray(d.astype(t)), axis=0), np.linalg.cross(c, d, axis=0).astype(t), t)
            _close(L.vecdot(da, db), np.linalg.vecdot(a, b).astype(t), t)
            # conj(x1) * x2, complex with a real operand broadcast against it
            got = L.vecdot(accelerator.asarray(z.astype(zt)), accelerator.asarray(b[0].astype(t)))
            assert got.dtype == np.result_type(zt, t)
            np.testing.assert_allclose(got.numpy(), np.linalg.vecdot(z, b[0]), rtol=2e-4 if t == np.float32 else 1e-10)
            got = L.vecdot(accelerator.asarray(z.astype(zt)), accelerator.asarray(z.astype(zt)), axis=0)
            np.testing.assert_allclose(got.numpy(), np.linalg.vecdot(z, z, axis=0), rtol=2e-4)
            assert np.all(np.abs(got.numpy().imag) < 1e-4)  # |z|^2: the conjugate is taken


def test_norms(accelerator: dc.Accelerator, path: str) -> None:
    for t in _dtypes(accelerator):
        a = accelerator.asarray(A.astype(t))
        with _run(path):
            _close(L.vector_norm(a), np.linalg.vector_norm(A).astype(t), t)
            for o in (2, 1, np.inf, -np.inf, 0, 3.5):
                _close(L.vector_norm(a, axis=1, ord=o), np.linalg.vector_norm(A, axis=1, ord=o).astype(t), t)
            _close(L.vector_norm(a, axis=(-2, -1), keepdims=True),
                   np.linalg.vector_norm(A, axis=(-2, -1), keepdims=True).astype(t), t)
            _close(L.matrix_norm(a), np.linalg.matrix_norm(A).astype(t), t)
            assert L.vector_norm(a).dtype == t


def test_factorizations(accelerator: dc.Accelerator, path: str) -> None:
    for t in _dtypes(accelerator):
        a, s, b = (accelerator.asarray(x.astype(t)) for x in (A, SPD, B))
        A_, S_, B_ = A.astype(t), SPD.astype(t), B.astype(t)
        with _run(path):
            _close(L.cholesky(s), np.linalg.cholesky(S_), t)
            _close(L.cholesky(s, upper=True), np.linalg.cholesky(S_, upper=True), t)
            _close(L.solve(a, b), np.linalg.solve(A_, B_), t)
            _close(L.solve(accelerator.asarray(A_[0, 0]), accelerator.asarray(B_[0, 0, :, 0].copy())),
                   np.linalg.solve(A_[0, 0], B_[0, 0, :, 0]), t)
            _close(L.inv(a), np.linalg.inv(A_), t)
            _close(L.det(a), np.linalg.det(A_), t)
            _close(L.det(accelerator.asarray(A_[0, 0])), np.linalg.det(A_[0, 0]), t)
            _close(L.matrix_power(a, 3), np.linalg.matrix_power(A_, 3), t)
            _close(L.matrix_power(a, -2), np.linalg.matrix_power(A_, -2), t)
            _close(L.matrix_power(a, 0), np.linalg.matrix_power(A_, 0), t)


def test_integer_input_computes_in_float64(accelerator: dc.Accelerator, path: str) -> None:
    if accelerator.backend == "metal":
        pytest.skip("no float64 on Metal")
    m = np.array([[4, 1], [2, 3]], np.int32)
    with _run(path):
        _close(L.det(accelerator.asarray(m)), np.linalg.det(m), np.float64)
        _close(L.inv(accelerator.asarray(m)), np.linalg.inv(m), np.float64)


def test_empty_stacks(accelerator: dc.Accelerator, path: str) -> None:
    e = np.zeros((0, 3, 3), np.float32)
    with _run(path):
        for fn in (L.inv, L.det, L.diagonal, L.matrix_transpose):
            got, want = fn(accelerator.asarray(e)), getattr(np.linalg, fn.__name__, None)
            want = np.matrix_transpose(e) if fn is L.matrix_transpose else want(e)
            assert got.shape == want.shape


def test_errors(accelerator: dc.Accelerator, path: str) -> None:
    sing = accelerator.asarray(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32))
    with _run(path):
        with pytest.raises(LinAlgError):
            L.cholesky(accelerator.asarray(-np.eye(3, dtype=np.float32)))
        with pytest.raises(LinAlgError):
            L.inv(sing)
        with pytest.raises(LinAlgError):
            L.solve(sing, accelerator.asarray(np.ones(2, np.float32)))
        assert float(L.det(sing).numpy()) == 0.0
        with pytest.raises(LinAlgError, match="square"):
            L.inv(accelerator.asarray(np.ones((2, 3), np.float32)))
        with pytest.raises(ValueError, match="size 3"):
            L.cross(accelerator.asarray(np.ones((2, 2), np.float32)), accelerator.asarray(np.ones((2, 2), np.float32)))
        with pytest.raises(ValueError, match="at least 2"):
            L.diagonal(accelerator.asarray(np.ones(3, np.float32)))
        with pytest.raises(TypeError, match="n must be an integer"):
            L.matrix_power(sing, 1.5)


def test_lapack_functions_on_host_memory(cpu: dc.Accelerator) -> None:
    x = RS.standard_normal((3, 5, 4))
    h = x[..., :4, :] @ np.swapaxes(x[..., :4, :], -1, -2)
    b, hb = cpu.asarray(x), cpu.asarray(h)
    q, r = L.qr(b)
    np.testing.assert_allclose((q.numpy() @ r.numpy()), x, atol=1e-12)
    u, s, vh = L.svd(b, full_matrices=False)
    np.testing.assert_allclose(u.numpy() * s.numpy()[..., None, :] @ vh.numpy(), x, atol=1e-12)
    np.testing.assert_allclose(L.svdvals(b).numpy(), np.linalg.svdvals(x))
    w, v = L.eigh(hb)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(h), atol=1e-10)
    np.testing.assert_allclose(L.eigvalsh(hb).numpy(), np.linalg.eigvalsh(h), atol=1e-10)
    np.testing.assert_allclose(L.pinv(b).numpy(), np.linalg.pinv(x))
    np.testing.assert_array_equal(L.matrix_rank(b).numpy(), np.linalg.matrix_rank(x))
    sign, logdet = L.slogdet(hb)
    np.testing.assert_allclose(sign.numpy() * np.exp(logdet.numpy()), np.linalg.det(h))
    assert isinstance(L.det(hb), dc.Buffer) and L.det(hb).accelerator is cpu
    np.testing.assert_allclose(L.matrix_norm(b, ord="nuc").numpy(), np.linalg.matrix_norm(x, ord="nuc"))
    # numpy in, numpy out
    assert isinstance(L.inv(h), np.ndarray)


def test_no_device_path_is_a_clear_error(accelerator: dc.Accelerator) -> None:
    if dc.ops.dispatch.host_cpu(accelerator):
        ctx = dc.ops.prefer("portable")
    else:
        ctx = nullcontext()
    x = accelerator.asarray(np.eye(3, dtype=np.float16))  # complex has kernels (test_complex_factorizations.py)
    with ctx:
        for fn in (L.cholesky, L.inv, L.det):
            with pytest.raises(NoDevicePath, match=f"dc.linalg.{fn.__name__} for float16.*{accelerator.id}"):
                fn(x)
        with pytest.raises(NotImplementedError, match="ord=1"):
            L.matrix_norm(accelerator.asarray(np.eye(3, dtype=np.float32)), ord=1)


def test_triangular_solves_with_the_cholesky_factor(accelerator: dc.Accelerator) -> None:
    # L (L^T x) = b: the forward solve with L, then the backward solve with its transpose
    from dotcompute.ops.linalg import kernels as lk

    t = np.float32
    lfac = np.linalg.cholesky(SPD[0].astype(np.float64)).astype(t)  # (3, 4, 4)
    rhs = B[0].astype(t)  # (3, 4, 2)
    lb, xb = accelerator.asarray(lfac.reshape(-1)), accelerator.asarray(rhs.reshape(-1))
    accelerator.launch(lk.tri_solve, 3, lb, xb, 3, 4, 2, 1, 0)
    accelerator.launch(lk.tri_solve, 3, lb, xb, 3, 4, 2, 1, 1)
    want = np.linalg.solve(SPD[0], B[0])
    np.testing.assert_allclose(xb.numpy().reshape(3, 4, 2), want, rtol=1e-3, atol=1e-3)
