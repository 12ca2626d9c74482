"""Elementwise chains fused into reductions, and @dc.fuse."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def launches() -> int:
    return dc.expr.stats()["launches"]


@pytest.mark.filterwarnings("ignore:overflow")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32, np.bool_])
def test_fused_reductions_match_numpy(accelerator: dc.Accelerator, dtype: type, device_slice) -> None:
    device_slice(dtype in (np.float32, np.int32), "float32 and int32")
    rng = np.random.default_rng(3)
    ha = (rng.standard_normal((37, 29)) * 10).astype(dtype)
    hb = (rng.standard_normal(29) * 10).astype(dtype)
    a, b = accelerator.asarray(ha), accelerator.asarray(hb)
    for name in ("sum", "prod", "min", "max", "mean", "argmin", "argmax"):
        want = getattr(np, name)(ha * hb if dtype != np.bool_ else ha & hb)
        before = launches()
        got = getattr(dc, name)(a * b if dtype != np.bool_ else a & b)
        fused = launches() - before
        assert got.shape == () and got.dtype == want.dtype, (name, got.dtype, want.dtype)
        if want.dtype.kind == "f":
            rtol = 1e-4 if want.dtype == np.float32 else 1e-10
            np.testing.assert_allclose(got.numpy(), want, rtol=rtol, err_msg=name)
        elif name == "prod":
            assert int(got) == int(want), name  # wrapping integer products agree too
        else:
            assert got.item() == want.item(), name
        # ONE kernel computes the expression and reduces it (plus the one-item combine step), unless
        # the result type is one kernels lack (uint32 sums are uint64 in numpy: ops takes those)
        if want.dtype.name in ("bool", "int32", "int64", "uint32", "float32", "float64"):
            assert fused == 2, (name, fused)


@pytest.mark.parametrize("gpu", [True, False])
def test_both_work_layouts(accelerator: dc.Accelerator, gpu: bool) -> None:
    from dotcompute.expr.reduce import fused

    h = np.random.default_rng(2).standard_normal(5000)
    h[[10, 4000]] = h.max() + 1  # a tie for the maximum: the first index wins
    b = accelerator.asarray(h)
    for kind in ("sum", "prod", "min", "max", "mean", "argmin", "argmax"):
        got = fused(kind, b * 1.0, gpu=gpu).numpy()
        np.testing.assert_allclose(got, getattr(np, kind)(h), rtol=1e-9, err_msg=kind)


def test_the_headline_expression(accelerator: dc.Accelerator) -> None:
    rng = np.random.default_rng(7)
    n = 100_003
    hx, hy = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = accelerator.asarray(hx), accelerator.asarray(hy)
    a = 2.5
    s = dc.sum(a * x + y * y - 3.0)
    np.testing.assert_allclose(float(s), np.sum(a * hx.astype(np.float64) + hy.astype(np.float64) ** 2 - 3.0),
                               rtol=1e-4)


def test_arg_reductions_ties_and_nan(accelerator: dc.Accelerator) -> None:
    h = np.array([3.0, 7.0, 1.0, 7.0, 1.0, 2.0] * 50)
    b = accelerator.asarray(h)
    assert int(dc.argmax(b * 1.0)) == np.argmax(h) == 1
    assert int(dc.argmin(b + 0.0)) == np.argmin(h) == 2
    h[200] = np.nan
    h[250] = np.nan
    b = accelerator.asarray(h)
    assert int(dc.argmax(b * 1.0)) == 200
    assert int(dc.argmin(b * 1.0)) == 200
    assert np.isnan(float(dc.max(b * 1.0))) and np.isnan(float(dc.min(b * 1.0)))


def test_reductions_of_views_and_empty(accelerator: dc.Accelerator) -> None:
    h = np.arange(100.0)
    b = accelerator.asarray(h)
    assert float(dc.sum(b[10:20])) == h[10:20].sum()
    assert float(dc.sum(b[5:5] * 2)) == 0.0
    with pytest.raises(ValueError):
        dc.max(b[5:5] * 2)
    assert float(dc.sum(b)) == h.sum()  # a plain buffer: the ops layer's reduction
    np.testing.assert_allclose(dc.sum(b.reshape(10, 10) * 2, axis=0).numpy(), (h.reshape(10, 10) * 2).sum(0))


def test_fuse_numpy_in_numpy_out(accelerator: dc.Accelerator) -> None:
    @dc.fuse(accelerator=accelerator)
    def f(x, y, a):
        t = a * x + y
        return dc.where(t > 0, dc.sqrt(dc.abs(t)), t * t), t - 1

    rng = np.random.default_rng(5)
    hx, hy = rng.standard_normal(50), rng.standard_normal(50)
    before, made = launches(), dc.expr.stats()["kernels_generated"]
    r1, r2 = f(hx, hy, 1.5)
    assert isinstance(r1, np.ndarray) and isinstance(r2, np.ndarray)
    t = 1.5 * hx + hy
    np.testing.assert_allclose(r1, np.where(t > 0, np.sqrt(np.abs(t)), t * t))
    np.testing.assert_allclose(r2, t - 1)
    assert launches() == before + 1  # both results from ONE kernel
    f(hx[:20], hy[:20], -0.5)
    assert dc.expr.stats()["kernels_generated"] <= made + 1  # same dtypes and ndim: no new kernel


def test_fuse_traces_once_per_signature(accelerator: dc.Accelerator) -> None:
    calls = []

    @dc.fuse(accelerator=accelerator)
    def step(x, v, dt):
        calls.append(1)
        v2 = v - dt * x
        return x + dt * v2, v2

    rng = np.random.default_rng(11)
    for _ in range(3):
        hx, hv = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
        before = launches()
        x2, v2 = step(hx, hv, 0.1)
        assert launches() == before + 1
        np.testing.assert_allclose(v2, hv - 0.1 * hx)
        np.testing.assert_allclose(x2, hx + 0.1 * (hv - 0.1 * hx))
    assert len(calls) == 1  # traced once; later calls replay the recorded kernel with the new arrays
    step(rng.standard_normal((8, 3)), rng.standard_normal((8, 3)), 0.2)  # another dt: another signature
    step(rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), 0.1)  # another shape: likewise
    assert len(calls) == 3


def test_fuse_with_data_dependent_work_traces_every_call(accelerator: dc.Accelerator) -> None:
    calls = []

    @dc.fuse(accelerator=accelerator)
    def centre(x):
        calls.append(1)
        return x - dc.mean(x * 1.0)  # the reduction runs while tracing: not replayable

    for k in range(2):
        h = np.arange(6.0) * (k + 1)
        np.testing.assert_allclose(centre(h), h - h.mean())
    assert len(calls) == 2


def test_fuse_with_buffers_returns_buffers(accelerator: dc.Accelerator) -> None:
    @dc.fuse
    def norm2(x, y):
        return dc.sum(x * x + y * y)

    x = accelerator.asarray(np.arange(4.0))
    y = accelerator.asarray(np.ones(4))
    out = norm2(x, y)
    assert isinstance(out, dc.Buffer) and float(out) == 18.0
    assert norm2(np.arange(4.0), np.ones(4)) == 18.0
