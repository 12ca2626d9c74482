"""dc.fft against numpy.fft on every accelerator: radix 2/3/4/5/7 lengths, Bluestein primes, axes, norms."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

RNG = np.random.default_rng(13)


def _c(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 12, 30, 49, 97, 128, 210, 1000, 1009, 4096, 65536])
def test_fft_lengths(accelerator, path, n):
    x = _c(n)
    got = dc.fft.fft(accelerator.asarray(x))
    assert isinstance(got, dc.Buffer) and got.dtype == np.complex128
    np.testing.assert_allclose(got.numpy(), np.fft.fft(x), atol=1e-9 * np.sqrt(n) * np.log2(n + 1) + 1e-12)
    np.testing.assert_allclose(dc.fft.ifft(x, accelerator=accelerator), np.fft.ifft(x), atol=1e-10)


@pytest.mark.parametrize("n", [16, 17, 1 << 20])
def test_fft_complex64(accelerator, path, n):
    x = _c(n, np.complex64)
    got = dc.fft.fft(x, accelerator=accelerator)
    assert got.dtype == np.complex64
    want = np.fft.fft(x.astype(np.complex128))
    np.testing.assert_allclose(got, want, atol=2e-5 * np.sqrt(n) * np.log2(n + 1))


@pytest.mark.parametrize("n", [1, 2, 9, 16, 101, 1000])
def test_rfft_irfft(accelerator, path, n):
    x = RNG.standard_normal(n)
    f = dc.fft.rfft(x, accelerator=accelerator)
    np.testing.assert_allclose(f, np.fft.rfft(x), atol=1e-9 * n)
    if n > 1:
        back = dc.fft.irfft(f, n, accelerator=accelerator)
        assert back.dtype == np.float64
        np.testing.assert_allclose(back, x, atol=1e-10)
        np.testing.assert_allclose(dc.fft.irfft(np.fft.rfft(x), accelerator=accelerator),
                                   np.fft.irfft(np.fft.rfft(x)), atol=1e-10)


def test_axes_n_and_norms(accelerator, path):
    x = _c((6, 10, 5))
    for axis in (0, 1, 2, -1):
        np.testing.assert_allclose(dc.fft.fft(x, axis=axis, accelerator=accelerator), np.fft.fft(x, axis=axis),
                                   atol=1e-10)
    np.testing.assert_allclose(dc.fft.fft(x, n=7, axis=1, accelerator=accelerator), np.fft.fft(x, n=7, axis=1),
                               atol=1e-10)
    np.testing.assert_allclose(dc.fft.fft(x, n=16, accelerator=accelerator), np.fft.fft(x, n=16), atol=1e-10)
    for norm in ("ortho", "forward", "backward"):
        np.testing.assert_allclose(dc.fft.ifft(x, norm=norm, accelerator=accelerator), np.fft.ifft(x, norm=norm),
                                   atol=1e-10)


def test_fft2(accelerator, path):
    x = _c((30, 44), np.complex64)
    b = accelerator.asarray(x)
    got = dc.fft.fft2(b)
    assert got.dtype == np.complex64 and got.shape == (30, 44)
    np.testing.assert_allclose(got.numpy(), np.fft.fft2(x.astype(np.complex128)), atol=1e-3)
    np.testing.assert_allclose(dc.fft.ifft2(got).numpy(), x, atol=1e-5)
    y = RNG.standard_normal((3, 8, 9))
    np.testing.assert_allclose(dc.fft.fft2(y, s=(5, 12), axes=(0, 2), accelerator=accelerator),
                               np.fft.fft2(y, s=(5, 12), axes=(0, 2)), atol=1e-10)


def test_real_float32_buffer_input(accelerator, path):
    x = RNG.standard_normal(1000).astype(np.float32)
    got = dc.fft.fft(accelerator.asarray(x))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got.numpy(), np.fft.fft(x.astype(np.float64)), atol=2e-3)


def test_fft_errors(accelerator, path):
    with pytest.raises(np.exceptions.AxisError):
        dc.fft.fft(np.zeros((2, 2)), axis=2, accelerator=accelerator)
    with pytest.raises(ValueError, match="norm"):
        dc.fft.fft(np.zeros(4), norm="bad", accelerator=accelerator)
    with pytest.raises(ValueError, match="positive"):
        dc.fft.fft(np.zeros(4), n=0, accelerator=accelerator)
    with pytest.raises(ValueError, match="data points"):
        dc.fft.fft(np.zeros(0), accelerator=accelerator)
    with pytest.raises(TypeError, match="real"):
        dc.fft.rfft(np.zeros(4, complex), accelerator=accelerator)
    with pytest.raises(TypeError, match="<U1"):
        dc.fft.fft(np.array(["a"]), accelerator=accelerator)
