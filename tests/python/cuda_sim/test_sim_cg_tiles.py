"""Cooperative groups on the simulated cuda:0 beyond warp tiles of scalars (issue 23): shuffles of
structs and ``double2``, tiles of 64..1024 threads with ``block_tile_memory``, ``cg::reduce`` and the
scans over them, and the features the simulator refuses (grid sync outside a cooperative launch,
textures) failing the launch with a message that names them. Results are checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc
from dotcompute.cuda import cuda_include_dirs

pytestmark = pytest.mark.skipif(not cuda_include_dirs() or nvrtc_missing(),
                                reason="CUDA's headers or NVRTC are not installed (pip install dotcompute[cuda])")

SHUFFLES = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

struct Pair { double sum; int count; int pad; };   // 16 bytes

// Each warp sums (value, 1) pairs with shfl_down of the 16-byte struct, and rotates a double2 by one
// lane with shfl.
extern "C" __global__ void struct_shuffles(const double* in, double* sums, int* counts, double2* rotated)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const unsigned int gi = blockIdx.x * blockDim.x + threadIdx.x;
    Pair p = {in[gi], 1, 0};
    for (int offset = 16; offset > 0; offset /= 2) {
        Pair other = warp.shfl_down(p, offset);
        p.sum += other.sum;
        p.count += other.count;
    }
    if (warp.thread_rank() == 0) {
        sums[gi / 32] = p.sum;
        counts[gi / 32] = p.count;
    }
    double2 v = make_double2(in[gi], -in[gi]);
    rotated[gi] = warp.shfl(v, (warp.thread_rank() + 1) % 32);
}
"""


def test_shuffles_move_structs_and_double2(sim):
    x = np.random.default_rng(11).random(256)
    k = dc.RawKernel(SHUFFLES, "struct_shuffles", backend="cuda")
    sums, counts = sim.zeros((8,), np.float64), sim.zeros((8,), np.int32)
    rotated = sim.zeros((256, 2), np.float64)
    sim.launch(k, 256, sim.asarray(x), sums, counts, rotated, local_size=128)
    np.testing.assert_allclose(sums.numpy(), x.reshape(8, 32).sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(counts.numpy(), np.full(8, 32))
    expect = np.roll(x.reshape(8, 32), -1, axis=1).reshape(-1)
    np.testing.assert_array_equal(rotated.numpy(), np.stack([expect, -expect], axis=1))


LARGE_TILES = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

// Tiles of TILE threads cut from 256-thread blocks (the CUDA 11 way, through block_tile_memory):
// each tile's sum and maximum, every thread's inclusive and exclusive prefix sums, a shuffle
// across warps, and the tile's votes. Section `s` of each output holds the results for one size.
template <unsigned int TILE>
__device__ void big_tile(cg::thread_block block, const int* in, int* sums, int* maxima, int* inclusive,
                         int* exclusive, int* mirrored, int* votes, unsigned int s)
{
    cg::thread_block_tile<TILE> tile = cg::tiled_partition<TILE>(block);
    const unsigned int n = gridDim.x * blockDim.x;
    const unsigned int gi = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = in[gi];
    const int sum = cg::reduce(tile, v, cg::plus<int>());
    const int m = cg::reduce(tile, v, cg::greater<int>());
    inclusive[s * n + gi] = cg::inclusive_scan(tile, v);
    exclusive[s * n + gi] = cg::exclusive_scan(tile, v, cg::plus<int>());
    mirrored[s * n + gi] = tile.shfl(v, TILE - 1 - tile.thread_rank());
    const int any = tile.any(v > 90), all = tile.all(v >= -100);
    tile.sync();
    if (tile.thread_rank() == 0) {
        const unsigned int t = s * (n / 64) + blockIdx.x * tile.meta_group_size() + tile.meta_group_rank();
        sums[t] = sum;
        maxima[t] = m;
        votes[t] = any | (all << 1);
    }
}

extern "C" __global__ void big_tiles(const int* in, int* sums, int* maxima, int* inclusive, int* exclusive,
                                     int* mirrored, int* votes)
{
    __shared__ cg::block_tile_memory<256> scratch;
    cg::thread_block block = cg::this_thread_block(scratch);
    big_tile<64>(block, in, sums, maxima, inclusive, exclusive, mirrored, votes, 0);
    big_tile<128>(block, in, sums, maxima, inclusive, exclusive, mirrored, votes, 1);
    big_tile<256>(block, in, sums, maxima, inclusive, exclusive, mirrored, votes, 2);
}
"""


def test_tiles_larger_than_a_warp(sim):
    n, sizes = 512, (64, 128, 256)
    x = np.random.default_rng(12).integers(-100, 100, n).astype(np.int32)
    k = dc.RawKernel(LARGE_TILES, "big_tiles", backend="cuda")
    sums, maxima, votes = (sim.zeros((3, n // 64), np.int32) for _ in range(3))
    inclusive, exclusive, mirrored = (sim.zeros((3, n), np.int32) for _ in range(3))
    sim.launch(k, n, sim.asarray(x), sums, maxima, inclusive, exclusive, mirrored, votes, local_size=256)
    for s, tile in enumerate(sizes):
        nt = n // tile
        tiles = x.reshape(nt, tile)
        np.testing.assert_array_equal(sums.numpy()[s, :nt], tiles.sum(axis=1))
        np.testing.assert_array_equal(maxima.numpy()[s, :nt], tiles.max(axis=1))
        np.testing.assert_array_equal(inclusive.numpy()[s], np.cumsum(tiles, axis=1).reshape(-1))
        np.testing.assert_array_equal(exclusive.numpy()[s], (np.cumsum(tiles, axis=1) - tiles).reshape(-1))
        np.testing.assert_array_equal(mirrored.numpy()[s], tiles[:, ::-1].reshape(-1))
        np.testing.assert_array_equal(votes.numpy()[s, :nt], (tiles > 90).any(axis=1) | 2)


REFUSED = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_wide(int* out)
{
    cg::grid_group grid = cg::this_grid();
    out[grid.thread_rank()] = (int)grid.size();
    grid.sync();
}

extern "C" __global__ void fetches(cudaTextureObject_t tex, float* out)
{
    out[threadIdx.x] = tex1Dfetch<float>(tex, threadIdx.x);
}

// in the same file: runs although its neighbours cannot
extern "C" __global__ void plain(int* out) { out[threadIdx.x] = threadIdx.x; }
"""


def test_grid_sync_and_textures_fail_the_launch_by_name(sim):
    out = sim.zeros((64,), np.int32)
    # grid.sync() needs a cooperative launch (test_sim_grid_sync.py runs it under one)
    with pytest.raises(dc.LaunchError, match=r"grid_group::sync\(\).*launch that was not cooperative"):
        sim.launch(dc.RawKernel(REFUSED, "grid_wide", backend="cuda"), 64, out, local_size=32)
        sim.synchronize()
    # a handle that no cuTexObjectCreate made (test_textures.py reads real texture objects)
    with pytest.raises(dc.LaunchError, match=r"tex1Dfetch: the handle is not a live texture object"):
        sim.launch(dc.RawKernel(REFUSED, "fetches", backend="cuda"), 32, np.uint64(0),
                   sim.zeros((32,), np.float32), local_size=32)
        sim.synchronize()
    sim.launch(dc.RawKernel(REFUSED, "plain", backend="cuda"), 64, out, local_size=64)
    np.testing.assert_array_equal(out.numpy(), np.arange(64))


GRID_RANKS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_ranks(unsigned long long* rank, unsigned long long* size)
{
    cg::grid_group grid = cg::this_grid();
    rank[grid.thread_rank()] = grid.thread_rank() * 1000 + grid.block_rank();
    if (grid.thread_rank() == 0) size[0] = grid.size() * 1000 + grid.num_blocks();
}
"""


def test_cooperative_launch_runs_or_refuses_as_the_driver(sim):
    k = dc.RawKernel(GRID_RANKS, "grid_ranks", backend="cuda", cooperative=True)
    assert k.cooperative
    rank, size = sim.zeros((512,), np.uint64), sim.zeros((1,), np.uint64)
    sim.launch(k, 512, rank, size, local_size=64)  # 8 blocks: resident at once
    t = np.arange(512, dtype=np.uint64)
    np.testing.assert_array_equal(rank.numpy(), t * 1000 + t // 64)
    assert size.numpy()[0] == 512 * 1000 + 8
    # the driver's bound: as many blocks as the multiprocessors hold at once (threads per SM / block)
    resident = sim.info["multiprocessors"] * max(1, sim.info["max_threads_per_multiprocessor"] // 1024)
    big = sim.zeros(((resident + 1) * 1024,), np.uint64)
    with pytest.raises(dc.LaunchError, match="CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"):
        sim.launch(k, (resident + 1) * 1024, big, size, local_size=1024)
    with pytest.raises(ValueError, match="cooperative launches.*for CUDA kernels"):
        dc.RawKernel("void f() {}", "f", backend="cpu", cooperative=True)
