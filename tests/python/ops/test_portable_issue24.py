"""The portable scan, FFT and reduction paths changed for issue 24, against numpy on every device:
the GPU devices' tile scan (scan_tile_kernel) and radix-4 stages (radix4_tile_kernel), the CPU
backend's integer-key min/max kernel (lanes_extreme_fast_kernel), and their GPU-model counters on
the simulator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(24)


@dc.func
def first_nonzero(a, b):
    # associative, not commutative: a scan that reordered the elements would show it
    return a if a != 0 else b


@pytest.mark.parametrize("n", [0, 1, 7, 257, 70_001])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.int64])
def test_cumsum_wraps_as_numpy(accelerator, n, dtype):
    """In the input's own dtype the sums wrap as numpy's; numpy's default widening otherwise.
    70,001 elements take several chunks (the chunk partials' scan); 257 one chunk of two tiles."""
    info = np.iinfo(dtype)
    x = RNG.integers(info.min // 2, info.max // 2, n, dtype=np.int64, endpoint=True).astype(dtype)
    with dc.ops.prefer("portable"):
        same = dc.cumsum(accelerator.asarray(x), dtype=dtype).numpy()
        wide = dc.cumsum(accelerator.asarray(x)).numpy()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(same, np.cumsum(x, dtype=dtype))
    assert wide.dtype == np.cumsum(x).dtype
    np.testing.assert_array_equal(wide, np.cumsum(x))


def test_ordered_scan_across_tiles_and_chunks(accelerator):
    """A non-commutative operator over 70,001 elements, exclusive with an initial value: the order
    of the tiles, of the chunks and of the partials' scan all show in the result."""
    z = np.zeros(70_001, np.int64)
    marks = [300, 40_000, 69_999]
    z[marks] = [5, 6, 7]
    got = dc.scan(first_nonzero, accelerator.asarray(z), exclusive=True, initial=0).numpy()
    want = np.where(np.arange(z.size) > marks[0], 5, 0)
    np.testing.assert_array_equal(got, want)
    got = dc.scan(first_nonzero, accelerator.asarray(z)).numpy()
    np.testing.assert_array_equal(got, np.where(np.arange(z.size) >= marks[0], 5, 0))


def test_scan_rows_and_columns_of_odd_shapes(accelerator):
    x = RNG.integers(-9, 9, (3, 5003)).astype(np.int32)
    with dc.ops.prefer("portable"):
        for axis in (0, 1, None):
            np.testing.assert_array_equal(dc.cumsum(accelerator.asarray(x), axis=axis).numpy(),
                                          np.cumsum(x, axis=axis))


def _with_specials(n: int, dtype: type, where: int) -> np.ndarray:
    x = (RNG.standard_normal(n) * 100).astype(dtype)
    tiny = np.finfo(dtype).smallest_subnormal
    x[where:where + 6] = [-0.0, 0.0, tiny, -tiny, np.finfo(dtype).max, -np.finfo(dtype).max]
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_extremes_and_their_first_index(accelerator, dtype):
    """min/max/argmin/argmax forced portable: ties keep the first index, a NaN (of either sign
    bit) wins and its first index is the answer, infinities and subnormals order as numpy. On
    CPU-type devices the size reaches the lanes kernels (LANES_MIN, about a million)."""
    from dotcompute.runtime.default_device import has_float64

    if dtype == np.float64 and not has_float64(accelerator):
        pytest.skip("no float64 on this device")
    n = (1 << 20) + 4099 if accelerator.type == "cpu" else 5003
    cases = {}
    x = _with_specials(n, dtype, n // 3)
    cases["finite"] = x
    ties = x.copy()
    ties[[n // 5, n // 2, n - 2]] = -1e30
    ties[[n // 7, n // 2 + 1, n - 1]] = 1e30
    cases["ties"] = ties
    zeros = np.zeros(n, dtype)
    zeros[n // 2:] = -0.0  # -0.0 == 0.0: the first zero is the first index of both
    cases["signed zeros"] = zeros
    inf = np.full(n, -np.inf, dtype)
    inf[n // 3] = np.inf
    cases["infinities"] = inf
    for sign in (1.0, -1.0):
        nan = x.copy()
        nan[n // 2] = np.copysign(np.nan, sign)  # a NaN with the sign bit set orders below -inf as bits
        nan[n - 3] = np.nan
        cases[f"nan {sign}"] = nan
    for name, h in cases.items():
        b = accelerator.asarray(h)
        with dc.ops.prefer("portable"):
            got = [dc.ops.min(b), dc.ops.max(b), dc.ops.argmin(b), dc.ops.argmax(b)]
        got = [np.asarray(g.numpy() if hasattr(g, "numpy") else g) for g in got]
        want = [np.min(h), np.max(h), np.argmin(h), np.argmax(h)]
        np.testing.assert_array_equal(got[0], want[0], err_msg=name)
        np.testing.assert_array_equal(got[1], want[1], err_msg=name)
        assert int(got[2]) == int(want[2]), name
        assert int(got[3]) == int(want[3]), name


def test_extremes_of_size_one_and_empty(accelerator):
    one = accelerator.asarray(np.array([np.float32(-0.0)]))
    with dc.ops.prefer("portable"):
        assert float(np.asarray(dc.ops.min(one).numpy())) == 0.0
        assert int(np.asarray(dc.ops.argmax(one).numpy())) == 0
        empty = accelerator.asarray(np.zeros(0, np.float32))
        with pytest.raises(ValueError):
            dc.ops.min(empty)
        with pytest.raises(ValueError):
            dc.ops.argmin(empty)


@pytest.mark.parametrize("n", [4, 64, 1024, 3072, 4096])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fft_stages(accelerator, n, dtype):
    """The portable FFT against numpy: 1024 and 4096 take the staged radix-4 stages on GPU devices
    (p < 32 and rows of whole work-groups), 4 and 64 the direct ones, 3072 mixes radix 3 in."""
    from dotcompute.runtime.default_device import has_float64

    if dtype == np.complex128 and not has_float64(accelerator):
        pytest.skip("no float64 on this device")
    x = (RNG.standard_normal((3, n)) + 1j * RNG.standard_normal((3, n))).astype(dtype)
    with dc.ops.prefer("portable"):
        fwd = dc.fft.fft(accelerator.asarray(x)).numpy()
        inv = dc.fft.ifft(accelerator.asarray(x)).numpy()
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for got, want in ((fwd, np.fft.fft(x)), (inv, np.fft.ifft(x))):
        assert np.abs(got - want).max() <= tol * np.abs(want).max()


def test_stage_twiddles_are_the_table_entries(accelerator):
    """The per-stage twiddle layout holds the very values the strided table gives (bit for bit)."""
    from dotcompute.ops import fft_core

    n = 4096
    radices = fft_core.factor(n)
    tw = [b.numpy() for b in fft_core._twiddles(accelerator, n, np.float32)]  # noqa: SLF001
    s_re, s_im, offsets = fft_core._stage_twiddles(accelerator, n, radices, np.float32)  # noqa: SLF001
    s_re, s_im = s_re.numpy(), s_im.numpy()
    assert sorted(offsets) == [1, 4, 16, 64, 256, 1024]
    for p, off in offsets.items():
        step = n // (4 * p)
        for m in (1, 2, 3):
            e = m * np.arange(p) * step
            np.testing.assert_array_equal(s_re[off + (m - 1) * p + np.arange(p)], tw[0][e])
            np.testing.assert_array_equal(s_im[off + (m - 1) * p + np.arange(p)], tw[1][e])


@pytest.mark.slow  # a simulator process with counters: about 20 s on 2 loaded cores
def test_scan_and_fft_are_coalesced_on_the_simulated_gpu():
    """cumsum of 65,536 int32 and an FFT of 4,096 complex64 forced portable on the simulated cuda:0
    with GPU-model counters (a subprocess: the variables are read at start): every data pass at
    least 90 % coalesced, and no bank conflicts (passes beyond what the access width needs)."""
    if shutil.which("clang++") is None:
        pytest.skip("counters need clang++ (Debian/Ubuntu package clang)")
    import dotcompute.cuda as dcuda

    if dcuda.nvrtc_library_path() is None:
        pytest.skip("NVRTC not installed (pip install 'dotcompute[cuda]')")
    env = dict(os.environ, DOTCOMPUTE_CUDA_SIM="1", DOTCOMPUTE_CUDA_SIM_COUNTERS="1")
    env.pop("DOTCOMPUTE_CUDA_SIM_DEVICES", None)
    env.pop("DOTCOMPUTE_CUDA_SIM_MODEL", None)
    r = subprocess.run([sys.executable, str(HERE / "portable_counters_cases.py")], capture_output=True, text=True,
                       env=env, timeout=600, cwd=HERE)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    found = json.loads(r.stdout)
    kernels = found["cumsum"]
    names = sorted(k["kernel"].rsplit("_", 1)[0] for k in kernels)
    assert names == ["reduce_tree", "scan_tile", "scan_tile"], names
    kernels.sort(key=lambda k: k["global_load_requests"])
    # the smallest: the scan of the 64 chunk partials, whose one broadcast read of the row's start
    # is a quarter of a sector among few requests; the data passes are coalesced
    assert kernels[0]["kernel"].startswith("scan_tile") and kernels[0]["coalescing"] >= 0.8, kernels[0]
    for k in kernels[1:] + found["fft"]:
        assert k["coalescing"] >= 0.9, k
    assert [k["kernel"].rsplit("_", 1)[0] for k in found["fft"]] == ["fft_radix4_tile"]
    for k in kernels + found["fft"]:
        assert k["bank_conflicts"] == 0, k
