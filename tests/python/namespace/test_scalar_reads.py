"""0-d Buffers read as Python numbers on every device, and the standard's __bool__/__index__ rules: a
one-element Buffer that is not a 0-d integer is never an int index (issue 21: x[dc_bool([False])] = v
used to write x[0], y[dc_bool([True])] returned y[1])."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import dotcompute as dc

DEVICES = [d.id for d in dc.devices() if d.backend in ("cpu", "opencl")]


@pytest.mark.parametrize("device", DEVICES)
def test_zero_d_results_read_as_python_numbers(device: str) -> None:
    x = dc.asarray(np.arange(1, 7, dtype=np.float32).reshape(2, 3), device=device)
    s = dc.sum(x)
    assert s.shape == () and s.device.id == device
    assert float(s) == 21.0 and int(s) == 21 and complex(s) == 21 + 0j and s.item() == 21.0
    assert int(dc.sum(dc.asarray(np.arange(5, dtype=np.int64), device=device))) == 10
    z = s[()]  # the standard's 0-d read: a 0-d Buffer on the same device
    assert isinstance(z, dc.Buffer) and z.shape == () and z.device is s.device and float(z) == 21.0
    m = dc.max(x, axis=1)[1]  # an element of a device result
    assert float(m) == 6.0
    assert bool(dc.asarray(np.array(0.0), device=device)) is False
    assert bool(dc.any(x > 5)) is True
    with pytest.raises(TypeError, match="one element"):
        float(x)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x > 1)


@pytest.mark.parametrize("device", DEVICES)
def test_index_only_from_zero_d_integer_buffers(device: str) -> None:
    i = dc.asarray(np.array(2, dtype=np.int32), device=device)
    assert operator.index(i) == 2 and [10, 20, 30][i] == 30
    for not_an_index in (dc.asarray(np.array([2], dtype=np.int32), device=device),   # one element, 1-d
                         dc.asarray(np.array(True), device=device),                  # 0-d bool
                         dc.asarray(np.array(2.0, dtype=np.float32), device=device)):  # 0-d float
        with pytest.raises(TypeError, match="0-d integer"):
            operator.index(not_an_index)
        with pytest.raises(TypeError):
            [10, 20, 30][not_an_index]


def test_one_element_bool_buffer_is_a_mask_not_an_int() -> None:
    # host memory runs masks (numpy's rules); the old __index__ path wrote x[0] / read y[1]
    x = dc.asarray(np.array([1.0], dtype=np.float32), device="cpu:0")
    x[dc.asarray(np.array([False]), device="cpu:0")] = 5.0
    assert x.numpy().tolist() == [1.0]
    x[dc.asarray(np.array([True]), device="cpu:0")] = 5.0
    assert x.numpy().tolist() == [5.0]
    y = dc.asarray(np.array([10.0, 20.0], dtype=np.float32), device="cpu:0")
    with pytest.raises(IndexError):  # numpy: a mask of 1 for an axis of 2
        y[dc.asarray(np.array([True]), device="cpu:0")]
    picked = y[dc.asarray(np.array([False, True]), device="cpu:0")]
    assert picked.numpy().tolist() == [20.0]


@pytest.mark.skipif("opencl:0" not in DEVICES, reason="needs a device without host memory")
def test_one_element_bool_buffer_on_a_device_is_never_an_int() -> None:
    x = dc.asarray(np.array([1.0, 2.0], dtype=np.float32), device="opencl:0")
    mask = dc.asarray(np.array([True]), device="opencl:0")
    with pytest.raises((TypeError, IndexError)):
        x[mask] = 5.0
    assert x.numpy().tolist() == [1.0, 2.0]
    with pytest.raises((TypeError, IndexError)):
        x[mask]
