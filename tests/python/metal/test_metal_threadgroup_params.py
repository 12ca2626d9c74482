"""Raw MSL kernels taking threadgroup memory as a parameter (``threadgroup T* [[threadgroup(0)]]``, as
ggml's reductions do), sized from Python with ``dc.RawKernel(..., backend="metal", shared_mem=bytes)``:
the plugin sets ``setThreadgroupMemoryLength:atIndex:0``, which the double honours (issue 23). Results
against numpy on metal:0; the refusals (no length, another index, more than the device holds) by name.
"""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

# a per-threadgroup sum through a threadgroup scratch buffer, tree-reduced with barriers
BLOCK_SUM = r"""
#include <metal_stdlib>
using namespace metal;

kernel void block_sum(device const float* src [[buffer(0)]],
                      device float* dst [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      threadgroup float* scratch [[threadgroup(0)]],
                      uint gid [[thread_position_in_grid]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint tg [[threadgroup_position_in_grid]],
                      uint ntg [[threads_per_threadgroup]]) {
    scratch[tid] = gid < n ? src[gid] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = ntg / 2; s > 0; s >>= 1) {
        if (tid < s) scratch[tid] += scratch[tid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) dst[tg] = scratch[0];
}

// the same without the attribute: Metal gives it the first free threadgroup index, 0
kernel void block_max(device const float* src, device float* dst, threadgroup float* scratch,
                      uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                      uint tg [[threadgroup_position_in_grid]], uint ntg [[threads_per_threadgroup]]) {
    scratch[tid] = src[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = ntg / 2; s > 0; s >>= 1) {
        if (tid < s) scratch[tid] = max(scratch[tid], scratch[tid + s]);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) dst[tg] = scratch[0];
}

kernel void two_buffers(device float* dst [[buffer(0)]],
                        threadgroup float* a [[threadgroup(0)]],
                        threadgroup int* b [[threadgroup(1)]],
                        uint tid [[thread_index_in_threadgroup]]) {
    a[tid] = 1.0f;
    b[tid] = 2;
    dst[tid] = a[tid] + b[tid];
}

kernel void plain(device float* dst [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    dst[gid] = 1.0f;
}
"""


@pytest.mark.parametrize("group", [32, 128])
def test_shared_mem_sizes_the_threadgroup_parameter(metal, group):
    rng = np.random.default_rng(group)
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    groups = -(-n // group)
    k = dc.RawKernel(BLOCK_SUM, "block_sum", backend="metal", shared_mem=group * 4)
    out = metal.zeros((groups,), np.float32)
    metal.launch(k, groups * group, metal.asarray(x), out, np.uint32(n), local_size=group)
    padded = np.zeros(groups * group, np.float32)
    padded[:n] = x
    np.testing.assert_allclose(out.numpy(), padded.reshape(groups, group).sum(axis=1), rtol=1e-5, atol=1e-5)


def test_threadgroup_parameter_without_attribute_is_index_0(metal):
    x = np.arange(256, dtype=np.float32)[::-1].copy()
    k = dc.RawKernel(BLOCK_SUM, "block_max", backend="metal", shared_mem=64 * 4)
    out = metal.zeros((4,), np.float32)
    metal.launch(k, 256, metal.asarray(x), out, local_size=64)
    np.testing.assert_array_equal(out.numpy(), x.reshape(4, 64).max(axis=1))


def test_refusals_name_the_parameter():
    takes = r"block_sum.*takes `threadgroup float\* scratch \[\[threadgroup\(0\)\]\]`.*shared_mem="
    with pytest.raises(ValueError, match=takes):
        dc.RawKernel(BLOCK_SUM, "block_sum", backend="metal")
    with pytest.raises(ValueError, match=r"threadgroup int\* b \[\[threadgroup\(1\)\]\] are not at index 0"):
        dc.RawKernel(BLOCK_SUM, "two_buffers", backend="metal", shared_mem=64)
    with pytest.raises(ValueError, match=r"shared_mem=64 sizes .* this kernel has none"):
        dc.RawKernel(BLOCK_SUM, "plain", backend="metal", shared_mem=64)
    with pytest.raises(ValueError, match=r"shared_mem .* is for CUDA and Metal kernels, not opencl"):
        dc.RawKernel("__kernel void f(__global float* x) {}", "f", backend="opencl", shared_mem=64)


def test_more_threadgroup_memory_than_the_device_holds_is_a_launch_error(metal):
    limit = metal.info["max_threadgroup_memory"]
    k = dc.RawKernel(BLOCK_SUM, "block_sum", backend="metal", shared_mem=limit + 16)
    out = metal.zeros((1,), np.float32)
    with pytest.raises(dc.LaunchError, match=rf"threadgroup memory .*exceed the device's {limit}"):
        metal.launch(k, 32, metal.zeros((32,), np.float32), out, np.uint32(32), local_size=32)
        metal.synchronize()
    # the queue stays usable
    k = dc.RawKernel(BLOCK_SUM, "block_sum", backend="metal", shared_mem=32 * 4)
    metal.launch(k, 32, metal.asarray(np.ones(32, np.float32)), out, np.uint32(32), local_size=32)
    assert out.numpy()[0] == 32.0
