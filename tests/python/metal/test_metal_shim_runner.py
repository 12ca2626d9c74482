"""The one MSL-on-CPU runner (tests/support/metal_shim/msl_runner.cpp) as runner.py uses it, and
its private cache folder as both runner.py and the Metal test double use it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SHIM = Path(__file__).resolve().parents[2] / "support" / "metal_shim"
sys.path.insert(0, str(SHIM))
runner = pytest.importorskip("runner")

if not (shutil.which("clang++") or shutil.which("g++")):
    pytest.skip("the MSL runner needs clang++ or g++", allow_module_level=True)

SCAN = """
#include <metal_stdlib>
using namespace metal;
template <typename T>
[[kernel]] void block_scan(device const T* in, device T* out, threadgroup T* scratch [[threadgroup(0)]],
                           uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                           uint nsg [[simdgroups_per_threadgroup]]) {
  T v = in[gid];
  T inc = simd_prefix_inclusive_sum(v);
  if (lane == 31) scratch[sg] = inc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  T before = 0;
  for (uint s = 0; s < sg; ++s) before += scratch[s];
  out[gid] = before + inc;
}
template [[host_name("block_scan_i32")]] [[kernel]] void block_scan<int>(device const int*, device int*,
    threadgroup int* [[threadgroup(0)]], uint [[thread_position_in_grid]], uint [[thread_index_in_threadgroup]],
    uint [[thread_index_in_simdgroup]], uint [[simdgroup_index_in_threadgroup]], uint [[simdgroups_per_threadgroup]]);
"""


def test_runner_binds_threadgroup_parameters_and_host_names():
    x = np.arange(1, 257, dtype=np.int32) % 7
    out = np.zeros_like(x)
    runner.run_msl(SCAN, [x, out], 256, 128, name="block_scan_i32", threadgroup_memory={0: 4 * 4},
                   extents=False)
    want = np.concatenate([np.cumsum(x[:128]), np.cumsum(x[128:])])
    np.testing.assert_array_equal(out, want)
    with pytest.raises(runner.ShimError, match="setThreadgroupMemoryLength"):
        runner.run_msl(SCAN, [x, out], 256, 128, name="block_scan_i32", extents=False)


def test_runner_reports_a_fault_instead_of_crashing():
    msl = ("#include <metal_stdlib>\nusing namespace metal;\n"
           "kernel void far(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
           "  o[(ulong(1) << 46) + i] = 1.0f;\n}\n")
    with pytest.raises(runner.ShimError, match="illegal memory access"):
        runner.run_msl(msl, [np.zeros(4, np.float32)], 4, extents=False)


def _shared_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "planted"
    folder.mkdir()
    os.chmod(folder, 0o777)  # anyone could put a .so here
    return folder


def test_runner_refuses_a_cache_folder_others_can_write(tmp_path, monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_SHIM_CACHE", str(_shared_folder(tmp_path)))
    with pytest.raises(runner.ShimError, match="not a private folder"):
        runner.cache_dir()


def test_metal_double_refuses_a_cache_folder_others_can_write(metal_env, tmp_path):
    code = ("import dotcompute as dc, numpy as np\n"
            "k = dc.RawKernel('#include <metal_stdlib>\\nkernel void z(device float* o) { o[0] = 42.0f; }', 'z',"
            " backend='metal')\n"
            "try:\n    dc.launch(k, 1, np.zeros(1, np.float32), accelerator='metal:0')\n"
            "except dc.DotComputeError as e:\n    print('REFUSED', e)\n")
    env = {**os.environ, **metal_env, "DOTCOMPUTE_SHIM_CACHE": str(_shared_folder(tmp_path)),
           "DOTCOMPUTE_CACHE_DIR": str(tmp_path / "kernels")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "REFUSED" in proc.stdout and "not a private folder" in proc.stdout


TYPEDEF_INSTANCES = """
#include <metal_stdlib>
using namespace metal;
template<typename T>
kernel void kernel_twice(device const T * src, device T * dst, constant int & n,
                         uint tpig[[thread_position_in_grid]]) {
    threadgroup float factor;  // a threadgroup scalar, written by one thread
    if (tpig % 8 == 0) factor = 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if ((int)tpig < n) dst[tpig] = T(float(src[tpig]) * factor);
}
typedef decltype(kernel_twice<float>) kernel_twice_t;
template [[host_name("kernel_twice_f32")]] kernel kernel_twice_t kernel_twice<float>;
template [[host_name("kernel_twice_bf16")]] kernel void kernel_twice<bfloat>(device const bfloat *, device bfloat *,
    constant int &, uint [[thread_position_in_grid]]);
"""


def test_runner_takes_ggml_typedef_instances_threadgroup_scalars_and_bfloat():
    x = np.linspace(-4, 4, 20, dtype=np.float32)
    y = np.zeros_like(x)
    runner.run_msl(TYPEDEF_INSTANCES, [x, y, np.int32(20)], 20, 8, name="kernel_twice_f32", extents=False)
    np.testing.assert_array_equal(y, 2 * x)
    bf = (x.view(np.uint32) >> 16).astype(np.uint16)  # bfloat: float's upper half
    exact = (bf.astype(np.uint32) << 16).view(np.float32)
    out = np.zeros_like(bf)
    runner.run_msl(TYPEDEF_INSTANCES, [bf, out, np.int32(20)], 20, 8, name="kernel_twice_bf16", extents=False)
    np.testing.assert_array_equal((out.astype(np.uint32) << 16).view(np.float32), 2 * exact)  # doubling is exact
