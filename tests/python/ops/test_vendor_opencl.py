"""CLBlast (matmul) and clFFT (complex FFTs) on OpenCL devices through the plugin's native handles
(ops/clblast.py, ops/clfft.py, ops/native.py), against numpy; the choice in the profile; the
switches that turn them off. Skipped where there is no OpenCL device or the library is missing."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import clblast, clfft, dispatch, native

RNG = np.random.default_rng(3)


def _opencl() -> dc.Accelerator:
    accs = [a for a in dc.devices() if a.backend == "opencl"]
    if not accs:
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    return accs[0]


@pytest.fixture
def ocl_blast() -> dc.Accelerator:
    acc = _opencl()
    if clblast.library() is None:
        pytest.skip("CLBlast is not installed (Debian: libclblast1)")
    return acc


@pytest.fixture
def ocl_fft() -> dc.Accelerator:
    acc = _opencl()
    if clfft.library() is None:
        pytest.skip("clFFT is not installed (Debian: libclfft2)")
    return acc


def _paths(fn):
    with dc.profile() as prof:
        value = fn()
    return value, [(n.attrs["path"], n.attrs.get("library")) for n in prof.notes if n.kind == "operation"]


def test_native_handles_of_opencl_objects():
    acc = _opencl()
    b = acc.asarray(np.arange(4, dtype=np.float32))
    assert native.context(acc) not in (None, 0)
    assert native.read(b) != 0 and native.stream(acc) != 0
    assert native.read(b) == b._native.device_ptr()  # noqa: SLF001 -- a dc_devptr is the cl_mem on OpenCL


def test_no_native_handles_on_the_cpu_backend():
    assert native.context(dc.accelerator("cpu:0")) is None
    assert not clblast.applies(dc.accelerator("cpu:0"), np.dtype(np.float32))


# CLBlast builds one program per precision on first use, ~40 s each on PoCL on 2 cores: float64 (the
# same binding with CLBlastDgemm) runs in the full run only
@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.slow)])
@pytest.mark.parametrize("sa,sb", [((7, 5), (5, 3)), ((64, 33), (33, 17)), ((3, 20, 9), (3, 9, 11)),
                                   ((3, 20, 9), (9, 11)), ((20, 9), (2, 9, 11)), ((9,), (9, 4)), ((4, 9), (9,))])
def test_clblast_matmul_matches_numpy(ocl_blast, dtype, sa, sb):
    a = RNG.standard_normal(sa).astype(dtype)
    b = RNG.standard_normal(sb).astype(dtype)
    with dispatch.prefer("vendor"):
        got, paths = _paths(lambda: dc.matmul(ocl_blast.asarray(a), ocl_blast.asarray(b)))
    assert paths == [("vendor", "clblast")]
    assert got.accelerator is ocl_blast and got.shape == (a @ b).shape and got.dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=tol, atol=tol)


def test_clblast_out_and_chained_work(ocl_blast):
    a = RNG.standard_normal((40, 30)).astype(np.float32)
    b = RNG.standard_normal((30, 20)).astype(np.float32)
    out = ocl_blast.empty((40, 20), np.float32)
    with dispatch.prefer("vendor"):
        res = dc.matmul(ocl_blast.asarray(a), ocl_blast.asarray(b), out=out)
        assert res is out
        # the product feeds a kernel-language reduction on the same queue, in order
        total = float(dc.sum(res))
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(total, (a @ b).sum(), rtol=1e-3, atol=1e-3)


def test_matmul_choice_on_a_cpu_type_opencl_device_and_overrides(ocl_blast, monkeypatch):
    a = ocl_blast.asarray(RNG.standard_normal((8, 8)).astype(np.float32))
    _, auto = _paths(lambda: dc.ops.matmul(a, a))
    if ocl_blast.type == "cpu":  # PoCL: numpy on a host copy measured faster than CLBlast
        assert auto == [("host", "numpy")]
    else:
        assert auto == [("vendor", "clblast")]
    with dispatch.prefer("portable"):
        _, forced = _paths(lambda: dc.ops.matmul(a, a))
    assert forced == [("portable", None)]
    monkeypatch.setenv(native.DISABLE_ENV, "clblast")
    assert clblast.library() is None
    with dispatch.prefer("vendor"):
        got, off = _paths(lambda: dc.ops.matmul(a, a))
    assert off[0][1] != "clblast"
    np.testing.assert_allclose(got.numpy(), a.numpy() @ a.numpy(), rtol=1e-4, atol=1e-4)


def _clfft_cases() -> list:
    """Every shape unscaled, in both precisions where a plan is cheap and in one for the larger
    plans (each precision still gets a 1-D, a 2-D and a 3-D transform: 1000 and 3x60 single,
    4x8x9 double); the scaled norms on one 1-D and one 2-D shape (their scaling is the same code for
    every shape); the rest of that matrix in the full run only: each new plan is a clFFT kernel
    compile, seconds on PoCL."""
    one_precision = {(1000,): np.complex64, (3, 60): np.complex64, (4, 8, 9): np.complex128}
    cases = []
    for norm in (None, "ortho", "forward"):
        for shape in ((8,), (1000,), (3, 60), (4, 8, 9), (5, 7), (1,)):
            for dtype in (np.complex64, np.complex128):
                slow = norm is not None and shape not in ((8,), (5, 7))
                slow = slow or one_precision.get(shape, dtype) is not dtype
                cases.append(pytest.param(dtype, shape, norm, marks=[pytest.mark.slow] if slow else [],
                                          id=f"{norm}-{'x'.join(map(str, shape))}-{np.dtype(dtype).name}"))
    return cases


@pytest.mark.parametrize("dtype,shape,norm", _clfft_cases())
def test_clfft_matches_numpy(ocl_fft, dtype, shape, norm):
    x = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    b = ocl_fft.asarray(x)
    names = ["fft", "ifft"] + (["fft2", "ifft2"] if len(shape) >= 2 else [])
    tol = 1e-4 if dtype == np.complex64 else 1e-10
    for name in names:
        with dispatch.prefer("vendor"):
            got, paths = _paths(lambda name=name: getattr(dc.fft, name)(b, norm=norm))
        assert paths == [("vendor", "clfft")], (name, paths)
        want = getattr(np.fft, name)(x, norm=norm)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol * np.sqrt(x.size), err_msg=name)


def test_clfft_leaves_what_it_cannot_plan(ocl_fft):
    with dispatch.prefer("vendor"):
        for x, call in [
            ((RNG.standard_normal(22) + 0j).astype(np.complex64), lambda b: dc.fft.fft(b)),  # factor 11
            ((RNG.standard_normal((6, 8)) + 0j).astype(np.complex64), lambda b: dc.fft.fft(b, axis=0)),  # not last
            ((RNG.standard_normal(16) + 0j).astype(np.complex64), lambda b: dc.fft.fft(b, n=32)),  # resized
            (RNG.standard_normal(16).astype(np.float32), lambda b: dc.fft.rfft(b)),  # real input
        ]:
            b = ocl_fft.asarray(x)
            got, paths = _paths(lambda b=b, call=call: call(b))
            assert paths[0][1] != "clfft", paths
            assert got is not None


def test_clfft_plan_cache_is_bounded_and_released(ocl_fft, monkeypatch):
    monkeypatch.setattr(clfft._plans, "limit", 2)  # noqa: SLF001
    clfft.release()
    with dispatch.prefer("vendor"):
        for n in (4, 8, 16):
            x = (RNG.standard_normal(n) + 0j).astype(np.complex64)
            np.testing.assert_allclose(dc.fft.fft(ocl_fft.asarray(x)).numpy(), np.fft.fft(x), rtol=1e-4, atol=1e-4)
    assert len(clfft._plans) == 2  # noqa: SLF001
    clfft.release()
    assert len(clfft._plans) == 0  # noqa: SLF001
    x = (RNG.standard_normal(8) + 0j).astype(np.complex64)
    with dispatch.prefer("vendor"):  # plans are made again after a release
        np.testing.assert_allclose(dc.fft.fft(ocl_fft.asarray(x)).numpy(), np.fft.fft(x), rtol=1e-4, atol=1e-4)


def test_plannable_lengths():
    assert all(clfft.plannable(n) for n in (1, 2, 3, 5, 7, 1000, 1 << 20, 2 * 3 * 5 * 7))
    assert not any(clfft.plannable(n) for n in (0, 11, 13, 22, 1009))


def test_a_failing_library_call_falls_back(ocl_fft, monkeypatch, caplog):
    """An error status from CLBlast/clFFT (nothing enqueued) is logged and the next path runs; both
    choices are in the profile."""
    def gemm_fails(*args, **kwargs):
        raise clblast.CLBlastError("status -1024 (test)")

    def fft_fails(*args, **kwargs):
        raise clfft.CLFFTError("status 4 (test)")

    monkeypatch.setattr(clblast, "applies", lambda acc, dtype: acc.backend == "opencl")
    monkeypatch.setattr(clblast, "gemm", gemm_fails)
    monkeypatch.setattr(clfft, "transform", fft_fails)
    a = RNG.standard_normal((6, 5)).astype(np.float32)
    x = (RNG.standard_normal(16) + 1j * RNG.standard_normal(16)).astype(np.complex64)
    with dispatch.prefer("vendor"), caplog.at_level("WARNING", logger="dotcompute.ops"):
        got, paths = _paths(lambda: dc.matmul(ocl_fft.asarray(a), ocl_fft.asarray(a.T.copy())))
        np.testing.assert_allclose(got.numpy(), a @ a.T, rtol=1e-4, atol=1e-4)
        assert paths[0] == ("vendor", "clblast") and paths[1][1] != "clblast" and len(paths) == 2
        got, paths = _paths(lambda: dc.fft.fft(ocl_fft.asarray(x)))
        np.testing.assert_allclose(got.numpy(), np.fft.fft(x), rtol=1e-4, atol=1e-4)
        assert paths[0] == ("vendor", "clfft") and paths[1][1] != "clfft" and len(paths) == 2
    assert "clblast failed" in caplog.text and "clfft failed" in caplog.text
