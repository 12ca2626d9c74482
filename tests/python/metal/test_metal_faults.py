"""Kernels that go wrong on metal:0: a fault is a ``LaunchError`` and the interpreter lives on;
threadgroup memory belongs to one dispatch (two streams running the same kernel do not share it)
and starts out as garbage; SIMD-group functions do not synchronise other SIMD-groups."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

HEAD = "#include <metal_stdlib>\nusing namespace metal;\n"

FAULTS = """
kernel void far_write(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[(ulong(1) << 46) + i] = 1.0f;  // far outside any allocation
}
kernel void big_frame(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  volatile float scratch[16 * 1024 * 1024];  // 64 MiB of per-thread memory: no GPU gives that
  scratch[i] = 1.0f;
  out[i] = scratch[i];
}
kernel void big_frame_barrier(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  volatile float scratch[1024 * 1024];
  scratch[i] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = scratch[i];
}
kernel void tg_overrun(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[i * 8192 + 8192] = 1.0f;  // past the device's 32 KiB of threadgroup memory
  out[i] = t[i];
}
kernel void divide(device const int* a [[buffer(0)]], device int* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
  out[i] = 100 / a[i];
}
"""


def _is_double(acc: dc.Accelerator) -> bool:
    return bool(acc.info.get("test_double"))


@pytest.mark.parametrize("name", ["far_write", "big_frame", "big_frame_barrier", "tg_overrun"])
def test_faults_are_launch_errors_and_the_device_stays_usable(metal, name):
    if not _is_double(metal):
        pytest.skip("faulting on purpose is only done on the test double")
    k = dc.RawKernel(HEAD + FAULTS, name, backend="metal")
    out = metal.zeros((4,), np.float32)
    with pytest.raises(dc.LaunchError) as err:
        dc.launch(k, 4, out, local_size=4, accelerator=metal)
        metal.synchronize()
    assert "illegal memory access" in str(err.value)
    ok = dc.RawKernel(HEAD + "kernel void one(device float* o, uint i [[thread_position_in_grid]]) { o[i] = 1; }",
                      "one", backend="metal")
    dc.launch(ok, 4, out, accelerator=metal)
    np.testing.assert_array_equal(out.numpy(), np.ones(4, np.float32))


def test_integer_division_by_zero_is_a_launch_error(metal):
    if not _is_double(metal):
        pytest.skip("on a GPU this is an undefined value, not a fault")
    k = dc.RawKernel(HEAD + FAULTS, "divide", backend="metal")
    a = np.array([1, 2, 0, 4], np.int32)
    with pytest.raises(dc.LaunchError, match="arithmetic fault"):
        dc.launch(k, 4, a, np.zeros(4, np.int32), accelerator=metal)
        metal.synchronize()


# Each threadgroup accumulates its own input through threadgroup memory for many rounds, with a
# barrier between writing and reading. One copy of the memory for every dispatch (as when it was
# a static array) lets two queues running this kernel at once overwrite each other's partial sums.
ROUNDS = """
kernel void rounds(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                   constant uint& reps [[buffer(2)]],
                   uint gid [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]],
                   uint n [[threads_per_threadgroup]]) {
  threadgroup float acc[64];
  acc[lid] = 0.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint r = 0; r < reps; ++r) {
    float mine = acc[(lid + 1) % n] + in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    acc[lid] = mine;
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  out[gid] = acc[lid];
}
"""


def test_two_streams_running_one_kernel_do_not_share_threadgroup_memory(metal):
    k = dc.RawKernel(HEAD + ROUNDS, "rounds", backend="metal")
    n, reps = 256, 200
    streams = [metal.stream(), metal.stream()]
    inputs = [metal.asarray(np.full(n, 1.0, np.float32)), metal.asarray(np.full(n, 1000.0, np.float32))]
    outs = [metal.empty((n,), np.float32) for _ in streams]
    for _ in range(3):
        for s, x, o in zip(streams, inputs, outs, strict=True):
            dc.launch(k, n, x, o, np.uint32(reps), accelerator=metal, local_size=64, stream=s)
    for s in streams:
        s.synchronize()
    # every item adds its input once per round to a neighbour's running sum: reps * input
    np.testing.assert_array_equal(outs[0].numpy(), np.full(n, reps * 1.0, np.float32))
    np.testing.assert_array_equal(outs[1].numpy(), np.full(n, reps * 1000.0, np.float32))


UNINIT = """
kernel void uninit(device uint* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup uint t[64];
  if (lid == 0) t[0] = 5u;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = t[lid];
}

kernel void missing_barrier(device float* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float t[64];
  float s = simd_sum(1.0f);  // synchronises this SIMD-group only
  if (sg == 1) t[lid] = s;
  float again = simd_sum(s);
  out[lid] = sg == 0 ? t[lid + 32] : again;  // reads SIMD-group 1's writes without a threadgroup barrier
}
"""


def test_fresh_threadgroup_memory_is_garbage_and_simd_functions_do_not_order_simdgroups(metal):
    if not _is_double(metal):
        pytest.skip("the double's schedule makes these bugs visible; a GPU's is its own")
    out = np.zeros(64, np.uint32)
    dc.launch(dc.RawKernel(HEAD + UNINIT, "uninit", backend="metal"), 64, out, local_size=64, accelerator=metal)
    assert out[0] == 5 and (out[1:] == 0xFFFFFFFF).all()  # never written: the double's poison
    f = np.zeros(64, np.float32)
    dc.launch(dc.RawKernel(HEAD + UNINIT, "missing_barrier", backend="metal"), 64, f, local_size=64,
              accelerator=metal)
    assert (f[32:] == 32 * 32).all()
    assert np.isnan(f[:32]).all()  # SIMD-group 0 read before SIMD-group 1 wrote: the race shows


def test_an_expression_that_cannot_build_is_raised_once_and_the_device_stays_usable(metal):
    # a float64 overlap copy (b[1:] = b[:-1] reads b as it was) is a kernel Metal cannot build:
    # the assignment raises, and the copy it left pending (alive while the error's traceback is
    # kept, as pytest keeps a failed test's) must not fail every later synchronize
    b = metal.asarray(np.arange(8.0))
    with pytest.raises(dc.KernelTypeError, match="float64 is not available on Metal") as err:
        b[1:] = b[:-1]
    assert err.traceback
    metal.synchronize()
    dc.synchronize()
    out = metal.zeros((4,), np.float32)
    ok = dc.RawKernel(HEAD + "kernel void one(device float* o, uint i [[thread_position_in_grid]]) { o[i] = 1; }",
                      "one", backend="metal")
    dc.launch(ok, 4, out, accelerator=metal)
    metal.synchronize()
    np.testing.assert_array_equal(out.numpy(), np.ones(4, np.float32))
