"""Every kernel of this suite, as CUDA C++ compiled by the real NVRTC (sm_80 and sm_90), and a few
as MSL run on the CPU through the Metal shim: the GPU emitters are checked without a GPU."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from realworld_helpers import nvrtc_compile

import dotcompute as dc

MODULES = ["test_rw_image", "test_rw_stencil", "test_rw_reduce", "test_rw_linalg", "test_rw_physics",
           "test_rw_sort_nn", "test_rw_semantics", "test_rw_runtime", "test_rw_patterns", "test_rw_idioms",
           "test_rw_naming", "test_rw_control", "test_rw_atomics", "test_rw_lifecycle", "test_rw_barriers",
           "test_rw_debug", "test_rw_source_forms"]


def _kernels():
    found = {}
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name, obj in vars(mod).items():
            if callable(getattr(obj, "source", None)) and callable(getattr(obj, "check", None)):
                found[f"{modname}.{name}"] = obj
    sem = importlib.import_module("test_rw_semantics")
    found["make_scale(2.5)"] = sem.make_scale(2.5)
    found["make_box(2)"] = sem.make_box(2)
    atom = importlib.import_module("test_rw_atomics")
    for dt, k in atom.SHARED_ATOMICS.items():
        found[f"shared_atomics[{np.dtype(dt).name}]"] = (k, (np.zeros(4, dt), np.zeros(4, dt)))
    return found


KERNELS = _kernels()


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_kernel_compiles_with_nvrtc(arch):
    failures = []
    for name, k in KERNELS.items():
        k, example = k if isinstance(k, tuple) else (k, ())
        src = k.source("cuda", *example)
        ok, log = nvrtc_compile(src, arch)
        if not ok:
            failures.append(f"{name}: {log.strip()[:600]}")
    assert not failures, "\n\n".join(failures)


SHIM = Path(__file__).resolve().parents[2] / "support" / "metal_shim"


@pytest.fixture
def run_msl():
    if not (SHIM / "runner.py").exists():
        pytest.skip("Metal shim not present")
    sys.path.insert(0, str(SHIM))
    try:
        from runner import run_msl as fn
    finally:
        sys.path.remove(str(SHIM))
    return fn


def test_metal_box_blur_and_gray(run_msl):
    from test_rw_image import _blur_ref, box_blur3
    rng = np.random.default_rng(1)
    img = rng.random((13, 17), dtype=np.float32)
    out = np.zeros_like(img)
    run_msl(box_blur3.source("metal", img, out), [img, out], global_size=img.shape)
    np.testing.assert_allclose(out, _blur_ref(img), rtol=1e-5, atol=1e-6)


def test_metal_tiled_matmul(run_msl):
    from test_rw_linalg import matmul_tiled
    rng = np.random.default_rng(2)
    a = rng.standard_normal((20, 19)).astype(np.float32)
    b = rng.standard_normal((19, 18)).astype(np.float32)
    c = np.zeros((20, 18), np.float32)
    run_msl(matmul_tiled.source("metal", a, b, c), [a, b, c], global_size=(32, 32), local_size=(16, 16))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_metal_histogram_and_signed_unsigned(run_msl):
    from test_rw_control import mixed_sign_compare
    from test_rw_reduce import NBINS, histogram_private
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 2**32, size=64 * 3, dtype=np.uint64).astype(np.uint32)
    hist = np.zeros(NBINS, np.uint32)
    run_msl(histogram_private.source("metal", keys, hist), [keys, hist], global_size=keys.size, local_size=64)
    np.testing.assert_array_equal(hist, np.bincount(keys % NBINS, minlength=NBINS))
    u = np.array([0, 1, 2**31, 2**32 - 1], np.uint32)
    out = np.zeros((4, 4), np.int64)
    run_msl(mixed_sign_compare.source("metal", u, np.int32(-1), out), [u, np.int32(-1), out], global_size=4)
    uu = u.astype(np.int64)
    ref = np.stack([uu > -1, uu > -1, np.minimum(uu, -1), uu - 1], 1).astype(np.int64)
    np.testing.assert_array_equal(out, ref)


def test_metal_rejects_float64_with_a_located_error():
    from test_rw_stencil import heat2d
    with pytest.raises(dc.KernelTypeError) as ei:
        heat2d.source("metal")
    assert "Metal" in str(ei.value) and ei.value.lineno is not None


def test_metal_uniform_break_and_continue_with_barriers(run_msl):
    from test_rw_barriers import relax_until_stable, rotate_skip
    x = np.arange(128, dtype=np.float32)
    out = np.zeros_like(x)
    run_msl(rotate_skip.source("metal", x, out), [x, out], global_size=128, local_size=64)
    t = x.reshape(2, 64)
    for k in (0, 2, 3):
        t = np.roll(t, -1, axis=1) + k
    np.testing.assert_array_equal(out, t.ravel())
    rng = np.random.default_rng(120)
    x = rng.random(32, dtype=np.float32)
    out = np.zeros_like(x)
    steps = np.zeros(1, np.int32)
    run_msl(relax_until_stable.source("metal", x, out, steps), [x, out, steps], global_size=32, local_size=32)
    assert 1 <= steps[0] < 200
    assert np.ptp(out) < np.ptp(x)
