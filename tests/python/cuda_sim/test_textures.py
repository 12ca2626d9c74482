"""Texture objects on the simulated cuda:0 (issue 23): TextureObject (cuTexObjectCreate) over linear
and pitch2D memory, read with tex1Dfetch/tex2D under every address mode, point and linear filtering,
normalised coordinates and both read modes, against numpy versions of CUDA's texture-fetch rules
(CUDA C++ Programming Guide, "Texture Fetching": texel index floor(x) for point sampling; for linear
filtering the texels around x - 0.5 weighed by the fraction in 9-bit fixed point, 8 fractional bits).
"""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc
from dotcompute.runtime import TextureObject

pytestmark = pytest.mark.skipif(nvrtc_missing(), reason="NVRTC is not installed (pip install dotcompute[cuda])")

SOURCE = r"""
extern "C" __global__ void sample2d(cudaTextureObject_t t, const float* xs, const float* ys, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}
extern "C" __global__ void sample2d4(cudaTextureObject_t t, const float* xs, const float* ys, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, xs[i], ys[i]);
}
extern "C" __global__ void fetch(cudaTextureObject_t t, float* out, int n, int shift) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i - shift);
}
extern "C" __global__ void fetch4(cudaTextureObject_t t, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float4>(t, i);
}
extern "C" __global__ void fetch_uchar4(cudaTextureObject_t t, uchar4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<uchar4>(t, i);
}
extern "C" __global__ void fetch_int(cudaTextureObject_t t, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i);
}
"""
_KERNELS: dict[str, dc.RawKernel] = {}


def kernel(name: str) -> dc.RawKernel:
    if name not in _KERNELS:
        _KERNELS[name] = dc.RawKernel(SOURCE, name, backend="cuda")
    return _KERNELS[name]


def arg(tex: TextureObject) -> np.uint64:
    return np.uint64(tex.handle)


def reference(img: np.ndarray, xs: np.ndarray, ys: np.ndarray, modes: tuple[str, str], filt: str,
              normalized: bool, border: np.ndarray) -> np.ndarray:
    """CUDA's texture fetch of a (height, width, channels) float32 image, in float32 as the unit does."""
    h, w = img.shape[:2]
    x, y = xs.astype(np.float32), ys.astype(np.float32)
    if normalized:
        x, y = x * np.float32(w), y * np.float32(h)

    def index(i: np.ndarray, n: int, mode: str) -> np.ndarray:
        if not normalized and mode in ("wrap", "mirror"):
            mode = "clamp"  # wrap and mirror need normalised coordinates
        if mode == "wrap":
            return np.mod(i, n)
        if mode == "mirror":
            m = np.mod(i, 2 * n)
            return np.where(m < n, m, 2 * n - 1 - m)
        if mode == "border":
            return np.where((i < 0) | (i >= n), -1, i)
        return np.clip(i, 0, n - 1)

    def texel(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        ii, jj = index(i, w, modes[0]), index(j, h, modes[1])
        inside = (ii >= 0) & (jj >= 0)
        got = img[np.where(inside, jj, 0), np.where(inside, ii, 0)]
        return np.where(inside[:, None], got, border[None, :img.shape[2]])

    if filt == "point":
        return texel(np.floor(x).astype(np.int64), np.floor(y).astype(np.int64))
    xb, yb = x - np.float32(0.5), y - np.float32(0.5)
    i, j = np.floor(xb), np.floor(yb)
    a = (np.rint((xb - i) * np.float32(256)) / np.float32(256)).astype(np.float32)[:, None]
    b = (np.rint((yb - j) * np.float32(256)) / np.float32(256)).astype(np.float32)[:, None]
    i, j = i.astype(np.int64), j.astype(np.int64)
    one = np.float32(1)
    return ((one - a) * (one - b) * texel(i, j) + a * (one - b) * texel(i + 1, j) + (one - a) * b * texel(i, j + 1)
            + a * b * texel(i + 1, j + 1)).astype(np.float32)


def coordinates(normalized: bool, h: int, w: int, n: int = 512) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    if normalized:  # beyond [0, 1) on both sides, where wrap and mirror matter
        return (rng.uniform(-1.5, 2.5, n).astype(np.float32), rng.uniform(-1.5, 2.5, n).astype(np.float32))
    return (rng.uniform(-4, w + 4, n).astype(np.float32), rng.uniform(-4, h + 4, n).astype(np.float32))


@pytest.mark.parametrize("filt", ["point", "linear"])
@pytest.mark.parametrize(("mode", "normalized"), [("clamp", False), ("border", False), ("wrap", True),
                                                  ("mirror", True), ("clamp", True), ("wrap", False)])
def test_tex2d_float(sim, filt, mode, normalized):
    h, w = 12, 16  # rows of 64 bytes: the pitch alignment
    img = np.random.default_rng(1).random((h, w), dtype=np.float32)
    xs, ys = coordinates(normalized, h, w)
    out = sim.zeros((xs.size,), np.float32)
    with TextureObject(sim.asarray(img), address_mode=mode, filter_mode=filt, normalized=normalized,
                       border_color=(0.25, 0, 0, 0)) as tex:
        sim.launch(kernel("sample2d"), xs.size, arg(tex), sim.asarray(xs), sim.asarray(ys), out, np.int32(xs.size))
    want = reference(img[:, :, None], xs, ys, (mode, mode), filt, normalized, np.array([0.25, 0, 0, 0], np.float32))
    np.testing.assert_allclose(out.numpy(), want[:, 0], rtol=1e-6, atol=1e-7)


def test_tex2d_float4_linear_per_axis_modes(sim):
    h, w = 8, 8  # 8 float4 texels: 128-byte rows
    img = np.random.default_rng(2).random((h, w, 4), dtype=np.float32)
    xs, ys = coordinates(True, h, w)
    out = sim.zeros((xs.size, 4), np.float32)
    with TextureObject(sim.asarray(img), channels=4, address_mode=("wrap", "border"), filter_mode="linear",
                       normalized=True, border_color=(1, 2, 3, 4)) as tex:
        sim.launch(kernel("sample2d4"), xs.size, arg(tex), sim.asarray(xs), sim.asarray(ys), out, np.int32(xs.size))
    want = reference(img, xs, ys, ("wrap", "border"), "linear", True, np.array([1, 2, 3, 4], np.float32))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=1e-7)


def test_tex2d_normalized_float_read_of_uchar4(sim):
    h, w = 4, 8  # 8 uchar4 texels: 32-byte rows
    img = np.random.default_rng(3).integers(0, 256, (h, w, 4), dtype=np.uint8)
    xs, ys = coordinates(False, h, w, 64)
    out = sim.zeros((xs.size, 4), np.float32)
    with TextureObject(sim.asarray(img), channels=4, read_mode="normalized_float", filter_mode="linear") as tex:
        sim.launch(kernel("sample2d4"), xs.size, arg(tex), sim.asarray(xs), sim.asarray(ys), out, np.int32(xs.size))
    want = reference(img.astype(np.float32) / np.float32(255), xs, ys, ("clamp", "clamp"), "linear", False,
                     np.zeros(4, np.float32))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=1e-7)


def test_tex1dfetch_linear_memory(sim):
    n, shift = 100, 7
    x = np.random.default_rng(4).random(n, dtype=np.float32)
    out = sim.zeros((n + 2 * shift,), np.float32)
    with TextureObject(sim.asarray(x)) as tex:
        sim.launch(kernel("fetch"), out.shape[0], arg(tex), out, np.int32(out.shape[0]), np.int32(shift))
    # no addressing: outside the texture a fetch is zero
    np.testing.assert_array_equal(out.numpy(), np.concatenate([np.zeros(shift), x, np.zeros(shift)]).astype(np.float32))


def test_tex1dfetch_element_types(sim):
    rng = np.random.default_rng(6)
    rgba = rng.integers(0, 256, (50, 4), dtype=np.uint8)
    out4, outu = sim.zeros((50, 4), np.float32), sim.zeros((50, 4), np.uint8)
    with TextureObject(sim.asarray(rgba), channels=4, read_mode="normalized_float") as tex:
        sim.launch(kernel("fetch4"), 50, arg(tex), out4, np.int32(50))
    with TextureObject(sim.asarray(rgba), channels=4) as tex:  # cudaReadModeElementType: the bytes
        sim.launch(kernel("fetch_uchar4"), 50, arg(tex), outu, np.int32(50))
    np.testing.assert_allclose(out4.numpy(), rgba.astype(np.float32) / np.float32(255), rtol=1e-7)
    np.testing.assert_array_equal(outu.numpy(), rgba)
    big = rng.integers(-2**31, 2**31 - 1, 40, dtype=np.int32)  # int32 is read exactly, not through float
    outi = sim.zeros((40,), np.int32)
    with TextureObject(sim.asarray(big)) as tex:
        sim.launch(kernel("fetch_int"), 40, arg(tex), outi, np.int32(40))
    np.testing.assert_array_equal(outi.numpy(), big)


def test_destroyed_texture_fails_the_launch(sim):
    tex = TextureObject(sim.asarray(np.ones(8, np.float32)))
    handle = arg(tex)
    tex.close()
    out = sim.zeros((8,), np.float32)
    with pytest.raises(dc.LaunchError, match="not a live texture object"):
        sim.launch(kernel("fetch"), 8, handle, out, np.int32(8), np.int32(0))
        sim.synchronize()


def test_refusals_name_the_parameter(sim):
    with pytest.raises(ValueError, match="multiple of 32 bytes"):
        TextureObject(sim.asarray(np.ones((4, 5), np.float32)))
    with pytest.raises(ValueError, match="address_mode"):
        TextureObject(sim.asarray(np.ones(8, np.float32)), address_mode="repeat")
    with pytest.raises(ValueError, match="filter_mode='linear' needs float"):
        TextureObject(sim.asarray(np.ones(8, np.int32)), filter_mode="linear")
    with pytest.raises(ValueError, match="dtype float64"):
        TextureObject(sim.asarray(np.ones(8, np.float64)))
    with pytest.raises(ValueError, match="CUDA device"):
        TextureObject(dc.accelerator("cpu:0").asarray(np.ones(8, np.float32)))
