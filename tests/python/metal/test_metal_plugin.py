"""The Metal plugin through the public API, on the Metal test double (or a Mac): devices,
memory, compilation with logs, launches checked against numpy, streams, events, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dotcompute as dc

VADD = """
#include <metal_stdlib>
using namespace metal;
kernel void vadd_scaled(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                        device float* out [[buffer(2)]], constant float& s [[buffer(3)]],
                        constant long& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = a[i] * s + b[i];
}
"""


@pytest.fixture(scope="module")
def vadd() -> dc.RawKernel:
    return dc.RawKernel(VADD, "vadd_scaled", backend="metal")


def _is_double(acc: dc.Accelerator) -> bool:
    return bool(acc.info.get("test_double"))


def test_device_is_listed_and_says_it_is_a_test_double(metal):
    (status,) = [b for b in dc.backends() if b.name == "metal"]
    assert status.available and status.device_count >= 1
    assert status.library.endswith("libdotcompute_metal.so")
    assert metal.id == "metal:0" and metal.backend == "metal" and metal.type == "gpu"
    info = metal.info
    if _is_double(metal):
        assert "test double" in metal.name.lower()
        assert info["simulated"] is True and status.simulated
        assert "(test double)" in info["compiler"]
    assert info["gpu_family"].startswith(("apple", "mac", "common"))
    assert info["max_work_group_size"] >= 32 and len(info["max_work_item_sizes"]) == 3
    assert info["local_memory"] == info["max_threadgroup_memory"] > 0
    assert info["memory"] == info["recommended_working_set"] > 0
    assert "fp64" not in info["features"]  # Metal has no double
    assert not metal.unified_memory  # see docs/metal.md: the core's flag means "any host pointer"
    assert info["arch"] == "metal " + info["gpu_family"]


def test_cli_info_marks_the_double(metal, metal_env):
    if not _is_double(metal):
        pytest.skip("only the test double is marked as simulated")
    proc = subprocess.run([sys.executable, "-m", "dotcompute", "info", "--json"], capture_output=True, text=True,
                          env={**os.environ, **metal_env}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    (b,) = [b for b in report["backends"] if b["name"] == "metal"]
    assert b["available"] and b.get("simulated", True)  # the "simulated" column is newer than this test
    (d,) = [d for d in report["devices"] if d["id"] == "metal:0"]
    assert "test double" in d["name"].lower()
    text = subprocess.run([sys.executable, "-m", "dotcompute", "info"], capture_output=True, text=True,
                          env={**os.environ, **metal_env}, timeout=300).stdout
    assert "Metal test double" in text
    assert "host_visible_memory" in text  # the feature is shown where users look


def test_buffers_round_trip_and_fill(metal):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    b = metal.asarray(x)
    assert b.accelerator is metal and b.shape == (4, 6)
    np.testing.assert_array_equal(b.numpy(), x)
    b.copy_from(x * 2)
    out = np.empty_like(x)
    b.copy_to(out)
    np.testing.assert_array_equal(out, x * 2)
    assert metal.zeros((1000,), np.int64).numpy().sum() == 0
    with b.host() as h:
        h[1, 2] = -5.0
    assert b.numpy()[1, 2] == -5.0


def test_raw_msl_kernel_on_buffers_and_numpy(metal, vadd):
    n = 1000  # not a multiple of any threadgroup size: dispatchThreads' non-uniform groups
    a = np.linspace(-1, 1, n, dtype=np.float32)
    b = np.full(n, 0.25, np.float32)
    da, db, dout = metal.asarray(a), metal.asarray(b), metal.empty((n,), np.float32)
    dc.launch(vadd, n, da, db, dout, np.float32(3.0), n, accelerator=metal)
    metal.synchronize()
    np.testing.assert_allclose(dout.numpy(), a * 3.0 + 0.25, rtol=1e-6)
    out = np.zeros(n, np.float32)
    dc.launch(vadd, n, a, b, out, np.float32(-1.0), n, accelerator=metal, local_size=64)
    np.testing.assert_allclose(out, b - a, rtol=1e-6)


def test_language_kernel_matches_numpy(metal):
    @dc.kernel
    def saxpy(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = a * x[i] + y[i]

    rng = np.random.default_rng(0)
    x = rng.standard_normal(777).astype(np.float32)
    y = rng.standard_normal(777).astype(np.float32)
    out = np.zeros_like(x)
    dc.launch(saxpy, x.size, 2.5, x, y, out, accelerator=metal)
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6)


def test_2d_kernel_with_ints_and_floor_division(metal):
    @dc.kernel
    def grid(out: dc.Buffer[dc.int32, 2]):
        i = dc.global_id(0)
        j = dc.global_id(1)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = (i - 7) // 3 * 100 + (j - 5) % 4

    out = np.zeros((13, 11), np.int32)
    dc.launch(grid, out.shape, out, accelerator=metal)
    i, j = np.indices(out.shape)
    np.testing.assert_array_equal(out, (i - 7) // 3 * 100 + (j - 5) % 4)


def test_threadgroup_memory_and_barriers(metal):
    @dc.kernel
    def block_sum(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        tile = dc.shared((32,), dc.float32)
        lid = dc.local_id(0)
        tile[lid] = x[dc.global_id(0)]
        dc.barrier()
        step = 16
        while step > 0:
            if lid < step:
                tile[lid] += tile[lid + step]
            dc.barrier()
            step //= 2
        if lid == 0:
            out[dc.group_id(0)] = tile[0]

    x = np.arange(128, dtype=np.float32)
    out = np.zeros(4, np.float32)
    dc.launch(block_sum, 128, x, out, local_size=32, accelerator=metal)
    np.testing.assert_allclose(out, x.reshape(4, 32).sum(axis=1))


def test_atomics(metal):
    @dc.kernel
    def histogram(values: dc.Buffer[dc.int32], bins: dc.Buffer[dc.int32]):
        i = dc.global_id(0)
        if i < values.shape[0]:
            dc.atomic_add(bins, values[i] % bins.shape[0], 1)

    values = np.arange(1000, dtype=np.int32)
    bins = np.zeros(7, np.int32)
    dc.launch(histogram, values.size, values, bins, accelerator=metal)
    np.testing.assert_array_equal(bins, np.bincount(values % 7, minlength=7))


def test_float64_is_refused_naming_the_parameter(metal):
    @dc.kernel
    def twice(xs: dc.Buffer[dc.float64]):
        i = dc.global_id(0)
        xs[i] = xs[i] * 2.0

    with pytest.raises(dc.KernelTypeError) as err:
        dc.launch(twice, 4, np.ones(4), accelerator=metal)
    assert "xs" in str(err.value) or "float64" in str(err.value)


def test_compilation_error_carries_the_compiler_log(metal):
    source = ("#include <metal_stdlib>\nusing namespace metal;\n"
              "kernel void broken(device float* x [[buffer(0)]]) {\n  x[0] = not_declared_anywhere;\n}\n")
    k = dc.RawKernel(source, "broken", backend="metal")
    with pytest.raises(dc.CompilationError) as err:
        dc.launch(k, 1, metal.zeros((1,), np.float32), accelerator=metal)
    assert "not_declared_anywhere" in err.value.log
    assert ":4:" in err.value.log  # the line of the mistake
    assert err.value.source == source


def test_missing_kernel_name_is_reported(metal):
    k = dc.RawKernel(VADD, "no_such_kernel", backend="metal")
    with pytest.raises(dc.DotComputeError) as err:
        dc.launch(k, 1, metal.zeros((1,), np.float32), accelerator=metal)
    assert "no_such_kernel" in str(err.value)


def test_command_buffer_error_is_a_launch_error(metal):
    if not _is_double(metal):
        pytest.skip("a kernel that faults on purpose is only run on the test double")
    # a barrier that half of the group never reaches: the double's command buffer fails
    source = ("#include <metal_stdlib>\nusing namespace metal;\n"
              "kernel void diverge(device float* x [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {\n"
              "  if (l < 2) threadgroup_barrier(mem_flags::mem_threadgroup);\n  x[l] = 1.0f;\n}\n")
    k = dc.RawKernel(source, "diverge", backend="metal")
    buf = metal.zeros((4,), np.float32)
    with pytest.raises(dc.LaunchError) as err:
        dc.launch(k, 4, buf, local_size=4, accelerator=metal)
        metal.synchronize()
    assert "command buffer" in str(err.value) and "barrier" in str(err.value)
    # the stream is usable afterwards
    metal.synchronize()
    assert buf.numpy().shape == (4,)


def test_threadgroup_over_the_limit_is_a_launch_error(metal, vadd):
    too_big = metal.info["max_work_group_size"] * 2
    a = metal.zeros((too_big,), np.float32)
    with pytest.raises(dc.LaunchError) as err:
        dc.launch(vadd, too_big, a, a, a, np.float32(1.0), too_big, accelerator=metal, local_size=too_big)
    assert str(too_big) in str(err.value)


def test_events_time_work_on_a_stream(metal, vadd):
    s = metal.stream()
    n = 1 << 14
    a = metal.asarray(np.ones(n, np.float32))
    out = metal.empty((n,), np.float32)
    start = s.record()
    dc.launch(vadd, n, a, a, out, np.float32(2.0), n, accelerator=metal, stream=s)
    end = s.record()
    end.synchronize()
    assert end.query() and start.query()
    assert start.elapsed(end) >= 0.0
    assert (out.numpy() == 3.0).all()


def test_stream_waits_for_another_streams_event(metal, vadd):
    producer, consumer = metal.stream(), metal.stream()
    n = 4096
    a = metal.asarray(np.arange(n, dtype=np.float32))
    mid = metal.empty((n,), np.float32)
    out = metal.empty((n,), np.float32)
    dc.launch(vadd, n, a, a, mid, np.float32(1.0), n, accelerator=metal, stream=producer)
    consumer.wait(producer.record())
    dc.launch(vadd, n, mid, a, out, np.float32(1.0), n, accelerator=metal, stream=consumer)
    consumer.synchronize()
    np.testing.assert_array_equal(out.numpy(), 3 * np.arange(n, dtype=np.float32))


def test_allocation_beyond_the_device_is_out_of_memory(metal):
    too_big = metal.info["max_buffer_length"] * 4
    with pytest.raises(dc.OutOfMemoryError):
        metal.empty((too_big,), np.uint8)
    assert metal.zeros((16,), np.float32).numpy().sum() == 0  # still usable


def test_compiled_kernels_come_from_the_disk_cache_in_a_new_process(metal, metal_env, run_python, tmp_cache):
    code = (
        "import numpy as np, dotcompute as dc\n"
        f"k = dc.RawKernel({VADD!r}, 'vadd_scaled', backend='metal')\n"
        "acc = dc.accelerator('metal')\n"
        "a = np.ones(10, np.float32); out = np.zeros(10, np.float32)\n"
        "dc.launch(k, 10, a, a, out, np.float32(2.0), 10, accelerator=acc)\n"
        "assert (out == 3).all(), out\n"
        "print(dc.runtime.cache_info())\n"
    )
    for _ in range(2):
        proc = run_python(code, env={**metal_env, "DOTCOMPUTE_CACHE_DIR": str(tmp_cache)})
        assert proc.returncode == 0, proc.stderr
    assert any(tmp_cache.rglob("*")), "the kernel cache stayed empty"


def test_real_gpu_timing_needs_apple_hardware(metal):
    if _is_double(metal):
        pytest.skip("needs an Apple GPU: the test double times command buffers with the host clock")
    s = metal.stream()
    a, b = s.record(), s.record()
    b.synchronize()
    assert a.elapsed(b) >= 0.0


def test_launches_from_several_threads(metal, vadd):
    import threading

    n = 512
    errors: list[BaseException] = []
    results: dict[int, np.ndarray] = {}

    def work(t: int) -> None:
        try:
            s = metal.stream()
            a = metal.asarray(np.full(n, float(t), np.float32))
            out = metal.empty((n,), np.float32)
            for _ in range(3):
                dc.launch(vadd, n, a, a, out, np.float32(2.0), n, accelerator=metal, stream=s)
            s.synchronize()
            results[t] = out.numpy()
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t, out in results.items():
        assert (out == 3.0 * t).all(), t


def test_family_without_nonuniform_threadgroups_uses_dispatch_threadgroups(metal, metal_env, run_python):
    if not _is_double(metal):
        pytest.skip("the GPU family is chosen through the test double's DC_METAL_DOUBLE_NONUNIFORM")
    code = (
        "import numpy as np, dotcompute as dc\n"
        f"k = dc.RawKernel({VADD!r}, 'vadd_scaled', backend='metal')\n"
        "acc = dc.accelerator('metal')\n"
        "assert acc.info['nonuniform_threadgroups'] is False, acc.info\n"
        "n = 1000\n"
        "a = np.arange(n, dtype=np.float32); out = np.zeros(n, np.float32)\n"
        "dc.launch(k, n, a, a, out, np.float32(2.0), n, accelerator=acc)  # the plugin picks a dividing group\n"
        "assert (out == 3 * a).all()\n"
        "try:\n"
        "    dc.launch(k, n, a, a, out, np.float32(2.0), n, accelerator=acc, local_size=64)\n"
        "except dc.DotComputeError as e:\n"
        "    assert 'non-uniform' in str(e), e\n"
        "    print('refused')\n"
    )
    proc = run_python(code, env={**metal_env, "DC_METAL_DOUBLE_NONUNIFORM": "0"})
    assert proc.returncode == 0, proc.stderr
    assert "refused" in proc.stdout


def test_plugin_unloads_and_reloads_when_nothing_of_it_is_alive(metal, metal_env, run_python):
    code = (
        "import gc, numpy as np, dotcompute as dc\n"
        f"k = dc.RawKernel({VADD!r}, 'vadd_scaled', backend='metal')\n"
        "def use():\n"
        "    acc = dc.accelerator('metal')\n"
        "    a = acc.asarray(np.ones(8, np.float32)); out = acc.empty((8,), np.float32)\n"
        "    dc.launch(k, 8, a, a, out, np.float32(1.0), 8, accelerator=acc)\n"
        "    assert (out.numpy() == 2).all()\n"
        "use()\n"
        "del k; gc.collect()\n"
        "dc.runtime.unload_plugin('metal')  # shutdown() of the plugin\n"
        "assert not [b for b in dc.backends() if b.name == 'metal' and b.available]\n"
        "print('unloaded')\n"
    )
    proc = run_python(code, env=metal_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "unloaded" in proc.stdout
