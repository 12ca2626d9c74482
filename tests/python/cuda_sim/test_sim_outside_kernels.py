"""CUDA kernels written the way outside projects write them, launched unmodified through ``dc.launch``.

Template kernels named by their instantiation (``tiled_matmul<16>``, ``block_reduce<float, 256>``),
``extern __shared__`` dynamic shared memory, warp shuffles, shared-memory atomics, overloaded
``__device__`` helpers, ``__launch_bounds__``, ``__restrict__``, ``#define`` constants and a kernel in a
namespace. Each runs on the simulated cuda:0 (which compiles it with the real NVRTC first) and is
checked against numpy; each source also compiles with NVRTC for sm_80 on its own.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc

MATMUL = r"""
#include <cuda_runtime.h>
#include <stdio.h>

#define AT(m, r, c, ld) (m)[(r) * (ld) + (c)]

// C (M x N) = A (M x K) * B (K x N), row-major; one TILE x TILE block of C per thread block.
template <int TILE>
__global__ void tiled_matmul(float* C, const float* A, const float* B, int M, int N, int K)
{
    __shared__ float tileA[TILE][TILE];
    __shared__ float tileB[TILE][TILE + 1];   // padded: no bank conflicts on the column reads
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        tileA[ty][tx] = (row < M && k0 + tx < K) ? AT(A, row, k0 + tx, K) : 0.0f;
        tileB[ty][tx] = (k0 + ty < K && col < N) ? AT(B, k0 + ty, col, N) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += tileA[ty][k] * tileB[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        AT(C, row, col, N) = acc;
}
"""

REDUCE = r"""
// Templated dynamic shared memory: `extern __shared__ T s[]` cannot be declared for two T's in one
// translation unit, hence the usual byte array behind a typed accessor.
template <class T>
struct DynamicSmem {
    __device__ T* ptr() {
        extern __shared__ __align__(16) unsigned char dyn_smem_bytes[];
        return reinterpret_cast<T*>(dyn_smem_bytes);
    }
};

template <class T>
__device__ __forceinline__ T warp_sum(T v)
{
#pragma unroll
    for (int off = warpSize / 2; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// One partial sum per block; each thread first adds two elements per grid-stride step.
template <class T, unsigned int blockSize>
__global__ void block_reduce(const T* __restrict__ in, T* __restrict__ partial, unsigned int n)
{
    T* sdata = DynamicSmem<T>().ptr();
    const unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    const unsigned int step = blockSize * 2 * gridDim.x;
    T sum = T(0);
    while (i < n) {
        sum += in[i];
        if (i + blockSize < n) sum += in[i + blockSize];
        i += step;
    }
    sdata[tid] = sum;
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) sdata[tid] = sum = sum + sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] = sum = sum + sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] = sum = sum + sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        if (blockSize >= 64) sum += sdata[tid + 32];
        sum = warp_sum(sum);
    }
    if (tid == 0) partial[blockIdx.x] = sum;
}
"""

HISTOGRAM = r"""
#define NUM_BINS 64

__global__ void histogram_shared(const unsigned char* __restrict__ data, unsigned int* __restrict__ bins, int n)
{
    __shared__ unsigned int counts[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) counts[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&counts[data[i] % NUM_BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (counts[b]) atomicAdd(&bins[b], counts[b]);
}
"""

OVERLOADED_HELPER = r"""
__device__ float squash(float x) { return x / (1.0f + fabsf(x)); }
__device__ double squash(double x) { return x / (1.0 + fabs(x)); }
__device__ int squash(int x) { return (x > 0) - (x < 0); }
__device__ float2 squash(float2 v) { return make_float2(squash(v.x), squash(v.y)); }

__global__ void apply_squash(const float* xf, const double* xd, const int* xi, const float2* xv,
                             float* of, double* od, int* oi, float2* ov, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    of[i] = squash(xf[i]);
    od[i] = squash(xd[i]);
    oi[i] = squash(xi[i]);
    ov[i] = squash(xv[i]);
}
"""

BOUNDS = r"""
#define THREADS 128
#define MIN_BLOCKS 4

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
saxpby(int n, float a, const float* __restrict__ x, float b, float* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + b * y[i];
}

namespace stencils {
// 3-point average with a shared-memory halo; BLOCK threads per block, exactly.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) smooth3(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float s[BLOCK + 2];
    const int g = blockIdx.x * BLOCK + threadIdx.x;
    const int l = threadIdx.x + 1;
    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x == 0) s[0] = g > 0 && g - 1 < n ? in[g - 1] : 0.0f;
    if (threadIdx.x == BLOCK - 1) s[BLOCK + 1] = g + 1 < n ? in[g + 1] : 0.0f;
    __syncthreads();
    if (g < n) out[g] = (s[l - 1] + s[l] + s[l + 1]) / 3.0f;
}
}  // namespace stencils
"""

# For NVRTC on its own: explicit instantiations of the templates the tests run (what a .cu file that
# launches them gives the compiler implicitly).
INSTANTIATIONS = {
    "MATMUL": "template __global__ void tiled_matmul<16>(float*, const float*, const float*, int, int, int);\n",
    "REDUCE": "template __global__ void block_reduce<float, 256>(const float*, float*, unsigned int);\n",
    "BOUNDS": "template __global__ void stencils::smooth3<128>(const float*, float*, int);\n",
}


def _acc(sim: dc.Accelerator) -> str:
    return sim.id  # launched as a user would: accelerator="cuda:0"


@pytest.mark.parametrize("tile,shape", [(16, (70, 90, 50)), (8, (33, 17, 64)), (32, (64, 64, 96))])
def test_cuda_template_tiled_matmul_by_name_expression(sim, tile, shape):
    m, n, k = shape
    rng = np.random.default_rng(tile)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.zeros((m, n), np.float32)
    kern = dc.RawKernel(MATMUL, f"tiled_matmul<{tile}>", backend="cuda")
    grid = ((n + tile - 1) // tile * tile, (m + tile - 1) // tile * tile)
    dc.launch(kern, grid, c, a, b, m, n, k, local_size=(tile, tile), accelerator=_acc(sim))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype,block", [(np.float32, 256), (np.float64, 128), (np.int32, 64), (np.float32, 512)])
def test_cuda_template_block_reduce_with_dynamic_shared_memory_and_shuffles(sim, dtype, block):
    n = 100_003
    rng = np.random.default_rng(block)
    x = (rng.integers(-1000, 1000, n) if dtype == np.int32 else rng.random(n)).astype(dtype)
    blocks = 24
    partial = np.zeros(blocks, dtype)
    ctype = {np.float32: "float", np.float64: "double", np.int32: "int"}[dtype]
    kern = dc.RawKernel(REDUCE, f"block_reduce<{ctype}, {block}>", backend="cuda",
                        shared_mem=block * np.dtype(dtype).itemsize)
    dc.launch(kern, blocks * block, x, partial, n, local_size=block, accelerator=_acc(sim))
    expected = x.astype(np.float64).sum()
    if dtype == np.int32:
        assert int(partial.sum()) == int(expected)
    else:
        assert float(partial.sum()) == pytest.approx(float(expected), rel=1e-5)


def test_cuda_template_parameter_types_type_python_scalars(sim):
    # `T scale` of scale_by<double> takes a Python float as a double, of scale_by<float> as a float
    src = r"""
    template <typename T>
    __global__ void scale_by(T* x, T scale, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= scale;
    }
    """
    for ctype, dtype in (("double", np.float64), ("float", np.float32)):
        x = np.arange(100, dtype=dtype)
        dc.launch(dc.RawKernel(src, f"scale_by<{ctype}>", backend="cuda"), 128, x, 2.5, 100, local_size=64,
                  accelerator=_acc(sim))
        np.testing.assert_allclose(x, np.arange(100, dtype=dtype) * 2.5)


def test_cuda_histogram_with_shared_memory_atomics(sim):
    n = 50_000
    data = np.random.default_rng(7).integers(0, 256, n).astype(np.uint8)
    bins = np.zeros(64, np.uint32)
    kern = dc.RawKernel(HISTOGRAM, "histogram_shared", backend="cuda")
    dc.launch(kern, 16 * 128, data, bins, n, local_size=128, accelerator=_acc(sim))
    np.testing.assert_array_equal(bins, np.bincount(data % 64, minlength=64).astype(np.uint32))


def test_cuda_overloaded_device_helper(sim):
    n = 257
    rng = np.random.default_rng(8)
    xf = rng.standard_normal(n).astype(np.float32)
    xd = rng.standard_normal(n)
    xi = rng.integers(-5, 6, n).astype(np.int32)
    xv = rng.standard_normal(2 * n).astype(np.float32)
    of, od, oi, ov = np.zeros(n, np.float32), np.zeros(n), np.zeros(n, np.int32), np.zeros(2 * n, np.float32)
    kern = dc.RawKernel(OVERLOADED_HELPER, "apply_squash", backend="cuda", read_only=("xf", "xd", "xi", "xv"))
    dc.launch(kern, n, xf, xd, xi, xv, of, od, oi, ov, n, local_size=64, accelerator=_acc(sim))
    np.testing.assert_allclose(of, xf / (1 + np.abs(xf)), rtol=1e-6)
    np.testing.assert_allclose(od, xd / (1 + np.abs(xd)), rtol=1e-12)
    np.testing.assert_array_equal(oi, np.sign(xi))
    np.testing.assert_allclose(ov, xv / (1 + np.abs(xv)), rtol=1e-6)


def test_cuda_launch_bounds_and_restrict(sim):
    n = 10_000
    rng = np.random.default_rng(9)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    expected = 2.0 * x - 0.5 * y
    dc.launch(dc.RawKernel(BOUNDS, "saxpby", backend="cuda"), 8 * 128, n, 2.0, x, -0.5, y, local_size=128,
              accelerator=_acc(sim))
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_cuda_namespaced_template_with_launch_bounds(sim):
    n = 1000
    x = np.random.default_rng(10).random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    kern = dc.RawKernel(BOUNDS, "stencils::smooth3<128>", backend="cuda")
    dc.launch(kern, 8 * 128, x, out, n, local_size=128, accelerator=_acc(sim))
    padded = np.concatenate([[0.0], x, [0.0]]).astype(np.float32)
    np.testing.assert_allclose(out, (padded[:-2] + padded[1:-1] + padded[2:]) / 3, rtol=1e-6)


def test_cuda_overloaded_kernel_name_is_an_error_naming_the_candidates():
    src = r"""
    __global__ void fill(float* x, float v) { x[threadIdx.x] = v; }
    __global__ void fill(int* x, int v) { x[threadIdx.x] = v; }
    """
    with pytest.raises(ValueError, match=r"'fill'.*overloaded.*fill\(float\* x, float v\).*fill\(int\* x, int v\)"):
        dc.RawKernel(src, "fill", backend="cuda")


def test_cuda_template_named_without_arguments_is_an_error():
    with pytest.raises(ValueError, match=r"template kernel.*tiled_matmul<\.\.\.>"):
        dc.RawKernel(MATMUL, "tiled_matmul", backend="cuda")


def test_cuda_missing_kernel_name_lists_the_global_functions(sim):
    kern = dc.RawKernel(HISTOGRAM + OVERLOADED_HELPER, "histogram", backend="cuda")
    found = r"'histogram'.*no __global__ function.*histogram_shared\(.*apply_squash\("
    with pytest.raises(dc.CompilationError, match=found):
        dc.launch(kern, 128, np.zeros(4, np.uint8), np.zeros(64, np.uint32), 4, accelerator=_acc(sim))


def test_cuda_other_kernels_may_be_overloaded(sim):
    # an overloaded kernel beside the one launched is no obstacle (each overload is its own symbol)
    src = r"""
    __global__ void fill(float* x, float v) { x[threadIdx.x] = v; }
    __global__ void fill(int* x, int v) { x[threadIdx.x] = v; }
    __global__ void iota(int* x) { x[threadIdx.x] = threadIdx.x; }
    """
    x = np.zeros(32, np.int32)
    dc.launch(dc.RawKernel(src, "iota", backend="cuda"), 32, x, local_size=32, accelerator=_acc(sim))
    np.testing.assert_array_equal(x, np.arange(32))


@pytest.mark.skipif(nvrtc_missing(), reason="NVRTC is not installed (pip install nvidia-cuda-nvrtc-cu12)")
@pytest.mark.parametrize("source_name", ["MATMUL", "REDUCE", "HISTOGRAM", "OVERLOADED_HELPER", "BOUNDS"])
def test_cuda_outside_kernels_compile_with_nvrtc_for_sm_80(source_name):
    import dotcompute.cuda as dcuda

    # NVRTC has no host headers; a .cu file's standard includes are what RawKernel stands in for
    source = re.sub(r"^\s*#include[^\n]*$", "", globals()[source_name], flags=re.M)
    cubin = dcuda.compile(source + INSTANTIATIONS.get(source_name, ""), arch="sm_80",
                          name=f"{source_name.lower()}.cu")
    assert cubin[:4] == b"\x7fELF"
    kernel = {"MATMUL": b"tiled_matmul", "REDUCE": b"block_reduce", "HISTOGRAM": b"histogram_shared",
              "OVERLOADED_HELPER": b"apply_squash", "BOUNDS": b"smooth3"}[source_name]
    assert kernel in cubin  # the (instantiated) kernel is in the image


def test_cuda_alternatives_under_preprocessor_conditionals(sim):
    # one kernel written twice under #if/#else is not an overload: only one survives the preprocessor
    src = r"""
    #ifdef USE_DOUBLE
    __global__ void twice(double* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0; }
    #else
    __global__ void twice(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }
    #endif
    """
    x = np.arange(32, dtype=np.float64)
    dc.launch(dc.RawKernel(src, "twice", backend="cuda", options="-DUSE_DOUBLE"), 32, x, 32, local_size=32,
              accelerator=_acc(sim))
    np.testing.assert_array_equal(x, 2 * np.arange(32))
    y = np.arange(32, dtype=np.float32)
    dc.launch(dc.RawKernel(src, "twice", backend="cuda"), 32, y, 32, local_size=32, accelerator=_acc(sim))
    np.testing.assert_array_equal(y, 2 * np.arange(32, dtype=np.float32))


def test_cuda_true_overloads_in_a_source_with_preprocessor_conditionals(sim):
    # overloads beside an #if: the preprocessed source tells them apart from alternatives
    src = r"""
    #if __CUDA_ARCH__ >= 700
    #define SCALE 3
    #else
    #define SCALE 5
    #endif
    __global__ void fill(float* x, float v) { x[threadIdx.x] = v * SCALE; }
    __global__ void fill(int* x, int v) { x[threadIdx.x] = v * SCALE; }
    extern "C" __global__ void iota(int* x) { x[threadIdx.x] = threadIdx.x * SCALE; }
    """
    x = np.zeros(32, np.int32)
    dc.launch(dc.RawKernel(src, "iota", backend="cuda"), 32, x, local_size=32, accelerator=_acc(sim))
    np.testing.assert_array_equal(x, 3 * np.arange(32))  # the simulated device is sm_90


SAMPLES_STYLE_SHARED = r"""
// A typed view of dynamic shared memory per element type, specialised for double (its own symbol).
template <class T> struct SmemOf {
    __device__ inline operator T*() { extern __shared__ int smem_i[]; return (T*)smem_i; }
};
template <> struct SmemOf<double> {
    __device__ inline operator double*() { extern __shared__ double smem_d[]; return (double*)smem_d; }
};

template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void sum_pairs(T* g_in, T* g_out, unsigned int n)
{
    T* s = SmemOf<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
    T v = 0;
    while (i < n) {
        v += g_in[i];
        if (nIsPow2 || i + blockSize < n) v += g_in[i + blockSize];
        i += blockSize * 2 * gridDim.x;
    }
    s[tid] = v;
    __syncthreads();
    for (unsigned int k = blockSize / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] = v = v + s[tid + k];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = v;
}

template <unsigned int blockSize>
__global__ void count_positive(const int* in, unsigned int* out, int n)
{
    extern __shared__ unsigned int flags[];
    int i = blockIdx.x * blockSize + threadIdx.x;
    flags[threadIdx.x] = (i < n && in[i] > 0) ? 1u : 0u;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int c = 0;
        for (unsigned int k = 0; k < blockSize; ++k) c += flags[k];
        atomicAdd(out, c);
    }
}
"""


@pytest.mark.parametrize("ctype,dtype,pow2", [("double", np.float64, "true"), ("float", np.float32, "false"),
                                              ("unsigned int", np.uint32, "false")])
def test_cuda_three_template_arguments_and_specialised_shared_memory(sim, ctype, dtype, pow2):
    n = 1 << 14 if pow2 == "true" else 12_345
    x = np.random.default_rng(11).integers(0, 100, n).astype(dtype)
    out = np.zeros(16, dtype)
    kern = dc.RawKernel(SAMPLES_STYLE_SHARED, f"sum_pairs<{ctype}, 128, {pow2}>", backend="cuda",
                        shared_mem=128 * np.dtype(dtype).itemsize)
    dc.launch(kern, 16 * 128, x, out, n, local_size=128, accelerator=_acc(sim))
    assert out.astype(np.float64).sum() == x.astype(np.float64).sum()


def test_cuda_extern_shared_array_inside_a_template_kernel(sim):
    n = 3000
    x = np.random.default_rng(12).integers(-10, 10, n).astype(np.int32)
    out = np.zeros(1, np.uint32)
    kern = dc.RawKernel(SAMPLES_STYLE_SHARED, "count_positive<256>", backend="cuda", shared_mem=256 * 4)
    dc.launch(kern, 12 * 256, x, out, n, local_size=256, accelerator=_acc(sim))
    assert int(out[0]) == int((x > 0).sum())


def test_cuda_two_instantiations_of_one_source(sim):
    # two RawKernels of one source: each its own module and instantiation, both launchable
    x = np.random.default_rng(13).random(4096, dtype=np.float32)
    for block in (64, 128):
        out = np.zeros(8, np.float32)
        kern = dc.RawKernel(REDUCE, f"block_reduce<float, {block}>", backend="cuda", shared_mem=block * 4)
        dc.launch(kern, 8 * block, x, out, x.size, local_size=block, accelerator=_acc(sim))
        assert float(out.sum()) == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)


def test_cuda_shared_mem_argument_is_checked():
    with pytest.raises(ValueError, match="shared_mem"):
        dc.RawKernel(HISTOGRAM, "histogram_shared", backend="cuda", shared_mem=-1)
    with pytest.raises(ValueError, match="shared_mem"):
        dc.RawKernel("__kernel void k() {}", "k", backend="opencl", shared_mem=64)
    with pytest.raises(ValueError, match="name expression"):
        dc.RawKernel(MATMUL, "tiled_matmul<16", backend="cuda")


@pytest.mark.skipif(nvrtc_missing(), reason="NVRTC is not installed (pip install nvidia-cuda-nvrtc-cu12)")
def test_cuda_name_expression_naming_nothing_lists_the_kernels(sim):
    with pytest.raises(dc.CompilationError, match=r"(?s)^RawKernel 'tiled_matml<16>'.*no __global__ function.*"
                                                  r"template<int TILE> tiled_matmul\(float\* C"):
        dc.RawKernel(MATMUL, "tiled_matml<16>", backend="cuda").compile(sim)
    with pytest.raises(dc.CompilationError, match=r"(?s)^RawKernel 'tiled_matmul<16, 2>'.*template parameters"):
        dc.RawKernel(MATMUL, "tiled_matmul<16, 2>", backend="cuda").compile(sim)


def test_cuda_name_expression_and_shared_mem_survive_pickling():
    import pickle

    kern = dc.RawKernel(REDUCE, "block_reduce<float, 256>", backend="cuda", shared_mem=1024, read_only=("in",))
    again = pickle.loads(pickle.dumps(kern))
    assert (again.name, again.shared_mem, again.read_only) == ("block_reduce<float, 256>", 1024, frozenset({0}))


def test_a_kernel_whose_parameter_list_is_thousands_of_characters_long(sim):
    # generated code (dotcompute's own type-conformance kernels) declares hundreds of parameters on one
    # line; the simulator's registration must find the end of the list however long it is
    names = [f"coefficient_number_{i:03d}" for i in range(120)]
    params = ", ".join(f"float {p}" for p in names)
    body = " + ".join(names)
    src = (f'extern "C" __global__ void weighted(float* out, {params})\n'
           f"{{ if (threadIdx.x == 0) out[0] = {body}; }}\n")
    assert len(src.splitlines()[0]) > 3000
    out = np.zeros(1, np.float32)
    values = [float(i) for i in range(len(names))]
    dc.launch(dc.RawKernel(src, "weighted", backend="cuda"), 32, out, *values, local_size=32,
              accelerator=_acc(sim))
    assert out[0] == np.float32(sum(values))


MACRO_KERNELS = r"""
#include <cuda_runtime.h>
// One body, stamped out per type by a macro, as many libraries write their elementwise kernels.
#define DEFINE_AXPY(NAME, T)                                        \
    __global__ void NAME(T* y, const T* x, T a, int n) {            \
        int i = blockIdx.x * blockDim.x + threadIdx.x;              \
        if (i < n) y[i] = a * x[i] + y[i];                          \
    }
DEFINE_AXPY(axpy_f32, float)
DEFINE_AXPY(axpy_f64, double)

#define DEFINE_FILL_C(NAME, T) extern "C" __global__ void NAME(T* y, T v, int n) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
DEFINE_FILL_C(fill_i32, int)

static __global__ void file_local_scale(float* x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


@pytest.mark.parametrize("name,dtype", [("axpy_f32", np.float32), ("axpy_f64", np.float64)])
def test_cuda_kernels_defined_by_a_macro(sim, name, dtype):
    n = 1001
    x = np.arange(n, dtype=dtype)
    y = np.ones(n, dtype)
    dc.launch(dc.RawKernel(MACRO_KERNELS, name, backend="cuda"), n, y, x, dtype(2.5), np.int32(n),
              accelerator=_acc(sim))
    np.testing.assert_array_equal(y, 2.5 * np.arange(n, dtype=dtype) + 1)


def test_cuda_extern_c_kernel_defined_by_a_macro_and_a_static_kernel(sim):
    y = np.zeros(77, np.int32)
    dc.launch(dc.RawKernel(MACRO_KERNELS, "fill_i32", backend="cuda"), 77, y, np.int32(-4), np.int32(77),
              accelerator=_acc(sim))
    assert (y == -4).all()
    x = np.ones(50, np.float32)
    dc.launch(dc.RawKernel(MACRO_KERNELS, "file_local_scale", backend="cuda"), 50, x, np.float32(3), np.int32(50),
              accelerator=_acc(sim))
    assert (x == 3).all()
