"""Raw CUDA kernels that include CUDA's own device headers: ``<cuda_fp16.h>`` (``__half``, ``__half2``),
``<cuda_bf16.h>`` (``__nv_bfloat16``) and ``<cooperative_groups.h>`` (thread blocks, warp tiles,
``cg::reduce``), written as NVIDIA's samples and outside projects write them.

On the simulated cuda:0 each kernel is compiled twice: by the real NVRTC against the real headers (from
the nvidia-cuda-runtime wheel that ``dotcompute[cuda]`` installs, or a toolkit), so compile errors stay
real, and for the host against the simulator's own versions of those headers, which run it. Results are
checked against numpy bit for bit where numpy defines them (float16 conversions and arithmetic).
"""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc
from dotcompute.cuda import cuda_include_dirs
from dotcompute.runtime import raw_kernel

pytestmark = pytest.mark.skipif(not cuda_include_dirs() or nvrtc_missing(),
                                reason="CUDA's headers or NVRTC are not installed (pip install dotcompute[cuda])")

HALF = r"""
#include <cuda_runtime.h>
#include <cuda_fp16.h>

// y = a * x + b in half precision, three ways: intrinsics, operators, and a fused multiply-add.
extern "C" __global__ void half_axpb(const __half* x, __half* y_intr, __half* y_ops, __half* y_fma,
                                     float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const __half ha = __float2half(a), hb = __float2half_rn(b);
        y_intr[i] = __hadd(__hmul(ha, x[i]), hb);
        y_ops[i] = ha * x[i] + hb;
        y_fma[i] = __hfma(ha, x[i], hb);
    }
}

// Every half bit pattern to float, and floats to half (round to nearest even).
extern "C" __global__ void conversions(const unsigned short* bits, float* as_float, const float* f,
                                       unsigned short* to_half, int n_bits, int n_f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_bits) as_float[i] = __half2float(__ushort_as_half(bits[i]));
    if (i < n_f) to_half[i] = __half_as_ushort(__float2half_rn(f[i]));
}

// Pairs: a complex-like multiply on __half2, and the two halves read back as floats.
extern "C" __global__ void half2_ops(const __half2* a, const __half2* b, float* lo, float* hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half2 s = __hadd2(a[i], b[i]);
        __half2 p = __hmul2(a[i], b[i]);
        __half2 r = __hfma2(s, p, __float2half2_rn(1.0f));
        lo[i] = __low2float(r);
        hi[i] = __high2float(r);
    }
}
"""

BF16 = r"""
#include <cuda_bf16.h>

// bfloat16 storage, float math: y = round(a * x + b), plus the conversions of the four rounding modes.
extern "C" __global__ void bf16_axpb(const __nv_bfloat16* x, __nv_bfloat16* y, const float* f,
                                     unsigned short* modes, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __hadd(__hmul(__float2bfloat16(a), x[i]), __float2bfloat16(b));
        modes[4 * i + 0] = __bfloat16_as_ushort(__float2bfloat16_rn(f[i]));
        modes[4 * i + 1] = __bfloat16_as_ushort(__float2bfloat16_rz(f[i]));
        modes[4 * i + 2] = __bfloat16_as_ushort(__float2bfloat16_rd(f[i]));
        modes[4 * i + 3] = __bfloat16_as_ushort(__float2bfloat16_ru(f[i]));
    }
}
"""


def _bf16_rn(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, nearest-even (the definition: round the low 16 bits away)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    out = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    out[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return out


def _bf16_to_f32(b: np.ndarray) -> np.ndarray:
    return (b.astype(np.uint32) << 16).view(np.float32)


CG_REDUCE = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// The block sum as NVIDIA's reduction samples write it: shared memory down to a warp, then a warp
// tile with shfl_down; and the same sum with cg::reduce over 32-thread tiles.
template <class T>
__global__ void cg_block_sum(const T* in, T* block_sums, unsigned int n)
{
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ unsigned char smem_bytes[];
    T* sdata = reinterpret_cast<T*>(smem_bytes);
    const unsigned int tid = threadIdx.x;
    T sum = 0;
    for (unsigned int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) sum += in[i];
    sdata[tid] = sum;
    cg::sync(cta);
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        cg::sync(cta);
    }
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    if (cta.thread_rank() < 32) {
        if (blockDim.x >= 64) sum += sdata[tid + 32];
        for (int offset = tile32.size() / 2; offset > 0; offset /= 2) sum += tile32.shfl_down(sum, offset);
    }
    if (cta.thread_rank() == 0) block_sums[blockIdx.x] = sum;
}

template <class T>
__global__ void cg_tile_reduce(const T* in, T* tile_sums, T* tile_max, unsigned int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32, cg::thread_block> tile = cg::tiled_partition<32>(block);
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const T v = i < n ? in[i] : T(0);
    const T s = cg::reduce(tile, v, cg::plus<T>());
    const T m = cg::reduce(tile, v, cg::greater<T>());
    if (tile.thread_rank() == 0) {
        const unsigned int t = blockIdx.x * tile.meta_group_size() + tile.meta_group_rank();
        tile_sums[t] = s;
        tile_max[t] = m;
    }
}

// Sub-warp tiles: 8 lanes each, an inclusive scan with shfl_up, and votes.
extern "C" __global__ void tile8_scan_vote(const int* in, int* scan, unsigned int* votes)
{
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<8>(block);
    const int gi = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[gi];
    for (unsigned int d = 1; d < tile.size(); d *= 2) {
        const int up = tile.shfl_up(v, d);
        if (tile.thread_rank() >= d) v += up;
    }
    scan[gi] = v;
    const unsigned int ballot = tile.ballot(in[gi] > 0);
    const int any = tile.any(in[gi] > 5), all = tile.all(in[gi] >= 0);
    if (tile.thread_rank() == 0) votes[gi / 8] = ballot | (any << 8) | (all << 9);
}

// A tile sized at run time (tiled_partition(block, 4): a thread_group, which has sync and ranks but no
// shuffles) and the thread block's own indices.
extern "C" __global__ void dynamic_tile(const float* in, float* out)
{
    __shared__ float vals[256];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_group tile4 = cg::tiled_partition(block, 4);
    const unsigned int t = block.thread_index().x;
    const int gi = blockIdx.x * blockDim.x + t;
    vals[t] = in[gi];
    tile4.sync();
    float v = -1.0f;
    if (tile4.thread_rank() == 0) {
        v = 0.0f;
        for (unsigned int k = 0; k < tile4.size(); ++k) v += vals[t + k];
    }
    out[gi] = v;
}
"""


def _acc(sim: dc.Accelerator) -> str:
    return sim.id


def test_half_arithmetic_rounds_like_numpy(sim):
    rng = np.random.default_rng(3)
    n = 4099
    x = (rng.standard_normal(n) * 30).astype(np.float16)
    outs = [np.zeros(n, np.float16) for _ in range(3)]
    k = dc.RawKernel(HALF, "half_axpb", backend="cuda")
    a, b = 1.7, -0.3
    dc.launch(k, n, x, *outs, np.float32(a), np.float32(b), np.int32(n), accelerator=_acc(sim))
    ha, hb = np.float16(a), np.float16(b)
    # each operation rounds to half: numpy's float16 arithmetic does the same
    expected = (ha * x) + hb
    np.testing.assert_array_equal(outs[0].view(np.uint16), expected.view(np.uint16))
    np.testing.assert_array_equal(outs[1].view(np.uint16), expected.view(np.uint16))
    fused = (np.float64(ha) * x.astype(np.float64) + np.float64(hb)).astype(np.float16)  # one rounding
    np.testing.assert_array_equal(outs[2].view(np.uint16), fused.view(np.uint16))


def test_every_half_converts_like_numpy(sim):
    bits = np.arange(65536, dtype=np.uint16)
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    # half of them near half's range (exponents around 2^-25..2^16), where rounding and overflow happen
    near = (raw & 0x807FFFFF) | ((0x66 + (raw >> 8) % 28) << 23).astype(np.uint32)
    f = np.where(np.arange(raw.size) % 2 == 0, raw, near).astype(np.uint32).view(np.float32)
    f[:8] = [0.0, -0.0, np.inf, -np.inf, 65504.0, 65520.0, 5.96e-8, 2.98e-8]
    as_float = np.zeros(bits.size, np.float32)
    to_half = np.zeros(f.size, np.uint16)
    k = dc.RawKernel(HALF, "conversions", backend="cuda")
    dc.launch(k, max(bits.size, f.size), bits, as_float, f, to_half, np.int32(bits.size), np.int32(f.size),
              accelerator=_acc(sim))
    want = bits.view(np.float16).astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(as_float[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert np.isnan(as_float[nan]).all()
    with np.errstate(over="ignore", invalid="ignore"):
        want_h = f.astype(np.float16)
    fnan = np.isnan(f)
    np.testing.assert_array_equal(to_half[~fnan], want_h[~fnan].view(np.uint16))
    assert np.isnan(to_half[fnan].view(np.float16)).all()


def test_half2_pairs(sim):
    rng = np.random.default_rng(8)
    n = 777
    a = rng.uniform(-2, 2, (n, 2)).astype(np.float16)
    b = rng.uniform(-2, 2, (n, 2)).astype(np.float16)
    lo, hi = np.zeros(n, np.float32), np.zeros(n, np.float32)
    k = dc.RawKernel(HALF, "half2_ops", backend="cuda")
    dc.launch(k, n, a, b, lo, hi, np.int32(n), accelerator=_acc(sim))
    s, p = a + b, a * b
    r = (s.astype(np.float64) * p.astype(np.float64) + 1.0).astype(np.float16)  # fma: one rounding
    np.testing.assert_array_equal(lo, r[:, 0].astype(np.float32))
    np.testing.assert_array_equal(hi, r[:, 1].astype(np.float32))


def test_bfloat16_conversions_and_arithmetic(sim):
    rng = np.random.default_rng(11)
    n = 5000
    f = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    f[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38]
    x_bits = _bf16_rn(rng.standard_normal(n).astype(np.float32) * 100)
    y_bits = np.zeros(n, np.uint16)
    modes = np.zeros(4 * n, np.uint16)
    k = dc.RawKernel(BF16, "bf16_axpb", backend="cuda")
    a, b = np.float32(1.37), np.float32(-2.5)
    dc.launch(k, n, x_bits, y_bits, f, modes, a, b, np.int32(n), accelerator=_acc(sim))
    ha, hb = _bf16_to_f32(_bf16_rn(np.array([a]))), _bf16_to_f32(_bf16_rn(np.array([b])))
    prod = _bf16_to_f32(_bf16_rn(ha * _bf16_to_f32(x_bits)))  # each operation rounds once
    np.testing.assert_array_equal(y_bits, _bf16_rn(prod + hb))
    m = modes.reshape(n, 4)
    fin = ~np.isnan(f)
    np.testing.assert_array_equal(m[fin, 0], _bf16_rn(f[fin]))
    assert (m[~fin, 0] & 0x7FFF > 0x7F80).all()  # NaN stays NaN
    v = f[fin].astype(np.float64)
    rz, rd, ru = (_bf16_to_f32(m[fin, j]).astype(np.float64) for j in (1, 2, 3))
    assert (np.abs(rz) <= np.abs(v)).all() and (rd <= v).all() and (ru >= v).all()
    exact = _bf16_to_f32(m[fin, 0]).astype(np.float64) == v
    assert ((rd == ru) == exact).all()  # directed roundings bracket v one step apart unless exact


@pytest.mark.parametrize("ctype,dtype,block", [("float", np.float32, 256), ("int", np.int32, 128),
                                               ("double", np.float64, 512), ("float", np.float32, 64)])
def test_cooperative_groups_block_sum_as_in_nvidias_samples(sim, ctype, dtype, block):
    rng = np.random.default_rng(block)
    n = 50_021
    x = (rng.integers(-100, 100, n) if dtype == np.int32 else rng.random(n)).astype(dtype)
    blocks = 20
    sums = np.zeros(blocks, dtype)
    k = dc.RawKernel(CG_REDUCE, f"cg_block_sum<{ctype}>", backend="cuda", shared_mem=block * x.itemsize)
    dc.launch(k, blocks * block, x, sums, n, local_size=block, accelerator=_acc(sim))
    if dtype == np.int32:
        assert int(sums.sum()) == int(x.astype(np.int64).sum())
    else:
        assert float(sums.sum()) == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)


def test_cooperative_groups_reduce_over_warp_tiles(sim):
    rng = np.random.default_rng(2)
    n, block = 1000, 128
    x = rng.integers(-500, 500, n).astype(np.int32)
    blocks = -(-n // block)
    tiles = blocks * block // 32
    sums, maxes = np.zeros(tiles, np.int32), np.zeros(tiles, np.int32)
    k = dc.RawKernel(CG_REDUCE, "cg_tile_reduce<int>", backend="cuda")
    dc.launch(k, blocks * block, x, sums, maxes, n, local_size=block, accelerator=_acc(sim))
    padded = np.zeros(tiles * 32, np.int32)
    padded[:n] = x
    np.testing.assert_array_equal(sums, padded.reshape(tiles, 32).sum(axis=1))
    np.testing.assert_array_equal(maxes, padded.reshape(tiles, 32).max(axis=1))


def test_cooperative_groups_sub_warp_tiles_scan_and_vote(sim):
    rng = np.random.default_rng(4)
    n = 256
    x = rng.integers(-3, 9, n).astype(np.int32)
    scan = np.zeros(n, np.int32)
    votes = np.zeros(n // 8, np.uint32)
    k = dc.RawKernel(CG_REDUCE, "tile8_scan_vote", backend="cuda")
    dc.launch(k, n, x, scan, votes, local_size=64, accelerator=_acc(sim))
    groups = x.reshape(-1, 8)
    np.testing.assert_array_equal(scan, np.cumsum(groups, axis=1).reshape(-1))
    ballot = ((groups > 0) * (1 << np.arange(8))).sum(axis=1)
    want = ballot | ((groups > 5).any(axis=1) << 8) | ((groups >= 0).all(axis=1) << 9)
    np.testing.assert_array_equal(votes, want.astype(np.uint32))


def test_cooperative_groups_dynamic_tile(sim):
    n = 128
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    k = dc.RawKernel(CG_REDUCE, "dynamic_tile", backend="cuda")
    dc.launch(k, n, x, out, local_size=32, accelerator=_acc(sim))
    want = np.full(n, -1.0, np.float32)
    want[::4] = x.reshape(-1, 4).sum(axis=1)
    np.testing.assert_array_equal(out, want)


def test_a_missing_cuda_header_says_how_to_install_it(sim, monkeypatch):
    monkeypatch.setattr(raw_kernel, "cuda_include_dirs", lambda: ())
    # a source of its own (a kernel compiled before is cached with its include path)
    k = dc.RawKernel(HALF + "\n// without CUDA's headers\n", "half_axpb", backend="cuda")
    with pytest.raises(dc.CompilationError, match=r"cuda_fp16\.h.*pip install dotcompute\[cuda\]"):
        k.compile(_acc(sim))


def test_a_header_of_the_users_own_is_named_as_such(sim):
    src = '#include "my_helpers.cuh"\nextern "C" __global__ void k(float* x) { x[0] = 1.0f; }\n'
    with pytest.raises(dc.CompilationError, match=r"my_helpers\.cuh.*pasted into its source"):
        dc.RawKernel(src, "k", backend="cuda").compile(_acc(sim))
