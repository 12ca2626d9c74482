"""Audit: map_blocks as a demanding Dask user drives it -- scalars of every kind, 3-D and single-element
chunks, lower-dimensional arrays whose chunks differ from the first array's, numpy arrays beside Dask
arrays, shapes that do not match, every spelling of ``outputs=`` -- against numpy."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest

import dotcompute as dc
import dotcompute.dask as dcd


@dc.kernel
def axpb(x, a: dc.float32, b: dc.float32, out):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + b


@dc.kernel
def times_n(x, n: dc.int32, out):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] * n


@dc.kernel
def add_one_3d(x: dc.Buffer[dc.float32, 3], out: dc.Buffer[dc.float32, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    k = dc.global_id(2)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = x[i, j, k] + 1.0


@dc.kernel
def scale_rows(x: dc.Buffer[dc.float32, 2], w: dc.Buffer[dc.float32, 1], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] * w[j]


@dc.kernel
def scale_by_column(x: dc.Buffer[dc.float32, 2], c: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] * c[i, 0]  # c is (n, 1): its one column broadcasts


@dc.kernel
def add(x, y, out):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] + y[i]


SCALARS = [2, 2.5, True, np.float32(2.5), np.float64(-1.5), np.int64(3), np.int32(-2), np.uint8(7), np.bool_(True)]


@pytest.mark.parametrize("s", SCALARS, ids=lambda s: f"{type(s).__name__}({s})")
def test_scalars_of_every_kind(s):
    x = np.arange(10, dtype=np.float32)
    X = da.from_array(x, chunks=3)
    got = dcd.map_blocks(axpb, X, s, 1).compute(scheduler="sync")
    np.testing.assert_allclose(got, np.float32(s) * x + 1, rtol=1e-6)
    if not isinstance(s, (float, np.floating)):
        got = dcd.map_blocks(times_n, X, s).compute(scheduler="sync")
        np.testing.assert_allclose(got, x * int(s))


def test_float_for_an_int_parameter_names_it():
    with pytest.raises(dc.KernelTypeError, match="'n'"):
        dcd.map_blocks(times_n, da.ones(4, chunks=2, dtype=np.float32), 2.5)


@pytest.mark.parametrize("chunks", [(2, 3, 1), 1, ((5,), (1, 3), (3,))])
def test_3d_blocks_including_single_elements(chunks):
    x = np.random.default_rng(0).random((5, 4, 3), dtype=np.float32)
    got = dcd.map_blocks(add_one_3d, da.from_array(x, chunks=chunks)).compute(scheduler="threads")
    np.testing.assert_array_equal(got, x + np.float32(1))


def test_empty_arrays():
    y = dcd.map_blocks(add_one_3d, da.zeros((0, 4, 3), dtype=np.float32, chunks=2))
    assert y.compute(scheduler="sync").shape == (0, 4, 3)
    z = dcd.map_blocks(axpb, da.zeros(0, dtype=np.float32, chunks=5), 1.0, 1.0)
    assert z.compute(scheduler="sync").shape == (0,)


@pytest.mark.parametrize("wchunks", [3, 8, (5, 3)])
def test_lower_dimensional_array_with_other_chunks(wchunks):
    # x * w in Dask works whatever w's chunks; here the weight vector's blocks must be cut like the
    # image's columns (one 8-long block beside 4-wide image blocks used to give a silently wrong result)
    x = np.random.default_rng(1).random((6, 8), dtype=np.float32)
    w = np.arange(8, dtype=np.float32)
    X = da.from_array(x, chunks=(3, 4))
    got = dcd.map_blocks(scale_rows, X, da.from_array(w, chunks=wchunks)).compute(scheduler="threads")
    np.testing.assert_allclose(got, x * w, rtol=1e-6)


def test_numpy_weight_vector_beside_a_chunked_image(client):
    x = np.random.default_rng(2).random((6, 8), dtype=np.float32)
    w = np.arange(8, dtype=np.float32)
    got = client.compute(dcd.map_blocks(scale_rows, da.from_array(x, chunks=(3, 4)), w)).result()
    np.testing.assert_allclose(got, x * w, rtol=1e-6)


def test_length_one_axis_broadcasts():
    x = np.random.default_rng(3).random((6, 8), dtype=np.float32)
    c = np.arange(6, dtype=np.float32).reshape(6, 1)
    got = dcd.map_blocks(scale_by_column, da.from_array(x, chunks=(3, 4)),
                         da.from_array(c, chunks=(2, 1))).compute(scheduler="sync")
    np.testing.assert_allclose(got, x * c, rtol=1e-6)


def test_numpy_arrays_mixed_with_dask_arrays():
    x = np.arange(10, dtype=np.float32)
    X = da.from_array(x, chunks=3)
    np.testing.assert_array_equal(dcd.map_blocks(add, X, x).compute(scheduler="sync"), 2 * x)
    np.testing.assert_array_equal(dcd.map_blocks(add, x, X).compute(scheduler="sync"), 2 * x)


def test_shapes_that_do_not_match_raise_at_graph_construction():
    # same block count, different lengths: da.map_blocks pairs the blocks and the kernel read past
    # the first array's end without a word
    X = da.ones(10, chunks=3, dtype=np.float32)
    with pytest.raises(ValueError, match=r"argument 1 has shape \(11,\)"):
        dcd.map_blocks(add, X, da.ones(11, chunks=3, dtype=np.float32))
    with pytest.raises(ValueError, match="does not match"):
        dcd.map_blocks(scale_rows, da.ones((6, 8), chunks=3, dtype=np.float32), np.ones(7, np.float32))


@pytest.mark.parametrize("outputs", ["out", 3, np.int64(3), ["out"], [3], ("out",), {"out": np.float32},
                                     {3: "float32"}, {np.int32(3): None}],
                         ids=repr)
def test_outputs_spelled_every_way(outputs):
    x = np.arange(10, dtype=np.float32)
    got = dcd.map_blocks(axpb, da.from_array(x, chunks=4), 2.0, 0.0, outputs=outputs).compute(scheduler="sync")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, 2 * x)


@dc.kernel
def divide(x, s, out):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] / s


def test_lazy_0d_results_as_scalar_arguments(client):
    # x / x.mean() is everyday Dask; the 0-d Dask array (or a 0-d numpy array) is the kernel's scalar
    x = np.arange(1, 11, dtype=np.float64)
    X = da.from_array(x, chunks=3)
    np.testing.assert_allclose(client.compute(dcd.map_blocks(divide, X, dcd.mean(X))).result(), x / x.mean())
    np.testing.assert_allclose(dcd.map_blocks(divide, X, X.max()).compute(scheduler="threads"), x / x.max())
    np.testing.assert_allclose(dcd.map_blocks(divide, X, np.array(4.0)).compute(scheduler="sync"), x / 4)
    got = dcd.map_blocks(axpb, X.astype(np.float32), dcd.max(X), dcd.sum(X)).compute(scheduler="sync")
    np.testing.assert_allclose(got, 10 * x + 55)
    with pytest.raises(TypeError, match="argument 1"):
        dcd.map_blocks(divide, X, da.from_array(np.array("a")))


def test_unknown_chunk_sizes_after_boolean_indexing(client):
    # x[x > 0] has chunks (nan, ...): blocks pair by position as in da.map_blocks; the mean's count is
    # known only when computed (it was NaN)
    x = np.arange(-10, 10, dtype=np.float32)
    X = da.from_array(x, chunks=6)
    Y = X[X > 0]
    want = x[x > 0]
    np.testing.assert_array_equal(dcd.map_blocks(add, Y, Y).compute(scheduler="sync"), 2 * want)
    np.testing.assert_array_equal(dcd.map_blocks(axpb, Y, 2.0, 1.0, local_size=1).compute(scheduler="sync"),
                                  2 * want + 1)
    got = client.compute([dcd.mean(Y), dcd.sum(Y), dcd.max(Y), dcd.min(Y)], sync=True)
    np.testing.assert_allclose(got, [want.mean(), want.sum(), want.max(), want.min()])
    m = np.arange(24.0).reshape(4, 6)
    M = da.from_array(m, chunks=2)
    rows = M[M[:, 0] > 5]  # unknown along axis 0
    np.testing.assert_allclose(dcd.mean(rows, axis=0).compute(scheduler="sync"), m[m[:, 0] > 5].mean(axis=0))
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        dcd.map_blocks(add, Y, da.ones(9, chunks=3, dtype=np.float32))


OPENCL_AFFINE = """
__kernel void affine(__global float* out, __global const float* x, float a, long n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = a * x[i];
}
__kernel void split2(__global const float* x, __global float* lo, __global int* hi, long n, long m) {
    size_t i = get_global_id(0), j = get_global_id(1);
    if (i < n && j < m) { lo[i * m + j] = x[i * m + j] - 1.0f; hi[i * m + j] = (int)(x[i * m + j] * 2.0f); }
}
"""


def test_raw_kernels_output_first_several_outputs_and_2d(client):
    if not any(d.backend == "opencl" for d in dc.devices()):
        pytest.skip("no OpenCL device here")
    k = dc.RawKernel(OPENCL_AFFINE, "affine", backend="opencl")
    x = np.arange(50, dtype=np.float32)
    X = da.from_array(x, chunks=((20, 1, 0, 29),))
    for a in (2.0, 2, np.float32(2.0)):
        got = client.compute(dcd.map_blocks(k, X, a, outputs={np.int64(0): np.float32})).result()
        np.testing.assert_array_equal(got, 2 * x)
    k2 = dc.RawKernel(OPENCL_AFFINE, "split2", backend="opencl")
    m = np.random.default_rng(5).random((7, 9), dtype=np.float32) * 10
    lo, hi = dcd.map_blocks(k2, da.from_array(m, chunks=(3, 4)), outputs={1: np.float32, 2: "int32"})
    assert hi.dtype == np.int32
    lo_v, hi_v = client.compute([lo, hi], sync=True)
    np.testing.assert_array_equal(lo_v, m - np.float32(1))
    np.testing.assert_array_equal(hi_v, (m * np.float32(2)).astype(np.int32))


def test_raw_kernel_parameter_count_checked_on_the_client():
    # the source declares (out, x, a, n): leaving out the scalar used to fail on the workers with
    # "takes 4 arguments, 3 given"; a 2-D array adds a second shape argument the kernel lacks
    k = dc.RawKernel(OPENCL_AFFINE, "affine", backend="opencl")
    X = da.ones(10, chunks=5, dtype=np.float32)
    with pytest.raises(dc.KernelTypeError, match="declares 4 parameter"):
        dcd.map_blocks(k, X, outputs={0: np.float32})
    with pytest.raises(dc.KernelTypeError, match="2 trailing"):
        dcd.map_blocks(k, da.ones((4, 4), chunks=2, dtype=np.float32), 2.0, outputs={0: np.float32})


@dc.kernel
def split_parts(x: dc.Buffer[dc.float32, 2], w: dc.Buffer[dc.float32, 1], s: dc.float32,
                lo: dc.Buffer[dc.int32, 2], scaled: dc.Buffer[dc.float64, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < x.shape[0] and j < x.shape[1]:
        lo[i, j] = dc.int32(x[i, j] * 10.0)
        scaled[i, j] = dc.float64(x[i, j] * w[j]) / s


def test_everything_together_on_every_accelerator(accelerator):
    # several outputs, a weight vector cut like the image's columns, a lazy scalar, uneven chunks with
    # an empty one, single-element blocks -- on each device in turn
    x = np.random.default_rng(6).random((13, 10), dtype=np.float32)
    w = np.linspace(0.5, 2.0, 10, dtype=np.float32)
    X = da.from_array(x, chunks=((6, 0, 1, 6), (4, 1, 5)))
    W = da.from_array(w, chunks=3)
    s = dcd.max(da.from_array(np.array([1.0, 4.0], np.float32), chunks=1))
    lo, scaled = dcd.map_blocks(split_parts, X, W, s, accelerator=accelerator.id)
    with dask.config.set(scheduler="threads"):
        lo_v, scaled_v = dask.compute(lo, scaled)
    np.testing.assert_array_equal(lo_v, (x * np.float32(10)).astype(np.int32))
    np.testing.assert_allclose(scaled_v, (x * w).astype(np.float64) / 4.0, rtol=1e-6)
