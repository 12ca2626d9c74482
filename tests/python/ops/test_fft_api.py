"""The Array API fft extension beyond fft.py's 1-D/2-D functions, against numpy.fft on every
device, on the vendor path and on the portable kernels: n-d transforms with s= and axes=, the
Hermitian pair, frequencies, shifts, result dtypes and errors."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

import dotcompute as dc

F = dc.fft
RS = np.random.default_rng(5)
X = RS.standard_normal((4, 6, 5))
Z = X + 1j * RS.standard_normal(X.shape)


@pytest.fixture(params=["auto", "portable"])
def path(request: pytest.FixtureRequest) -> str:
    return request.param


def _ctx(path: str):  # noqa: ANN202
    return dc.ops.prefer("portable") if path == "portable" else nullcontext()


def _types(acc: dc.Accelerator) -> list[tuple[type, type]]:
    pairs = [(np.float32, np.complex64)]
    return pairs if acc.backend == "metal" else [*pairs, (np.float64, np.complex128)]


def _check(got: dc.Buffer, want: np.ndarray, acc: dc.Accelerator) -> None:
    assert isinstance(got, dc.Buffer) and got.accelerator is acc
    g = got.numpy()
    assert g.dtype == want.dtype and g.shape == want.shape
    tol = 1e-3 if want.dtype in (np.float32, np.complex64) else 1e-9
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol)


def test_nd_transforms(accelerator: dc.Accelerator, path: str) -> None:
    for rt, ct in _types(accelerator):
        x, z = X.astype(rt), Z.astype(ct)
        bx, bz = accelerator.asarray(x), accelerator.asarray(z)
        with _ctx(path):
            _check(F.fftn(bz), np.fft.fftn(z), accelerator)
            _check(F.fftn(bz, s=(5, 7), axes=(0, 2), norm="ortho"), np.fft.fftn(z, s=(5, 7), axes=(0, 2), norm="ortho"),
                   accelerator)
            _check(F.ifftn(bz, s=(3, 4)), np.fft.ifftn(z, s=(3, 4), axes=(-2, -1)), accelerator)
            _check(F.fftn(bx, axes=(1,)), np.fft.fftn(x, axes=(1,)), accelerator)
            _check(F.rfftn(bx), np.fft.rfftn(x), accelerator)
            _check(F.rfftn(bx, axes=(2, 0), norm="forward"), np.fft.rfftn(x, axes=(2, 0), norm="forward"), accelerator)
            _check(F.irfftn(bz), np.fft.irfftn(z), accelerator)
            _check(F.irfftn(bz, s=(6, 9), axes=(0, 1)), np.fft.irfftn(z, s=(6, 9), axes=(0, 1)), accelerator)


def test_hermitian_pair(accelerator: dc.Accelerator, path: str) -> None:
    for rt, ct in _types(accelerator):
        x, z = X.astype(rt), Z.astype(ct)
        bx, bz = accelerator.asarray(x), accelerator.asarray(z)
        with _ctx(path):
            for norm in ("backward", "ortho", "forward"):
                _check(F.hfft(bz, norm=norm), np.fft.hfft(z, norm=norm), accelerator)
                _check(F.hfft(bz, n=7, axis=1, norm=norm), np.fft.hfft(z, n=7, axis=1, norm=norm), accelerator)
                _check(F.ihfft(bx, norm=norm), np.fft.ihfft(x, norm=norm), accelerator)
            back = F.hfft(F.ihfft(bx), n=x.shape[-1])
            _check(back, x, accelerator)


def test_frequencies(accelerator: dc.Accelerator) -> None:
    for n in (1, 7, 8):
        _check(F.fftfreq(n, d=0.25, dtype=np.float32, device=accelerator),
               np.fft.fftfreq(n, 0.25).astype(np.float32), accelerator)
        _check(F.rfftfreq(n, dtype=np.float32, device=accelerator), np.fft.rfftfreq(n).astype(np.float32),
               accelerator)
    if accelerator.backend != "metal":
        _check(F.fftfreq(9, device=accelerator), np.fft.fftfreq(9), accelerator)


def test_shifts(accelerator: dc.Accelerator) -> None:
    for rt, ct in _types(accelerator):
        x = X.astype(rt)
        bx = accelerator.asarray(x)
        _check(F.fftshift(bx), np.fft.fftshift(x), accelerator)
        _check(F.ifftshift(bx, axes=1), np.fft.ifftshift(x, axes=1), accelerator)
        _check(F.ifftshift(F.fftshift(bx, axes=(0, 2)), axes=(0, 2)), x, accelerator)
        v = accelerator.asarray(x[0, 0].copy())
        _check(F.fftshift(v), np.fft.fftshift(x[0, 0]), accelerator)
        np.testing.assert_array_equal(v.numpy(), x[0, 0])  # the input is not rolled in place
        z = Z[0].astype(ct)
        _check(F.fftshift(accelerator.asarray(z)), np.fft.fftshift(z), accelerator)


def test_numpy_in_numpy_out_and_empty_shift() -> None:
    assert isinstance(F.fftn(Z), np.ndarray)
    np.testing.assert_allclose(F.hfft(Z[0, 0]), np.fft.hfft(Z[0, 0]))
    np.testing.assert_array_equal(F.fftshift(X), np.fft.fftshift(X))
    e = dc.accelerator("cpu").asarray(np.zeros((0, 4), np.float32))
    assert F.fftshift(e).shape == (0, 4)


def test_errors() -> None:
    z = dc.accelerator("cpu").asarray(Z.astype(np.complex64))
    with pytest.raises(ValueError, match="norm"):
        F.fftn(z, norm="sideways")
    with pytest.raises(ValueError, match="s has 1 sizes for 2 axes"):
        F.fftn(z, s=(3,), axes=(0, 1))
    with pytest.raises(ValueError, match="repeated axes"):
        F.fftn(z, axes=(1, 1))
    with pytest.raises(TypeError, match="must be real"):
        F.ihfft(z)
    with pytest.raises(TypeError, match="must be real"):
        F.rfftn(z)
    with pytest.raises(ValueError, match="positive"):
        F.fftfreq(0)
    with pytest.raises(TypeError, match="n must be an integer"):
        F.rfftfreq(2.5)
    with pytest.raises(TypeError, match="real floating"):
        F.fftfreq(4, dtype=np.int32)
