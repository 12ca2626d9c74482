"""The simulated cuda:0 as a device: what it reports, launch geometry by results, asynchrony
(streams, events, timing) that a synchronous double could not pass, graphs by replay."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def test_reports_itself_as_simulated(sim):
    assert "simulated" in sim.name
    info = sim.info
    assert info["simulated"] is True
    assert info["compute_capability"] == [9, 0] and info["arch"] == "sm_90"
    assert info["memory"] == 80 << 30 and info["compute_units"] == 132
    assert info["max_work_group_size"] == 1024 and info["simd_width"] == 32
    assert info["max_shared_memory_per_block"] == 48 * 1024
    cuda = [b for b in dc.backends() if b.name == "cuda"]
    assert cuda and cuda[0].available and cuda[0].simulated
    assert "simulated" in repr(cuda[0])


@dc.kernel
def ids_1d(out: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = i * 1000000 + dc.group_id(0) * 1000 + dc.local_id(0)


@dc.kernel
def ids_2d(out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = i * 1000 + j


@dc.kernel
def ids_3d(out: dc.Buffer[dc.int64, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    k = dc.global_id(2)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = i * 10000 + j * 100 + k


@pytest.mark.parametrize("n,local", [(1, None), (1000, None), (1000, 64), (4099, 128)])
def test_1d_geometry(sim, n, local):
    out = sim.zeros((n,), np.int64)
    sim.launch(ids_1d, n, out, local_size=local)
    got = out.numpy()
    i = np.arange(n)
    np.testing.assert_array_equal(got // 1000000, i)
    if local is not None:  # group and local ids follow the block size that was asked for
        np.testing.assert_array_equal(got % 1000000 // 1000, i // local)
        np.testing.assert_array_equal(got % 1000, i % local)


@pytest.mark.parametrize("shape,local", [((37, 53), None), ((37, 53), (4, 16)), ((1, 700), None), ((300, 3), (8, 8))])
def test_2d_geometry_including_the_contiguous_dimension_swap(sim, shape, local):
    out = sim.zeros(shape, np.int64)
    sim.launch(ids_2d, shape, out, local_size=local)
    i, j = np.indices(shape)
    np.testing.assert_array_equal(out.numpy(), i * 1000 + j)


@pytest.mark.parametrize("shape,local", [((5, 7, 9), None), ((3, 17, 33), (1, 4, 8))])
def test_3d_geometry(sim, shape, local):
    out = sim.zeros(shape, np.int64)
    sim.launch(ids_3d, shape, out, local_size=local)
    i, j, k = np.indices(shape)
    np.testing.assert_array_equal(out.numpy(), i * 10000 + j * 100 + k)


def test_a_block_beyond_the_device_limit_fails(sim):
    out = sim.zeros((4096,), np.int64)
    with pytest.raises(dc.DotComputeError, match="1024|exceed"):
        sim.launch(ids_1d, 4096, out, local_size=2048)


@dc.kernel
def slow_fill(out: dc.Buffer[dc.float32], value: dc.float32, spins: dc.int32):
    i = dc.global_id(0)
    if i < out.shape[0]:
        acc = 0.0
        for _ in range(spins):
            acc = acc * 0.5 + 1.0
        # acc converges to 2.0; the loop only makes the kernel slow
        out[i] = value + (acc - 2.0) * 0.0


@dc.kernel
def add_one(src: dc.Buffer[dc.float32], dst: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < dst.shape[0]:
        dst[i] = src[i] + 1.0


def test_event_wait_orders_two_streams_and_query_sees_pending_work(sim):
    n = 4096
    a, b = sim.stream(), sim.stream()
    x = sim.zeros((n,), np.float32)
    y = sim.zeros((n,), np.float32)
    sim.launch(slow_fill, n, x, 0.0, 10, stream=a)  # compile both kernels before timing matters
    sim.launch(add_one, n, x, y, stream=b)
    sim.synchronize()
    a.synchronize()
    b.synchronize()
    # A slow kernel on stream a; stream b waits for it through an event, then reads its output.
    sim.launch(slow_fill, n, x, 41.0, 50_000, stream=a)
    done = a.record()
    assert done.query() is False  # the slow kernel is still running: a synchronous double says True
    b.wait(done)
    sim.launch(add_one, n, x, y, stream=b)
    b.synchronize()
    assert done.query() is True
    np.testing.assert_array_equal(y.numpy(), np.full(n, 42.0, np.float32))


def test_event_timing_measures_the_work_between(sim):
    n = 4096
    s = sim.stream()
    x = sim.zeros((n,), np.float32)
    sim.launch(slow_fill, n, x, 1.0, 10, stream=s)
    start = s.record()
    sim.launch(slow_fill, n, x, 2.0, 20_000, stream=s)
    end = s.record()
    end.synchronize()
    assert start.elapsed(end) > 0.0
    assert start.elapsed(start) == 0.0
    np.testing.assert_array_equal(x.numpy(), np.full(n, 2.0, np.float32))


@dc.kernel
def accumulate(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < y.shape[0]:
        y[i] = y[i] * 2.0 + x[i]


def test_graph_capture_records_and_replays(sim):
    n = 1000
    xs = np.arange(n, dtype=np.float32)
    x = sim.asarray(xs)
    y = sim.zeros((n,), np.float32)
    sim.launch(accumulate, n, x, y)  # compiled outside the capture
    sim.synchronize()
    y.copy_from(np.zeros(n, np.float32))
    sim.synchronize()
    with sim.graph() as g:
        sim.launch(accumulate, n, x, y)
        sim.launch(accumulate, n, x, y)
    g.launch()
    sim.synchronize()
    np.testing.assert_array_equal(y.numpy(), 3 * xs)  # captured launches did not run; one replay = two launches
    g.launch()
    g.launch()
    np.testing.assert_array_equal(y.numpy(), 63 * xs)  # ((3x*2+x)*2+x)... four more launches: 63x
