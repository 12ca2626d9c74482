"""Buffer life cycles in the loops people write: async launches then reads, numpy launches
after stream work, per-iteration temporaries returned to the pool, big-endian input."""

import gc

import numpy as np

import dotcompute as dc


@dc.kernel
def add_const(x: dc.Buffer[dc.float32], c: dc.float32):
    i = dc.global_id(0)
    if i < x.shape[0]:
        x[i] = x[i] + c


@dc.kernel
def copy_scaled(src: dc.Buffer[dc.float32], dst: dc.Buffer[dc.float32], s: dc.float32):
    i = dc.global_id(0)
    if i < dst.shape[0]:
        dst[i] = src[i] * s


def test_numpy_read_after_async_launches_sees_results(accelerator):
    n = 50_000
    b = accelerator.zeros((n,), np.float32)
    s = accelerator.stream()
    for _ in range(25):
        dc.launch(add_const, n, b, 1.0, stream=s)
    # no explicit synchronize: reading the buffer must not return stale data
    s.synchronize()
    assert (b.numpy() == 25.0).all()


def test_buffer_read_without_explicit_sync(accelerator):
    n = 50_000
    b = accelerator.zeros((n,), np.float32)
    for _ in range(25):
        accelerator.launch(add_const, n, b, 1.0)
    assert (b.numpy() == 25.0).all()   # like CuPy's .get(): the read waits for the writes
    assert (np.asarray(b) == 25.0).all()


def test_numpy_launch_after_stream_work_on_same_stream(accelerator):
    n = 4096
    b = accelerator.zeros((n,), np.float32)
    s = accelerator.stream()
    for _ in range(10):
        dc.launch(add_const, n, b, 2.0, stream=s)
    out = np.zeros(n, np.float32)
    dc.launch(copy_scaled, n, b, out, 0.5, stream=s)   # numpy output: synchronous
    assert (out == 10.0).all()


def test_host_view_after_async_launch(accelerator):
    b = accelerator.zeros((64,), np.float32)
    accelerator.launch(add_const, 64, b, 3.0)
    with b.host() as h:
        assert (h == 3.0).all()
        h[:] += 1.0
    accelerator.launch(add_const, 64, b, 1.0)
    accelerator.synchronize()
    assert (b.numpy() == 5.0).all()


def test_temporaries_in_a_loop_are_recycled(accelerator):
    n = 100_000
    x = accelerator.asarray(np.ones(n, np.float32))
    gc.collect()
    accelerator.synchronize()
    accelerator.memory.trim()
    # Other tests' long-lived buffers (module-level data, caches) stay out of the counts.
    base, base_reserved = accelerator.memory.stats()["in_use"], accelerator.memory.stats()["reserved"]
    for it in range(30):
        tmp = accelerator.empty((n,), np.float32)
        accelerator.launch(copy_scaled, n, x, tmp, float(it))
        del tmp
    accelerator.synchronize()
    gc.collect()
    stats = accelerator.memory.stats()
    assert stats["in_use"] - base < 3 * n * 4, stats   # the 30 temporaries are not all still held
    assert stats["reserved"] - base_reserved < 10 * n * 4, stats  # and the pool reused blocks
    accelerator.memory.trim()
    assert (x.numpy() == 1.0).all()


def test_big_endian_input_is_correct_or_refused(accelerator):
    be = np.arange(10, dtype=">f4")
    out = np.zeros(10, np.float32)
    try:
        dc.launch(copy_scaled, 10, be, out, 2.0, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert "src" in str(e), str(e)
    else:
        np.testing.assert_array_equal(out, np.arange(10) * 2.0)


def test_buffer_shapes_with_unit_dimensions(accelerator):
    @dc.kernel
    def fill3(v: dc.Buffer[dc.int32, 3]):
        a = dc.global_id(0)
        b = dc.global_id(1)
        c = dc.global_id(2)
        if a < v.shape[0] and b < v.shape[1] and c < v.shape[2]:
            v[a, b, c] = dc.int32(a * 100 + b * 10 + c)

    for shape in ((1, 1, 7), (3, 1, 1), (1, 5, 1), (2, 3, 4)):
        v = accelerator.zeros(shape, np.int32)
        accelerator.launch(fill3, shape, v)
        accelerator.synchronize()
        a, b, c = np.indices(shape)
        np.testing.assert_array_equal(v.numpy(), a * 100 + b * 10 + c)


def test_launch_infers_the_device_from_buffers_and_streams(accelerator):
    x = accelerator.asarray(np.arange(8, dtype=np.float32))
    y = accelerator.zeros((8,), np.float32)
    dc.launch(copy_scaled, 8, x, y, 3.0)                # no accelerator=: the first buffer's
    accelerator.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.arange(8) * 3)
    s = accelerator.stream()
    out = np.zeros(8, np.float32)
    dc.launch(copy_scaled, 8, np.arange(8, dtype=np.float32), out, 2.0, stream=s)   # the stream's
    np.testing.assert_array_equal(out, np.arange(8) * 2)
    z = accelerator.zeros((8,), np.float32)
    dc.launch(copy_scaled, 8, np.ones(8, np.float32), z, 5.0)   # numpy first, buffer second
    accelerator.synchronize()
    assert (z.numpy() == 5.0).all()


def test_copy_from_wrong_shape_or_dtype_is_refused(accelerator):
    b = accelerator.zeros((4, 4), np.float32)
    for bad in (np.zeros((4, 5), np.float32), np.zeros(15, np.float32)):
        try:
            b.copy_from(bad)
        except (TypeError, ValueError, dc.DotComputeError):
            pass
        else:
            raise AssertionError(f"copy_from accepted an array of shape {bad.shape} for a (4, 4) buffer")
    assert (b.numpy() == 0).all()


def test_memmap_and_broadcast_arrays(accelerator, tmp_path):
    from test_rw_runtime import row_sums
    fn = tmp_path / "data.f32"
    mm = np.memmap(fn, dtype=np.float32, mode="w+", shape=(4, 6))
    mm[:] = np.arange(24, dtype=np.float32).reshape(4, 6)
    mm.flush()
    ro = np.memmap(fn, dtype=np.float32, mode="r", shape=(4, 6))    # a data file opened read-only
    out = np.memmap(tmp_path / "out.f32", dtype=np.float32, mode="w+", shape=(4,))
    dc.launch(row_sums, 4, ro, out, accelerator=accelerator)
    np.testing.assert_array_equal(np.asarray(out), np.arange(24).reshape(4, 6).sum(1))
    bias = np.broadcast_to(np.arange(6, dtype=np.float32), (4, 6))   # zero strides: not contiguous
    res = np.zeros(4, np.float32)
    try:
        dc.launch(row_sums, 4, bias, res, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert "m" in str(e) or "contiguous" in str(e), str(e)
    else:
        np.testing.assert_array_equal(res, np.full(4, 15.0))
