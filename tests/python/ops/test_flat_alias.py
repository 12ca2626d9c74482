"""ops.arrays.flat: a plain n-d Buffer's own memory seen as 1-D (no copy kernel), a copy for the
expression layer's views; the axis reductions built on it stay numpy's, and never write their input."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops.arrays import flat


def test_plain_buffer_is_seen_flat_without_a_copy(accelerator: dc.Accelerator) -> None:
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = accelerator.asarray(host)
    f = flat(x)
    assert f.shape == (24,) and f.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(f), host.reshape(-1))
    f[5:6] = accelerator.asarray(np.array([-1.0], np.float32))  # the same memory: the write shows in x
    assert np.asarray(x)[0, 1, 1] == -1.0
    with dc.profile() as prof:
        flat(x)
    assert "_flatten" not in prof.summary()


def test_strided_view_is_copied(accelerator: dc.Accelerator) -> None:
    host = np.arange(30, dtype=np.int32).reshape(5, 6)
    x = accelerator.asarray(host)
    v = x[::2, 1::2]
    f = flat(v)
    np.testing.assert_array_equal(np.asarray(f), host[::2, 1::2].reshape(-1))
    f[0:1] = accelerator.asarray(np.array([99], np.int32))  # a copy: x keeps its values
    np.testing.assert_array_equal(np.asarray(x), host)


@pytest.mark.parametrize("shape", [(7, 8), (3, 5, 2), (1, 9), (6, 1)])
def test_axis_reductions_match_numpy_and_keep_their_input(accelerator: dc.Accelerator,
                                                          shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(3)
    host = rng.standard_normal(shape).astype(np.float32)
    host.flat[4] = host.flat[1]  # a tie for argmin/argmax: the first one wins
    x = accelerator.asarray(host)
    for axis in range(len(shape)):
        np.testing.assert_allclose(np.asarray(dc.sum(x, axis=axis)), host.sum(axis=axis), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(dc.max(x, axis=axis)), host.max(axis=axis))
        np.testing.assert_array_equal(np.asarray(dc.argmin(x, axis=axis)), host.argmin(axis=axis))
        np.testing.assert_array_equal(np.asarray(dc.argmax(x, axis=axis)), host.argmax(axis=axis))
    np.testing.assert_array_equal(np.asarray(x), host)


def test_nan_along_an_axis(accelerator: dc.Accelerator) -> None:
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    host[1, 2] = np.nan
    x = accelerator.asarray(host)
    np.testing.assert_array_equal(np.asarray(dc.argmax(x, axis=1)), host.argmax(axis=1))
    np.testing.assert_array_equal(np.asarray(dc.max(x, axis=0)), host.max(axis=0))
