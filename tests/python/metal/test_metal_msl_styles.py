"""MSL written the way public Metal projects write it, run on metal:0 and checked against numpy.

The kernels are written for these tests in the styles of ggml-metal (``kernel_add`` with an
argument struct, byte pointers and ``ushort3`` builtins; ``kernel_scale``/``relu``/``gelu`` on
``float4``; ``kernel_arange_f32``), MLX (templates instantiated through macros with
``[[host_name]]``, buffers without ``[[buffer(n)]]``), a bitonic sort step, a tiled matmul with
threadgroup memory, a ``simd_sum`` reduction, SIMD shuffles and votes, and atomics. On the test
double they exercise its MSL runner; on a Mac the same tests run on the GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

HEAD = "#include <metal_stdlib>\n#include <metal_compute>\n#include <metal_simdgroup>\nusing namespace metal;\n"


def _run(metal: dc.Accelerator, source: str, name: str, global_size, *args, local_size=None, **kw) -> None:
    k = dc.RawKernel(HEAD + source, name, backend="metal")
    dc.launch(k, global_size, *args, accelerator=metal, local_size=local_size, **kw)


GGML_ADD = """
typedef struct {
    int32_t ne00;
    int32_t ne01;
    uint64_t nb00, nb01;
    uint64_t nb10, nb11;
    uint64_t nb0, nb1;
} add_args;

kernel void kernel_add(
        constant add_args & args,
        device const char * src0,
        device const char * src1,
        device       char * dst,
        uint3   tgpig[[threadgroup_position_in_grid]],
        ushort3 tpitg[[thread_position_in_threadgroup]],
        ushort3   ntg[[threads_per_threadgroup]]) {
    const int row = tgpig.x;
    device const char * a = src0 + row*args.nb01;
    device const char * b = src1 + row*args.nb11;
    device       char * d = dst  + row*args.nb1;
    for (int i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        *((device float *)(d + i0*args.nb0)) = *((device const float *)(a + i0*args.nb00))
                                             + *((device const float *)(b + i0*args.nb10));
    }
}
"""

ADD_ARGS = np.dtype([("ne00", np.int32), ("ne01", np.int32), ("nb00", np.uint64), ("nb01", np.uint64),
                     ("nb10", np.uint64), ("nb11", np.uint64), ("nb0", np.uint64), ("nb1", np.uint64)])


def test_ggml_style_add_with_an_argument_struct_and_byte_pointers(metal):
    rows, cols, nth = 5, 37, 16  # a row per threadgroup; threads stride over the row
    rng = np.random.default_rng(1)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(a)
    args = np.array([(cols, rows, 4, cols * 4, 4, cols * 4, 4, cols * 4)], ADD_ARGS)
    _run(metal, GGML_ADD, "kernel_add", rows * nth, args.view(np.uint8), a.view(np.uint8), b.view(np.uint8),
         out.view(np.uint8), local_size=nth)
    np.testing.assert_array_equal(out, a + b)


GGML_UNARY = """
constant float GELU_COEF_A    = 0.044715f;
constant float SQRT_2_OVER_PI = 0.79788456080286535587989211986876f;

kernel void kernel_scale_4(
        device const float4 * src0,
        device       float4 * dst,
        constant     float  & scale,
        uint tpig[[thread_position_in_grid]]) {
    dst[tpig] = src0[tpig] * scale;
}

kernel void kernel_relu(
        device const float * src0,
        device       float * dst,
        uint tpig[[thread_position_in_grid]]) {
    dst[tpig] = max(0.0f, src0[tpig]);
}

kernel void kernel_gelu_4(
        device const float4 * src0,
        device       float4 * dst,
        uint tpig[[thread_position_in_grid]]) {
    device const float4 & x = src0[tpig];
    dst[tpig] = 0.5f*x*(1.0f + precise::tanh(SQRT_2_OVER_PI*x*(1.0f + GELU_COEF_A*x*x)));
}

typedef struct {
    int64_t ne0;
    float start;
    float step;
} arange_args;

kernel void kernel_arange_f32(
        device        char * dst,
        constant arange_args & args,
        uint3   tgpig[[threadgroup_position_in_grid]],
        uint3   tpitg[[thread_position_in_threadgroup]],
        uint3     ntg[[threads_per_threadgroup]]) {
    device float * d = (device float *) dst;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        d[i0] = args.start + args.step * float(i0);
    }
}
"""


def test_ggml_style_unary_kernels_on_float4(metal):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(64 * 4).astype(np.float32)
    out = np.zeros_like(x)
    _run(metal, GGML_UNARY, "kernel_scale_4", x.size // 4, x, out, np.float32(0.125))
    np.testing.assert_array_equal(out, x * np.float32(0.125))
    _run(metal, GGML_UNARY, "kernel_relu", x.size, x, out)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    _run(metal, GGML_UNARY, "kernel_gelu_4", x.size // 4, x, out)
    x64 = x.astype(np.float64)
    gelu = 0.5 * x64 * (1 + np.tanh(0.7978845608028654 * x64 * (1 + 0.044715 * x64 * x64)))
    np.testing.assert_allclose(out, gelu, rtol=1e-5, atol=1e-6)
    d = np.zeros(100, np.float32)
    args = np.array([(100, -3.0, 0.25)], np.dtype([("ne0", np.int64), ("start", np.float32),
                                                  ("step", np.float32)], align=True))
    _run(metal, GGML_UNARY, "kernel_arange_f32", 32, d.view(np.uint8), args.view(np.uint8), local_size=32)
    np.testing.assert_array_equal(d, np.float32(-3.0) + np.float32(0.25) * np.arange(100, dtype=np.float32))


MLX = """
template <typename T>
[[kernel]] void arange(
    constant const T& start,
    constant const T& step,
    device T* out,
    uint index [[thread_position_in_grid]]) {
  out[index] = start + index * step;
}

#define instantiate_arange(tname, type)                             \\
  template [[host_name("arange" #tname)]] [[kernel]] void arange<type>( \\
      constant const type& start,                                   \\
      constant const type& step,                                    \\
      device type* out,                                             \\
      uint index [[thread_position_in_grid]]);

instantiate_arange(float32, float)
instantiate_arange(int32, int)

template <typename T>
[[kernel]] void axpby_general(
    device const T* x [[buffer(0)]],
    device const T* y [[buffer(1)]],
    device T* out [[buffer(2)]],
    constant const float& alpha [[buffer(3)]],
    constant const float& beta [[buffer(4)]],
    uint index [[thread_position_in_grid]]) {
  out[index] = static_cast<T>(alpha) * x[index] + static_cast<T>(beta) * y[index];
}

#define instantiate_axpby(type_name, type)                          \\
  template [[host_name("axpby_general_" #type_name)]] [[kernel]] void \\
  axpby_general<type>(                                              \\
      device const type* x [[buffer(0)]],                           \\
      device const type* y [[buffer(1)]],                           \\
      device type* out [[buffer(2)]],                               \\
      constant const float& alpha [[buffer(3)]],                    \\
      constant const float& beta [[buffer(4)]],                     \\
      uint index [[thread_position_in_grid]]);

instantiate_axpby(float32, float)
instantiate_axpby(float16, half)
"""


def test_mlx_style_templates_with_host_names(metal):
    out = np.zeros(50, np.float32)
    _run(metal, MLX, "arangefloat32", out.size, np.float32(1.5), np.float32(0.5), out)
    np.testing.assert_array_equal(out, np.float32(1.5) + np.arange(50, dtype=np.float32) * np.float32(0.5))
    iout = np.zeros(50, np.int32)
    _run(metal, MLX, "arangeint32", iout.size, np.int32(-7), np.int32(3), iout)
    np.testing.assert_array_equal(iout, -7 + 3 * np.arange(50, dtype=np.int32))
    rng = np.random.default_rng(3)
    for dtype, name, tol in ((np.float32, "axpby_general_float32", 1e-6), (np.float16, "axpby_general_float16", 2e-3)):
        x = rng.standard_normal(300).astype(dtype)
        y = rng.standard_normal(300).astype(dtype)
        o = np.zeros_like(x)
        _run(metal, MLX, name, x.size, x, y, o, np.float32(2.0), np.float32(-0.5))
        want = (np.float32(2.0) * x.astype(np.float32) - np.float32(0.5) * y.astype(np.float32)).astype(dtype)
        np.testing.assert_allclose(o.astype(np.float32), want.astype(np.float32), rtol=tol, atol=tol)


BITONIC = """
kernel void bitonic_step(device float* data [[buffer(0)]],
                         constant uint& p [[buffer(1)]],
                         constant uint& q [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  uint distance = 1u << (p - q);
  bool up = ((gid >> p) & 2u) == 0u;
  if ((gid & distance) == 0u && (data[gid] > data[gid | distance]) == up) {
    float t = data[gid];
    data[gid] = data[gid | distance];
    data[gid | distance] = t;
  }
}
"""


def test_bitonic_sort_steps_sort(metal):
    n = 256
    rng = np.random.default_rng(4)
    values = rng.standard_normal(n).astype(np.float32)
    buf = metal.asarray(values)
    k = dc.RawKernel(HEAD + BITONIC, "bitonic_step", backend="metal")
    stages = int(np.log2(n))
    for p in range(stages):
        for q in range(p + 1):
            dc.launch(k, n, buf, np.uint32(p), np.uint32(q), accelerator=metal, local_size=64)
    np.testing.assert_array_equal(buf.numpy(), np.sort(values))


MATMUL = """
#define TILE 8
kernel void matmul_tiled(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         constant uint& M [[buffer(3)]],
                         constant uint& N [[buffer(4)]],
                         constant uint& K [[buffer(5)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 lid [[thread_position_in_threadgroup]]) {
  threadgroup float As[TILE][TILE];
  threadgroup float Bs[TILE][TILE];
  float acc = 0.0f;
  for (uint t = 0; t < (K + TILE - 1) / TILE; ++t) {
    uint ak = t * TILE + lid.x, bk = t * TILE + lid.y;
    As[lid.y][lid.x] = (gid.y < M && ak < K) ? A[gid.y * K + ak] : 0.0f;
    Bs[lid.y][lid.x] = (bk < K && gid.x < N) ? B[bk * N + gid.x] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < TILE; ++k) acc += As[lid.y][k] * Bs[k][lid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (gid.y < M && gid.x < N) C[gid.y * N + gid.x] = acc;
}
"""


def test_tiled_matmul_with_threadgroup_memory(metal):
    m, n, kdim = 19, 13, 21  # no dimension a multiple of the tile
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, kdim)).astype(np.float32)
    b = rng.standard_normal((kdim, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    _run(metal, MATMUL, "matmul_tiled", (16, 24), a, b, c, np.uint32(m), np.uint32(n), np.uint32(kdim),
         local_size=(8, 8))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


SIMD_REDUCE = """
kernel void reduce_sum(device const float* in [[buffer(0)]],
                       device atomic_float* total [[buffer(1)]],
                       constant uint& n [[buffer(2)]],
                       uint gid [[thread_position_in_grid]],
                       uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]],
                       uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float partial[32];
  float v = gid < n ? in[gid] : 0.0f;
  float s = simd_sum(v);
  if (lane == 0) partial[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float p = lane < nsg ? partial[lane] : 0.0f;
    float t = simd_sum(p);
    if (lane == 0) atomic_fetch_add_explicit(total, t, memory_order_relaxed);
  }
}
"""


def test_simd_sum_reduction(metal):
    n = 1000
    x = np.random.default_rng(6).standard_normal(n).astype(np.float32)
    total = np.zeros(1, np.float32)
    _run(metal, SIMD_REDUCE, "reduce_sum", n, x, total, np.uint32(n), local_size=128)
    np.testing.assert_allclose(total[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)


SIMD_OPS = """
kernel void simd_ops(device const int* in [[buffer(0)]],
                     device int* out [[buffer(1)]],
                     uint gid [[thread_position_in_grid]],
                     uint lane [[thread_index_in_simdgroup]],
                     uint width [[threads_per_simdgroup]]) {
  int v = in[gid];
  device int* o = out + gid * 12;
  o[0] = simd_prefix_inclusive_sum(v);
  o[1] = simd_prefix_exclusive_sum(v);
  o[2] = simd_shuffle_down(v, 3);
  o[3] = simd_shuffle_up(v, 5);
  o[4] = simd_shuffle_xor(v, 9);
  o[5] = simd_broadcast(v, 7);
  o[6] = simd_max(v);
  o[7] = simd_min(v);
  o[8] = int(uint(simd_vote::vote_t(simd_ballot((v & 1) != 0))));
  o[9] = simd_all(v > -1000) ? 1 : 0;
  o[10] = simd_any(v == 17) ? 1 : 0;
  o[11] = simd_shuffle(v, (lane + 1) % width) + int(width) * 1000;
  simdgroup_barrier(mem_flags::mem_none);
}
"""


def test_simd_shuffles_scans_and_votes_are_32_wide(metal):
    n = 64
    v = np.random.default_rng(7).integers(-50, 50, n).astype(np.int32)
    out = np.zeros((n, 12), np.int32)
    _run(metal, SIMD_OPS, "simd_ops", n, v, out, local_size=64)
    g = v.reshape(2, 32)
    lane = np.arange(32)
    want = np.zeros((2, 32, 12), np.int64)
    for s in range(2):
        w = g[s].astype(np.int64)
        want[s, :, 0] = np.cumsum(w)
        want[s, :, 1] = np.cumsum(w) - w
        want[s, :, 2] = np.where(lane + 3 < 32, w[np.minimum(lane + 3, 31)], w)
        want[s, :, 3] = np.where(lane >= 5, w[np.maximum(lane - 5, 0)], w)
        want[s, :, 4] = w[lane ^ 9]
        want[s, :, 5] = w[7]
        want[s, :, 6] = w.max()
        want[s, :, 7] = w.min()
        ballot = sum(1 << i for i in range(32) if w[i] & 1)
        want[s, :, 8] = np.int64(np.uint32(ballot).view(np.int32))
        want[s, :, 9] = 1
        want[s, :, 10] = int((w == 17).any())
        want[s, :, 11] = w[(lane + 1) % 32] + 32000
    np.testing.assert_array_equal(out.reshape(2, 32, 12), want)


HISTOGRAM = """
kernel void histogram(device const uint* values [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      uint gid [[thread_position_in_grid]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint tpg [[threads_per_threadgroup]]) {
  threadgroup atomic_uint local_bins[16];
  for (uint b = tid; b < 16; b += tpg) atomic_store_explicit(&local_bins[b], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (gid < n) atomic_fetch_add_explicit(&local_bins[values[gid] % 16], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint b = tid; b < 16; b += tpg) {
    uint c = atomic_load_explicit(&local_bins[b], memory_order_relaxed);
    if (c) atomic_fetch_add_explicit(&bins[b], c, memory_order_relaxed);
  }
}

kernel void atomic_mix(device atomic_int* ints [[buffer(0)]],
                       device atomic_uint* uints [[buffer(1)]],
                       device atomic_float* f [[buffer(2)]],
                       uint gid [[thread_position_in_grid]]) {
  int v = int(gid) - 40;
  atomic_fetch_min_explicit(&ints[0], v, memory_order_relaxed);
  atomic_fetch_max_explicit(&ints[1], v, memory_order_relaxed);
  atomic_fetch_sub_explicit(&ints[2], v, memory_order_relaxed);
  atomic_fetch_or_explicit(&uints[0], 1u << (gid % 32), memory_order_relaxed);
  atomic_fetch_and_explicit(&uints[1], ~(1u << (gid % 16)), memory_order_relaxed);
  atomic_fetch_xor_explicit(&uints[2], gid, memory_order_relaxed);
  atomic_exchange_explicit(&uints[3], 7u, memory_order_relaxed);
  uint expected = atomic_load_explicit(&uints[4], memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&uints[4], &expected, expected + 2u, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
  atomic_fetch_add_explicit(&f[0], 0.5f, memory_order_relaxed);
}
"""


def test_atomics_histogram_and_every_rmw(metal):
    values = np.random.default_rng(8).integers(0, 1000, 3000).astype(np.uint32)
    bins = np.zeros(16, np.uint32)
    _run(metal, HISTOGRAM, "histogram", values.size, values, bins, np.uint32(values.size), local_size=64)
    np.testing.assert_array_equal(bins, np.bincount(values % 16, minlength=16))
    n = 100
    ints = np.array([1000, -1000, 0], np.int32)
    uints = np.array([0, 0xFFFFFFFF, 0, 0, 10], np.uint32)
    f = np.zeros(1, np.float32)
    _run(metal, HISTOGRAM, "atomic_mix", n, ints, uints, f, local_size=32)
    v = np.arange(n) - 40
    assert list(ints) == [v.min(), v.max(), -v.sum()]
    xor = 0
    for g in range(n):
        xor ^= g
    assert list(uints) == [0xFFFFFFFF, 0xFFFF0000, xor, 7, 10 + 2 * n]
    assert f[0] == np.float32(0.5 * n)


BUILTINS = """
kernel void builtins(device uint* out [[buffer(0)]],
                     uint2 gid [[thread_position_in_grid]],
                     uint2 lid [[thread_position_in_threadgroup]],
                     uint2 grp [[threadgroup_position_in_grid]],
                     uint2 gsz [[threads_per_grid]],
                     uint2 tpg [[threads_per_threadgroup]],
                     uint2 dtpg [[dispatch_threads_per_threadgroup]],
                     uint2 ngrp [[threadgroups_per_grid]],
                     uint tidx [[thread_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]],
                     uint sgi [[simdgroup_index_in_threadgroup]],
                     uint sgw [[threads_per_simdgroup]],
                     uint nsg [[simdgroups_per_threadgroup]],
                     uint qlane [[thread_index_in_quadgroup]],
                     uint qi [[quadgroup_index_in_threadgroup]],
                     uint nq [[quadgroups_per_threadgroup]],
                     uint width [[thread_execution_width]],
                     uint2 origin [[grid_origin]],
                     uint2 gridsize [[grid_size]]) {
  device uint* o = out + (gid.y * gsz.x + gid.x) * 24;
  uint v[24] = {gid.x, gid.y, lid.x, lid.y, grp.x, grp.y, gsz.x, gsz.y, tpg.x, tpg.y, dtpg.x, dtpg.y,
                ngrp.x, ngrp.y, tidx, lane, sgi, sgw, nsg, qlane * 100u + qi, nq, width,
                origin.x + origin.y, gridsize.x * 1000u + gridsize.y};
  for (int i = 0; i < 24; ++i) o[i] = v[i];
}
"""


def test_every_compute_builtin_on_a_non_uniform_grid(metal):
    if not metal.info.get("nonuniform_threadgroups", True):
        pytest.skip("needs dispatchThreads (non-uniform threadgroups)")
    gx, gy, lx, ly = 45, 3, 20, 2  # the last group of each dimension is partial
    out = np.zeros((gy, gx, 24), np.uint32)
    _run(metal, BUILTINS, "builtins", (gx, gy), out, local_size=(lx, ly))
    y, x = np.indices((gy, gx))
    tx = np.minimum(lx, gx - x // lx * lx)
    ty = np.minimum(ly, gy - y // ly * ly)
    lin = (y % ly) * tx + x % lx
    count = tx * ty
    want = [x, y, x % lx, y % ly, x // lx, y // ly, gx + 0 * x, gy + 0 * x, tx, ty, lx + 0 * x, ly + 0 * x,
            -(-gx // lx) + 0 * x, -(-gy // ly) + 0 * x, lin, lin % 32, lin // 32, 32 + 0 * x, (count + 31) // 32,
            (lin % 4) * 100 + lin // 4, (count + 3) // 4, 32 + 0 * x, 0 * x, gx * 1000 + gy + 0 * x]
    np.testing.assert_array_equal(out, np.stack(want, axis=-1).astype(np.uint32))
