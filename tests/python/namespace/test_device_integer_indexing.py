"""Integer-array indexing beside slices, ``...`` and ints, and integer-array assignment, on every
device (namespace/advanced.py: positions as an expression, a gather or a scatter kernel; numpy in
place on host memory), against numpy; on a device without host memory no buffer is downloaded."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
I = np.array([2, 0, -1])  # noqa: E741 -- numpy's name for an index array
J = np.array([[1], [2]])


def _keys(i: dc.Buffer, j: dc.Buffer) -> list[tuple[tuple, tuple]]:
    """(dc key, numpy key) pairs: arrays adjacent (their axes stay in place) and apart (first)."""
    return [((slice(None), i), (slice(None), I)), ((i, slice(1, None)), (I, slice(1, None))),
            ((Ellipsis, i), (Ellipsis, I)), ((j, slice(None), i), (J, slice(None), I)),
            ((1, slice(None, None, -1), i), (1, slice(None, None, -1), I)),
            ((slice(None), j, i), (slice(None), J, I)), ((i, 2, i), (I, 2, I))]


def test_slices_beside_integer_arrays(accelerator: dc.Accelerator) -> None:
    x = dc.asarray(X, device=accelerator)
    i, j = dc.asarray(I, device=accelerator), dc.asarray(J, device=accelerator)
    for key, want in _keys(i, j):
        got = x[key]
        assert got.device is accelerator
        np.testing.assert_array_equal(np.asarray(got), X[want])


def test_integer_array_assignment(accelerator: dc.Accelerator) -> None:
    i, j = dc.asarray(I, device=accelerator), dc.asarray(J, device=accelerator)
    for key, hkey in _keys(i, j) + [((i,), (I,)), ((i, 1, 0), (I, 1, 0))]:
        x, want = dc.asarray(X, device=accelerator), X.copy()
        x[key] = -1.0  # a scalar, broadcast
        want[hkey] = -1.0
        np.testing.assert_array_equal(x.numpy(), want)
        values = np.arange(want[hkey].size, dtype=np.int32).reshape(want[hkey].shape)
        x[key] = dc.asarray(values, device=accelerator)  # an array of another dtype, cast as numpy does
        want[hkey] = values
        np.testing.assert_array_equal(x.numpy(), want)


def test_assignment_through_a_view_and_out_of_range(accelerator: dc.Accelerator) -> None:
    x, want = dc.asarray(X, device=accelerator), X.copy()
    i = dc.asarray(I[:2], device=accelerator)
    window = x[1:, ::2]
    window[..., i] = 7.0
    want[1:, ::2][..., I[:2]] = 7.0
    np.testing.assert_array_equal(x.numpy(), want)
    with pytest.raises(IndexError):
        x[:, dc.asarray(np.array([0, 4]), device=accelerator)] = 1.0


@pytest.mark.skipif("opencl:0" not in [d.id for d in dc.devices()], reason="needs a device without host memory")
def test_no_buffer_goes_through_the_host() -> None:
    x = dc.asarray(X, device="opencl:0")
    i = dc.asarray(I, device="opencl:0")
    x[:, i] = 1.0  # compiles outside the profile
    x[:, i]._native  # noqa: B018
    with dc.profile() as prof:
        x[:, i] = 2.0
        got = x[1:, i]
        got._native  # noqa: B018 -- runs the gather
        dc.synchronize()
    # the only reads back are the index checks' two numbers per index array
    assert all(t.bytes <= 8 for t in prof.transfers if t.direction == "d2h")
    want = X.copy()
    want[:, I] = 2.0
    np.testing.assert_array_equal(got.numpy(), want[1:, I])
