"""The CPU loop nest runs the contiguous (last-index) dimension innermost, whatever id it is."""

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang.emit.loop_order import contiguous_dimension


@dc.kernel
def rows(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * 2.0 + dc.float32(j)


@dc.kernel
def cols(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    j = dc.global_id(0)
    i = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * 2.0 + dc.float32(j)


@dc.kernel
def volume(out: dc.Buffer[dc.int64, 3]):
    x = dc.global_id(0)
    y = dc.global_id(1)
    z = dc.global_id(2)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        w = z
        out[x, y, w] = x * 10000 + y * 100 + w


def _inner_loop_dim(kernel) -> int:
    lines = kernel.source("cpu").splitlines()
    loop = lines[lines.index("DC_IVDEP") + 1]
    return int(loop.split("dc_gid")[1][0])


@pytest.mark.parametrize("kernel, expected", [(rows, 1), (cols, 0), (volume, 2)])
def test_the_last_index_dimension_is_innermost(kernel, expected):
    assert contiguous_dimension(kernel.ir().kernel) == expected
    assert _inner_loop_dim(kernel) == expected


@pytest.mark.parametrize("shape", [(3, 20000), (37, 5), (1, 1)])
@pytest.mark.parametrize("kernel", [rows, cols])
def test_results_do_not_depend_on_the_loop_order(kernel, shape):
    a = np.random.default_rng(0).random(shape, dtype=np.float32)
    out = np.zeros_like(a)
    gs = shape if kernel is rows else shape[::-1]
    dc.launch(kernel, gs, a, out, accelerator="cpu")
    np.testing.assert_allclose(out, a * 2 + np.arange(shape[1], dtype=np.float32), rtol=1e-6)


def test_three_dimensional_rows_cover_every_item():
    out = np.full((4, 3, 20001), -1, np.int64)
    dc.launch(volume, out.shape, out, accelerator="cpu")
    x, y, z = np.indices(out.shape)
    np.testing.assert_array_equal(out, x * 10000 + y * 100 + z)


def test_gpu_targets_put_the_contiguous_dimension_on_hardware_x():
    assert "dc_gid1 = (long)get_global_id(0)" in rows.source("opencl")
    assert "dc_gid1 = (long long)blockIdx.x * blockDim.x + threadIdx.x" in rows.source("cuda")
    assert "dc_gid0 = (long)get_global_id(0)" in cols.source("opencl")


@pytest.mark.parametrize("local_size", [None, (2, 8)])
def test_swapped_launches_are_correct_on_opencl(local_size):
    if not any(d.backend == "opencl" for d in dc.devices()):
        pytest.skip("no OpenCL device")
    a = np.random.default_rng(1).random((6, 40), dtype=np.float32)
    out = np.zeros_like(a)
    dc.launch(rows, a.shape, a, out, local_size=local_size, accelerator="opencl:0")
    np.testing.assert_allclose(out, a * 2 + np.arange(40, dtype=np.float32), rtol=1e-6)
