"""Array API manipulation functions against numpy, on every device (results stay on the device)."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.namespace import manipulation as m

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4, 5)).astype(np.float32)
B = RNG.integers(-9, 9, (3, 4, 5)).astype(np.int32)


def _check(got, want, acc):
    assert isinstance(got, dc.Buffer)
    assert got.accelerator is acc
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("case", [
    ("reshape", lambda xp, x: xp.reshape(x, (4, -1))),
    ("expand_dims", lambda xp, x: xp.expand_dims(x[0], axis=-1)),
    ("squeeze", lambda xp, x: xp.squeeze(x[:, :1], axis=1)),
    ("broadcast_to", lambda xp, x: xp.broadcast_to(x[0, 0], (2, 3, 5))),
    ("concat", lambda xp, x: xp.concat([x, x[:, 1:]], axis=1)),
    ("concat_none", lambda xp, x: xp.concat([x, x[0]], axis=None)),
    ("stack", lambda xp, x: xp.stack([x[0], x[1]], axis=1)),
    ("flip", lambda xp, x: xp.flip(x, axis=(0, 2))),
    ("flip_all", lambda xp, x: xp.flip(x)),
    ("roll", lambda xp, x: xp.roll(x, (2, -1), axis=(1, 2))),
    ("roll_flat", lambda xp, x: xp.roll(x, 7)),
    ("permute_dims", lambda xp, x: xp.permute_dims(x, (2, 0, 1))),
    ("moveaxis", lambda xp, x: xp.moveaxis(x, 0, -1)),
    ("repeat", lambda xp, x: xp.repeat(x[0], 2, axis=1)),
    ("repeat_flat", lambda xp, x: xp.repeat(x[0, 0], 3)),
    ("tile", lambda xp, x: xp.tile(x[0], (2, 3))),
], ids=lambda c: c[0])
@pytest.mark.parametrize("data", [A, B], ids=["float32", "int32"])
def test_against_numpy(accelerator, case, data):
    x = accelerator.asarray(data)
    _check(case[1](m, x), case[1](np, data), accelerator)


def test_unstack_and_broadcast_arrays(accelerator):
    x = accelerator.asarray(A)
    parts = m.unstack(x, axis=1)
    assert len(parts) == 4
    for got, want in zip(parts, np.unstack(A, axis=1), strict=True):
        _check(got, want, accelerator)
    a, b = m.broadcast_arrays(x[:, :1, :], accelerator.asarray(B[0]))
    wa, wb = np.broadcast_arrays(A[:, :1, :], B[0])
    _check(a, wa, accelerator)
    _check(b, wb, accelerator)


def test_concat_promotes_like_numpy(accelerator):
    got = m.concat([accelerator.asarray(B[0]), accelerator.asarray(A[0])], axis=0)
    _check(got, np.concat([B[0], A[0]], axis=0), accelerator)


def test_errors_name_the_problem(accelerator):
    x = accelerator.asarray(A)
    with pytest.raises(ValueError, match="reshape"):
        m.reshape(x, (7, 7))
    with pytest.raises(ValueError, match="copy=False"):
        m.reshape(x[:, ::2], (30,), copy=False)  # a strided view has no flat form without a copy
    with pytest.raises(np.exceptions.AxisError):
        m.flip(x, axis=3)
    with pytest.raises(ValueError, match="length 4"):
        m.squeeze(x, axis=1)
    with pytest.raises(ValueError, match="do not match"):
        m.concat([x, accelerator.asarray(A[:, :2, :2])], axis=0)
    with pytest.raises(ValueError, match="permutation"):
        m.permute_dims(x, (0, 0, 1))


def test_any_number_of_dimensions_on_host():
    cpu = dc.accelerator("cpu:0")
    data = np.arange(2 * 3 * 2 * 2 * 2).reshape(2, 3, 2, 2, 2)
    x = cpu.asarray(data)
    _check(m.permute_dims(x, (4, 3, 2, 1, 0)), np.transpose(data, (4, 3, 2, 1, 0)), cpu)
    _check(m.stack([x, x], axis=2), np.stack([data, data], axis=2), cpu)
    _check(m.reshape(x, (6, 8)), data.reshape(6, 8), cpu)


def test_device_paths_take_more_than_three_dimensions():
    devices = [d for d in dc.devices() if not dc.accelerator(d.id).empty((1,), np.float32).host_visible]
    if not devices:
        pytest.skip("no device with non-host memory here")
    acc = dc.accelerator(devices[0].id)
    data = np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2)
    x = acc.asarray(data)  # stack, concat, permute_dims and nonzero index any number of dimensions
    np.testing.assert_array_equal(m.stack([x, x]).numpy(), np.stack([data, data]))


def test_zero_dimensional_inputs(accelerator):
    # kernels have no 0-d buffers: one element goes to or from 0-d (what dc.sum returns) on every device
    z = dc.sum(accelerator.asarray(np.array([1.0, 2.0], np.float32)))
    _check(m.reshape(z, (1,)), np.array([3.0], np.float32), accelerator)
    _check(m.broadcast_to(z, (2, 3)), np.full((2, 3), 3.0, np.float32), accelerator)
    _check(m.broadcast_to(z, ()), np.float32(3.0), accelerator)
    _check(m.expand_dims(z, axis=0), np.array([3.0], np.float32), accelerator)
    from dotcompute.namespace import sets, utility

    _check(utility.all(z), np.bool_(True), accelerator)
    _check(sets.unique_values(z), np.array([3.0], np.float32), accelerator)
    parts = m.unstack(accelerator.asarray(np.array([True, False])))
    assert [p.shape for p in parts] == [(), ()] and [bool(p) for p in parts] == [True, False]


def test_reshape_and_flip_are_views_like_numpy(accelerator):
    # numpy's reshape (of contiguous memory) and flip are views: writes through them reach x
    x = accelerator.asarray(np.arange(24, dtype=np.float32))
    r = m.reshape(x, (2, 3, 4), copy=False)
    f = m.flip(x)
    assert r.shape == (2, 3, 4) and f.shape == (24,)
    r[1, 0, 0] = -1.0
    assert np.asarray(x)[12] == -1.0 and np.asarray(f)[11] == -1.0
    c = m.reshape(x, (4, 6), copy=True)  # asked for a copy: its own memory
    c[0, 0] = 99.0
    assert np.asarray(x)[0] == 0.0
    want = np.arange(24, dtype=np.float32)
    want[12] = -1.0
    _check(m.flip(m.reshape(x, (2, 3, 4)), axis=(0, 2)), np.flip(want.reshape(2, 3, 4), axis=(0, 2)), accelerator)
