"""The simulator's CUDA device API as nvcc accepts it (issue 23): the atomic overload set with C++'s
argument conversions, ``<string.h>``/``<time.h>`` in device code, every ``extern __shared__``
spelling. Each kernel is compiled by the real NVRTC first, then run on the simulated cuda:0 and
checked against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc

pytestmark = pytest.mark.skipif(nvrtc_missing(), reason="NVRTC is not installed (pip install dotcompute[cuda])")

# Arguments of other types than the pointee, as CUDA code writes them: literals, threadIdx.x
# (unsigned) into int atomics, a double into a float atomic. Every thread of the grid takes part.
ATOMICS = r"""
extern "C" __global__ void mixed_atomics(int* i, unsigned int* u, float* f, double* d,
                                          unsigned long long* q, long long* ll, unsigned short* us)
{
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&u[0], 1);                 // unsigned*, int
    atomicAdd(&f[0], 1.0);               // float*, double
    atomicAdd(&d[0], 0.5f);              // double*, float
    atomicAdd(&q[0], 2);                 // unsigned long long*, int
    atomicSub(&i[0], 3u);                // int*, unsigned
    atomicExch(&i[1], tid);              // int*, unsigned
    atomicMax(&i[2], tid);
    atomicMin(&i[3], -(int)tid);
    atomicMax(&u[1], tid * 7);
    atomicMin(&u[2], tid + 5);
    atomicInc(&u[3], 16);                // wraps to 0 after 16
    atomicDec(&u[4], 9);                 // wraps to 9 below 0
    atomicAnd(&u[5], ~(1u << (tid % 32)));
    atomicOr(&i[4], 1 << (tid % 31));
    atomicXor(&q[1], 1ull << (tid % 64));
    atomicMax(&ll[0], (long long)tid * 1000000000ll);
    atomicMin(&ll[1], -(long long)tid);
    atomicMax(&q[2], tid);
    atomicAdd_block(&i[5], 2);
    atomicAdd_system(&f[1], 0.25);
    atomicExch(&f[2], 3);                // float*, int
    atomicCAS(&i[6], 0, tid + 1);        // int*, int, unsigned: the first thread to come swaps
    atomicCAS(&q[3], 0, tid + 1);        // unsigned long long*, int, unsigned
    atomicCAS(&us[0], 0, tid + 1);       // unsigned short*, int, unsigned (sm_70+)
}
"""


def test_atomic_overloads_convert_their_arguments(sim):
    threads = 1024
    k = dc.RawKernel(ATOMICS, "mixed_atomics", backend="cuda")
    i = sim.asarray(np.array([100, -1, -5, 5, 0, 0, 0, 0], np.int32))
    u = sim.asarray(np.array([0, 0, 2**32 - 1, 0, 0, 2**32 - 1], np.uint32))
    f = sim.asarray(np.zeros(3, np.float32))
    d = sim.asarray(np.zeros(1, np.float64))
    q = sim.asarray(np.array([0, 0, 0, 0], np.uint64))
    ll = sim.asarray(np.array([-1, 0], np.int64))
    us = sim.asarray(np.array([0], np.uint16))
    sim.launch(k, threads, i, u, f, d, q, ll, us, local_size=256)
    tid = np.arange(threads)
    iv, uv, qv = i.numpy(), u.numpy(), q.numpy()
    assert iv[0] == 100 - 3 * threads
    assert 0 <= iv[1] < threads  # the last exchange wins: some thread's id
    assert iv[2] == threads - 1 and iv[3] == -(threads - 1)
    assert iv[4] == np.bitwise_or.reduce(1 << (tid % 31))
    assert iv[5] == 2 * threads
    assert 1 <= iv[6] <= threads and 1 <= qv[3] <= threads  # one thread's swap, never two
    assert uv[0] == threads
    assert uv[1] == 7 * (threads - 1) and uv[2] == 5
    assert uv[3] == threads % 17  # atomicInc counts 0..16 and wraps
    dec = 0  # atomicDec from 0 with limit 9: 0 -> 9 -> 8 ... -> 0 -> 9
    for _ in range(threads):
        dec = 9 if dec == 0 or dec > 9 else dec - 1
    assert uv[4] == dec
    assert uv[5] == 0  # every bit cleared by some thread
    assert qv[0] == 2 * threads
    xor = 0
    for t in tid:
        xor ^= 1 << int(t % 64)
    assert int(qv[1]) == xor and qv[2] == threads - 1
    np.testing.assert_array_equal(f.numpy(), np.array([threads, threads * 0.25, 3.0], np.float32))
    assert d.numpy()[0] == 0.5 * threads
    np.testing.assert_array_equal(ll.numpy(), [(threads - 1) * 1_000_000_000, -(threads - 1)])
    assert 1 <= us.numpy()[0] <= threads


HALF_ATOMICS = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void half_counts(__half* h, __half2* h2, __nv_bfloat16* b)
{
    atomicAdd(h, __float2half(1.0f));
    atomicAdd(h2, __floats2half2_rn(1.0f, 0.5f));
    atomicAdd(b, __float2bfloat16(1.0f));
}
"""


def test_half_and_bfloat16_atomic_add(sim):
    from dotcompute.cuda import cuda_include_dirs

    if not cuda_include_dirs():
        pytest.skip("CUDA's headers (cuda_fp16.h) are not installed (pip install dotcompute[cuda])")
    k = dc.RawKernel(HALF_ATOMICS, "half_counts", backend="cuda")
    h = sim.zeros((1,), np.float16)
    h2 = sim.zeros((2,), np.float16)
    b = sim.zeros((1,), np.uint16)  # bfloat16 bits
    sim.launch(k, 512, h, h2, b, local_size=128)
    assert h.numpy()[0] == 512.0  # integers up to 2048 are exact in half
    np.testing.assert_array_equal(h2.numpy(), np.array([512.0, 256.0], np.float16))
    # bfloat16 has 8 significant bits: 256 + 1 rounds back to 256 (nearest even), so the count stops
    assert np.array([int(b.numpy()[0]) << 16], np.uint32).view(np.float32)[0] == 256.0


VECTOR_ATOMICS = r"""
extern "C" __global__ void vector_sums(const float* in, float2* pair, float4* quad)
{
    const float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    atomicAdd(pair, make_float2(v, 2.0f * v));            // sm_90: one atomic add per element
    atomicAdd(quad, make_float4(1.0f, v, -v, 0.5f));
}
"""


def test_float2_float4_atomic_add(sim):
    x = np.random.default_rng(4).integers(0, 64, 512).astype(np.float32)  # integers: every order sums exactly
    pair, quad = sim.zeros((2,), np.float32), sim.zeros((4,), np.float32)
    sim.launch(dc.RawKernel(VECTOR_ATOMICS, "vector_sums", backend="cuda"), 512, sim.asarray(x), pair, quad,
               local_size=128)
    s = float(x.sum())
    np.testing.assert_array_equal(pair.numpy(), [s, 2 * s])
    np.testing.assert_array_equal(quad.numpy(), [512.0, s, -s, 256.0])


STRINGS = r"""
#include <cuda_runtime.h>
#include <string.h>
#include <cstring>
#include <time.h>
extern "C" __global__ void strings(const float* in, float* out, long long* clocks)
{
    const int i = threadIdx.x;
    float v;
    std::memcpy(&v, in + i, sizeof v);          // <cstring> declares them in std too
    char word[16];
    strcpy(word, "cuda");
    strcat(word, "sim");
    memmove(word + 1, word, strlen(word) + 1);   // "ccudasim"
    out[i] = v * 2.0f + (float)strlen(word) * 100.0f + (float)(strchr(word, 's') - word) * 1000.0f
             + (float)(memcmp("ab", "ac", 2) < 0) * 10000.0f + (float)(strcmp(word, "ccudasim") == 0) * 20000.0f;
    memset(word, 0, sizeof word);
    clock_t start = clock();
    long long t0 = clock64();
    clocks[2 * i] = clock64() - t0;
    clocks[2 * i + 1] = (long long)(clock() - start);
}
"""


def test_string_and_time_headers_in_device_code(sim):
    k = dc.RawKernel(STRINGS, "strings", backend="cuda")
    x = np.arange(32, dtype=np.float32)
    out = sim.zeros((32,), np.float32)
    clocks = sim.zeros((64,), np.int64)
    sim.launch(k, 32, sim.asarray(x), out, clocks, local_size=32)
    np.testing.assert_array_equal(out.numpy(), x * 2 + 8 * 100 + 5 * 1000 + 10000 + 20000)
    assert (clocks.numpy() >= 0).all()  # clock() and clock64() read one monotonic counter


# nvcc accepts the storage class, the qualifiers and __shared__ in any order.
SHARED_SPELLINGS = r"""
extern "C" __global__ void spelled(const float* in, float* out)
{
    extern float __shared__ a[];
    extern volatile __shared__ float b[];
    extern __shared__ __align__(16) unsigned char raw[];
    const unsigned int t = threadIdx.x;
    a[t] = in[t];
    __syncthreads();
    b[blockDim.x + t] = a[blockDim.x - 1 - t] + 1.0f;   // a and b are the same memory
    __syncthreads();
    const float* viewed = reinterpret_cast<const float*>(raw);
    out[t] = viewed[blockDim.x + t] + viewed[t];
}
"""


def test_extern_shared_spellings_share_one_dynamic_array(sim):
    k = dc.RawKernel(SHARED_SPELLINGS, "spelled", backend="cuda", shared_mem=2 * 64 * 4)
    x = np.random.default_rng(7).random(64, dtype=np.float32)
    out = sim.zeros((64,), np.float32)
    sim.launch(k, 64, sim.asarray(x), out, local_size=64)
    np.testing.assert_allclose(out.numpy(), x[::-1] + 1 + x, rtol=1e-6)


def test_curand_device_api_without_its_headers_names_the_wheel(sim, monkeypatch):
    import dotcompute.runtime.raw_kernel as raw_kernel
    from dotcompute.cuda import cuda_include_dirs

    # as in an installation without nvidia-curand-cu12 (with it, test_curand_device.py runs the API)
    without = tuple(d for d in cuda_include_dirs() if not (Path(d) / "curand_kernel.h").is_file())
    monkeypatch.setattr(raw_kernel, "cuda_include_dirs", lambda: without)
    match = r"curand_kernel\.h.*cuRAND's device API.*pip install nvidia-curand-cu12"
    src = '#include <curand_kernel.h>\nextern "C" __global__ void k(float* o) { o[0] = 3.0f; }\n'
    with pytest.raises(dc.CompilationError, match=match):
        sim.launch(dc.RawKernel(src, "k", backend="cuda"), 1, sim.zeros((1,), np.float32))
