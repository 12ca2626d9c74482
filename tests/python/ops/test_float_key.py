"""The sort's order-preserving float keys (ops/sort_kernels.float_key) against the IEEE bits numpy
sees, on every accelerator: float32 keys are built in float32 arithmetic, so they also run on Metal
(no float64), and must still be exact for signed zeros, subnormals, infinities and NaN."""

from __future__ import annotations

import numpy as np

import dotcompute as dc
from dotcompute.ops.sort_kernels import float_key_kernel

SPECIAL = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e-39, 1.17549435e-38,
           -1.17549435e-38, 3.4028235e38, -3.4028235e38, 0.1]


def _expected(x: np.ndarray) -> np.ndarray:
    bits = x.view(np.int32).astype(np.int64)
    key = np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)  # sign-magnitude → two's order
    key[x == 0] = 0  # -0.0 sorts with 0.0
    key[np.isnan(x)] = 2**31 - 1  # NaN last, as numpy
    return key


def test_float32_keys_are_the_ieee_order_bit_for_bit(accelerator):
    rng = np.random.default_rng(5)
    spread = rng.standard_normal(3000) * 10.0 ** rng.integers(-45, 38, 3000)
    x = np.concatenate([np.array(SPECIAL), spread]).astype(np.float32)
    keys = accelerator.zeros(x.size, dtype=np.int64)
    dc.launch(float_key_kernel(np.float32), x.size, accelerator.asarray(x), keys,
              accelerator=accelerator)
    np.testing.assert_array_equal(keys.numpy(), _expected(x))


def test_float32_keys_use_no_double():
    assert "double" not in float_key_kernel(np.float32).source("cpu")
