"""Grid groups on the CUDA simulator: ``cg::this_grid().sync()`` under a cooperative launch
(``dc.RawKernel(..., cooperative=True)``, cuLaunchCooperativeKernel), with every block resident at once.

The kernels are written as CUDA's cooperative-groups samples write them (a two-phase grid reduction
in the style of reductionMultiBlockCG; grid size taken from the occupancy API as its host code does)
and checked against numpy; also the driver's refusals: a grid that cannot be co-resident
(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, at exactly the bound cuOccupancyMaxActiveBlocksPerMultiprocessor
gives) and grid.sync() in a launch that was not cooperative.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc

GRID_REDUCE = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// one block's sum of sdata[0 .. blockDim.x) into sdata[0], through warp tiles
__device__ void reduceBlock(double *sdata, const cg::thread_block &cta)
{
    const unsigned int tid = cta.thread_rank();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    sdata[tid] = cg::reduce(tile32, sdata[tid], cg::plus<double>());
    cg::sync(cta);
    if (tid == 0) {
        double beta = 0.0;
        for (unsigned int i = 0; i < blockDim.x; i += tile32.size()) beta += sdata[i];
        sdata[0] = beta;
    }
    cg::sync(cta);
}

// pass 1: grid-stride partial sums, one per block; grid.sync(); pass 2: block 0 adds the partials;
// grid.sync(); pass 3: every thread scales its elements by the total (needs the second barrier)
extern "C" __global__ void normalise(const float *g_in, float *g_out, double *g_partial, unsigned int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    extern double __shared__ sdata[];

    sdata[block.thread_rank()] = 0;
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())
        sdata[block.thread_rank()] += g_in[i];
    cg::sync(block);
    reduceBlock(sdata, block);
    if (block.thread_rank() == 0) g_partial[blockIdx.x + 1] = sdata[0];

    grid.sync();
    if (grid.thread_rank() == 0) {
        double total = 0.0;
        for (unsigned int b = 1; b <= gridDim.x; b++) total += g_partial[b];
        g_partial[0] = total;
    }
    cg::sync(grid);

    const double total = g_partial[0];
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())
        g_out[i] = (float)(g_in[i] / total);
}

extern "C" __global__ void valid(int *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = cg::this_grid().is_valid() ? 1 : 2;
}

// each block's shared memory (static and dynamic) is its own and outlives the grid barrier
extern "C" __global__ void keeps_shared(int *out, int *poison, int overrun)
{
    __shared__ int s_static[64];
    extern __shared__ int s_dynamic[];
    const unsigned t = threadIdx.x, b = blockIdx.x;
    poison[b * blockDim.x + t] = s_dynamic[t];   // before any write: the block's fresh memory
    cg::this_thread_block().sync();
    s_static[t] = (int)(b * 1000 + t);
    s_dynamic[t] = (int)(b * 1000 + 500 + t);
    cg::this_grid().sync();
    out[2 * (b * blockDim.x + t)] = s_static[t];
    out[2 * (b * blockDim.x + t) + 1] = s_dynamic[t];
    if (overrun && b == 1 && t == 0) s_dynamic[blockDim.x + 16] = 1;   // into the guard page after it
}

// block 0 returns before the barrier the others wait at: on a GPU the grid hangs
extern "C" __global__ void missing_block(int *out)
{
    if (blockIdx.x == 0) return;
    cg::this_grid().sync();
    out[blockIdx.x] = 1;
}
"""


def _normalise(sim, n: int, blocks: int, threads: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.random(n, dtype=np.float32) + 0.5
    k = dc.RawKernel(GRID_REDUCE, "normalise", backend="cuda", shared_mem=threads * 8, cooperative=True)
    out = sim.zeros((n,), np.float32)
    partial = sim.zeros((blocks + 1,), np.float64)
    sim.launch(k, blocks * threads, sim.asarray(x), out, partial, np.uint32(n), local_size=threads)
    total = float(np.sum(x, dtype=np.float64))
    np.testing.assert_allclose(partial.numpy()[0], total, rtol=1e-12)
    np.testing.assert_allclose(partial.numpy()[1:].sum(), total, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), x / total, rtol=1e-6)


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:7", "lockstep"])
def test_grid_sync_two_phase_reduction_against_numpy(sim, monkeypatch, schedule):
    # read at every launch: blocks (and threads) run in this order between grid barriers
    monkeypatch.setenv("DOTCOMPUTE_CUDA_SIM_SCHEDULE", schedule)
    _normalise(sim, n=5000, blocks=6, threads=64, seed=1)


def test_grid_group_is_valid_only_in_cooperative_launches(sim):
    out = sim.zeros((128,), np.int32)
    sim.launch(dc.RawKernel(GRID_REDUCE, "valid", backend="cuda", cooperative=True), 128, out, local_size=32)
    assert (out.numpy() == 1).all()
    sim.launch(dc.RawKernel(GRID_REDUCE, "valid", backend="cuda"), 128, out, local_size=32)
    assert (out.numpy() == 2).all()


def test_grid_sync_without_cooperative_launch_fails(sim):
    k = dc.RawKernel(GRID_REDUCE, "normalise", backend="cuda", shared_mem=64 * 8)
    out, partial = sim.zeros((256,), np.float32), sim.zeros((5,), np.float64)
    with pytest.raises(dc.LaunchError, match=r"grid_group::sync\(\).*not cooperative.*cooperative=True"):
        sim.launch(k, 256, sim.asarray(np.ones(256, np.float32)), out, partial, np.uint32(256), local_size=64)
        sim.synchronize()
    # the context stays usable
    _normalise(sim, n=300, blocks=2, threads=32, seed=2)


def test_a_block_that_skips_grid_sync_is_a_deadlock_not_a_hang(sim):
    k = dc.RawKernel(GRID_REDUCE, "missing_block", backend="cuda", cooperative=True)
    with pytest.raises(dc.LaunchError, match=r"deadlocked at grid_group::sync\(\): block \(0, 0, 0\) ended"):
        sim.launch(k, 4 * 32, sim.zeros((4,), np.int32), local_size=32)
        sim.synchronize()


def test_resident_blocks_keep_their_own_shared_memory(sim):
    k = dc.RawKernel(GRID_REDUCE, "keeps_shared", backend="cuda", shared_mem=64 * 4, cooperative=True)
    out, poison = sim.zeros((4 * 64 * 2,), np.int32), sim.zeros((4 * 64,), np.int32)
    sim.launch(k, 4 * 64, out, poison, np.int32(0), local_size=64)
    b, t = np.divmod(np.arange(4 * 64), 64)
    got = out.numpy().reshape(-1, 2)
    np.testing.assert_array_equal(got[:, 0], b * 1000 + t)
    np.testing.assert_array_equal(got[:, 1], b * 1000 + 500 + t)
    assert (poison.numpy() == -1).all()  # 0xFF bytes: every block starts with poisoned shared memory
    with pytest.raises(dc.LaunchError, match=r"CUDA_ERROR_ILLEGAL_ADDRESS.*dynamic shared memory \(256 bytes"):
        sim.launch(k, 4 * 64, out, poison, np.int32(1), local_size=64)
        sim.synchronize()


def test_too_large_cooperative_grid_is_refused(sim):
    k = dc.RawKernel(GRID_REDUCE, "valid", backend="cuda", cooperative=True)
    # 1024-thread blocks: max_threads_per_multiprocessor // 1024 per multiprocessor
    resident = sim.info["multiprocessors"] * (sim.info["max_threads_per_multiprocessor"] // 1024)
    big = sim.zeros(((resident + 1) * 1024,), np.int32)
    with pytest.raises(dc.LaunchError, match=r"CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.*at most " + str(resident)):
        sim.launch(k, (resident + 1) * 1024, big, local_size=1024)


# In a fresh interpreter with a small simulated GPU (2 multiprocessors), the host code sizes the grid as
# reductionMultiBlockCG's does: cuOccupancyMaxActiveBlocksPerMultiprocessor x multiprocessors. That grid
# runs; one block more is CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; dynamic shared memory lowers the bound.
OCCUPANCY_SCRIPT = r"""
import ctypes, json, sys
import numpy as np
import dotcompute as dc

sys.path.insert(0, SUITE)
from test_sim_grid_sync import GRID_REDUCE

acc = dc.accelerator("cuda:0")
# the simulator the plugin loaded (same file, so the same handle and state)
with open("/proc/self/maps") as maps:
    path = next(line.split()[-1] for line in maps if line.rstrip().endswith("/libdotcompute_cuda_sim.so"))
lib = ctypes.CDLL(path)
P, c_int, c_void_p = ctypes.POINTER, ctypes.c_int, ctypes.c_void_p
ctx, image, size, log, mod, fn = c_void_p(), c_void_p(), ctypes.c_size_t(), ctypes.c_char_p(), c_void_p(), c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0 and lib.cuCtxSetCurrent(ctx) == 0
assert lib.dcsimBuildImage(GRID_REDUCE.encode(), b"", 90, None, ctypes.c_size_t(0), ctypes.byref(image),
                           ctypes.byref(size), ctypes.byref(log)) == 0
assert lib.cuModuleLoadData(ctypes.byref(mod), image) == 0
assert lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"normalise") == 0

def occupancy(threads, shared):
    blocks = c_int()
    assert lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), fn, threads,
                                                           ctypes.c_size_t(shared)) == 0
    return blocks.value

sms = acc.info["multiprocessors"]
out = {"sms": sms, "cases": []}
x = np.linspace(0.5, 1.5, 3000, dtype=np.float32)
for threads, shared in ((256, 256 * 8), (64, 60 * 1024)):
    per_sm = occupancy(threads, shared)
    blocks = sms * per_sm
    k = dc.RawKernel(GRID_REDUCE, "normalise", backend="cuda", shared_mem=shared, cooperative=True)
    y, partial = acc.zeros((x.size,), np.float32), acc.zeros((blocks + 2,), np.float64)
    acc.launch(k, blocks * threads, acc.asarray(x), y, partial, np.uint32(x.size), local_size=threads)
    ok = bool(np.allclose(y.numpy(), x / x.sum(dtype=np.float64), rtol=1e-6))
    try:
        acc.launch(k, (blocks + 1) * threads, acc.asarray(x), y, partial, np.uint32(x.size), local_size=threads)
        acc.synchronize()
        refused = ""
    except dc.LaunchError as e:
        refused = str(e)
    out["cases"].append({"threads": threads, "shared": shared, "per_sm": per_sm, "ok": ok, "refused": refused})
print(json.dumps(out))
"""


@pytest.mark.skipif(nvrtc_missing(), reason="NVRTC not installed (pip install 'dotcompute[cuda]')")
def test_occupancy_sized_grid_runs_and_one_more_block_is_refused(tmp_path):
    script = tmp_path / "occupancy.py"
    suite = os.path.dirname(os.path.abspath(__file__))
    script.write_text(f"SUITE = {suite!r}\n" + OCCUPANCY_SCRIPT)
    env = dict(os.environ, DOTCOMPUTE_CUDA_SIM="1", DOTCOMPUTE_CUDA_SIM_DEVICES="sms=2",
               DOTCOMPUTE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("DOTCOMPUTE_CUDA_SIM_SCHEDULE", None)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["sms"] == 2
    small, shared = result["cases"]
    # 2048 threads per multiprocessor / 256; then 228 KiB of shared memory per SM / (60 KiB + 1 KiB reserved)
    assert small["per_sm"] == 8 and shared["per_sm"] == 3
    for case in (small, shared):
        assert case["ok"], case
        assert "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE" in case["refused"], case
