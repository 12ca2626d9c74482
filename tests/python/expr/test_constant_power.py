"""``x ** c`` with a constant exponent numpy computes without ``pow`` (float ``** 2`` as a square,
``** 0.5`` as ``sqrt``, ``** -1`` as a reciprocal, ``** 1``, ``** 0``; integer powers by
multiplying): the generated kernel has no ``pow`` and its result is numpy's, bit for bit, on every
device (NaN, infinities, signed zeros, subnormals, odd and empty sizes included)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dotcompute as dc

SPECIAL_FLOAT = (2, 2.0, 0.5, 1, 1.0, 0, 0.0, -1, -1.0)
INT_EXPONENTS = (0, 1, 2, 3, 4, 5, 7, 8, 13, 16)


def _floats(dtype: np.dtype, n: int) -> np.ndarray:
    info = np.finfo(dtype)
    edge = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, info.tiny, info.tiny / 4,
                     -info.tiny / 8, info.max, -info.max, np.sqrt(info.max) * 2, 3.0, -7.25], dtype)
    rng = np.random.default_rng(n)
    body = (rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e3], n)).astype(dtype)
    return np.concatenate([edge, body])[:n] if n < edge.size else np.concatenate([edge, body[edge.size:]])


def _numpy(x: np.ndarray, c: object) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return x ** c


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    # NaNs may differ in payload/sign between devices; everything else must be identical bits
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    assert got[~nan].tobytes() == want[~nan].tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("n", [0, 1, 1001])
def test_float_special_exponents_are_numpys_bits(accelerator, dtype, n):
    dt = np.dtype(dtype)
    if dt == np.float16 and not accelerator.info.get("fp16", True):
        pytest.skip(f"{accelerator.id} has no float16")
    x = _floats(dt, n)
    buf = accelerator.asarray(x)
    for c in SPECIAL_FLOAT:
        _same_bits((buf ** c).numpy(), _numpy(x, c))
        _same_bits(dc.pow(buf, c).numpy() if n else (buf ** c).numpy(), _numpy(x, c))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "int16"])
def test_integer_powers_are_exact_with_numpys_wraparound(accelerator, dtype, device_slice):
    device_slice(dtype in ("uint8", "int64"), "uint8 and int64 (narrow and wide wraparound)")
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    x = np.concatenate([np.array([info.min, info.max, 0, 1, info.max // 3], dt),
                        np.random.default_rng(3).integers(info.min, info.max, 300, dtype=dt, endpoint=True)])
    buf = accelerator.asarray(x)
    for c in INT_EXPONENTS:
        got, want = (buf ** c).numpy(), x ** c
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=f"{dtype} ** {c}")


def test_integer_base_float_exponent_and_in_place(accelerator):
    x = np.arange(-6, 7, dtype=np.int32)
    buf = accelerator.asarray(x)
    if accelerator.info.get("fp64", True):  # int32 ** 2.0 computes in float64
        _same_bits((buf ** 2.0).numpy(), _numpy(x, 2.0))
    y = accelerator.asarray(np.linspace(-3, 3, 13, dtype=np.float32))
    y **= 2
    np.testing.assert_array_equal(y.numpy(), np.linspace(-3, 3, 13, dtype=np.float32) ** 2)
    # the exponent is the expression's: a fused sum of squares equals numpy's
    z = np.linspace(0, 1, 17, dtype=np.float32)
    zb = accelerator.asarray(z)
    np.testing.assert_array_equal((zb ** 2 + zb ** 0.5).numpy(), z ** 2 + z ** 0.5)


def test_generated_kernels_call_pow_only_for_other_exponents(cpu):
    x = cpu.asarray(np.linspace(0.5, 2, 8, dtype=np.float32))
    i = cpu.asarray(np.arange(8, dtype=np.int32))
    for expr in (x ** 2, x ** 0.5, x ** -1, x ** 1, x ** 0, i ** 5, dc.pow(x, 2)):
        assert "pow" not in dc.explain(expr) and "**" not in dc.explain(expr)
    for expr in (x ** 9, x ** 2.5, x ** -0.5, i ** 17, x ** x):  # x ** 3: test_integer_power_chain.py
        text = dc.explain(expr)
        assert "pow" in text or "**" in text
    # a 0-d Buffer exponent is read as a number when the expression is built: specialised too
    two = cpu.asarray(np.float32(2))
    np.testing.assert_array_equal((x ** two).numpy(), x.numpy() ** np.float32(2))
