"""numpy scalars as kernel arguments: recognised before the Buffer lookup (python/src/launch.cpp, issue
24's launch overhead), with the same values and errors as before."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def _put(out: dc.Buffer[dc.float64], f: dc.float32, i: dc.int64, u: dc.uint64, b: dc.bool_) -> None:
    out[0] = dc.float64(f)
    out[1] = dc.float64(i)
    out[2] = dc.float64(u >> 32)  # the high half: 2**63 + k fits float64 exactly after the shift
    out[3] = 1.0 if b else 0.0


@pytest.mark.parametrize("f, i, u, b", [
    (np.float32(2.5), np.int64(-7), np.uint64(2**63 + 2**40), np.bool_(True)),
    (np.float16(0.5), np.int8(-3), np.uint32(5 << 32 >> 32), np.bool_(False)),
    (np.float64(1.25), np.uint16(9), np.uint64(2**64 - 1), np.True_),
])
def test_numpy_scalars_carry_their_values(f, i, u, b):
    acc = dc.accelerator("cpu:0")
    out = acc.zeros(4, np.float64)
    dc.launch(_put, 1, out, f, i, u, b, accelerator=acc)
    assert out.numpy().tolist() == [float(np.float32(f)), float(i), float(int(u) >> 32), float(bool(b))]


def test_a_numpy_scalar_that_does_not_fit_names_the_parameter():
    acc = dc.accelerator("cpu:0")
    out = acc.zeros(4, np.float64)
    with pytest.raises(dc.KernelTypeError, match="'f'.*complex"):
        dc.launch(_put, 1, out, np.complex64(1 + 2j), 1, 1, True, accelerator=acc)
    with pytest.raises(dc.KernelTypeError, match="argument 'u'.*uint64"):
        dc.launch(_put, 1, out, 1.0, 1, np.int64(-1), True, accelerator=acc)
