"""Expressions of more than 3 dimensions on every device (expr/codegen.py's strided mode): kernels
take buffers of 1 to 3 dimensions, so a 4-d or 5-d expression is one 1-d launch over the flat
index with every operand read by strides; views of 4-d buffers, stores into them, reductions over
any axis and matmul over any number of batch dimensions, each against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

RNG = np.random.default_rng(21)
A = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
B = RNG.standard_normal((3, 1, 5)).astype(np.float32)
C5 = RNG.standard_normal((2, 1, 3, 2, 4)).astype(np.float32)


def _close(got: dc.Buffer, want: np.ndarray, rtol: float = 1e-5) -> None:
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=1e-5)


def test_elementwise_and_broadcasting(accelerator: dc.Accelerator) -> None:
    a, b, c = (dc.asarray(v, device=accelerator) for v in (A, B, C5))
    _close(a + b, A + B)
    _close(dc.exp(a) * 2 - b / 3, np.exp(A) * 2 - B / 3)
    _close(c * a[0, :, :2, :4], C5 * A[0, :, :2, :4])  # a 5-d result from a 5-d operand and a 3-d view
    ints = dc.asarray(np.arange(120, dtype=np.int32).reshape(2, 3, 4, 5), device=accelerator)
    _close((ints % 7) + 1, np.arange(120, dtype=np.int32).reshape(2, 3, 4, 5) % 7 + 1)
    assert dc.where(a > 0, a, 0).device is accelerator


def test_views_of_four_dimensional_buffers(accelerator: dc.Accelerator) -> None:
    a = dc.asarray(A, device=accelerator)
    _close(a[:, 1:, ::2] * 3, A[:, 1:, ::2] * 3)  # a 4-d strided view
    _close(a[1, :, ::-1, 2] + 1, A[1, :, ::-1, 2] + 1)  # a 2-d view of a 4-d base
    assert float(a[1, 2, 3, 4]) == pytest.approx(float(A[1, 2, 3, 4]))
    _close(dc.asarray(a[..., 1:3], copy=True), A[..., 1:3])


def test_stores_into_four_and_five_dimensional_buffers(accelerator: dc.Accelerator) -> None:
    a, want = dc.asarray(A, device=accelerator), A.copy()
    a[:, 1, ::2] = 5.0
    want[:, 1, ::2] = 5.0
    a[1] += a[0]
    want[1] += want[0]
    a[..., 0] = dc.asarray(B[:, 0, :4], device=accelerator)  # broadcast over the leading axis
    want[..., 0] = B[:, 0, :4]
    _close(a, want)
    c, want5 = dc.asarray(C5, device=accelerator), C5.copy()
    c *= 2
    want5 *= 2
    c[:, :, 1:] = c[:, :, :2] - 1
    want5[:, :, 1:] = want5[:, :, :2] - 1
    _close(c, want5)


@pytest.mark.parametrize("axis", [None, 0, 1, 2, 3, (0, 3), (1, 2)])
def test_reductions_over_any_axis(accelerator: dc.Accelerator, axis: object) -> None:
    a = dc.asarray(A, device=accelerator)
    _close(dc.sum(a * 2 + 1, axis=axis), np.sum(A * 2 + 1, axis=axis), rtol=1e-4)
    _close(dc.max(a, axis=axis), np.max(A, axis=axis))


@pytest.mark.parametrize("axis", [None, 2, (1, 3)])
def test_statistics_and_truth_over_any_axis(accelerator: dc.Accelerator, axis: object) -> None:
    a = dc.asarray(A, device=accelerator)
    _close(dc.std(a, axis=axis), np.std(A, axis=axis), rtol=1e-4)
    _close(dc.var(a, axis=axis, correction=1), np.var(A, axis=axis, ddof=1), rtol=1e-4)
    np.testing.assert_array_equal(np.asarray(dc.any(a > 1, axis=axis)), np.any(A > 1, axis=axis))
    np.testing.assert_array_equal(np.asarray(dc.all(a > -2, axis=axis)), np.all(A > -2, axis=axis))
    np.testing.assert_array_equal(np.asarray(dc.count_nonzero(a > 0, axis=axis)), np.count_nonzero(A > 0, axis=axis))


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_sorts_and_scans_along_any_axis(accelerator: dc.Accelerator, axis: int) -> None:
    # along one axis of (outer, n, inner): the same memory seen in 3 dimensions
    c = dc.asarray(C5, device=accelerator)
    _close(dc.sort(c, axis=axis, descending=True), -np.sort(-C5, axis=axis))
    np.testing.assert_array_equal(np.asarray(dc.argsort(c, axis=axis)), np.argsort(C5, axis=axis, kind="stable"))
    _close(dc.cumulative_sum(c, axis=axis, include_initial=True),
           np.cumulative_sum(C5, axis=axis, include_initial=True), rtol=1e-4)


def test_fused_reductions_of_five_dimensions(accelerator: dc.Accelerator) -> None:
    c = dc.asarray(C5, device=accelerator)
    assert float(dc.sum(c * c)) == pytest.approx(float(np.sum(C5 * C5)), rel=1e-4)
    assert int(dc.argmax(c - 1)) == int(np.argmax(C5))
    assert float(dc.mean(c[:, 0, ::2])) == pytest.approx(float(np.mean(C5[:, 0, ::2])), rel=1e-4)
    for shape in ((2, 2, 3, 2, 4), (1, 2, 3, 1, 4)):  # one kernel structure, other extents of 1
        x = RNG.standard_normal(shape).astype(np.float32)
        assert float(dc.sum(dc.asarray(x, device=accelerator) * 2)) == pytest.approx(float(np.sum(x * 2)), rel=1e-4)


@pytest.mark.parametrize(("left", "right"), [((2, 3, 4, 5), (5, 2)), ((2, 1, 4, 5), (3, 5, 6)),
                                             ((5,), (2, 3, 5, 2)), ((2, 2, 3, 4, 5), (5,)),
                                             ((3, 4, 5), (2, 3, 5, 2))])
def test_matmul_over_batch_dimensions(accelerator: dc.Accelerator, left: tuple, right: tuple) -> None:
    x = RNG.standard_normal(left).astype(np.float32)
    y = RNG.standard_normal(right).astype(np.float32)
    got = dc.matmul(dc.asarray(x, device=accelerator), dc.asarray(y, device=accelerator))
    assert got.device is accelerator
    _close(got, np.matmul(x, y), rtol=1e-4)


def test_reshape_into_more_dimensions_and_back(accelerator: dc.Accelerator) -> None:
    a = dc.asarray(A, device=accelerator)
    five = dc.reshape(a.T if accelerator.backend == "cpu" else a, (2, 3, 2, 2, 5))
    base = A.T if accelerator.backend == "cpu" else A
    _close(five, base.reshape(2, 3, 2, 2, 5))
    _close(dc.reshape(five + 1, (6, 20)), base.reshape(6, 20) + 1)
    _close(a[:, ::2].reshape(2, 2, 2, 10), A[:, ::2].reshape(2, 2, 2, 10))  # a strided 4-d view: a copy
