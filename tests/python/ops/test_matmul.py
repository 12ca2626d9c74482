"""matmul and ``@`` against numpy on every accelerator; the tiled and the naive portable kernels."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("mkn", [(1, 1, 1), (3, 5, 7), (64, 64, 64), (65, 17, 129), (127, 300, 61),
                                 (256, 256, 256)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_2d(accelerator, path, mkn, dtype):
    m, k, n = mkn
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    got = dc.matmul(accelerator.asarray(a), accelerator.asarray(b))
    assert isinstance(got, dc.Buffer) and got.shape == (m, n) and got.dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=tol, atol=tol * k)


def test_matmul_naive_kernel(accelerator):
    a = RNG.standard_normal((33, 70)).astype(np.float32)
    b = RNG.standard_normal((70, 20)).astype(np.float32)
    with dispatch.prefer("portable"):
        got = dc.matmul(a, b, accelerator=accelerator, kernel="naive")
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


BATCHED_AND_VECTORS = [((4, 10, 20), (4, 20, 7)), ((3, 10, 20), (20, 5)), ((12, 9), (2, 9, 31)),
                       ((30,), (30, 4)), ((5, 30), (30,)), ((30,), (30,))]


@pytest.mark.parametrize("shapes", BATCHED_AND_VECTORS)
def test_matmul_batched_and_vectors(accelerator, path, shapes, tests_full):
    # The portable kernel is compiled per operand layout (seconds each on cpu:0 and PoCL); every
    # layout runs in float32 and int32 in test_matmul_direct.py, so the float64 kernels here take a
    # batched and a vector product by default and every layout with --full
    if path == "portable" and shapes not in (BATCHED_AND_VECTORS[0], BATCHED_AND_VECTORS[3]) and not tests_full:
        pytest.skip("slow: the float64 portable kernel of every operand layout runs with --full")
    a = RNG.standard_normal(shapes[0])
    b = RNG.standard_normal(shapes[1])
    got = dc.matmul(a, b, accelerator=accelerator)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, a @ b, rtol=1e-10, atol=1e-10)


def test_matmul_int_and_complex(accelerator, path):
    a = RNG.integers(-5, 5, (20, 30)).astype(np.int32)
    b = RNG.integers(-5, 5, (30, 11)).astype(np.int32)
    np.testing.assert_array_equal(dc.matmul(a, b, accelerator=accelerator), a @ b)
    c = (RNG.standard_normal((8, 9)) + 1j * RNG.standard_normal((8, 9))).astype(np.complex64)
    d = (RNG.standard_normal((9, 4)) + 1j * RNG.standard_normal((9, 4))).astype(np.complex64)
    got = dc.matmul(accelerator.asarray(c), accelerator.asarray(d))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got.numpy(), c @ d, rtol=1e-5, atol=1e-5)


def test_matmul_operator_and_out(accelerator, path):
    a = accelerator.asarray(RNG.standard_normal((40, 50)).astype(np.float32))
    b = accelerator.asarray(RNG.standard_normal((50, 60)).astype(np.float32))
    want = a.numpy() @ b.numpy()
    np.testing.assert_allclose((a @ b).numpy(), want, rtol=1e-4, atol=1e-4)
    out = accelerator.empty((40, 60), np.float32)
    assert dc.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)


def test_matmul_errors(accelerator):
    a = accelerator.asarray(np.ones((3, 4), np.float32))
    b = accelerator.asarray(np.ones((5, 6), np.float32))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(5, 6\)"):
        dc.matmul(a, b)
    with pytest.raises(ValueError, match="out has shape"):
        dc.matmul(a, a.numpy().T.copy(), out=accelerator.empty((2, 2), np.float32))
    with pytest.raises(TypeError, match="out has dtype"):
        dc.matmul(a, a.numpy().T.copy(), out=accelerator.empty((3, 3), np.float64))
    with pytest.raises(TypeError, match="bool"):
        dc.matmul(np.ones((2, 2), bool), np.ones((2, 2), bool), accelerator=accelerator)
    with pytest.raises(TypeError, match="<U1"):
        dc.matmul(np.array([["a"]]), np.ones((1, 1)), accelerator=accelerator)
