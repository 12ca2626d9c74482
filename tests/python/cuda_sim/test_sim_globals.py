"""``__constant__`` and ``__device__`` variables of a raw CUDA kernel, read and written from Python
through ``RawKernel.globals`` (cuModuleGetGlobal), on the simulated cuda:0 (issue 23)."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc

pytestmark = pytest.mark.skipif(nvrtc_missing(), reason="NVRTC is not installed (pip install dotcompute[cuda])")

RADIUS = 8

# A row convolution in the style of cuda-samples' convolutionSeparable: the taps live in constant
# memory, written by the host before the launch.
CONVOLUTION = f"""
#define KERNEL_RADIUS {RADIUS}
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
__constant__ float c_Kernel[KERNEL_LENGTH];

extern "C" __global__ void convolution_row(float* dst, const float* src, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; ++j) {{
    int k = i + j;
    if (k >= 0 && k < n) sum += c_Kernel[KERNEL_RADIUS - j] * src[k];
  }}
  dst[i] = sum;
}}
"""

COUNTER = """
__device__ int d_count;
__device__ unsigned long long d_seen[4];

extern "C" __global__ void count_positive(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f) atomicAdd(&d_count, 1);
  if (i == 0) d_seen[0] += 1;  // launches so far, kept in device memory between launches
}
"""


def _convolve(src: np.ndarray, taps: np.ndarray) -> np.ndarray:
    # dst[i] = sum_j taps[R - j] * src[i + j], zero outside: numpy's convolution with the taps as given
    return np.convolve(src.astype(np.float64), taps.astype(np.float64), mode="same")


def test_constant_coefficients_written_from_python(sim):
    k = dc.RawKernel(CONVOLUTION, "convolution_row", backend="cuda")
    coeffs = k.globals["c_Kernel"]
    assert coeffs.dtype == np.float32 and coeffs.shape == (2 * RADIUS + 1,)  # from the declaration
    rng = np.random.default_rng(3)
    n = 1000
    src = rng.standard_normal(n, dtype=np.float32)
    dsrc, dst = sim.asarray(src), sim.zeros((n,), np.float32)
    for _ in range(2):  # a second write reaches the next launch too
        taps = rng.random(2 * RADIUS + 1, dtype=np.float32)
        coeffs.copy_from(taps)
        sim.launch(k, n, dst, dsrc, np.int32(n), local_size=128)
        np.testing.assert_allclose(dst.numpy(), _convolve(src, taps), rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(coeffs.numpy(), taps)
    taps = np.linspace(0, 1, 2 * RADIUS + 1, dtype=np.float32)
    k.globals.get("c_Kernel", dtype=np.float32, shape=(2 * RADIUS + 1,), accelerator=sim)[...] = taps
    sim.launch(k, n, dst, dsrc, np.int32(n), local_size=128)
    np.testing.assert_allclose(dst.numpy(), _convolve(src, taps), rtol=1e-4, atol=1e-5)


def test_device_counter_written_by_the_kernel_is_read_back(sim):
    k = dc.RawKernel(COUNTER, "count_positive", backend="cuda")
    x = np.random.default_rng(4).standard_normal(5000).astype(np.float32)
    count = k.globals["d_count"]
    assert count.dtype == np.int32 and count.shape == (1,)
    count.copy_from(np.zeros(1, np.int32))
    seen = k.globals.get("d_seen", dtype=np.uint64, shape=(4,), accelerator="cuda:0")
    seen.copy_from(np.zeros(4, np.uint64))
    dx = sim.asarray(x)
    sim.launch(k, x.size, dx, np.int32(x.size), local_size=256)
    assert count.numpy()[0] == int((x > 0).sum())
    sim.launch(k, x.size, dx, np.int32(x.size), local_size=256)
    assert count.numpy()[0] == 2 * int((x > 0).sum())  # the same variable, not a copy per read
    assert seen.numpy().tolist() == [2, 0, 0, 0]
    # bytes when asked for: the same memory under another dtype
    raw = k.globals.get("d_count", dtype=np.uint8)
    assert raw.shape == (4,) and raw.numpy().view(np.int32)[0] == 2 * int((x > 0).sum())


def test_writes_through_a_host_view_reach_the_next_launch(sim):
    src = '__device__ int d_v[4];\nextern "C" __global__ void k(int* o) { o[threadIdx.x] = 10 * d_v[threadIdx.x]; }'
    k = dc.RawKernel(src, "k", backend="cuda")
    g = k.globals["d_v"]
    with g.host() as h:  # the mirror is uploaded when the block ends, not at a later device use
        h[:] = [1, 2, 3, 4]
    out = sim.zeros((4,), np.int32)
    sim.launch(k, 4, out, local_size=4)
    assert out.numpy().tolist() == [10, 20, 30, 40]


def test_a_shape_larger_than_the_variable_is_refused(sim):
    k = dc.RawKernel(CONVOLUTION, "convolution_row", backend="cuda")
    with pytest.raises(ValueError, match=r"c_Kernel.*68 bytes"):
        k.globals.get("c_Kernel", dtype=np.float32, shape=(18,))
    with pytest.raises(ValueError, match="c_Kernel"):
        k.globals.get("c_Kernel", dtype=np.float64, shape=(9,))
    # a prefix is fine
    assert k.globals.get("c_Kernel", dtype=np.float32, shape=(4,)).shape == (4,)


def test_an_unknown_name_is_a_key_error_naming_it(sim):
    k = dc.RawKernel(CONVOLUTION, "convolution_row", backend="cuda")
    with pytest.raises(KeyError, match="c_Kernal"):
        k.globals["c_Kernal"]
    with pytest.raises(KeyError, match="convolution_row"):  # a kernel is not a variable
        k.globals["convolution_row"]
    with pytest.raises(KeyError, match="environ"):  # nor is a symbol of a library the module links
        k.globals["environ"]
    assert "c_Kernel" in k.globals and "nothing" not in k.globals


def test_the_buffer_keeps_the_module_alive(sim):
    k = dc.RawKernel(COUNTER, "count_positive", backend="cuda")
    count = k.globals["d_count"]
    count.copy_from(np.array([41], np.int32))
    del k  # the RawKernel goes; the compiled module stays loaded while the buffer lives
    import gc

    gc.collect()
    assert count.numpy().tolist() == [41]


def test_globals_are_cuda_only():
    k = dc.RawKernel("void f(void) {}", "f", backend="cpu")
    with pytest.raises(dc.BackendUnavailableError, match="CUDA"):
        k.globals["x"]


@pytest.mark.parametrize(("decl", "expected"), [
    ("__device__ unsigned long long d_x[4];", np.uint64),
    ("__constant__ const double d_x = 1.0;", np.float64),
    ("static __device__ volatile uint16_t d_x;", np.uint16),
    ("__device__ __constant__ int d_x[2][3];", np.int32),
    ("__constant__ float2 d_x[8];", None),  # a vector type: bytes unless dtype= says otherwise
    ("float d_x[8];", None),  # not a device variable
])
def test_the_default_dtype_comes_from_the_declaration(decl, expected):
    from dotcompute.runtime.kernel_globals import declared_dtype

    found = declared_dtype(f"#define N 4\n{decl}\n__global__ void k() {{}}\n", "d_x")
    assert found == (None if expected is None else np.dtype(expected))
