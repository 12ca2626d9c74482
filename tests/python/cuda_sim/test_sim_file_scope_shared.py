"""``__shared__`` variables declared at file scope are per block on the simulator, as function-scope
ones: poisoned (0xFF bytes) when a block first touches them, so nothing carries over from the block
that ran before on the same CPU thread, and bounded by the guard page after the static window.
Names that a macro could not stand for (declared again, used as a member) keep one copy per CPU
thread, and still run (docs/cuda-simulator.md, "Shared memory")."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

FILE_SCOPE = r"""
__shared__ float tile[64];
__shared__ int counter;

__device__ float from_tile(int i) { return tile[i]; }   // a device function sees the block's copy

extern "C" __global__ void first_touch(float* seen, int* count, float* out)
{
    const int t = threadIdx.x, b = blockIdx.x;
    seen[b * blockDim.x + t] = tile[t];          // before any write: this block's fresh memory
    if (t == 0) count[b] = counter;
    __syncthreads();
    tile[t] = (float)(b * 100 + t);
    if (t == 0) counter = b;
    __syncthreads();
    out[b * blockDim.x + t] = from_tile(blockDim.x - 1 - t) + (float)counter;
}

extern "C" __global__ void asserts(float* out)
{
    tile[threadIdx.x] = 1.0f;
    assert(tile[threadIdx.x] < 0.0f);
}

extern "C" __global__ void overrun(float* out, int far)
{
    tile[threadIdx.x] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) tile[far] = 2.0f;      // past the static window: the guard page
    out[threadIdx.x] = tile[threadIdx.x];
}
"""

SHADOWED = r"""
__shared__ float buf[32];

__device__ float twice(float buf) { return 2.0f * buf; }    // a parameter of the same name

extern "C" __global__ void shadowed(float* out)
{
    buf[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = twice(buf[31 - threadIdx.x]);
}
"""


def test_file_scope_shared_is_fresh_and_poisoned_per_block(sim):
    k = dc.RawKernel(FILE_SCOPE, "first_touch", backend="cuda")
    blocks, threads = 6, 64
    seen, count = sim.zeros((blocks * threads,), np.float32), sim.zeros((blocks,), np.int32)
    out = sim.zeros((blocks * threads,), np.float32)
    sim.launch(k, blocks * threads, seen, count, out, local_size=threads)
    assert np.isnan(seen.numpy()).all()  # 0xFF bytes, never the previous block's values
    assert (count.numpy() == -1).all()
    b, t = np.divmod(np.arange(blocks * threads), threads)
    np.testing.assert_array_equal(out.numpy(), b * 100 + (threads - 1 - t) + b)


def test_file_scope_shared_overrun_is_an_illegal_address(sim):
    k = dc.RawKernel(FILE_SCOPE, "overrun", backend="cuda")
    with pytest.raises(dc.LaunchError, match=r"CUDA_ERROR_ILLEGAL_ADDRESS.*static __shared__"):
        sim.launch(k, 32, sim.zeros((32,), np.float32), np.int32(64 + 16), local_size=32)
        sim.synchronize()


def test_assert_lines_are_the_sources_after_the_rewrite(sim):
    line = FILE_SCOPE.lstrip("\n").splitlines().index("    assert(tile[threadIdx.x] < 0.0f);") + 1
    k = dc.RawKernel(FILE_SCOPE.lstrip("\n"), "asserts", backend="cuda")
    with pytest.raises(dc.LaunchError, match=rf"CUDA_ERROR_ASSERT.*kernel.cu:{line}\)"):
        sim.launch(k, 32, sim.zeros((32,), np.float32), local_size=32)
        sim.synchronize()


def test_shadowed_file_scope_name_still_runs(sim):
    out = sim.zeros((32,), np.float32)
    sim.launch(dc.RawKernel(SHADOWED, "shadowed", backend="cuda"), 32, out, local_size=32)
    np.testing.assert_array_equal(out.numpy(), 2.0 * (31 - np.arange(32)))
