"""CUDA's own device headers through NVRTC: ``cuda_fp16.h``, ``cooperative_groups.h`` and CUB's
block-level primitives compile ahead of time (no GPU) from the folders of NVIDIA's wheels that
``dotcompute[cuda]`` installs."""

from __future__ import annotations

import pytest

import dotcompute.cuda as dcuda

pytestmark = pytest.mark.skipif(not dcuda.cuda_include_dirs() or dcuda.nvrtc_library_path() is None,
                                reason="CUDA's headers or NVRTC are not installed (pip install dotcompute[cuda])")

SOURCES = {
    "fp16": r"""
#include <cuda_fp16.h>
extern "C" __global__ void scale(__half* x, float a) { x[threadIdx.x] = __hmul(x[threadIdx.x], __float2half(a)); }
""",
    "cooperative_groups": r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tile_sum(const int* in, int* out) {
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int s = cg::reduce(tile, in[threadIdx.x], cg::plus<int>());
    if (tile.thread_rank() == 0) out[threadIdx.x / 32] = s;
}
""",
    "cub": r"""
#include <cub/block/block_radix_sort.cuh>
extern "C" __global__ void sort_block(float* keys) {
    using Sort = cub::BlockRadixSort<float, 128, 4>;
    __shared__ typename Sort::TempStorage temp;
    float k[4];
    for (int i = 0; i < 4; ++i) k[i] = keys[threadIdx.x * 4 + i];
    Sort(temp).Sort(k);
    for (int i = 0; i < 4; ++i) keys[threadIdx.x * 4 + i] = k[i];
}
""",
}


@pytest.mark.parametrize("which", sorted(SOURCES))
def test_device_headers_compile_for_sm_80(which):
    cubin = dcuda.compile(SOURCES[which], arch="sm_80", name=f"{which}.cu")
    assert cubin[:4] == b"\x7fELF"


def test_without_the_headers_nvrtc_says_it_cannot_open_them(monkeypatch):
    monkeypatch.setattr(dcuda, "cuda_include_dirs", lambda: ())
    with pytest.raises(dcuda.CompilationError, match="cuda_fp16.h"):
        dcuda.compile(SOURCES["fp16"], arch="sm_80")
