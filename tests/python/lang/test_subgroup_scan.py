"""dc.subgroup_exclusive_sum on every accelerator against a numpy model (per sub-group prefix sums),
its source on each target, the Metal shim's run of the MSL, and a warp-level split built on it
(the rank computation of the GPU radix sort's passes)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

_HERE = Path(__file__).resolve().parent
for _p in (_HERE, _HERE.parent / "lang_emit"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from test_subgroups import groups_of  # noqa: E402


@dc.kernel
def prefix(x: dc.Buffer, out: dc.Buffer, lanes: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    out[i] = dc.subgroup_exclusive_sum(x[i])
    lanes[i] = dc.subgroup_local_id()


def model(x: np.ndarray, local: int, width: int) -> np.ndarray:
    want = np.zeros_like(x)
    for members in groups_of(x.size, local, width):
        part = x[members]
        want[members] = np.concatenate([np.zeros(1, x.dtype), np.cumsum(part, dtype=x.dtype)[:-1]])
    return want


def _dtypes(acc: dc.Accelerator) -> list[type]:
    out = [np.int32, np.uint32, np.float32]
    if acc.backend != "metal":  # SIMD-group functions take 32-bit values; Metal has no float64
        out += [np.int64, np.uint64, np.float64]
    return out


@pytest.mark.parametrize("local", [64, 48, 20, 1])  # whole sub-groups, a partial last one, fewer than one
def test_exclusive_sum_matches_numpy(accelerator, local):
    rng = np.random.default_rng(local)
    n = local * 3
    width = accelerator.info["subgroup_size"]
    for dtype in _dtypes(accelerator):
        if np.issubdtype(dtype, np.integer):
            x = rng.integers(0 if dtype in (np.uint32, np.uint64) else -1000, 1000, n).astype(dtype)
        else:
            x = rng.integers(-64, 64, n).astype(dtype) / 4  # exact in any order of addition
        out = np.full_like(x, 77)
        lanes = np.full(n, -1, np.int64)
        dc.launch(prefix, n, x, out, lanes, local_size=local, accelerator=accelerator)
        want = model(x, local, width)
        np.testing.assert_array_equal(out, want, err_msg=dtype.__name__)
        assert (out[lanes == 0] == 0).all()  # lane 0 of every sub-group gets the empty sum


def test_unsigned_sums_wrap():
    x = np.full(64, 2**31 + 5, np.uint32)
    out = np.zeros_like(x)
    lanes = np.zeros(64, np.int64)
    dc.launch(prefix, 64, x, out, lanes, local_size=64, accelerator=dc.accelerator("cpu"))
    np.testing.assert_array_equal(out, model(x, 64, 32))


@dc.kernel
def split_ranks(bits: dc.Buffer[dc.int32], ranks: dc.Buffer[dc.int32], totals: dc.Buffer[dc.int32]):
    # a stable 1-bit split of each sub-group: zeros first, then ones, both in lane order
    i = dc.global_id(0)
    b = bits[i]
    ones_below = dc.subgroup_exclusive_sum(b)
    ones = dc.subgroup_sum(b)
    zeros = dc.int32(dc.subgroup_count()) - ones
    lane = dc.int32(dc.subgroup_local_id())
    ranks[i] = zeros + ones_below if b == 1 else lane - ones_below
    totals[i] = ones


def test_split_ranks_are_a_stable_partition(accelerator):
    local, n = 96, 96 * 4
    width = accelerator.info["subgroup_size"]
    bits = np.random.default_rng(5).integers(0, 2, n).astype(np.int32)
    ranks = np.zeros(n, np.int32)
    totals = np.zeros(n, np.int32)
    dc.launch(split_ranks, n, bits, ranks, totals, local_size=local, accelerator=accelerator)
    for members in groups_of(n, local, width):
        order = np.argsort(bits[members], kind="stable")  # what a stable split puts where
        want = np.empty(len(members), np.int32)
        want[order] = np.arange(len(members))
        np.testing.assert_array_equal(ranks[members], want)
        assert (totals[members] == bits[members].sum()).all()


def test_every_backend_prints_its_own_scan():
    x = np.zeros(4, np.float32)
    args = (x, x, np.zeros(4, np.int64))
    assert "__shfl_up_sync" in prefix.source("cuda", *args)
    assert "simd_prefix_exclusive_sum(" in prefix.source("metal", *args)
    assert "dc_sg_exclusive_sum_float32" in prefix.source("opencl", *args)
    assert "dc.subgroup_exclusive_sum, sub-group by sub-group" in prefix.source("cpu", *args)
    with pytest.raises(dc.KernelTypeError, match="not supported on Metal"):
        prefix.source("metal", np.zeros(4, np.int64), np.zeros(4, np.int64), np.zeros(4, np.int64))


def test_cuda_source_compiles_with_nvrtc():
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is None:
        pytest.skip("NVRTC is not installed")
    for dtype in (np.float32, np.int32, np.uint32, np.float64, np.int64, np.uint64):
        x = np.zeros(4, dtype)
        ok, log = harness.nvrtc_compile(prefix.source("cuda", x, x, np.zeros(4, np.int64)), "prefix")
        assert ok, log


@pytest.mark.parametrize("local", [64, 20])
def test_msl_runs_on_the_metal_shim(local):
    runner = pytest.importorskip("runner")
    if runner.shutil.which(os.environ.get("DOTCOMPUTE_SHIM_CXX", "clang++")) is None and \
            runner.shutil.which("g++") is None:
        pytest.skip("no C++ compiler for the Metal shim")
    n = local * 2
    for dtype in (np.int32, np.uint32, np.float32):
        x = np.random.default_rng(local).integers(0, 1000, n).astype(dtype)
        out = np.zeros_like(x)
        lanes = np.zeros(n, np.int64)
        args = [x, out, lanes]
        runner.run_msl(prefix.source("metal", *args), args, global_size=n, local_size=local)
        np.testing.assert_array_equal(out, model(x, local, 32), err_msg=dtype.__name__)
