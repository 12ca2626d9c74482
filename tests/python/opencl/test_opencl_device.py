"""The OpenCL backend through the public API: listing, capabilities, buffers, raw kernels, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

KERNELS = Path(__file__).parent / "kernels"


@pytest.fixture(scope="module")
def vadd() -> dc.RawKernel:
    return dc.RawKernel((KERNELS / "vadd.cl").read_text(), "vadd_scaled", backend="opencl")


def test_backend_is_listed_available_with_devices(ocl):
    (status,) = [b for b in dc.backends() if b.name == "opencl"]
    assert status.available and status.reason == ""
    assert status.library.endswith("libdotcompute_opencl.so")
    assert status.device_count >= 1
    ids = [d.id for d in dc.devices()]
    assert "opencl:0" in ids and "cpu:0" in ids
    assert ocl.backend == "opencl" and ocl.index == 0 and ocl.id == "opencl:0"
    assert dc.accelerator("opencl") is ocl


def test_info_has_the_capabilities(ocl):
    info = ocl.info
    assert info["name"] and info["vendor"]
    assert ocl.type in {"cpu", "gpu", "accelerator"}
    assert info["compute_units"] >= 1
    assert info["memory"] > 0 and info["local_memory"] > 0
    assert info["max_work_group_size"] >= 1 and len(info["max_work_item_sizes"]) == 3
    assert info["preferred_work_group_multiple"] == info["simd_width"] >= 1
    assert info["opencl_c_version"].startswith("OpenCL C")
    assert info["version"].startswith("OpenCL")
    for flag in ("fp64", "fp16", "int64_atomics"):
        assert isinstance(info[flag], bool)
        assert info[flag] == (flag in info["features"]), flag
    assert "unified_memory" not in info["features"]
    assert not ocl.unified_memory
    # Cache-key material: the arch names the platform, device and driver.
    for part in (info["platform"], info["name"], info["driver_version"]):
        assert part in info["arch"]
    assert info["driver_version"] in info["compiler"]


def test_buffers_live_in_device_memory(ocl):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    b = ocl.asarray(x)
    assert b.shape == (4, 6) and b.accelerator is ocl
    np.testing.assert_array_equal(b.numpy(), x)
    with b.host() as h:
        h[1, 2] = -5.0
    assert b.numpy()[1, 2] == -5.0
    b.copy_from(x * 2)
    out = np.empty_like(x)
    b.copy_to(out)
    np.testing.assert_array_equal(out, x * 2)
    assert ocl.zeros((1000,), np.int64).numpy().sum() == 0
    assert ocl.memory.stats() is not None


def test_raw_kernel_on_buffers_and_numpy_arrays(ocl, vadd):
    n = 1000  # not a multiple of any group size
    a = np.linspace(-1, 1, n, dtype=np.float32)
    b = np.full(n, 0.25, np.float32)
    da, db, dout = ocl.asarray(a), ocl.asarray(b), ocl.empty((n,), np.float32)
    dc.launch(vadd, n, da, db, dout, np.float32(3.0), n, accelerator=ocl)
    ocl.synchronize()
    np.testing.assert_allclose(dout.numpy(), a * 3.0 + 0.25, rtol=1e-6, atol=1e-6)  # fma may round once
    out = np.zeros(n, np.float32)
    dc.launch(vadd, n, a, b, out, np.float32(-1.0), n, accelerator=ocl, local_size=64)
    np.testing.assert_allclose(out, b - a, rtol=1e-6, atol=1e-6)


def test_raw_tiled_matmul_with_work_group_memory(ocl):
    k = dc.RawKernel((KERNELS / "tiled_matmul.cl").read_text(), "tiled_matmul", backend="opencl")
    rng = np.random.default_rng(1)
    M, N, K = 24, 40, 20  # K is not a multiple of the tile
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    C = ocl.zeros((M, N), np.float32)
    dc.launch(k, (N, M), ocl.asarray(A), ocl.asarray(B), C, M, N, K, local_size=(8, 8), accelerator=ocl)
    np.testing.assert_allclose(C.numpy(), A @ B, rtol=1e-4, atol=1e-4)


def test_compilation_error_carries_log_and_source(ocl):
    source = "__kernel void broken(__global float* x) {\n  x[0] = not_declared_anywhere;\n}\n"
    k = dc.RawKernel(source, "broken", backend="opencl")
    with pytest.raises(dc.CompilationError) as err:
        dc.launch(k, 1, ocl.zeros((1,), np.float32), accelerator=ocl)
    assert "not_declared_anywhere" in err.value.log
    assert ":2:" in err.value.log  # the line of the mistake
    assert err.value.source == source


def test_impossible_local_size_is_a_launch_error(ocl, vadd):
    too_big = ocl.info["max_work_group_size"] * 2
    n = too_big
    a = ocl.zeros((n,), np.float32)
    with pytest.raises(dc.LaunchError) as err:
        dc.launch(vadd, n, a, a, a, np.float32(1.0), n, accelerator=ocl, local_size=too_big)
    assert str(too_big) in str(err.value)


def test_events_time_work_on_a_stream(ocl, vadd):
    s = ocl.stream()
    n = 1 << 16
    a = ocl.asarray(np.ones(n, np.float32))
    out = ocl.empty((n,), np.float32)
    start = s.record()
    dc.launch(vadd, n, a, a, out, np.float32(2.0), n, accelerator=ocl, stream=s)
    end = s.record()
    s.synchronize()
    assert end.query()
    assert start.elapsed(end) >= 0.0
    assert (out.numpy() == 3.0).all()


def test_stream_waits_for_another_streams_event(ocl, vadd):
    producer, consumer = ocl.stream(), ocl.stream()
    n = 4096
    a = ocl.asarray(np.arange(n, dtype=np.float32))
    mid = ocl.empty((n,), np.float32)
    out = ocl.empty((n,), np.float32)
    dc.launch(vadd, n, a, a, mid, np.float32(1.0), n, accelerator=ocl, stream=producer)
    consumer.wait(producer.record())
    dc.launch(vadd, n, mid, a, out, np.float32(1.0), n, accelerator=ocl, stream=consumer)
    consumer.synchronize()
    np.testing.assert_array_equal(out.numpy(), 3 * np.arange(n, dtype=np.float32))


def test_allocation_beyond_the_device_is_out_of_memory(ocl):
    too_big = ocl.info["max_mem_alloc_bytes"] * 4
    with pytest.raises(dc.OutOfMemoryError) as err:
        ocl.empty((too_big,), np.uint8)
    assert str(too_big) in str(err.value)
    assert isinstance(err.value, MemoryError)
