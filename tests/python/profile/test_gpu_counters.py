"""GPU-model counters of the CUDA simulator (issue 24): kernels whose counts are known by
construction, run on the simulated cuda:0 with DOTCOMPUTE_CUDA_SIM_COUNTERS=1 in a subprocess
(both variables are read when the runtime starts), and the device model's arithmetic."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dotcompute.profile import gpu_model

HERE = Path(__file__).resolve().parent


def _nvrtc_missing() -> bool:
    import dotcompute.cuda as dcuda

    return dcuda.nvrtc_library_path() is None


@pytest.fixture(scope="module")
def cases() -> dict:
    if shutil.which("clang++") is None:
        pytest.skip("counters need clang++ (Debian/Ubuntu package clang)")
    if _nvrtc_missing():
        pytest.skip("NVRTC not installed (pip install 'dotcompute[cuda]')")
    env = dict(os.environ, DOTCOMPUTE_CUDA_SIM="1", DOTCOMPUTE_CUDA_SIM_COUNTERS="1")
    env.pop("DOTCOMPUTE_CUDA_SIM_DEVICES", None)
    env.pop("DOTCOMPUTE_CUDA_SIM_MODEL", None)
    r = subprocess.run([sys.executable, str(HERE / "gpu_counters_cases.py")], capture_output=True, text=True,
                       env=env, timeout=600, cwd=HERE)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    found = json.loads(r.stdout)
    if "skip" in found:
        pytest.skip(found["skip"])
    return found


def _one(cases: dict, name: str) -> dict:
    entries = cases[name]
    assert len(entries) == 1, entries  # one kernel ran inside that case's profile
    return entries[0]


def test_coalesced_float_copy_is_four_sectors_per_request(cases):
    c = _one(cases, "coalesced")
    assert c["sectors_per_load_request"] == 4.0 and c["sectors_per_store_request"] == 4.0
    assert c["coalescing"] == 1.0
    assert c["global_load_requests"] == 1024 // 32  # one request per warp
    assert c["active_lanes"] == 32.0


def test_stride_32_float_load_is_32_sectors_per_request(cases):
    c = _one(cases, "stride32")
    assert c["sectors_per_load_request"] == 32.0
    assert c["sectors_per_store_request"] == 4.0  # the store stays coalesced
    assert c["coalescing"] < 0.25


def test_shared_stride_32_is_a_32_way_conflict(cases):
    c = _one(cases, "bank32")
    assert c["bank_passes_per_request"] == 32.0
    assert c["bank_conflicts"] == 31 * c["shared_requests"]


def test_padded_shared_stride_has_no_conflict(cases):
    c = _one(cases, "padded")
    assert c["bank_passes_per_request"] == 1.0
    assert c["bank_conflicts"] == 0


def test_divergent_branch_lowers_active_lanes(cases):
    assert _one(cases, "divergent")["active_lanes"] == 16.0
    assert _one(cases, "lang_divergent")["active_lanes"] == 16.0


def test_active_lanes_at_shuffles_and_barriers(cases):
    full = _one(cases, "shuffle_full")  # 2 blocks of one warp: 5 xor-shuffles each, every lane at the barrier
    assert full["raw"]["warp_collectives"] == 2 * 5
    assert full["active_lanes_at_collectives"] == 32.0 and full["active_lanes_at_barriers"] == 32.0
    half = _one(cases, "shuffle_half")  # 16 lanes shuffle (4 rounds), 24 reach the barrier, 8 returned
    assert half["raw"]["warp_collectives"] == 2 * 4
    assert half["active_lanes_at_collectives"] == 16.0 and half["active_lanes_at_barriers"] == 24.0
    assert half["raw"]["barrier_warps"] == 2


def test_language_kernel_copy_is_coalesced(cases):
    c = _one(cases, "lang_copy")
    assert c["sectors_per_load_request"] == 4.0 and c["sectors_per_store_request"] == 4.0


def test_registers_come_from_the_cubin(cases):
    for name in ("coalesced", "bank32", "lang_copy"):
        c = _one(cases, name)
        assert c["registers_known"] and 0 < c["registers"] <= 255
        # a 32-thread block is one warp: 32 resident blocks of one warp are half of H100's 64 warps
    assert _one(cases, "bank32")["occupancy_theoretical"] == 0.5
    assert _one(cases, "bank32")["occupancy_limiter"] == "blocks"


NO_CLANG = """
import numpy as np, dotcompute as dc
acc = dc.accelerator("cuda:0")
k = dc.RawKernel('extern "C" __global__ void z(float* a) { a[threadIdx.x] = 0; }', "z", backend="cuda")
try:
    acc.launch(k, 32, acc.zeros((32,), np.float32))
    acc.synchronize()
except dc.CompilationError as e:
    print(e)
"""


def test_counters_without_clang_name_the_package(tmp_path):
    gxx = shutil.which("g++")
    if gxx is None or _nvrtc_missing():
        pytest.skip("needs g++ and NVRTC")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "c++").symlink_to(gxx)  # a PATH with a host compiler but no clang++
    env = dict(os.environ, PATH=str(tmp_path / "bin"), DOTCOMPUTE_CUDA_SIM="1", DOTCOMPUTE_CUDA_SIM_COUNTERS="1",
               DOTCOMPUTE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("DOTCOMPUTE_CXX", None)
    env.pop("CXX", None)
    r = subprocess.run([sys.executable, "-c", NO_CLANG], capture_output=True, text=True, env=env, timeout=300)
    assert "DOTCOMPUTE_CUDA_SIM_COUNTERS=1 needs clang++" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
    assert "package clang" in r.stdout


# ---- the device model's arithmetic (no simulator needed) ----

def test_occupancy_limits():
    h100 = gpu_model.model("h100")
    full = gpu_model.occupancy(h100, 256, 32, 0, 10_000)
    assert (full.blocks_per_sm, full.theoretical) == (8, 1.0)
    regs = gpu_model.occupancy(h100, 256, 128, 0, 10_000)  # 128 x 32 = 4096 registers a warp: 16 warps
    assert (regs.blocks_per_sm, regs.limiter, regs.theoretical) == (2, "registers", 0.25)
    shared = gpu_model.occupancy(h100, 128, 32, 100 * 1024, 10_000)  # 101 KiB a block: two fit in 228
    assert (shared.blocks_per_sm, shared.limiter) == (2, "shared memory")
    a100 = gpu_model.occupancy(gpu_model.model("a100"), 128, 32, 100 * 1024, 10_000)  # one fits in 164
    assert a100.blocks_per_sm == 1
    # half a wave: on average half the SMs' warp slots are filled
    half = gpu_model.occupancy(h100, 256, 32, 0, 132 * 8 / 2)
    assert half.achieved == pytest.approx(0.5)


def test_roofline_estimate():
    counts = {"kernel": "k", "device": 0, "block": [256, 1, 1], "dynamic_shared": 0, "static_shared": 0,
              "registers": 0, "launches": 1, "grid_blocks": 4096, "global_requests": [0, 0],
              "global_sectors": [1_000_000, 0], "global_bytes": [32_000_000, 0], "shared_requests": [0, 0],
              "shared_wavefronts": [0, 0], "shared_ideal": [0, 0], "mem_instructions": 0, "mem_active_lanes": 0,
              "warp_collectives": 0, "warp_collective_lanes": 0,
              "barrier_warps": 0, "barrier_lanes": 0, "blocks": 4096, "threads": 4096 * 256}
    k = gpu_model.KernelCounters.from_counts(counts, gpu_model.model("h100"))
    assert k.roofline_ms() == pytest.approx(32e6 / 3350e9 * 1e3)
    assert k.roofline_ms(flops=66.9e12) == pytest.approx(1e3)  # one second of peak FP32
    assert not k.occupancy.registers_known and k.occupancy.registers == gpu_model.ASSUMED_REGISTERS


def test_model_names():
    assert gpu_model.model("A100").sms == 108
    with pytest.raises(ValueError, match="h100"):
        gpu_model.model("v100")
