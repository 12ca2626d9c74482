"""The namespace's fast paths (issue 21, bench/namespace_bench.py) give numpy's answers: on host
memory the block-by-block fills (arange, linspace, nonzero, take_along_axis, past one block), the
direct writes (roll, repeat, tile, eye, cumulative sums with out=), the counting unique of dense
integers; on every device integer arange and eye made on the device without any transfer."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

RS = np.random.default_rng(5)
BIG = 70_001  # past one block (2**16) of the blocked host fills


def _same(got: dc.Buffer, want: np.ndarray, acc: dc.Accelerator) -> None:
    assert isinstance(got, dc.Buffer) and got.accelerator is acc
    host = np.asarray(got)
    assert host.dtype == want.dtype and host.shape == want.shape
    np.testing.assert_array_equal(host, want)


@pytest.mark.parametrize("args", [(BIG,), (3, BIG, 7), (BIG, -5, -3), (0,), (250, 256)])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_arange(accelerator: dc.Accelerator, args: tuple[int, ...], dtype: type) -> None:
    try:
        want = np.arange(*args, dtype=dtype)
    except OverflowError:  # a bound outside the dtype: the same error as numpy's
        with pytest.raises(OverflowError):
            dc.arange(*args, dtype=dtype, device=accelerator)
        return
    _same(dc.arange(*args, dtype=dtype, device=accelerator), want, accelerator)


@pytest.mark.parametrize("case", [(0.0, 1.0, BIG, True), (-3.5, 7.25, BIG, False), (2.0, -1.0, 3, True),
                                  (1.0, 1.0, 5, True), (0.0, 1.0, 1, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linspace(accelerator: dc.Accelerator, case: tuple, dtype: type) -> None:
    if dtype == np.float64 and accelerator.backend == "metal":
        pytest.skip("Metal has no float64")
    start, stop, num, endpoint = case
    want = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    _same(dc.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, device=accelerator), want, accelerator)


@pytest.mark.parametrize("shape_k", [((5, None), 0), ((3, 6), 2), ((6, 3), -2), ((4, 4), 4), ((0, 3), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_eye(accelerator: dc.Accelerator, shape_k: tuple, dtype: type) -> None:
    (rows, cols), k = shape_k
    _same(dc.eye(rows, cols, k=k, dtype=dtype, device=accelerator), np.eye(rows, cols, k=k, dtype=dtype), accelerator)


def test_device_creation_moves_nothing(accelerator: dc.Accelerator) -> None:
    # integer ranges and identity matrices are computed where they live: no copy either way
    with dc.profile() as prof:
        a = dc.arange(5, 1000, 3, dtype=dc.int64, device=accelerator)
        e = dc.eye(40, 50, k=1, dtype=dc.float32, device=accelerator)
        accelerator.synchronize()
    assert prof.transfers == []
    _same(a, np.arange(5, 1000, 3), accelerator)
    _same(e, np.eye(40, 50, k=1, dtype=np.float32), accelerator)


@pytest.mark.parametrize("shape", [(BIG,), (7, 9), (3, 4, 5)])
def test_roll_repeat_tile(accelerator: dc.Accelerator, shape: tuple[int, ...]) -> None:
    a = RS.standard_normal(shape).astype(np.float32)
    x = accelerator.asarray(a)
    _same(dc.roll(x, 1234), np.roll(a, 1234), accelerator)
    _same(dc.roll(x, -3, axis=-1), np.roll(a, -3, axis=-1), accelerator)
    if a.ndim > 1:
        _same(dc.roll(x, (2, -1), axis=(0, 1)), np.roll(a, (2, -1), axis=(0, 1)), accelerator)
    for r, axis in ((3, None), (2, 0), (0, -1)):
        _same(dc.repeat(x, r, axis=axis), np.repeat(a, r, axis=axis), accelerator)
    for reps in ((2,), (2, 1), (1, 2, 3)):
        _same(dc.tile(x, reps), np.tile(a, reps), accelerator)


def test_nonzero_and_take_along_axis(accelerator: dc.Accelerator) -> None:
    mask = (RS.random(BIG) < 0.3).astype(np.float32)
    _same(dc.nonzero(accelerator.asarray(mask))[0], np.nonzero(mask)[0], accelerator)
    a = RS.standard_normal((300, 400)).astype(np.float32)
    for axis, ishape in ((1, (300, 500)), (0, (20, 400)), (1, (1, 7))):
        idx = RS.integers(-a.shape[axis], a.shape[axis], ishape)
        if ishape[0] == 1:
            a1 = a[:1]
            got = dc.take_along_axis(accelerator.asarray(a1), accelerator.asarray(idx), axis=axis)
            _same(got, np.take_along_axis(a1, idx, axis=axis), accelerator)
            continue
        got = dc.take_along_axis(accelerator.asarray(a), accelerator.asarray(idx), axis=axis)
        _same(got, np.take_along_axis(a, idx, axis=axis), accelerator)


@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_sums(accelerator: dc.Accelerator, include_initial: bool) -> None:
    a = RS.integers(-5, 5, (6, 7)).astype(np.int32)
    x = accelerator.asarray(a)
    for axis in (0, 1):
        want = np.cumulative_sum(a, axis=axis, include_initial=include_initial)
        _same(dc.cumulative_sum(x, axis=axis, include_initial=include_initial), want, accelerator)


@pytest.mark.parametrize("a", [RS.integers(-50, 50, 3000).astype(np.int8),
                               RS.integers(0, 300, (30, 40)).astype(np.uint16),
                               RS.integers(0, 1 << 40, 200), np.array([2**31 - 1, -2**31, 0, 0], np.int32)],
                         ids=["int8", "uint16-2d", "sparse-int64", "int32-extremes"])
def test_unique_inverse_and_all(accelerator: dc.Accelerator, a: np.ndarray) -> None:
    x = accelerator.asarray(a)
    want, got = np.unique_all(a), dc.unique_all(x)
    _same(got.values, want.values, accelerator)
    _same(got.indices, want.indices.astype(np.int64), accelerator)
    _same(got.inverse_indices, want.inverse_indices.astype(np.int64).reshape(a.shape), accelerator)
    _same(got.counts, want.counts.astype(np.int64), accelerator)
    inv = dc.unique_inverse(x)
    _same(inv.values, want.values, accelerator)
    _same(inv.inverse_indices, want.inverse_indices.astype(np.int64).reshape(a.shape), accelerator)


def test_sorts_and_matmul_stay_on_the_device(accelerator: dc.Accelerator) -> None:
    # the namespace's sort/argsort (any axis), unique and matmul of transposed views keep device data
    # on the device (ops alone takes numpy on a host copy on OpenCL CPU devices for these)
    a = RS.standard_normal((40, 24)).astype(np.float32)
    b = RS.standard_normal((40, 16)).astype(np.float32)
    x, y = accelerator.asarray(a), accelerator.asarray(b)
    y_int = dc.astype(y, dc.int32)  # float32 @ int32 is float64 in numpy: cast on the device first
    with dc.profile() as prof:
        got = [dc.sort(x, axis=0), dc.argsort(x, axis=0), dc.sort(x, axis=1, descending=True), x.mT @ y]
        if accelerator.backend != "metal":  # Metal has no float64
            got.append(dc.matmul(x.mT, y_int))
        accelerator.synchronize()
    assert [t for t in prof.transfers if t.direction == "d2h"] == []
    _same(got[0], np.sort(a, axis=0), accelerator)
    _same(got[1], np.argsort(a, axis=0, kind="stable"), accelerator)
    _same(got[2], np.flip(np.sort(a, axis=1), axis=1), accelerator)
    np.testing.assert_allclose(np.asarray(got[3]), a.T @ b, rtol=1e-5, atol=1e-5)
    if len(got) == 4:
        return
    want = a.T @ b.astype(np.int32)
    assert np.asarray(got[4]).dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got[4]), want, rtol=1e-5, atol=1e-5)
