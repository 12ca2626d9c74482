"""dc.std / dc.var / dc.count_nonzero over every axis on devices: the squared deviations (the
comparison) fused into one reduction kernel (issue 24); numpy's values, NaN, empty input, keepdims
and partial axes unchanged."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dotcompute as dc


@pytest.mark.parametrize("shape", [(1001,), (33, 17), (2, 3, 5)])
@pytest.mark.parametrize("correction", [0.0, 1.0])
def test_full_moments_match_numpy(accelerator: dc.Accelerator, shape: tuple[int, ...], correction: float) -> None:
    rng = np.random.default_rng(11)
    host = (rng.standard_normal(shape) * 3 + 100).astype(np.float32)  # a large mean: deviations must be exact-ish
    x = accelerator.asarray(host)
    np.testing.assert_allclose(np.asarray(dc.var(x, correction=correction)), host.var(ddof=correction), rtol=2e-5)
    np.testing.assert_allclose(np.asarray(dc.std(x, correction=correction)), host.std(ddof=correction), rtol=2e-5)
    kept = dc.std(x, keepdims=True)
    assert kept.shape == (1,) * len(shape)
    np.testing.assert_allclose(np.asarray(kept), host.std(keepdims=True), rtol=2e-5)
    if len(shape) > 1:
        np.testing.assert_allclose(np.asarray(dc.var(x, axis=0)), host.var(axis=0), rtol=2e-5, atol=1e-5)


def test_nan_and_empty(accelerator: dc.Accelerator) -> None:
    host = np.array([1.0, np.nan, 3.0], np.float64)
    assert np.isnan(np.asarray(dc.std(accelerator.asarray(host))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(np.asarray(dc.var(accelerator.asarray(np.zeros(0, np.float32)))))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_count_nonzero_everywhere_and_along_axes(accelerator: dc.Accelerator, dtype: type) -> None:
    host = np.array([[0, 3, 0, -1], [0, 0, 7, 1], [0, 2, 0, 0]] * 5, dtype=dtype)
    if np.dtype(dtype).kind == "f":
        host[0, 0], host[1, 1] = np.nan, -0.0  # NaN counts, -0.0 does not
    x = accelerator.asarray(host)
    total = dc.count_nonzero(x)
    assert total.dtype == np.int64 and total.shape == ()
    assert int(np.asarray(total)) == np.count_nonzero(host)
    np.testing.assert_array_equal(np.asarray(dc.count_nonzero(x, axis=1)), np.count_nonzero(host, axis=1))
    np.testing.assert_array_equal(np.asarray(dc.count_nonzero(x, keepdims=True)),
                                  np.count_nonzero(host, keepdims=True))
