"""acc.memory, dc.RawKernel, pool reuse under churn, and interpreter exit with live objects."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dotcompute as dc

MiB = 1 << 20


def test_stats_keys(accelerator):
    stats = accelerator.memory.stats()
    for key in ("in_use", "reserved", "peak", "hits", "misses"):
        assert isinstance(stats[key], int) and stats[key] >= 0, key
    assert stats["reserved"] >= stats["in_use"] and stats["peak"] >= stats["in_use"]


def test_in_use_follows_buffers_and_trim_lowers_reserved(accelerator):
    mem = accelerator.memory
    gc.collect()
    before = mem.stats()
    b = accelerator.empty(3 * MiB, np.uint8)
    during = mem.stats()
    assert during["in_use"] >= before["in_use"] + 3 * MiB
    del b
    gc.collect()
    after = mem.stats()
    assert after["in_use"] == before["in_use"]
    assert after["reserved"] >= after["in_use"] + 3 * MiB  # cached for reuse
    c = accelerator.empty(3 * MiB, np.uint8)
    assert mem.stats()["hits"] > after["hits"]  # served from the cache
    del c
    gc.collect()
    mem.trim()
    assert mem.stats()["reserved"] < after["reserved"]


def test_limit_gives_out_of_memory_with_sizes(accelerator):
    mem = accelerator.memory
    old = mem.limit
    try:
        mem.limit = mem.stats()["in_use"] + 2 * MiB
        with pytest.raises(dc.OutOfMemoryError) as info:
            accelerator.empty(8 * MiB, np.uint8)
        assert isinstance(info.value, MemoryError) and isinstance(info.value, dc.DotComputeError)
        message = str(info.value)
        assert accelerator.id in message and "8388608" in message and "limit" in message
    finally:
        mem.limit = old
    accelerator.empty(8 * MiB, np.uint8)


def test_impossible_allocation_is_out_of_memory(accelerator):
    with pytest.raises(MemoryError, match=accelerator.id):
        accelerator.empty(1 << 52, np.uint8)


def test_churn_of_small_buffers_reuses_the_pool(accelerator):
    mem = accelerator.memory
    for _ in range(100):  # warm the size class
        accelerator.zeros(16, np.float32)
    gc.collect()
    before = mem.stats()
    for i in range(10_000):
        b = accelerator.empty(16, np.float32)
        if i % 1000 == 0:
            b.copy_from(np.full(16, i, np.float32))
            assert b.numpy()[0] == i
    del b
    gc.collect()
    after = mem.stats()
    assert after["in_use"] == before["in_use"]
    assert after["reserved"] - before["reserved"] <= 64 * 1024
    assert after["hits"] - before["hits"] >= 9_900


VSCALE_CPU = r"""
#include <stdint.h>
#include "dotcompute/cpu_kernel_abi.h"
extern "C" void vscale(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  float* a = *(float* const*)launch->args[0];
  const float s = *(const float*)launch->args[1];
  const uint64_t n = launch->global_size[0], local = launch->local_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g)
    for (uint64_t i = g * local; i < (g + 1) * local && i < n; ++i) a[i] *= s;
}
"""

VSCALE_CL = """
__kernel void vscale(__global float* a, float s, long n) {
  size_t i = get_global_id(0);
  if (i < n) a[i] *= s;
}
"""


def test_raw_kernel_on_cpu_with_numpy_arrays():
    k = dc.RawKernel(VSCALE_CPU, "vscale", backend="cpu")
    a = np.arange(100, dtype=np.float32)
    dc.launch(k, 100, a, np.float32(3.0), accelerator="cpu")
    np.testing.assert_array_equal(a, 3 * np.arange(100, dtype=np.float32))
    buf = dc.accelerator("cpu").asarray(np.ones(50, np.float32))
    dc.accelerator("cpu").launch(k, 50, buf, np.float32(0.5), local_size=8)
    dc.accelerator("cpu").synchronize()
    assert (buf.numpy() == 0.5).all()
    assert "vscale" in repr(k)


def test_raw_kernel_on_opencl():
    if "opencl:0" not in {d.id for d in dc.devices()}:
        pytest.skip("no OpenCL device")
    k = dc.RawKernel(VSCALE_CL, "vscale", backend="opencl")
    a = np.arange(100, dtype=np.float32)
    dc.launch(k, 100, a, np.float32(2.0), 100, accelerator="opencl")
    np.testing.assert_array_equal(a, 2 * np.arange(100, dtype=np.float32))
    with pytest.raises(dc.LaunchError, match="cpu"):
        dc.launch(k, 100, a, np.float32(2.0), 100, accelerator="cpu")


@pytest.mark.parametrize(("backend", "source"), [
    ("cpu", 'extern "C" void broken(const void*) { not_declared_anywhere; }'),
    ("opencl", "__kernel void broken(__global float* a) { a[0] = not_declared_anywhere; }"),
])
def test_raw_kernel_compile_error(backend, source):
    if f"{backend}:0" not in {d.id for d in dc.devices()}:
        pytest.skip(f"no {backend} device")
    k = dc.RawKernel(source, "broken", backend=backend)
    with pytest.raises(dc.CompilationError) as info:
        dc.launch(k, 1, np.zeros(1, np.float32), accelerator=backend)
    assert "not_declared_anywhere" in info.value.log
    assert "not_declared_anywhere" in info.value.source
    assert "broken" in str(info.value)


def test_raw_kernel_constructor_checks():
    with pytest.raises(ValueError):
        dc.RawKernel("", "k")
    with pytest.raises(ValueError):
        dc.RawKernel("int x;", "not an identifier")
    with pytest.raises(ValueError, match="backend"):
        dc.RawKernel("int x;", "k", backend="gpu")


def test_exit_with_live_buffers_streams_and_pending_work(run_python, tmp_path):
    script = tmp_path / "live_at_exit.py"  # a file: kernels need their source text
    script.write_text("""
import numpy as np, dotcompute as dc

@dc.kernel
def add_one(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0

keep = []
for d in dc.devices():
    s = d.stream()
    b = d.zeros(1 << 16, np.float32)
    for _ in range(3):
        dc.launch(add_one, 1 << 16, b, accelerator=d, stream=s)
    keep += [s, b, s.record(), d.asarray(np.ones(10))]
    with d.zeros(4).host() as h:
        h[:] = 1
print("done")
""")
    result = run_python(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"


@pytest.mark.parametrize(("value", "exc"), [(-1, ValueError), (1.5, TypeError), ("1GB", TypeError), (True, TypeError)])
def test_limit_validation(accelerator, value, exc):
    old = accelerator.memory.limit
    with pytest.raises(exc, match="limit"):
        accelerator.memory.limit = value
    assert accelerator.memory.limit == old


def test_limit_accepts_numpy_ints_and_none(accelerator):
    mem = accelerator.memory
    old = mem.limit
    try:
        mem.limit = np.int64(1 << 40)
        assert mem.limit == 1 << 40
        mem.limit = None
        assert mem.limit is None
    finally:
        mem.limit = old


def test_failed_allocation_leaves_the_pool_as_it_was(accelerator):
    before = accelerator.memory.stats()
    with pytest.raises(dc.OutOfMemoryError):
        accelerator.empty(1 << 52, np.uint8)
    after = accelerator.memory.stats()
    # the pool releases its cached blocks before giving up, so reserved may drop but never grows
    assert after["in_use"] == before["in_use"] and after["reserved"] <= before["reserved"]
    accelerator.empty(1000, np.uint8)  # and still works


def test_host_views_outlive_the_buffer_object(accelerator):
    b = accelerator.asarray(np.arange(1000, dtype=np.float32))
    seen = np.asarray(b)
    with b.host() as h:
        pass
    del b
    gc.collect()
    for _ in range(4):  # would land in the freed block if the views did not keep it alive
        accelerator.asarray(np.full(1000, -5, np.float32))
    assert seen[:3].tolist() == [0, 1, 2] and h[:3].tolist() == [0, 1, 2]


def test_allocation_from_many_threads(accelerator):
    import threading

    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(1000):
                b = accelerator.empty(i % 50 + 1, np.float32)
                if i % 100 == 0:
                    b.copy_from(np.ones(b.shape, np.float32))
                    assert b.numpy().sum() == b.size
        except BaseException as e:  # noqa: BLE001 -- reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_public_types():
    acc = dc.accelerator("cpu")
    s = acc.stream()
    assert isinstance(acc, dc.Accelerator) and isinstance(acc.zeros(1), dc.Buffer)
    assert isinstance(s, dc.Stream) and isinstance(s.record(), dc.Event)
    assert acc.default_stream is acc.default_stream
    assert "in_use" in repr(acc.memory)


@dc.kernel
def add_one(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0


def test_churn_with_stream_work_stays_bounded(accelerator):
    """Blocks freed while a stream still uses them come back once it is done: reserved memory stays flat."""
    s = accelerator.stream()

    def churn(times: int) -> None:
        for i in range(times):
            b = accelerator.zeros(16, np.float32)
            if i % 4 == 0:
                dc.launch(add_one, 16, b, accelerator=accelerator, stream=s)
        s.synchronize()
        gc.collect()

    churn(500)
    first = accelerator.memory.stats()["reserved"]
    churn(3000)
    assert accelerator.memory.stats()["reserved"] - first <= 256 * 1024
