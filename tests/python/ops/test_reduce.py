"""Reductions against numpy on every accelerator, default dispatch and portable kernels forced."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch

RNG = np.random.default_rng(7)


def _data(n: int, dtype: np.dtype) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(n).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return RNG.integers(0, 2, n).astype(bool)
    return RNG.integers(-1000 if np.dtype(dtype).kind == "i" else 0, 1000, n).astype(dtype)


@pytest.mark.parametrize("n", [1, 2, 7, 256, 1000, 65537, 1_000_003])
def test_full_reductions_sizes(accelerator, path, n):
    x = _data(n, np.float32)
    b = accelerator.asarray(x)
    s = dc.sum(b)
    assert isinstance(s, dc.Buffer) and s.shape == () and s.dtype == np.float32
    assert s.accelerator is accelerator
    np.testing.assert_allclose(float(s), x.sum(dtype=np.float64), rtol=1e-5, atol=1e-3)
    assert float(dc.min(b)) == x.min() and float(dc.max(b)) == x.max()
    assert int(dc.argmin(b)) == x.argmin() and int(dc.argmax(b)) == x.argmax()
    np.testing.assert_allclose(dc.mean(b).item(), x.mean(dtype=np.float64), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32, np.bool_, np.int8])
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "argmin", "argmax"])
def test_dtypes_follow_numpy(accelerator, path, dtype, name, device_slice):
    device_slice(dtype not in (np.float64, np.int32, np.uint32), "float32, int64, bool and int8 inputs (of seven)")
    x = _data(4099, dtype)
    if name == "prod":
        if np.dtype(dtype).kind == "f":
            x = (1 + x * 1e-3).astype(dtype)  # keep products in range
        elif dtype != np.bool_:
            x = (x % 3 == 0).astype(dtype) + 1 - (RNG.random(x.size) < 0.999)  # mostly ones, a few twos and zeros
    got = getattr(dc, name)(accelerator.asarray(x))
    want = getattr(np, name)(x)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    # a mean of centred data is near zero: a relative tolerance alone fails on summation order (atol for it)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dtype != np.float32 else 1e-4,
                               atol=1e-6 if name == "mean" else 0)


@pytest.mark.parametrize("shape", [(3, 5), (17, 1000), (1000, 3), (4, 6, 9), (2, 300, 5), (1, 1)])
@pytest.mark.parametrize("name", ["sum", "max", "argmin", "mean"])
def test_axis_reductions(accelerator, path, shape, name):
    x = RNG.standard_normal(shape).astype(np.float64)
    b = accelerator.asarray(x)
    for axis in [None, *range(len(shape)), -1]:
        got = getattr(dc, name)(b, axis=axis)
        want = getattr(np, name)(x, axis=axis)
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_axis_tuple_and_numpy_in_numpy_out(accelerator, path):
    x = RNG.integers(0, 9, (4, 5, 6)).astype(np.int32)
    got = dc.sum(x, axis=(0, 2), accelerator=accelerator)
    assert isinstance(got, np.ndarray) and got.dtype == np.int64
    np.testing.assert_array_equal(got, x.sum(axis=(0, 2)))
    assert isinstance(dc.sum(x, accelerator=accelerator), np.ndarray)


def test_nan_and_ties(accelerator, path):
    x = np.array([3.0, 1.0, np.nan, 1.0, np.nan, 0.5], np.float32)
    b = accelerator.asarray(x)
    assert np.isnan(float(dc.min(b))) and np.isnan(float(dc.max(b)))
    assert int(dc.argmin(b)) == 2 and int(dc.argmax(b)) == 2
    y = accelerator.asarray(np.array([5, 1, 9, 1, 9], np.int32))
    assert int(dc.argmin(y)) == 1 and int(dc.argmax(y)) == 2


def test_empty(accelerator, path):
    e = accelerator.asarray(np.zeros(0, np.float32))
    assert float(dc.sum(e)) == 0.0 and float(dc.prod(e)) == 1.0
    with pytest.raises(ValueError, match="identity"):
        dc.min(e)
    with pytest.raises(ValueError, match="empty"):
        dc.argmax(e)


def test_bad_input(accelerator):
    b = accelerator.asarray(np.zeros((3, 4), np.float32))
    with pytest.raises(np.exceptions.AxisError):
        dc.sum(b, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        dc.argmax(b, axis=-3)
    with pytest.raises(TypeError, match="<U3"):
        dc.sum(np.array(["abc"]), accelerator=accelerator)
    with pytest.raises(TypeError, match="axis"):
        dc.sum(b, axis="0")


@dc.func
def maxabs(a, b):
    return max(abs(a), abs(b))


@dc.func
def first(a):
    return a


@dc.func
def first_nonzero(a, b):
    return a if a != 0 else b  # associative, not commutative: checks the order is kept


def test_custom_reduce(accelerator):
    x = RNG.standard_normal(5001).astype(np.float32)
    b = accelerator.asarray(x)
    assert float(dc.reduce(maxabs, b)) == np.abs(x).max()
    y = RNG.standard_normal((40, 300))
    np.testing.assert_allclose(dc.reduce(maxabs, y, axis=1, accelerator=accelerator), np.abs(y).max(axis=1))
    np.testing.assert_allclose(dc.reduce(maxabs, y, axis=0, initial=2.5, accelerator=accelerator),
                               np.maximum(np.abs(y).max(axis=0), 2.5))
    assert float(dc.reduce(maxabs, accelerator.asarray(np.zeros(0)), initial=1.5)) == 1.5
    # order is kept (the operator need not be commutative)
    z = np.zeros(100_000, np.int64)
    z[[31_000, 31_001, 90_000]] = [7, 8, 9]
    assert int(dc.reduce(first_nonzero, accelerator.asarray(z))) == 7


def test_custom_reduce_errors(accelerator):
    b = accelerator.asarray(np.ones(4, np.float32))
    with pytest.raises(dc.KernelTypeError, match="2 values|exactly 2"):
        dc.reduce(first, b)
    with pytest.raises(dc.KernelTypeError, match="@dc.func"):
        dc.reduce(lambda a, b: a + b, b)
    with pytest.raises(ValueError, match="initial"):
        dc.reduce(maxabs, accelerator.asarray(np.zeros(0, np.float32)))


def test_min_max_keep_working_in_kernels(accelerator, tmp_path: Path):
    @dc.kernel
    def clamp(x: dc.Buffer[dc.float32], lo: dc.float32, hi: dc.float32):
        i = dc.global_id(0)
        x[i] = dc.min(dc.max(x[i], lo), hi)

    x = np.linspace(-2, 2, 9).astype(np.float32)
    b = accelerator.asarray(x)
    accelerator.launch(clamp, x.size, b, -1.0, 1.0)
    np.testing.assert_array_equal(b.numpy(), np.clip(x, -1, 1))
    assert dc.min(3, 2) == 2 and dc.max(2.0, 5.0) == 5.0  # two values: elementwise, as before
    np.testing.assert_array_equal(dc.min(np.array([1, 5]), np.array([3, 2])), [1, 2])


def test_scalar_conversions(accelerator):
    s = dc.sum(accelerator.asarray(np.arange(5, dtype=np.int32)))
    assert int(s) == 10 and s.item() == 10 and float(s) == 10.0 and bool(s)
    assert [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11][s] == 10  # __index__
    with pytest.raises(ValueError, match="size 1"):
        accelerator.asarray(np.zeros(3)).item()


def test_dispatch_reports_its_choice(accelerator):
    seen: list[tuple[str, str, str]] = []
    dispatch.listeners.append(lambda *a: seen.append(a))
    try:
        dc.sum(accelerator.asarray(np.ones(10, np.float32)))
        with dispatch.prefer("portable"):
            dc.sum(accelerator.asarray(np.ones(10, np.float32)))
    finally:
        dispatch.listeners.pop()
    assert seen[-1] == ("sum", accelerator.id, "portable")
    assert seen[0][2] == ("vendor" if accelerator.backend == "cpu" else "portable")


@pytest.mark.parametrize("strided", [False, True])
def test_tree_kernel_both_read_orders(accelerator, strided):
    # the interleaved (GPU) and contiguous (CPU) variants, whichever this device would pick
    import importlib

    reduce_mod = importlib.import_module("dotcompute.ops.reduce")
    from dotcompute.ops import reduce_kernels as rk

    x = RNG.standard_normal((3, 1_000_003)).astype(np.float32)  # runs of >= 8 per item: the unrolled fold
    x[1, 5000] = np.nan
    b = accelerator.asarray(x.reshape(-1))
    got = reduce_mod.reduce_flat(rk.op_add, b, 3, 1_000_003, 1, np.float64, commutative=True, strided=strided)
    np.testing.assert_allclose(got.numpy()[[0, 2]], x[[0, 2]].sum(axis=1, dtype=np.float64), rtol=1e-6)
    got = reduce_mod.reduce_flat(rk.op_min, b, 3, 1_000_003, 1, np.float32, commutative=True, strided=strided)
    np.testing.assert_array_equal(got.numpy(), x.min(axis=1))


def test_choice_shows_in_profile(accelerator):
    with dc.profile() as prof:
        dc.sum(accelerator.asarray(np.ones(100, np.float32)))
    notes = [n.attrs for n in prof.notes if n.kind == "operation"]
    assert notes and notes[-1]["operation"] == "sum" and notes[-1]["accelerator"] == accelerator.id


def test_zero_d_input(accelerator, path):
    z = accelerator.asarray(np.array(7, np.int32))
    for name in ("sum", "prod", "min", "max", "mean", "argmin", "argmax"):
        got = getattr(dc, name)(z)
        want = np.asarray(getattr(np, name)(np.array(7, np.int32)))
        assert got is not z and got.shape == () and got.dtype == want.dtype, name
        assert got.item() == want.item(), name
    assert int(dc.reduce(maxabs, z)) == 7


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_arg_search_ties_and_nan_in_long_rows(accelerator, path, dtype):
    x = RNG.integers(0, 50, (3, 200_003)).astype(dtype)
    x[0, [150_000, 7, 90_000]] = 60  # ties of the max: the first wins
    x[1, [180_000, 100_001]] = -5  # ties of the min
    if dtype == np.float32:
        x[2, [190_000, 40_000]] = np.nan  # the first NaN wins both
    b = accelerator.asarray(x)
    for name in ("argmin", "argmax"):
        np.testing.assert_array_equal(getattr(dc, name)(b, axis=1).numpy(), getattr(np, name)(x, axis=1))
        assert int(getattr(dc, name)(b)) == getattr(np, name)(x)
    y = np.ascontiguousarray(x.T[:5000])  # the reduced axis strided (inner > 1)
    np.testing.assert_array_equal(dc.argmax(y, axis=0, accelerator=accelerator), np.argmax(y, axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("shape", [(2000, 8), (3, 5), (1500, 1), (1, 33)])
def test_arg_short_rows_ties_and_nan(accelerator, path, dtype, shape):
    """Many short rows (one work-item per row): ties give the first index, the first NaN wins."""
    x = RNG.integers(0, 4, shape).astype(dtype)  # few distinct values: ties in most rows
    if np.dtype(dtype).kind == "f":
        x.flat[::7] = np.nan
        x[0, :] = np.nan  # a row of NaNs: index 0
        x[-1, -1] = np.nan  # a NaN after the minimum
    b = accelerator.asarray(x)
    for name in ("argmin", "argmax"):
        for axis in (1, 0, -1):
            got = getattr(dc, name)(b, axis=axis)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got.numpy(), getattr(np, name)(x, axis=axis), err_msg=f"{name} {axis}")


def test_keepdims_and_dtype(accelerator, path):
    x = RNG.integers(0, 100, (4, 5, 6)).astype(np.int32)
    b = accelerator.asarray(x)
    for axis in (None, 0, 2, (0, 2)):
        for name in ("sum", "min", "mean"):
            got = getattr(dc, name)(b, axis=axis, keepdims=True)
            want = getattr(np, name)(x, axis=axis, keepdims=True)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got.numpy(), want)
    for axis in (None, 1):
        got = dc.argmax(b, axis=axis, keepdims=True)
        want = np.argmax(x, axis=axis, keepdims=True)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    got = dc.sum(b, axis=1, dtype=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), x.sum(axis=1, dtype=np.float64))
    assert dc.mean(b, dtype=np.float32).dtype == np.float32


def test_four_d_numpy_input(accelerator, path):
    x = RNG.standard_normal((2, 3, 4, 5))
    for axis in (None, 0, 2, -1):
        np.testing.assert_allclose(dc.sum(x, axis=axis, accelerator=accelerator), x.sum(axis=axis))
        np.testing.assert_array_equal(dc.argmax(x, axis=axis, accelerator=accelerator), x.argmax(axis=axis))
    np.testing.assert_allclose(dc.cumsum(x, axis=1, accelerator=accelerator), np.cumsum(x, axis=1))
