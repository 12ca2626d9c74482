"""The portable radix sort (issue 24) against numpy on every accelerator, both of its algorithms
forced on each device: the CPU devices' MSD split with in-cache bucket passes (radix_local) and
the GPUs' LSD passes. Float keys go through dc.bitcast keys: NaN last, -0.0 equal to 0.0 where
order shows (argsort, sort_by_key: stable), exact bits kept by sort_by_key; ties, empty, one key,
sizes around the radix threshold, every bucket shape (one bucket, one key per bucket), descending."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch

sort_mod = importlib.import_module("dotcompute.ops.sort")
RNG = np.random.default_rng(2024)
DTYPES = [np.float32, np.float64, np.int32, np.uint32, np.int64]


@pytest.fixture(params=["msd", "lsd"])
def radix(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The radix sort forced on every device (portable path), with either algorithm; GPUs only have LSD."""
    acc = request.getfixturevalue("accelerator")
    if request.param == "msd" and acc.type != "cpu":
        pytest.skip("the MSD split is for CPU-type devices; on GPUs the lsd parameter runs the same kernels")
    pocl = acc.backend == "opencl" and acc.type == "cpu"
    if request.param == "lsd" and pocl and not request.getfixturevalue("tests_full"):
        # the GPU kernels run by default on cpu:0, the simulated cuda:0 and metal:0; on PoCL they
        # only add a minute of cold compiles to the default run
        pytest.skip("slow: the GPU passes on PoCL run with --full (bash tests/run.sh --full, or pytest --full)")
    dtype = request.node.callspec.params.get("dtype", np.float32)
    other_keys = dtype is not np.float32 and not request.getfixturevalue("tests_full")
    if request.param == "lsd" and acc.backend == "cpu" and other_keys:
        # each key width is a 10-40 s cold compile of the work-group tile sort on the CPU backend;
        # the simulated cuda:0 (the GPU these kernels are for) runs every dtype in the default run
        pytest.skip("slow: the GPU passes on cpu:0 run float32 keys by default, every dtype with --full")
    monkeypatch.setattr(sort_mod, "RADIX_ON_CPU", True)
    monkeypatch.setattr(sort_mod, "RADIX_MSD_ON_CPU", request.param == "msd")
    with dispatch.prefer("portable"):
        yield request.param


def _data(dtype: type, n: int) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        x = (RNG.standard_normal(n) * 1e3).astype(dtype)
        x[RNG.integers(0, max(n, 1), n // 50)] = np.nan
        x[RNG.integers(0, max(n, 1), n // 50)] = -0.0
        x[RNG.integers(0, max(n, 1), n // 50)] = 0.0
        return x
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("n", [0, 1, 2049, 30_001])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_and_argsort_match_numpy(accelerator, radix, dtype, n, device_slice, tests_full):
    device_slice(dtype in (np.float32, np.int64), "float32 and int64 keys")
    if n == 30_001 and accelerator.info.get("simulated") and not tests_full:
        pytest.skip("30,001 keys on the simulator run with --full (test_sort.py sorts 10,007 there: several tiles)")
    x = _data(dtype, n)
    b = accelerator.asarray(x)
    got = dc.ops.sort(b).numpy()
    assert got.dtype == dtype and got.shape == (n,)
    np.testing.assert_array_equal(got, np.sort(x))  # NaN last (compared equal to NaN)
    np.testing.assert_array_equal(dc.ops.argsort(b).numpy(), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(b.numpy(), x)  # the input is untouched


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_ties_nan_and_signed_zeros_keep_their_order(accelerator, radix, dtype):
    itype = np.uint32 if dtype == np.float32 else np.uint64
    # few distinct values, both zeros, infinities and NaNs of both signs with payloads: long runs of ties
    values = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, 1e-300 if dtype == np.float64 else 1e-40], dtype)
    x = values[RNG.integers(0, values.size, 9000)]
    nan_bits = RNG.integers(1, 1 << 20, 300).astype(itype) | (np.array(np.nan, dtype).view(itype))
    nan_bits[::2] |= itype(1) << itype(8 * x.itemsize - 1)  # negative NaNs sort last too
    x[RNG.integers(0, x.size, 300)] = nan_bits.view(dtype)
    b = accelerator.asarray(x)
    order = dc.ops.argsort(b).numpy()
    np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(dc.ops.sort(b).numpy(), np.sort(x))
    vals = np.arange(x.size, dtype=np.int64)
    sk, sv = dc.ops.sort_by_key(b, accelerator.asarray(vals))
    np.testing.assert_array_equal(sv.numpy(), order)
    np.testing.assert_array_equal(sk.numpy().view(itype), x[order].view(itype))  # the keys' exact bits


@pytest.mark.parametrize("shape", ["one-bucket", "one-key-per-bucket", "all-equal"])
def test_bucket_shapes(accelerator, radix, shape):
    n = 5000
    if shape == "one-bucket":  # every key shares the top 11 bits: one MSD bucket holds them all
        x = (RNG.integers(0, 1 << 20, n) | (0x155 << 21)).astype(np.int32)
    elif shape == "one-key-per-bucket":  # distinct top digits: single-key buckets (and empty ones)
        x = (RNG.permutation(2048)[: n % 2048 + 1000].astype(np.int64) << 53).astype(np.int64) - 7
    else:
        x = np.full(n, 3, np.uint32)
    b = accelerator.asarray(x)
    np.testing.assert_array_equal(dc.ops.sort(b).numpy(), np.sort(x))
    np.testing.assert_array_equal(dc.ops.argsort(b).numpy(), np.argsort(x, kind="stable"))


def test_descending_is_stable(accelerator, radix):
    x = RNG.integers(-5, 5, 6000).astype(np.float32)
    x[::101] = np.nan
    b = accelerator.asarray(x)
    np.testing.assert_array_equal(dc.sort(b, descending=True).numpy(), np.sort(x)[::-1])
    want = np.lexsort((np.arange(x.size), -np.nan_to_num(x, nan=np.inf)))  # NaN first, ties in input order
    np.testing.assert_array_equal(dc.argsort(b, descending=True).numpy(), want)


def test_int_keys_with_payload_are_stable(accelerator, radix):
    keys = (RNG.integers(-(2**62), 2**62, 20_000) // (2**58)).astype(np.int64)  # 33 distinct keys
    vals = RNG.standard_normal(keys.size).astype(np.float32)
    sk, sv = dc.ops.sort_by_key(accelerator.asarray(keys), accelerator.asarray(vals))
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(sk.numpy(), keys[order])
    np.testing.assert_array_equal(sv.numpy(), vals[order])
