"""complex64/complex128 buffers (storage for the FFTs and complex matmul) on every accelerator."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_round_trip(accelerator, dtype):
    x = (np.arange(12) * (1 + 2j)).astype(dtype).reshape(3, 4)
    b = accelerator.asarray(x)
    assert b.dtype == dtype and b.shape == (3, 4) and b.nbytes == x.nbytes
    np.testing.assert_array_equal(b.numpy(), x)
    z = accelerator.zeros(5, dtype)
    np.testing.assert_array_equal(z.numpy(), np.zeros(5, dtype))
    e = accelerator.empty((2, 2), dtype)
    e.copy_from(np.full((2, 2), 3 - 1j, dtype))
    np.testing.assert_array_equal(np.asarray(e), np.full((2, 2), 3 - 1j, dtype))
    assert complex(accelerator.asarray(np.array([1 + 2j], dtype))) == 1 + 2j


def test_complex_buffers_are_refused_by_kernels_clearly(accelerator):
    @dc.kernel
    def touch(x: dc.Buffer[dc.float32]):
        x[dc.global_id(0)] = 1.0

    with pytest.raises(TypeError, match="complex64"):
        accelerator.launch(touch, 4, accelerator.zeros(4, np.complex64))
