"""The sort's order-preserving float keys (ops/sort_kernels.float_key, built with dc.bitcast) against
numpy's order, bit for bit, on every accelerator (the Metal phase runs this file: float32 keys use no
float64): signed zeros, subnormals, infinities and NaNs with payloads and either sign."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops.sort_kernels import float_key_kernel, key_float_kernel

SPECIAL = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 3e-39, 1.17549435e-38,
           -1.17549435e-38, 3.4028235e38, -3.4028235e38, 0.1]


def _floats() -> np.ndarray:
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32)  # NaN payloads of both signs too
    return np.concatenate([np.array(SPECIAL, np.float32), bits.view(np.float32)])


def _expected(x: np.ndarray, exact: bool) -> np.ndarray:
    bits = x.view(np.uint32).copy()
    nan = np.isnan(x)
    if exact:
        bits[nan] &= np.uint32(0x7FFFFFFF)  # a NaN's sign is dropped: every NaN after +inf
    else:
        bits[x == 0] = 0  # -0.0 is 0.0's key
    key = np.where(bits >> 31 == 1, ~bits, bits | np.uint32(0x80000000)).astype(np.uint32)
    if not exact:
        key[nan] = 0xFFFFFFFF
    return key


@pytest.mark.parametrize("exact", [False, True], ids=["ties", "exact"])
def test_float32_keys_are_numpys_order_bit_for_bit(accelerator, exact):
    x = _floats()
    keys = accelerator.zeros(x.size, dtype=np.uint32)
    dc.launch(float_key_kernel(np.float32, exact), x.size, accelerator.asarray(x), keys, accelerator=accelerator)
    got = keys.numpy()
    np.testing.assert_array_equal(got, _expected(x, exact))
    order = np.argsort(got, kind="stable")
    if exact:
        np.testing.assert_array_equal(x[order], np.sort(x))
    else:
        np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))  # ties equal: numpy's stable order


def test_float32_keys_turn_back_into_the_floats(accelerator):
    x = _floats()
    keys = accelerator.zeros(x.size, dtype=np.uint32)
    back = accelerator.zeros(x.size, dtype=np.float32)
    dc.launch(float_key_kernel(np.float32, True), x.size, accelerator.asarray(x), keys, accelerator=accelerator)
    dc.launch(key_float_kernel(np.float32), x.size, keys, back, accelerator=accelerator)
    want = x.view(np.uint32).copy()
    want[np.isnan(x)] &= np.uint32(0x7FFFFFFF)
    np.testing.assert_array_equal(back.numpy().view(np.uint32), want)


def test_float32_keys_use_no_double():
    assert "double" not in float_key_kernel(np.float32).source("cpu")
    assert "double" not in key_float_kernel(np.float32).source("cpu")
