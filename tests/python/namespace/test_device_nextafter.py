"""dc.nextafter on every device, bit for bit numpy's (zeros, subnormals, powers of two, the largest
finite value, infinities, NaN)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dotcompute as dc


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_matches_numpy(accelerator: dc.Accelerator, dtype: type) -> None:
    if dtype is np.float64 and "float64" not in str(dc.__array_namespace_info__().dtypes(device=accelerator)):
        pytest.skip(f"{accelerator.id} has no float64")
    fi = np.finfo(dtype)
    v = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 3.7, -1e-3, np.inf, -np.inf, np.nan, fi.max, -fi.max,
                  fi.smallest_subnormal, fi.smallest_normal], dtype)
    a, b = np.repeat(v, v.size), np.tile(v, v.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy (and so cpu:0) warns on max -> inf
        got = dc.nextafter(accelerator.asarray(a), accelerator.asarray(b))
        got.numpy()
        want = np.nextafter(a, b)
    assert got.device is accelerator
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))
    np.testing.assert_array_equal(dc.nextafter(accelerator.asarray(v), 0).numpy(), np.nextafter(v, dtype(0)))
