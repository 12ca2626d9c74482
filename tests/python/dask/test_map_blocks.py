"""map_blocks against numpy: 1-D and 2-D arrays with uneven chunks, scalars, several outputs, raw kernels;
on the threaded scheduler and on a real process cluster."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
from dask_kernels import OFFSET, affine2d, axpb, split

import dotcompute as dc
import dotcompute.dask as dcd


def test_map_blocks_1d_uneven_chunks_threads():
    x = np.random.default_rng(0).random(1001, dtype=np.float32)
    X = da.from_array(x, chunks=((300, 1, 500, 200),))
    y = dcd.map_blocks(axpb, X, 2.0, 1.0)
    assert y.dtype == np.float32 and y.chunks == X.chunks
    assert isinstance(y._meta, np.ndarray) and y._meta.dtype == np.float32
    with dask.config.set(scheduler="threads"):
        got = y.compute()
    np.testing.assert_allclose(got, 2 * x + 1, rtol=1e-6)


def test_map_blocks_2d_two_inputs_on_cluster(client):
    rng = np.random.default_rng(1)
    x = rng.random((70, 45), dtype=np.float32)
    y = rng.random((70, 45), dtype=np.float32)
    X = da.from_array(x, chunks=((30, 30, 10), (20, 25)))
    Y = da.from_array(y, chunks=((30, 30, 10), (20, 25)))
    out = dcd.map_blocks(affine2d, X, Y, 3.0)
    assert out.shape == x.shape and out.chunks == X.chunks
    got = client.compute(out).result()
    np.testing.assert_allclose(got, 3 * x - y + x * x + OFFSET, rtol=1e-5)


def test_map_blocks_arrays_with_different_chunks_are_aligned():
    # as Dask's own x + y: different chunks (even different block counts) are rechunked to common
    # blocks; da.map_blocks alone refuses different block counts ("Shapes do not align")
    rng = np.random.default_rng(4)
    x = rng.random((70, 45), dtype=np.float32)
    y = rng.random((70, 45), dtype=np.float32)
    X = da.from_array(x, chunks=((30, 30, 10), (20, 25)))
    Y = da.from_array(y, chunks=((35, 35), (45,)))
    out = dcd.map_blocks(affine2d, X, Y, 3.0)
    with dask.config.set(scheduler="threads"):
        got = out.compute()
    np.testing.assert_allclose(got, 3 * x - y + x * x + OFFSET, rtol=1e-5)


def test_map_blocks_several_outputs(client):
    x = np.linspace(-5, 5, 777)
    X = da.from_array(x, chunks=250)
    lo, sq = dcd.map_blocks(split, X)
    assert lo.dtype == np.int32 and sq.dtype == np.float64
    lo_v, sq_v = client.compute([lo, sq], sync=True)
    np.testing.assert_array_equal(lo_v, np.floor(x).astype(np.int32))
    np.testing.assert_allclose(sq_v, x * x)


def test_map_blocks_numpy_scalar_and_explicit_outputs():
    x = np.arange(100, dtype=np.float32)
    y = dcd.map_blocks(axpb, da.from_array(x, chunks=33), np.float32(0.5), 2, outputs=["out"],
                       accelerator="cpu")
    np.testing.assert_allclose(y.compute(scheduler="sync"), 0.5 * x + 2)


def test_orchestrated_accelerator_spec():
    x = np.arange(100, dtype=np.float32)
    y = dcd.map_blocks(axpb, da.from_array(x, chunks=40), 2.0, 0.0, accelerator="best")
    np.testing.assert_allclose(y.compute(scheduler="threads"), 2 * x)


def test_output_dtype_override():
    x = np.arange(10, dtype=np.float64)
    y = dcd.map_blocks(axpb, da.from_array(x, chunks=4), 1.0, 0.0, outputs={"out": np.float32}, accelerator="cpu")
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.compute(scheduler="sync"), x)


OPENCL_TWICE = """
__kernel void twice(__global const float* x, __global float* out, long n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = 2.0f * x[i];
}
"""


def test_raw_kernel_with_declared_outputs(client):
    if not any(d.backend == "opencl" for d in dc.devices()):
        pytest.skip("no OpenCL device here")
    k = dc.RawKernel(OPENCL_TWICE, "twice", backend="opencl")
    x = np.arange(1000, dtype=np.float32)
    y = dcd.map_blocks(k, da.from_array(x, chunks=300), outputs={1: np.float32}, accelerator="opencl")
    np.testing.assert_allclose(client.compute(y).result(), 2 * x)
    with pytest.raises(ValueError, match="outputs="):
        dcd.map_blocks(k, da.from_array(x, chunks=300))
    # no accelerator= on the threaded scheduler: only the devices of the kernel's backend are candidates
    y = dcd.map_blocks(k, da.from_array(x, chunks=300), outputs={1: np.float32})
    np.testing.assert_allclose(y.compute(scheduler="threads"), 2 * x)


@dc.kernel
def scale_rows(x: dc.Buffer[dc.float32, 2], w: dc.Buffer[dc.float32, 1], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] * w[j]


def test_lower_dimensional_array_broadcasts_along_trailing_axis():
    x = np.random.default_rng(8).random((30, 20), dtype=np.float32)
    w = np.arange(20, dtype=np.float32)
    X = da.from_array(x, chunks=(7, 6))
    W = da.from_array(w, chunks=6)
    got = dcd.map_blocks(scale_rows, X, W, accelerator="cpu").compute(scheduler="sync")
    np.testing.assert_allclose(got, x * w)
    with pytest.raises(ValueError, match="most dimensions"):
        dcd.map_blocks(scale_rows, W, X)
