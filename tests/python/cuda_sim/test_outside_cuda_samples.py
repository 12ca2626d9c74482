"""NVIDIA's cuda-samples kernels, read from the samples' own files, run unmodified on the simulated
cuda:0 and checked against numpy (issue 23).

The samples are not copied into this repository: set DOTCOMPUTE_CUDA_SAMPLES_DIR to a checkout (or
``git archive``) of https://github.com/NVIDIA/cuda-samples at the commit below; without it every test
skips and says so. Each test takes the device part of one sample file (the file up to its host code,
with the sample's own local headers pasted in place of their ``#include``; its helper_*.h includes and
the ``extern "C"`` host declarations and file-scope host variables, which NVRTC refuses on a GPU too,
are commented out) and launches its kernels with the sample's geometry. The kernels' text is not changed.

The grid-synchronising samples (reductionMultiBlockCG, conjugateGradientMultiBlockCG) run through a
cooperative launch (RawKernel(..., cooperative=True), as their cudaLaunchCooperativeKernel), on a grid
within the bound their host code computes (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc
from dotcompute.cuda import cuda_include_dirs

#: the cuda-samples commit these tests were written against (the files are read, never copied)
CUDA_SAMPLES_COMMIT = "c94ff366aed18c797b8a85dfaac7817b0228b420"

_DIR = os.environ.get("DOTCOMPUTE_CUDA_SAMPLES_DIR", "")
pytestmark = [
    pytest.mark.slow,  # about 3 minutes on 2 busy cores: 22 kernels, each built by NVRTC and the host compiler
    pytest.mark.skipif(not _DIR, reason="DOTCOMPUTE_CUDA_SAMPLES_DIR is not set: point it at a checkout of "
                                        f"NVIDIA/cuda-samples at {CUDA_SAMPLES_COMMIT}"),
    pytest.mark.skipif(not cuda_include_dirs() or nvrtc_missing(),
                       reason="CUDA's headers or NVRTC are not installed (pip install dotcompute[cuda])"),
]

_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([\w./]+)"[^\n]*$', re.M)
_HELPER_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<helper_\w+\.h>[^\n]*$", re.M)
# the host functions and constants a shared header declares (`extern "C" void initScan(void);`): NVRTC
# compiles device code only and refuses host declarations
_HOST_DECLARATION = re.compile(
    r'^[ \t]*extern[ \t]+"C"[ \t]+(?![^\n]*__(?:global|device|shared|constant)__)[^\n{]*;[ \t]*$', re.M)
# host variables at file scope (`int MATRIX_SIZE_X = 1024;`, `const char *sSDKsample = "Transpose";`):
# unindented definitions without a memory space, which NVRTC refuses as well
_HOST_VARIABLE = re.compile(
    r"^(?!(?:typedef|template|static|namespace|using)\b)(?![^\n]*__(?:device|constant|shared|managed)__)"
    r"[A-Za-z_][\w \t*]*=[^\n;]*;[ \t]*$", re.M)
# host functions defined between the kernels (convolutionSeparable's `extern "C" void
# setConvolutionKernel(float *h_Kernel) { cudaMemcpyToSymbol(...); }`): NVRTC refuses host code; the
# test does what their bodies do through dotcompute
_HOST_FUNCTION = re.compile(r'^extern[ \t]+"C"[ \t]+(?![^\n]*__(?:global|device)__)[^\n;{]*\)[ \t]*\n?\{.*?^\}[ \t]*$',
                            re.M | re.S)
_OPENS = re.compile(r"^[ \t]*#[ \t]*if(?:n?def)?\b", re.M)
_CLOSES = re.compile(r"^[ \t]*#[ \t]*endif\b", re.M)


def device_part(relative: str, stop: str | None = None) -> str:
    """The text of a sample file up to `stop` (its first host-only line), with its local headers
    pasted in and its helper_*.h includes commented out."""
    path = Path(_DIR) / relative
    if not path.is_file():
        pytest.skip(f"{relative} is not in DOTCOMPUTE_CUDA_SAMPLES_DIR ({_DIR}); expected cuda-samples at "
                    f"{CUDA_SAMPLES_COMMIT}")
    text = path.read_text()
    if stop is not None:
        at = text.find(stop)
        assert at >= 0, f"{relative} no longer contains {stop!r}: the samples are not at {CUDA_SAMPLES_COMMIT}"
        text = text[:at]
        # the include guard the cut left open
        text += "\n#endif\n" * (len(_OPENS.findall(text)) - len(_CLOSES.findall(text)))
    text = _HELPER_INCLUDE.sub(lambda m: "// " + m.group(0).strip(), text)
    text = _HOST_FUNCTION.sub(lambda m: "/* (host) */", text)
    text = _HOST_DECLARATION.sub(lambda m: "// (host) " + m.group(0).strip(), text)
    text = _HOST_VARIABLE.sub(lambda m: "// (host) " + m.group(0).strip(), text)
    # a "..." include the sample folder does not hold ("curand_kernel.h") is left to NVRTC's include path
    return _LOCAL_INCLUDE.sub(lambda m: device_part(str(Path(relative).parent / m.group(1)))
                              if (Path(_DIR) / relative).parent.joinpath(m.group(1)).is_file() else m.group(0), text)


def test_simple_atomic_intrinsics(sim):
    src = device_part("Samples/0_Introduction/simpleAtomicIntrinsics/simpleAtomicIntrinsics_kernel.cuh")
    threads, blocks = 256, 64
    n = threads * blocks
    data = np.zeros(11, np.int32)
    data[8] = data[10] = 0xFF
    out = sim.asarray(data)
    sim.launch(dc.RawKernel(src, "testKernel", backend="cuda"), n, out, local_size=threads)
    got = out.numpy()
    tid = np.arange(n)
    inc = dec = 0
    for _ in range(n):  # the sample's own gold: the wrap-around counters
        inc = 0 if inc >= 17 else inc + 1
        dec = 137 if dec == 0 or dec > 137 else dec - 1
    assert got[0] == 10 * n and got[1] == -10 * n
    assert 0 <= got[2] < n and 0 <= got[7] < n
    assert got[3] == n - 1 and got[4] == 0
    assert got[5] == inc and got[6] == dec
    assert got[8] == np.bitwise_and.reduce(2 * tid + 7) & 0xFF
    assert got[9] == -1  # 1 << tid sets every bit (tid 0..31)
    assert got[10] == 0xFF ^ np.bitwise_xor.reduce(tid)


def test_histogram256(sim):
    src = device_part("Samples/2_Concepts_and_Techniques/histogram/histogram256.cu", "// Host interface")
    data = np.random.default_rng(3).integers(0, 256, 1 << 16, dtype=np.uint8)
    partial_count, block = 240, 192  # PARTIAL_HISTOGRAM256_COUNT, HISTOGRAM256_THREADBLOCK_SIZE
    partial = sim.zeros((partial_count * 256,), np.uint32)
    hist = sim.zeros((256,), np.uint32)
    sim.launch(dc.RawKernel(src, "histogram256Kernel", backend="cuda"), partial_count * block, partial,
               sim.asarray(data.view(np.uint32)), np.uint32(data.size // 4), local_size=block)
    sim.launch(dc.RawKernel(src, "mergeHistogram256Kernel", backend="cuda"), 256 * 256, hist, partial,
               np.uint32(partial_count), local_size=256)
    np.testing.assert_array_equal(hist.numpy(), np.bincount(data, minlength=256))


REDUCTIONS = [("reduce0<int>", 1), ("reduce1<int>", 1), ("reduce2<int>", 1), ("reduce3<int>", 2),
              ("reduce4<int, 256>", 2), ("reduce5<int, 256>", 2), ("reduce6<int, 256, true>", 2),
              ("reduce7<int, 256, true>", 2), ("cg_reduce<int>", 1), ("multi_warp_cg_reduce<int, 256, 64>", 2)]


@pytest.mark.parametrize(("name", "per_thread"), REDUCTIONS)
def test_reduction(sim, name, per_thread):
    src = device_part("Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu",
                      'extern "C" bool isPow2(unsigned int x);')
    n, threads = 1 << 15, 256
    blocks = n // (threads * per_thread)
    x = np.random.default_rng(5).integers(-1000, 1000, n).astype(np.int32)
    partial = sim.zeros((blocks,), np.int32)
    k = dc.RawKernel(src, name, backend="cuda", shared_mem=threads * 4)
    sim.launch(k, blocks * threads, sim.asarray(x), partial, np.uint32(n), local_size=threads)
    assert int(partial.numpy().astype(np.int64).sum()) == int(x.astype(np.int64).sum())


def test_scan_exclusive_shared(sim):
    src = device_part("Samples/2_Concepts_and_Techniques/scan/scan.cu",
                      "// Exclusive scan of top elements of bottom-level scans")
    length, batch = 1024, 8  # arrays of MAX_SHORT_ARRAY_SIZE elements, 4 per thread of 256
    x = np.random.default_rng(6).integers(0, 1000, length * batch).astype(np.uint32)
    out = sim.zeros((length * batch,), np.uint32)
    sim.launch(dc.RawKernel(src, "scanExclusiveShared", backend="cuda"), batch * length // 4, out,
               sim.asarray(x), np.uint32(length), local_size=256)
    rows = x.reshape(batch, length).astype(np.uint64)
    np.testing.assert_array_equal(out.numpy(), (np.cumsum(rows, axis=1) - rows).reshape(-1))


def test_shfl_scan(sim):
    src = device_part("Samples/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu", "static unsigned int iDivUp")
    block, blocks = 256, 16
    x = np.random.default_rng(8).integers(0, 10, block * blocks).astype(np.int32)
    data, sums = sim.asarray(x), sim.zeros((blocks,), np.int32)
    k = dc.RawKernel(src, "shfl_scan_test", backend="cuda", shared_mem=block // 32 * 4)
    sim.launch(k, block * blocks, data, np.int32(32), sums, local_size=block)
    rows = x.reshape(blocks, block)
    np.testing.assert_array_equal(data.numpy(), np.cumsum(rows, axis=1).reshape(-1))
    np.testing.assert_array_equal(sums.numpy(), rows.sum(axis=1))


@pytest.mark.parametrize("name", ["copy", "copySharedMem", "transposeNaive", "transposeCoalesced",
                                  "transposeNoBankConflicts", "transposeDiagonal"])
def test_transpose(sim, name):
    src = device_part("Samples/6_Performance/transpose/transpose.cu", "void computeTransposeGold")
    size = 256  # TILE_DIM 32, BLOCK_ROWS 16: each block moves a 32 x 32 tile, 16 rows at a time
    a = np.random.default_rng(9).random((size, size), dtype=np.float32)
    out = sim.zeros((size, size), np.float32)
    sim.launch(dc.RawKernel(src, name, backend="cuda"), (size, size // 2), out, sim.asarray(a),
               np.int32(size), np.int32(size), local_size=(32, 16))
    np.testing.assert_array_equal(out.numpy(), a if name.startswith("copy") else a.T)


@pytest.mark.parametrize("name", ["convolutionRowsKernel", "convolutionColumnsKernel"])
def test_convolution_separable(sim, name):
    # c_Kernel is `__constant__ float c_Kernel[KERNEL_LENGTH]`, set as setConvolutionKernel's
    # cudaMemcpyToSymbol does: through the module's global (RawKernel.globals, cuModuleGetGlobal)
    src = device_part("Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable.cu")
    radius, width, height = 8, 256, 128  # KERNEL_RADIUS; rows: W % 128, H % 4; columns: W % 16, H % 64
    rng = np.random.default_rng(10)
    taps = rng.random(2 * radius + 1, dtype=np.float32)
    image = rng.random((height, width), dtype=np.float32)
    k = dc.RawKernel(src, name, backend="cuda")
    k.globals["c_Kernel"].copy_from(taps)
    out = sim.zeros((height, width), np.float32)
    rows = name == "convolutionRowsKernel"
    grid, block = ((width // 8, height), (16, 4)) if rows else ((width, height // 8), (16, 8))
    sim.launch(k, grid, out, sim.asarray(image), np.int32(width), np.int32(height), np.int32(width),
               local_size=block)
    # the sample's gold (convolutionRowCPU/convolutionColumnCPU): sum of src[x + j] * kernel[R - j] inside the image
    axis = 1 if rows else 0
    want = np.apply_along_axis(lambda v: np.convolve(v.astype(np.float64), taps, mode="same"), axis, image)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


def test_reduction_multi_block_cg(sim):
    # the host code's bound: numBlocks <= numBlocksPerSm * numSms; smemSize = threads * sizeof(double)
    src = device_part("Samples/2_Concepts_and_Techniques/reductionMultiBlockCG/reductionMultiBlockCG.cu",
                      "void call_reduceSinglePassMultiBlockCG")
    n, threads, blocks = 1 << 16, 256, 12
    x = np.random.default_rng(11).random(n, dtype=np.float32)
    out = sim.zeros((blocks,), np.float32)
    k = dc.RawKernel(src, "reduceSinglePassMultiBlockCG", backend="cuda", shared_mem=threads * 8, cooperative=True)
    sim.launch(k, blocks * threads, sim.asarray(x), out, np.uint32(n), local_size=threads)
    np.testing.assert_allclose(out.numpy()[0], x.sum(dtype=np.float64), rtol=1e-5)


def _tridiagonal_csr(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sample's genTridiag: a symmetric tridiagonal matrix, diagonal 10..11, off-diagonal 0..1, as CSR."""
    diag = rng.random(n, dtype=np.float32) + 10.0
    off = rng.random(n - 1, dtype=np.float32)
    dense = np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)
    rows, cols = np.nonzero(dense)
    indptr = np.searchsorted(rows, np.arange(n + 1)).astype(np.int32)
    return indptr, cols.astype(np.int32), dense[rows, cols].astype(np.float32)


def test_conjugate_gradient_multi_block_cg(sim):
    # its kernels come after the host helpers genTridiag/cpuSpMV/...: the device part is the file's head
    # (includes, THREADS_PER_BLOCK) and the text from the first __device__ function to main()
    whole = device_part("Samples/4_CUDA_Libraries/conjugateGradientMultiBlockCG/conjugateGradientMultiBlockCG.cu")
    head = whole[:whole.index("/* genTridiag")]
    src = head + whole[whole.index("__device__ void gpuSpMV"):whole.index("bool areAlmostEqual")]
    n, threads, blocks = 2048, 512, 3  # THREADS_PER_BLOCK; blocks <= numBlocksPerSm * numSms
    indptr, cols, vals = _tridiagonal_csr(n, np.random.default_rng(12))
    x, ax, p = (sim.zeros((n,), np.float32) for _ in range(3))
    r = sim.asarray(np.ones(n, np.float32))  # r = rhs = 1, x = 0, as main() sets them
    dot = sim.zeros((1,), np.float64)
    k = dc.RawKernel(src, "gpuConjugateGradient", backend="cuda", cooperative=True,
                     shared_mem=8 * (threads // 32 + 1))  # sMemSize
    sim.launch(k, blocks * threads, sim.asarray(indptr), sim.asarray(cols), sim.asarray(vals), x, ax, p, r, dot,
               np.int32(vals.size), np.int32(n), np.float32(1e-5), local_size=threads)
    a = np.zeros((n, n))
    a[np.repeat(np.arange(n), np.diff(indptr)), cols] = vals
    np.testing.assert_allclose(a @ x.numpy().astype(np.float64), np.ones(n), rtol=1e-4, atol=1e-4)

