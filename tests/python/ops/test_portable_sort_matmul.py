"""The portable sort and matmul kernels' fast paths (issue 24) against numpy, forced with
``prefer("portable")`` on every accelerator: the branch-free merge at chunk boundaries (ties
spanning items keep their order), NaN and signed zeros, empty and odd sizes, descending order;
the register-blocked matmul on inner and edge tiles, float64, batches with a broadcast operand."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch
from dotcompute.ops import matmul_kernels as mk
from dotcompute.ops import sort_kernels as sk

sort_mod = importlib.import_module("dotcompute.ops.sort")  # the module, not dc.ops.sort the function

RNG = np.random.default_rng(24)


@pytest.fixture(params=["cpu-chunk", "gpu-chunk"])
def merge_chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The merge sort with both output slices per merge item: the CPU devices' long one and the GPUs'
    short one. The radix sort is turned off: from 2,048 keys a single row would take it on every
    device. GPUs always merge with the short slice, so there the cpu-chunk parameter would run the
    gpu-chunk one's kernels again."""
    if request.param == "cpu-chunk" and request.getfixturevalue("accelerator").type != "cpu":
        pytest.skip("GPUs merge with the short slice only: the gpu-chunk parameter runs these kernels")
    monkeypatch.setattr(sort_mod, "RADIX_ON_CPU", False)
    monkeypatch.setattr(sort_mod, "RADIX_ON_GPU", False)
    chunk = sk.MERGE_CHUNK_CPU if request.param == "cpu-chunk" else sk.MERGE_CHUNK
    monkeypatch.setattr(sk, "MERGE_CHUNK_CPU", chunk)
    return chunk


@pytest.mark.parametrize("n", [0, 1, 33, 4095, 4097, 3 * 4096 + 5])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])  # test_sort.py runs every dtype
def test_sort_and_argsort_match_numpy(accelerator, merge_chunk, n, dtype):
    x = (RNG.standard_normal(n) * 50).astype(dtype)
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        np.testing.assert_array_equal(dc.ops.sort(b).numpy(), np.sort(x))
        np.testing.assert_array_equal(dc.ops.argsort(b).numpy(), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("n", [5000, 20_001])
def test_argsort_stable_across_merge_items(accelerator, merge_chunk, n):
    # three distinct keys: long runs of ties cross every item's slice and every merge level
    x = RNG.integers(0, 3, n).astype(np.float32)
    with dispatch.prefer("portable"):
        got = dc.ops.argsort(accelerator.asarray(x)).numpy()
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def test_nan_inf_and_signed_zeros(accelerator, merge_chunk):
    x = RNG.standard_normal(9001).astype(np.float32)
    x[RNG.integers(0, x.size, 700)] = np.nan
    x[RNG.integers(0, x.size, 50)] = np.inf
    x[RNG.integers(0, x.size, 50)] = -np.inf
    x[RNG.integers(0, x.size, 300)] = -0.0
    x[RNG.integers(0, x.size, 300)] = 0.0
    with dispatch.prefer("portable"):
        got = dc.ops.sort(accelerator.asarray(x)).numpy()
        order = dc.ops.argsort(accelerator.asarray(x)).numpy()
    np.testing.assert_array_equal(got, np.sort(x))  # NaN last; equal_nan compares them
    np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))  # -0.0 ties 0.0: stable


def test_descending_on_the_device(accelerator):
    x = RNG.integers(-20, 20, 6007).astype(np.float32)
    x[::97] = np.nan
    b = accelerator.asarray(x)
    with dispatch.prefer("portable"):
        got = dc.sort(b, descending=True).numpy()
        order = dc.argsort(b, descending=True).numpy()
    np.testing.assert_array_equal(got, np.sort(x)[::-1])  # NaN first when descending
    # descending and stable: equal keys keep their input order
    want = np.lexsort((np.arange(x.size), -np.nan_to_num(x, nan=np.inf)))
    np.testing.assert_array_equal(order, want)


@pytest.mark.parametrize("rows", [1, 3])
def test_sort_rows_along_an_axis(accelerator, merge_chunk, rows):
    x = RNG.standard_normal((rows, 5003)).astype(np.float32)
    with dispatch.prefer("portable"):
        np.testing.assert_array_equal(dc.ops.sort(accelerator.asarray(x), axis=1).numpy(), np.sort(x, axis=1))
        np.testing.assert_array_equal(dc.ops.sort(accelerator.asarray(x), axis=0).numpy(), np.sort(x, axis=0))


@pytest.mark.parametrize("mkn", [(64, 16, 64), (128, 32, 64), (63, 15, 65), (65, 17, 63), (129, 33, 130),
                                 (1, 100, 1), (70, 1, 70)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiled_matmul_inner_and_edge_tiles(accelerator, mkn, dtype):
    m, k, n = mkn
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b)).numpy()
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, a @ b, rtol=tol, atol=tol * k)


def test_tiled_matmul_batched_with_a_broadcast_operand(accelerator):
    a = RNG.standard_normal((3, 70, 40)).astype(np.float32)
    b = RNG.standard_normal((40, 66)).astype(np.float32)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b)).numpy()
        got_t = dc.ops.matmul(accelerator.asarray(b.T.copy()), accelerator.asarray(a.transpose(0, 2, 1).copy()))
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got_t.numpy(), b.T @ a.transpose(0, 2, 1), rtol=1e-4, atol=1e-3)


def test_tiled_matmul_exact_on_integers_in_floats(accelerator):
    # small integers: every product and partial sum is exact, so the K order does not matter and
    # any element the kernel stages twice or drops shows as a wrong integer
    a = RNG.integers(-8, 8, (2 * mk.TILE + 3, 3 * mk.TK + 1)).astype(np.float32)
    b = RNG.integers(-8, 8, (3 * mk.TK + 1, mk.TILE + 7)).astype(np.float32)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b)).numpy()
    np.testing.assert_array_equal(got, a @ b)

