"""The simulator's schedules expose the races a GPU would show (DOTCOMPUTE_CUDA_SIM_SCHEDULE).

Each seeded bug below is a kernel that is right by luck under the default ``forward`` order (threads
of a block one after another, in index order, switching only at barriers) and wrong under another
schedule; the corrected kernel is right under every schedule.
"""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

SCHEDULES = ["forward", "reverse", "random", "random:7", "lockstep"]

MISSING_BARRIER = r"""
extern "C" __global__ void shift_racy(const float* x, float* y) {
  __shared__ float s[256];
  const unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * 256 + t];
  // BUG: no __syncthreads() here -- thread t reads what thread t-1 wrote
  y[blockIdx.x * 256 + t] = t > 0 ? s[t - 1] : 0.0f;
}
extern "C" __global__ void double_shift_racy(const float* x, float* y) {
  __shared__ float s[256];
  const unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * 256 + t];
  __syncthreads();
  s[t] *= 2.0f;
  // BUG: no __syncthreads() here either -- thread t-1 may not have doubled its value yet
  y[blockIdx.x * 256 + t] = t > 0 ? s[t - 1] : 0.0f;
}
extern "C" __global__ void shift_fixed(const float* x, float* y) {
  __shared__ float s[256];
  const unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * 256 + t];
  __syncthreads();
  y[blockIdx.x * 256 + t] = t > 0 ? s[t - 1] : 0.0f;
}
"""

# A warp-synchronous tree reduction into lane 31, relying on the lanes of a warp running in step:
# without __syncwarp() between the steps a lane may read a partial sum before its owner wrote it.
WARP_REDUCTION = r"""
extern "C" __global__ void warp_sum_racy(const float* x, float* out) {
  __shared__ float s[32];
  const unsigned lane = threadIdx.x;
  s[lane] = x[blockIdx.x * 32 + lane];
  for (unsigned off = 1; off < 32; off *= 2)
    if ((lane + 1) % (2 * off) == 0) s[lane] += s[lane - off];
  if (lane == 31) out[blockIdx.x] = s[31];
}
extern "C" __global__ void warp_sum_fixed(const float* x, float* out) {
  __shared__ float s[32];
  const unsigned lane = threadIdx.x;
  s[lane] = x[blockIdx.x * 32 + lane];
  __syncwarp();
  for (unsigned off = 1; off < 32; off *= 2) {
    if ((lane + 1) % (2 * off) == 0) s[lane] += s[lane - off];
    __syncwarp();
  }
  if (lane == 31) out[blockIdx.x] = s[31];
}
"""

# Two warps exchange data with only __syncwarp() between the write and the read: right whenever
# every warp writes before any warp reads (forward, reverse, random), wrong when one warp runs ahead.
CROSS_WARP = r"""
extern "C" __global__ void swap_halves_racy(const float* x, float* y) {
  __shared__ float s[64];
  const unsigned t = threadIdx.x;
  s[t] = x[t];
  __syncwarp();  // BUG: orders the lanes of one warp only; __syncthreads() is needed
  y[t] = s[(t + 32) % 64];
}
extern "C" __global__ void swap_halves_fixed(const float* x, float* y) {
  __shared__ float s[64];
  const unsigned t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  y[t] = s[(t + 32) % 64];
}
"""

# Only block 0 fills the table: with shared memory carried over from block to block (one copy per
# OS thread, as the simulator had) the other blocks saw block 0's values and looked right.
UNINITIALISED = r"""
extern "C" __global__ void table_racy(float* y) {
  __shared__ float table[32];
  const unsigned t = threadIdx.x;
  if (blockIdx.x == 0) table[t] = 2.0f * t;  // BUG: every block must fill its own table
  __syncthreads();
  y[blockIdx.x * 32 + t] = table[t];
}
extern "C" __global__ void count_racy(const int* x, unsigned* out, int n) {
  __shared__ unsigned bins[8];
  // BUG: bins are never zeroed
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[x[i] & 7], 1u);
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&out[threadIdx.x], bins[threadIdx.x]);
}
"""


@pytest.fixture
def schedule(monkeypatch):
    """``schedule(name)`` sets DOTCOMPUTE_CUDA_SIM_SCHEDULE for the launches that follow."""
    return lambda name: monkeypatch.setenv("DOTCOMPUTE_CUDA_SIM_SCHEDULE", name)


def _shift(sim, name, xs):
    k = dc.RawKernel(MISSING_BARRIER, name, backend="cuda")
    y = sim.zeros(xs.shape, np.float32)
    sim.launch(k, xs.size, sim.asarray(xs), y, local_size=256)
    return y.numpy()


def test_a_missing_barrier_is_right_forward_and_wrong_reverse_and_random(sim, schedule):
    xs = np.arange(1, 513, dtype=np.float32)
    expected = np.concatenate([[0], xs[:255], [0], xs[256:511]]).astype(np.float32)
    schedule("forward")
    np.testing.assert_array_equal(_shift(sim, "shift_racy", xs), expected)
    for name in ("reverse", "random:3"):
        schedule(name)
        got = _shift(sim, "shift_racy", xs)
        assert not np.array_equal(got, expected), name
        # what the reader saw is the poison of fresh shared memory (0xFF bytes: NaN)
        assert np.isnan(got).any(), name


@pytest.mark.parametrize("name", SCHEDULES)
def test_the_fixed_barrier_kernel_is_right_in_every_schedule(sim, schedule, name):
    xs = np.arange(1, 513, dtype=np.float32)
    expected = np.concatenate([[0], xs[:255], [0], xs[256:511]]).astype(np.float32)
    schedule(name)
    np.testing.assert_array_equal(_shift(sim, "shift_fixed", xs), expected)


def _warp_sum(sim, name, xs):
    k = dc.RawKernel(WARP_REDUCTION, name, backend="cuda")
    out = sim.zeros((xs.size // 32,), np.float32)
    sim.launch(k, xs.size, sim.asarray(xs), out, local_size=32)
    return out.numpy()


def test_a_warp_reduction_without_syncwarp_is_exposed(sim, schedule):
    xs = np.arange(128, dtype=np.float32)  # small integers: every order sums them exactly
    expected = xs.reshape(4, 32).sum(axis=1)
    schedule("forward")
    np.testing.assert_array_equal(_warp_sum(sim, "warp_sum_racy", xs), expected)
    for name in ("reverse", "random:11"):
        schedule(name)
        assert not np.array_equal(_warp_sum(sim, "warp_sum_racy", xs), expected), name
    for name in SCHEDULES:
        schedule(name)
        np.testing.assert_array_equal(_warp_sum(sim, "warp_sum_fixed", xs), expected, err_msg=name)


def test_threads_run_in_schedule_order_between_barriers(sim, schedule):
    # with a barrier in the kernel every thread is a fiber; the schedule orders each barrier interval
    xs = np.arange(1, 513, dtype=np.float32)
    doubled = 2 * np.concatenate([[0], xs[:255], [0], xs[256:511]]).astype(np.float32)
    schedule("forward")
    np.testing.assert_array_equal(_shift(sim, "double_shift_racy", xs), doubled)
    schedule("reverse")  # every reader runs before its neighbour doubled: the undoubled values
    np.testing.assert_array_equal(_shift(sim, "double_shift_racy", xs), doubled / 2)
    runs = []
    for seed in (9, 9, 10):
        schedule(f"random:{seed}")
        runs.append(_shift(sim, "double_shift_racy", xs))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])
    stale = runs[0] != doubled
    assert stale.any() and (runs[0][stale] == doubled[stale] / 2).all()


def test_random_is_deterministic_for_a_seed_and_differs_between_seeds(sim, schedule):
    xs = np.arange(1, 4097, dtype=np.float32)
    runs = {}
    for seed in (1, 1, 2):
        schedule(f"random:{seed}")
        runs.setdefault(seed, []).append(_shift(sim, "shift_racy", xs))
    np.testing.assert_array_equal(runs[1][0], runs[1][1])  # NaN positions and values alike
    assert not np.array_equal(np.isnan(runs[1][0]), np.isnan(runs[2][0]))


def test_lockstep_runs_a_warp_ahead_and_exposes_a_missing_block_barrier(sim, schedule):
    xs = np.arange(64, dtype=np.float32)
    expected = np.roll(xs, -32)

    def run(name):
        k = dc.RawKernel(CROSS_WARP, name, backend="cuda")
        y = sim.zeros((64,), np.float32)
        sim.launch(k, 64, sim.asarray(xs), y, local_size=64)
        return y.numpy()

    for name in ("forward", "reverse", "random:5"):
        schedule(name)
        np.testing.assert_array_equal(run("swap_halves_racy"), expected, err_msg=name)
    schedule("lockstep")
    got = run("swap_halves_racy")
    assert np.isnan(got[:32]).all()  # warp 0 read before warp 1 had written
    for name in SCHEDULES:
        schedule(name)
        np.testing.assert_array_equal(run("swap_halves_fixed"), expected, err_msg=name)


@pytest.mark.parametrize("name", ["forward", "reverse"])
def test_shared_memory_is_fresh_and_poisoned_in_every_block(sim, schedule, name):
    schedule(name)
    k = dc.RawKernel(UNINITIALISED, "table_racy", backend="cuda")
    y = sim.zeros((4 * 32,), np.float32)
    sim.launch(k, 4 * 32, y, local_size=32)
    got = y.numpy().reshape(4, 32)
    np.testing.assert_array_equal(got[0], 2.0 * np.arange(32, dtype=np.float32))
    assert np.isnan(got[1:]).all()  # blocks 1..3 never wrote their table: 0xFF bytes, not block 0's data

    x = np.arange(1000, dtype=np.int32)
    out = sim.zeros((8,), np.uint32)
    sim.launch(dc.RawKernel(UNINITIALISED, "count_racy", backend="cuda"), 1000, sim.asarray(x), out,
               np.int32(1000), local_size=128)
    right = np.bincount(x & 7, minlength=8).astype(np.uint32)
    # every block's bins started at 0xFFFFFFFF: each of the 8 blocks is off by one per bin
    np.testing.assert_array_equal(out.numpy(), right - np.uint32(8))


def test_a_bad_schedule_value_is_refused_by_name(sim, schedule):
    k = dc.RawKernel(MISSING_BARRIER, "shift_fixed", backend="cuda")
    x, y = sim.zeros((256,), np.float32), sim.zeros((256,), np.float32)
    for bad in ("sideways", "random:-1", "random:x"):
        schedule(bad)
        with pytest.raises(dc.DotComputeError, match="DOTCOMPUTE_CUDA_SIM_SCHEDULE"):
            sim.launch(k, 256, x, y, local_size=256)
            sim.synchronize()
