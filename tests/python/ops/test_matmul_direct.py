"""The portable tiled matmul reading and writing its operands in their own shapes (issue 24): every
combination of 1-D, 2-D and batched 3-D operands, sizes that are not multiples of the 64×64 tile,
views, ``out=``, empty and K = 0 products, several dtypes, against numpy on every accelerator; and
the 2-D and 3-D products launch no flattening copies around the kernel."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch

# the module (dotcompute.ops.matmul is also the name of its function in the package)
matmul_mod = importlib.import_module("dotcompute.ops.matmul")

RNG = np.random.default_rng(2024)

SHAPES = [
    ((70, 33), (33, 65)),  # 2-D, every edge of the tile
    ((3, 5, 7), (3, 7, 9)),  # batched
    ((1, 5, 7), (3, 7, 9)),  # a batch of one broadcast over the other's
    ((3, 65, 7), (7, 9)),  # 3-D @ 2-D: B shared by the batch
    ((5, 7), (2, 7, 66)),  # 2-D @ 3-D
    ((7,), (7, 130)),  # vector @ matrix
    ((65, 17), (17,)),  # matrix @ vector
    ((2, 65, 17), (17,)),  # batch @ vector
    ((17,), (2, 17, 3)),  # vector @ batch
    ((17,), (17,)),  # a 0-d result
]


def _tol(dtype: np.dtype, k: int) -> dict:
    # the kernel may fuse products and sums (FMA) and adds in K order: float error grows with k
    if np.dtype(dtype).kind in "iu":
        return {"rtol": 0, "atol": 0}
    eps = np.finfo(dtype).eps
    return {"rtol": 4 * k * eps, "atol": 4 * k * eps * 16}


def _data(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-20, 20, shape).astype(dtype)
    return (RNG.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_shapes_match_numpy(accelerator, sa, sb, dtype, tests_full):
    # Every operand layout is its own kernel, and each is seconds of compile on cpu:0 and PoCL: the
    # integer kernels run on a matrix and a batched product by default, every layout with --full
    # (the layouts' index code is the same for every dtype: the float32 parameters cover it)
    if dtype is np.int32 and (sa, sb) not in SHAPES[:2] and not tests_full:
        pytest.skip("slow: the int32 kernel of every operand layout runs with --full")
    a, b = _data(sa, dtype), _data(sb, dtype)
    ref = np.matmul(a, b)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b))
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_allclose(got.numpy(), ref, **_tol(dtype, sa[-1]))
        out = accelerator.empty(ref.shape, ref.dtype)
        assert dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b), out=out) is out
        np.testing.assert_allclose(out.numpy(), ref, **_tol(dtype, sa[-1]))


@pytest.mark.parametrize("m,k,n", [(1000, 3, 1023), (129, 200, 1), (1, 257, 64), (2000, 64, 8)])
def test_odd_and_tall_skinny_sizes(accelerator, m, k, n):
    dtype = np.float64 if accelerator.backend != "metal" else np.float32  # Metal has no float64
    a, b = _data((m, k), dtype), _data((k, n), dtype)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b)).numpy()
    np.testing.assert_allclose(got, a @ b, **_tol(dtype, k))


def test_complex_and_mixed_dtypes(accelerator):
    a = _data((9, 5), np.float32) + 1j * _data((9, 5), np.float32)
    b = _data((5, 4), np.int32)
    ref = np.matmul(a.astype(np.complex64), b)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a.astype(np.complex64)), accelerator.asarray(b))
    assert got.dtype == ref.dtype
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("sa,sb", [((4, 0), (0, 3)), ((0, 4), (4, 3)), ((2, 3, 0), (2, 0, 5)), ((4, 5), (5, 0))])
def test_empty_and_zero_k(accelerator, sa, sb):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b))
        np.testing.assert_array_equal(got.numpy(), np.matmul(a, b))
        out = accelerator.empty(got.shape, np.float32)
        out.copy_from(np.full(got.shape, 7, np.float32))
        dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b), out=out)
        np.testing.assert_array_equal(out.numpy(), np.matmul(a, b))  # K = 0: zeros, not what was there


def test_views_as_operands(accelerator):
    base = _data((4, 33, 33), np.float32)
    buf = accelerator.asarray(base)
    with dispatch.prefer("portable"):
        # a contiguous view (a run of the batch) and a transposed one (read through a copy)
        got = dc.matmul(buf[1:3], dc.matrix_transpose(buf[1:3]))
        np.testing.assert_allclose(got.numpy(), base[1:3] @ base[1:3].transpose(0, 2, 1), **_tol(np.float32, 33))
        w = accelerator.empty((4, 33, 33), np.float32)
        w.copy_from(np.zeros((4, 33, 33), np.float32))
        dc.ops.matmul(buf[0], buf[3], out=w[2])  # into a view: the product lands in its base
        expect = np.zeros((4, 33, 33), np.float32)
        expect[2] = base[0] @ base[3]
        np.testing.assert_allclose(w.numpy(), expect, **_tol(np.float32, 33))


@pytest.mark.parametrize("sa,sb", [((70, 33), (33, 65)), ((3, 5, 7), (7, 9)), ((2, 64, 64), (2, 64, 64))])
def test_no_flattening_copies(accelerator, monkeypatch, sa, sb):
    def refuse(*args, **kwargs):
        raise AssertionError("the tiled matmul flattened or reshaped an operand with a copy")

    monkeypatch.setattr(matmul_mod, "flat", refuse)
    monkeypatch.setattr(matmul_mod, "shaped", refuse)
    a, b = _data(sa, np.float32), _data(sb, np.float32)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b))
    np.testing.assert_allclose(got.numpy(), a @ b, **_tol(np.float32, sa[-1]))
