"""cuRAND's device API (curand_kernel.h) on the simulated cuda:0, checked bit for bit against NVIDIA's
own cuRAND library (issue 23).

The simulator compiles NVIDIA's cuRAND headers (the nvidia-curand-cu12 wheel) against its shim. The
reference is the same wheel's libcurand.so: curandCreateGeneratorHost generates on the CPU, no GPU
needed. Its default (legacy) ordering lays out the device API's streams in a fixed pattern, found by
matching and stated per generator below: XORWOW's value k of subsequence i (curand_init(seed, i, 0))
is at k * 4096 + i, MRG32k3a's at k * 81920 + i; Philox4_32_10's counter k of subsequence i is the
four values at 4 * (k * 65536 + i). Normals come in Box-Muller pairs (XORWOW: pair k of subsequence
i at 2 * (k * 4096 + i), MRG32k3a likewise with 81920).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc
from dotcompute.cuda import cuda_include_dirs

SHIM = Path(__file__).resolve().parents[3] / "cuda" / "sim" / "shim"


def _curand_library() -> ctypes.CDLL | None:
    try:
        import nvidia.curand
    except ImportError:
        return None
    for base in nvidia.curand.__path__:
        for lib in sorted((Path(base) / "lib").glob("libcurand.so*")):
            return ctypes.CDLL(str(lib))
    return None


_LIB = _curand_library()
_MISSING = ("NVIDIA's cuRAND is not installed (pip install nvidia-curand-cu12)"
            if _LIB is None or not any(Path(d, "curand_kernel.h").is_file() for d in cuda_include_dirs()) else
            "NVRTC is not installed (pip install dotcompute[cuda])" if nvrtc_missing() else None)
needs_curand = pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")

XORWOW, MRG32K3A, PHILOX = 101, 121, 161  # curandRngType_t
STATES = {XORWOW: "curandState", MRG32K3A: "curandStateMRG32k3a_t", PHILOX: "curandStatePhilox4_32_10_t"}

# one kernel for every case (one build): what = 0 bits, 1 uniform, 2 normal, 3 uniform4, 4 normal2
# (the float4/float2 forms fill 4 or 2 consecutive outputs)
SOURCE = r"""
#include <curand_kernel.h>
template <class State>
__device__ void draw(State* s, int what, float* out, int n) {
  for (int k = 0; k < n;) {
    if (what == 0) { reinterpret_cast<unsigned int*>(out)[k++] = curand(s); }
    else if (what == 1) { out[k++] = curand_uniform(s); }
    else if (what == 2) { out[k++] = curand_normal(s); }
    else if (what == 4) { float2 v = curand_normal2(s); out[k++] = v.x; out[k++] = v.y; }
  }
}
__device__ void draw4(curandStatePhilox4_32_10_t* s, int what, float* out, int n) {
  for (int k = 0; k < n; k += 4) {
    float4 v = what == 3 ? curand_uniform4(s) : curand_normal4(s);
    out[k] = v.x; out[k + 1] = v.y; out[k + 2] = v.z; out[k + 3] = v.w;
  }
}
__global__ void sequences(int generator, int what, unsigned long long seed, unsigned long long offset, float* out,
                          int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* mine = out + i * n;
  if (generator == 101) { curandState s; curand_init(seed, i, offset, &s); draw(&s, what, mine, n); }
  if (generator == 121) { curandStateMRG32k3a_t s; curand_init(seed, i, offset, &s); draw(&s, what, mine, n); }
  if (generator == 161) {
    curandStatePhilox4_32_10_t s;
    curand_init(seed, i, offset, &s);
    if (what >= 3) draw4(&s, what, mine, n); else draw(&s, what, mine, n);
  }
}
"""
_KERNEL: dc.RawKernel | None = None


def device(sim: dc.Accelerator, generator: int, what: int, threads: int, n: int, seed: int,
           offset: int = 0) -> np.ndarray:
    """[threads, n]: thread i's n draws from curand_init(seed, i, offset)."""
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = dc.RawKernel(SOURCE, "sequences", backend="cuda")
    out = sim.zeros((threads * n,), np.float32)
    sim.launch(_KERNEL, threads, np.int32(generator), np.int32(what), np.uint64(seed), np.uint64(offset), out,
               np.int32(n), local_size=min(threads, 256))
    return out.numpy().reshape(threads, n)


def host(generator: int, what: str, count: int, seed: int) -> np.ndarray:
    """libcurand's host generator (CPU), default ordering: `count` values."""
    assert _LIB is not None
    gen = ctypes.c_void_p()
    assert _LIB.curandCreateGeneratorHost(ctypes.byref(gen), generator) == 0
    try:
        assert _LIB.curandSetPseudoRandomGeneratorSeed(gen, ctypes.c_ulonglong(seed)) == 0
        out = np.zeros(count, np.uint32 if what == "bits" else np.float32)
        ptr, size = out.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(count)
        status = {"bits": lambda: _LIB.curandGenerate(gen, ptr, size),
                  "uniform": lambda: _LIB.curandGenerateUniform(gen, ptr, size),
                  "normal": lambda: _LIB.curandGenerateNormal(gen, ptr, size, ctypes.c_float(0), ctypes.c_float(1))}
        assert status[what]() == 0
    finally:
        _LIB.curandDestroyGenerator(gen)
    return out


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32)


@needs_curand
@pytest.mark.parametrize(("what", "kind"), [(0, "bits"), (1, "uniform"), (2, "normal")])
def test_xorwow_matches_libcurand(sim, what, kind):
    threads, n, seed = 4096, 4, 1234  # the host generator's 4096 subsequences, all of them
    got = device(sim, XORWOW, what, threads, n, seed)
    ref = host(XORWOW, kind, threads * n, seed)
    if kind == "normal":  # Box-Muller pairs: pair k of subsequence i at 2 * (k * 4096 + i)
        want = ref.reshape(n // 2, threads, 2).transpose(1, 0, 2).reshape(threads, n)
    else:
        want = ref.reshape(n, threads).T
    np.testing.assert_array_equal(bits(got), bits(want))


@needs_curand
@pytest.mark.parametrize(("what", "kind"), [(0, "bits"), (1, "uniform"), (2, "normal"), (3, "uniform"),
                                            (4, "normal"), (5, "normal")])
def test_philox_matches_libcurand(sim, what, kind):
    threads, n, seed, streams = 256, 8, 77, 65536  # the host generator's 65536 subsequences
    got = device(sim, PHILOX, what, threads, n, seed)
    ref = host(PHILOX, kind, streams * n, seed)
    # counter k of subsequence i: the four values at 4 * (k * 65536 + i)
    want = ref.reshape(n // 4, streams, 4).transpose(1, 0, 2).reshape(streams, n)[:threads]
    np.testing.assert_array_equal(bits(got), bits(want))


@needs_curand
def test_offset_skips_ahead(sim):
    # curand_init's offset skips that many draws of the subsequence (skipahead, its jump matrices for
    # XORWOW and MRG32k3a, the counter for Philox)
    for generator in (XORWOW, MRG32K3A, PHILOX):
        whole = bits(device(sim, generator, 0, 32, 40, seed=5))
        later = bits(device(sim, generator, 0, 32, 8, seed=5, offset=32))
        np.testing.assert_array_equal(later, whole[:, 32:], err_msg=STATES[generator])


@needs_curand
@pytest.mark.parametrize(("what", "kind"), [(0, "bits"), (1, "uniform"), (2, "normal")])
def test_mrg32k3a_matches_libcurand(sim, what, kind):
    # (the sm_60 path of NVIDIA's headers: see the shim's curand_kernel.h)
    threads, n, seed, streams = 256, 4, 31, 81920  # the host generator's 81920 subsequences
    got = device(sim, MRG32K3A, what, threads, n, seed)
    ref = host(MRG32K3A, kind, streams * n, seed)
    if kind == "normal":  # Box-Muller pairs: pair k of subsequence i at 2 * (k * 81920 + i)
        want = ref.reshape(n // 2, streams, 2).transpose(1, 0, 2).reshape(streams, n)[:threads]
    else:  # value k of subsequence i at k * 81920 + i
        want = ref.reshape(n, streams).T[:threads]
    np.testing.assert_array_equal(bits(got), bits(want))


@needs_curand
def test_kernel_right_below_the_include(sim):
    # the `>` of `#include <curand_kernel.h>` just above a kernel is not a template header's end: the
    # kernel gets C linkage and is found by its name
    src = ('#include <curand_kernel.h>\n__global__ void first(unsigned int* out) {\n'
           '  curandStatePhilox4_32_10_t s; curand_init(3, threadIdx.x, 0, &s); out[threadIdx.x] = curand(&s);\n}\n')
    out = sim.zeros((4,), np.uint32)
    sim.launch(dc.RawKernel(src, "first", backend="cuda"), 4, out, local_size=4)
    np.testing.assert_array_equal(out.numpy(), host(PHILOX, "bits", 4 * 65536, 3).reshape(65536, 4)[:4, 0])


def test_missing_headers_name_the_wheel():
    # without NVIDIA's headers the shim's <curand_kernel.h> stops the host build with the install line
    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler")
    r = subprocess.run([cxx, "-fsyntax-only", "-x", "c++", "-I", str(SHIM), "-I", str(SHIM / "include"), "-"],
                       input="#include <curand_kernel.h>\n", capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "pip install nvidia-curand-cu12" in r.stderr
