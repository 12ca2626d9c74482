"""sort / argsort / sort_by_key against numpy on every accelerator; stability; hypothesis properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dotcompute as dc

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 257, 10_007, 200_003])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.int64, np.uint32])
def test_sort_sizes_dtypes(accelerator, path, sort_algorithm, n, dtype, tests_full, device_slice):
    device_slice(dtype in (np.float32, np.int64), "float32 and int64 keys (both key widths, the float and the "
                 "signed-integer key transforms)")
    if n == 200_003 and accelerator.info.get("simulated") and not tests_full:
        # the simulator runs every GPU thread of the radix passes on the host (10-20 s a sort this
        # long); 10,007 keys already take several tiles of every pass; with --full
        pytest.skip("200,003 keys on the simulator run with --full (10,007 already take several tiles)")
    x = (RNG.standard_normal(n) * 100).astype(dtype)
    b = accelerator.asarray(x)
    got = dc.sort(b)
    assert got.dtype == dtype and got.shape == (n,)
    np.testing.assert_array_equal(got.numpy(), np.sort(x))
    np.testing.assert_array_equal(b.numpy(), x)  # the input is untouched


@pytest.mark.parametrize("n", [5, 100, 5003, 100_003])
def test_argsort_is_stable(accelerator, path, sort_algorithm, n, tests_full):
    if n == 100_003 and accelerator.info.get("simulated") and not tests_full:
        pytest.skip("100,003 keys on the simulator run with --full (5,003 already take several tiles)")
    x = RNG.integers(0, 4, n).astype(np.int32)  # many ties
    got = dc.argsort(accelerator.asarray(x))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), np.argsort(x, kind="stable"))


def test_nan_sorts_last(accelerator, path, sort_algorithm):
    x = np.array([3.0, np.nan, -1.0, np.inf, np.nan, -np.inf, 0.0, -0.0, 1e-45, -1e-45] * 400, np.float32)
    np.testing.assert_array_equal(dc.sort(accelerator.asarray(x)).numpy(), np.sort(x))
    np.testing.assert_array_equal(dc.argsort(x, accelerator=accelerator), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("shape", [(4, 33), (33, 4), (3, 5, 70)])
def test_axes(accelerator, path, shape):
    x = RNG.integers(0, 10, shape).astype(np.float64)
    for axis in [*range(len(shape)), -1, None]:
        np.testing.assert_array_equal(dc.sort(x, axis=axis, accelerator=accelerator), np.sort(x, axis=axis))
        np.testing.assert_array_equal(dc.argsort(x, axis=axis, accelerator=accelerator),
                                      np.argsort(x, axis=axis, kind="stable"))


def test_sort_by_key(accelerator, path, sort_algorithm):
    keys = RNG.integers(0, 20, 3001).astype(np.float32)
    vals = RNG.standard_normal(3001)
    sk, sv = dc.sort_by_key(accelerator.asarray(keys), accelerator.asarray(vals))
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(sk.numpy(), keys[order])
    np.testing.assert_array_equal(sv.numpy(), vals[order])  # equal keys keep the values' order


def test_sort_errors(accelerator):
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        dc.sort_by_key(np.zeros(3), np.zeros(4), accelerator=accelerator)
    with pytest.raises(np.exceptions.AxisError):
        dc.sort(accelerator.asarray(np.zeros((2, 2))), axis=2)
    with pytest.raises(TypeError, match="object"):
        dc.sort(np.array([object()]), accelerator=accelerator)


@settings(max_examples=12, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 2000), elements=st.floats(width=32, allow_infinity=True, allow_nan=True)))
def test_sort_is_a_sorted_permutation(x):
    for acc in dc.devices():
        with dc.ops.prefer("portable"):
            idx = dc.argsort(x, accelerator=acc)
            s = dc.sort(x, accelerator=acc)
        assert sorted(idx.tolist()) == list(range(x.size))  # a permutation
        np.testing.assert_array_equal(x[idx], s)
        finite = s[~np.isnan(s)]
        assert (finite[1:] >= finite[:-1]).all() and np.isnan(s[finite.size:]).all()


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
def test_radix_full_range_keys(accelerator, path, sort_algorithm, dtype, device_slice):
    device_slice(dtype == np.int64, "int64 keys")
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, 50_000, dtype=dtype, endpoint=True)
    x[:4] = [info.min, info.max, 0, info.min]
    np.testing.assert_array_equal(dc.sort(x, accelerator=accelerator), np.sort(x))
    keys = (x % 7).astype(dtype)  # ties: the payload order shows stability
    sk, sv = dc.sort_by_key(keys, np.arange(keys.size), accelerator=accelerator)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(sk, keys[order])
    np.testing.assert_array_equal(sv, order)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_keys_every_bit_pattern_class(accelerator, path, sort_algorithm, dtype):
    # random bit patterns: subnormals, NaNs with payloads, infinities, both zeros, huge and tiny
    itype = np.int32 if dtype == np.float32 else np.int64
    bits = RNG.integers(np.iinfo(itype).min, np.iinfo(itype).max, 30_000, dtype=itype)
    x = bits.view(dtype)
    np.testing.assert_array_equal(dc.sort(x, accelerator=accelerator), np.sort(x))
    np.testing.assert_array_equal(dc.argsort(x, accelerator=accelerator), np.argsort(x, kind="stable"))


def test_dispatch_for_sorts(accelerator):
    from dotcompute.ops import dispatch

    seen: list[str] = []
    dispatch.listeners.append(lambda op, acc, p: seen.append(p))
    try:
        dc.ops.sort(accelerator.asarray(np.ones(10, np.float32)))
        with dispatch.prefer("portable"):
            dc.ops.sort(accelerator.asarray(np.ones(10, np.float32)))
    finally:
        dispatch.listeners.pop()
    if accelerator.backend == "cpu":
        want = "vendor"  # numpy on the buffer's own memory
    elif accelerator.type == "cpu":
        want = "host"  # an OpenCL CPU device: numpy on a copy beats the portable kernel
    else:
        want = "portable"
    assert seen == [want, "portable"]
