"""The launch path of kernel-language kernels, on every available device (needs the native runtime)."""

import numpy as np
import pytest

import dotcompute as dc

FACTOR = 2.0


@dc.kernel
def scale(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] * FACTOR


@dc.kernel
def generic_axpy(a, x: dc.Buffer, y: dc.Buffer):
    i = dc.global_id(0)
    if i < y.size:
        y[i] = a * x[i] + y[i]


@dc.kernel(debug=True)
def off_by_one(a: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    a[i, j + 1] = 1.0


@dc.kernel
def maybe_off(a: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    a[i + 2] = 1


@dc.kernel
def group_sum(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    tile = dc.shared((8,), dc.int32)
    l = dc.local_id(0)
    tile[l] = x[dc.global_id(0)]
    dc.barrier()
    if l == 0:
        s = 0
        for k in range(8):
            s += tile[k]
        out[dc.group_id(0)] = s


@dc.kernel
def histogram(values: dc.Buffer[dc.int32], bins: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < values.shape[0]:
        dc.atomic_add(bins, values[i] % bins.shape[0], 1)


def test_numpy_arguments_copy_back_only_what_is_written(accelerator):
    x = np.arange(64, dtype=np.float32)
    x.flags.writeable = False  # a copy back into it would fail
    out = np.zeros(64, np.float32)
    dc.launch(scale, 64, x, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, x * 2)


def test_module_constant_change_recompiles(accelerator):
    global FACTOR
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    FACTOR = 3.0
    try:
        dc.launch(scale, 8, x, out, accelerator=accelerator)
        assert (out == 3).all()
    finally:
        FACTOR = 2.0
    dc.launch(scale, 8, x, out, accelerator=accelerator)
    assert (out == 2).all()


def test_generic_kernel_specialises_and_caches(accelerator):
    for dtype in (np.float32, np.float64, np.int32):
        x = np.arange(10, dtype=dtype)
        y = np.ones(10, dtype=dtype)
        dc.launch(generic_axpy, 10, 2, x, y, accelerator=accelerator)
        np.testing.assert_array_equal(y, 2 * np.arange(10) + 1)
    before = len(generic_axpy._specs)
    dc.launch(generic_axpy, 10, 2, np.ones(10, np.float32), np.ones(10, np.float32), accelerator=accelerator)
    assert len(generic_axpy._specs) == before


def test_debug_mode_reports_buffer_index_and_line(accelerator):
    with pytest.raises(dc.KernelIndexError) as info:
        dc.launch(off_by_one, (2, 3), np.zeros((2, 3), np.float32), accelerator=accelerator)
    text = str(info.value)
    assert "buffer 'a'" in text and "test_launch.py:29" in text and "a[i, j + 1]" in text


def test_debug_mode_from_the_environment(accelerator, monkeypatch):
    a = np.zeros(8, np.int32)
    dc.launch(maybe_off, 4, a, accelerator=accelerator)  # in bounds
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "1")
    with pytest.raises(dc.KernelIndexError, match="buffer 'a'.*index 8"):
        dc.launch(maybe_off, 7, a, accelerator=accelerator)
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "0")
    dc.launch(maybe_off, 4, a, accelerator=accelerator)


def test_barriers_and_shared_memory(accelerator):
    x = np.arange(32, dtype=np.int32)
    out = np.zeros(4, np.int32)
    dc.launch(group_sum, 32, x, out, local_size=8, accelerator=accelerator)
    np.testing.assert_array_equal(out, x.reshape(4, 8).sum(axis=1))
    out[:] = 0
    # no local size: one that divides the global size and fits the shared array is chosen
    dc.launch(group_sum, 32, x, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, x.reshape(4, 8).sum(axis=1))
    with pytest.raises(dc.LaunchError, match="multiple"):
        dc.launch(group_sum, 30, x, out, local_size=8, accelerator=accelerator)


def test_atomics(accelerator):
    values = np.arange(1000, dtype=np.int32)
    bins = np.zeros(10, np.int32)
    dc.launch(histogram, 1000, values, bins, accelerator=accelerator)
    assert (bins == 100).all()


def test_device_buffers_and_wrong_arguments(accelerator):
    x = accelerator.asarray(np.ones(16, np.float32))
    out = accelerator.empty((16,), np.float32)
    dc.launch(scale, 16, x, out)  # the accelerator comes from the buffers
    accelerator.synchronize()
    assert (out.numpy() == 2).all()
    with pytest.raises(dc.KernelTypeError, match="'x'"):
        dc.launch(scale, 16, np.ones(16, np.float64), np.ones(16, np.float32), accelerator=accelerator)
    with pytest.raises(dc.KernelTypeError, match="argument"):
        dc.launch(scale, 16, x, accelerator=accelerator)
