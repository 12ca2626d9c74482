"""cuBLAS and cuFFT on CUDA devices (ops/cublas.py, ops/cufft.py): where the loaders look, the
switches, the dispatch decision (with the libraries' entry points replaced by recording fakes, so
it is checked without a GPU), that simulated devices never take them, and, marked ``gpu``, the real
libraries against numpy on a real device."""

from __future__ import annotations

import ctypes
import sys
import types

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import cublas, cufft, dispatch, native

RNG = np.random.default_rng(9)


def _cuda() -> dc.Accelerator:
    accs = [a for a in dc.devices() if a.backend == "cuda"]
    if not accs:
        pytest.skip("no CUDA device (DOTCOMPUTE_CUDA_SIM=1 gives the simulated cuda:0)")
    return accs[0]


def _simulated(acc: dc.Accelerator) -> bool:
    return bool(acc.info.get("simulated"))


def _paths(fn):
    with dc.profile() as prof:
        value = fn()
    return value, [(n.attrs["path"], n.attrs.get("library")) for n in prof.notes if n.kind == "operation"]


def test_loaders_look_in_nvidias_wheels_first(tmp_path, monkeypatch):
    for package, so in (("cublas", "libcublas.so.12"), ("cufft", "libcufft.so.11")):
        (tmp_path / package / "lib").mkdir(parents=True)
        (tmp_path / package / "lib" / so).write_bytes(b"")
    fake = types.ModuleType("nvidia")
    fake.__path__ = [str(tmp_path)]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nvidia", fake)
    assert cublas.candidates()[0] == str(tmp_path / "cublas" / "lib" / "libcublas.so.12")
    assert cufft.candidates()[0] == str(tmp_path / "cufft" / "lib" / "libcufft.so.11")
    assert cublas.candidates()[1:] == cublas.SONAMES  # then a toolkit on the loader path


def test_without_nvidias_wheels_only_sonames_are_tried(monkeypatch):
    monkeypatch.setitem(sys.modules, "nvidia", None)  # import fails
    assert cublas.candidates() == cublas.SONAMES
    assert cufft.candidates() == cufft.SONAMES


def _wheel_library(package: str, sonames: list[str]) -> str:
    """The library file NVIDIA's wheel installed (``pip install dotcompute[cuda-libs]``), or a skip."""
    found = [c for c in native.nvidia_wheel_candidates(package, sonames) if "/" in c]
    if not found:
        pytest.skip(f"NVIDIA's {package} wheel is not installed (pip install 'dotcompute[cuda-libs]')")
    return found[0]


@pytest.mark.parametrize("module", [cublas, cufft], ids=["cublas", "cufft"])
def test_every_declared_function_exists_in_nvidias_library(module):
    """The names and signatures the bindings declare are the ones NVIDIA's wheels export (this runs
    without a GPU: loading the library needs none); a call that needs a device then fails with a
    status, which the bindings turn into their error, instead of crashing."""
    path = _wheel_library(module.__name__.rsplit(".", 1)[1], module.SONAMES)
    functions = module._declare(ctypes.CDLL(path))  # noqa: SLF001
    assert functions and all(callable(f) for f in functions.values())
    if not [a for a in dc.devices() if a.backend == "cuda" and not _simulated(a)]:
        if module is cublas:
            assert functions["create"](ctypes.byref(ctypes.c_void_p())) != 0
        else:
            dims = (ctypes.c_int * 1)(1024)
            assert functions["plan_many"](ctypes.byref(ctypes.c_int()), 1, dims, None, 1, 1024, None, 1, 1024,
                                          0x29, 1) != 0


def test_disable_switch(monkeypatch):
    monkeypatch.setenv(native.DISABLE_ENV, "cublas, cufft")
    assert cublas.library() is None and cufft.library() is None
    monkeypatch.setenv(native.DISABLE_ENV, "all")
    assert native.disabled("clblast") and native.disabled("cufft")


def test_simulated_devices_never_take_the_vendor_path(monkeypatch):
    acc = _cuda()
    if not _simulated(acc):
        pytest.skip("a real CUDA device: the simulator case does not apply")
    assert native.context(acc) is None  # the plugin refuses native handles on the simulator
    with pytest.raises(dc.DotComputeError, match="simulated"):
        acc.asarray(np.ones(4, np.float32))._native.native_handle()  # noqa: SLF001
    # even with the libraries "installed", nothing vendor applies there
    monkeypatch.setattr(cublas, "library", lambda: object())
    monkeypatch.setattr(cufft, "library", lambda: object())
    assert not cublas.applies(acc, np.dtype(np.float32))
    assert not cufft.applies(acc, np.dtype(np.complex64), (8,))
    a = RNG.standard_normal((8, 8)).astype(np.float32)
    with dispatch.prefer("vendor"):
        got, paths = _paths(lambda: dc.matmul(acc.asarray(a), acc.asarray(a)))
    assert paths == [("portable", None)]
    np.testing.assert_allclose(got.numpy(), a @ a, rtol=1e-4, atol=1e-4)


def test_dispatch_routes_matmul_and_fft_to_the_cuda_libraries(monkeypatch):
    """The decision alone: applies() says yes, the libraries' calls are recording fakes that compute
    with numpy, so the routing, the argument mapping and the profile note are checked anywhere."""
    acc = _cuda()
    calls: list[tuple] = []

    def fake_gemm(a, b, c, batch, m, n, k, sa, sb):
        calls.append(("gemm", batch, m, n, k, sa, sb))
        ha, hb = a.numpy().reshape(-1), b.numpy().reshape(-1)
        res = np.stack([ha[i * sa:i * sa + m * k].reshape(m, k) @ hb[i * sb:i * sb + k * n].reshape(k, n)
                        for i in range(batch)])
        c.copy_from(res.reshape(c.shape))

    def fake_transform(x, lengths, inverse):
        calls.append(("fft", lengths, inverse))
        h = x.numpy()
        axes = tuple(range(h.ndim - len(lengths), h.ndim))
        # cuFFT does not scale: the unnormalised transform, as cufftExec gives it
        res = np.fft.ifftn(h, axes=axes) * np.prod(lengths) if inverse else np.fft.fftn(h, axes=axes)
        return acc.asarray(res.astype(x.dtype))

    monkeypatch.setattr(cublas, "applies", lambda acc_, dtype: acc_.backend == "cuda")
    monkeypatch.setattr(cublas, "gemm", fake_gemm)
    monkeypatch.setattr(cufft, "applies", lambda acc_, dtype, lengths: acc_.backend == "cuda")
    monkeypatch.setattr(cufft, "transform", fake_transform)
    a = RNG.standard_normal((3, 5, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 6)).astype(np.float32)
    got, paths = _paths(lambda: dc.matmul(acc.asarray(a), acc.asarray(b)))
    assert paths == [("vendor", "cublas")] and calls[-1] == ("gemm", 3, 5, 6, 4, 20, 0)
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-5, atol=1e-5)

    x = (RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))).astype(np.complex64)
    for name, norm in (("fft", None), ("ifft", None), ("fft2", "ortho"), ("ifft2", "forward")):
        got, paths = _paths(lambda name=name, norm=norm: getattr(dc.fft, name)(acc.asarray(x), norm=norm))
        assert paths == [("vendor", "cufft")], (name, paths)
        np.testing.assert_allclose(got.numpy(), getattr(np.fft, name)(x, norm=norm), rtol=1e-4, atol=1e-4,
                                   err_msg=f"{name} {norm}")
    with dispatch.prefer("portable"):  # forcing the portable kernels leaves the libraries alone
        _, paths = _paths(lambda: dc.matmul(acc.asarray(a), acc.asarray(b)))
    assert paths == [("portable", None)]


@pytest.mark.gpu
def test_cublas_and_cufft_on_a_real_gpu():
    acc = _cuda()
    if _simulated(acc):
        pytest.skip("cuBLAS/cuFFT need a real CUDA device: the simulated cuda:0 has no native handles")
    if cublas.library() is None or cufft.library() is None:
        pytest.skip("cuBLAS/cuFFT not installed (pip install dotcompute[cuda-libs])")
    for dtype in (np.float32, np.float64):
        a = RNG.standard_normal((2, 65, 33)).astype(dtype)
        b = RNG.standard_normal((33, 17)).astype(dtype)
        got, paths = _paths(lambda a=a, b=b: dc.matmul(acc.asarray(a), acc.asarray(b)))
        assert paths == [("vendor", "cublas")]
        np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    for dtype in (np.complex64, np.complex128):
        x = (RNG.standard_normal((3, 1000)) + 1j * RNG.standard_normal((3, 1000))).astype(dtype)
        for name in ("fft", "ifft", "fft2", "ifft2"):
            got, paths = _paths(lambda name=name, x=x: getattr(dc.fft, name)(acc.asarray(x)))
            assert paths == [("vendor", "cufft")]
            np.testing.assert_allclose(got.numpy(), getattr(np.fft, name)(x), rtol=1e-4, atol=1e-3)
