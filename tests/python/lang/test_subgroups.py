"""Sub-group operations (dc.subgroup_*) on every accelerator against a numpy model, their CUDA
source through NVRTC, and the refusals.

The model: a sub-group is a run of ``width`` consecutive work-items of a work-group by linear
local id ``(l2 * L1 + l1) * L0 + l0``; a work-group whose size is not a multiple of the width ends
with a partial sub-group, over whose existing items the collectives run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

_EMIT = Path(__file__).resolve().parents[1] / "lang_emit"
if str(_EMIT) not in sys.path:
    sys.path.insert(0, str(_EMIT))


@dc.kernel
def collectives(x: dc.Buffer, lanes: dc.Buffer[dc.int64], sums: dc.Buffer, mins: dc.Buffer,
                maxs: dc.Buffer, shuffled: dc.Buffer, ids: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    v = x[i]
    sums[i] = dc.subgroup_sum(v)
    mins[i] = dc.subgroup_min(v)
    maxs[i] = dc.subgroup_max(v)
    shuffled[i] = dc.subgroup_shuffle(v, lanes[i])
    ids[i, 0] = dc.subgroup_size()
    ids[i, 1] = dc.subgroup_local_id()
    ids[i, 2] = dc.subgroup_id()
    ids[i, 3] = dc.subgroup_count()


def groups_of(n: int, local: int, width: int) -> list[np.ndarray]:
    """The global indices of every sub-group of a 1-D launch."""
    out = []
    for g in range(0, n, local):
        for s in range(0, local, width):
            out.append(np.arange(g + s, g + min(s + width, local)))
    return out


def model(x: np.ndarray, lanes: np.ndarray, local: int, width: int) -> dict[str, np.ndarray]:
    n = x.size
    want = {k: np.zeros_like(x) for k in ("sums", "mins", "maxs", "shuffled")}
    ids = np.zeros((n, 4), np.int64)
    for members in groups_of(n, local, width):
        part = x[members]
        want["sums"][members] = part.sum(dtype=x.dtype)
        want["mins"][members] = part.min()
        want["maxs"][members] = part.max()
        want["shuffled"][members] = part[lanes[members]]
        first = members[0] % local
        ids[members] = [[width, k, first // width, len(members)] for k in range(len(members))]
    want["ids"] = ids
    return want


def _dtypes(acc: dc.Accelerator) -> list[type]:
    out = [np.float32, np.int32, np.uint32]
    if acc.backend != "metal":  # SIMD-group functions take 32-bit values; Metal has no float64
        out += [np.float64, np.int64]
    return out


@pytest.mark.parametrize("local", [64, 48, 20, 1])  # a multiple of the width, a partial last sub-group, fewer
def test_collectives_match_numpy(accelerator, local):
    rng = np.random.default_rng(local)
    n = local * 3
    for dtype in _dtypes(accelerator):
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            x = rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dtype)
        else:
            x = (rng.standard_normal(n) * 100).astype(dtype)
        bufs = {k: np.zeros_like(x) for k in ("sums", "mins", "maxs", "shuffled")}
        ids = np.zeros((n, 4), np.int64)
        probe = np.zeros(n, np.int64)  # lanes 0 first: learn the width, then shuffle from in-range lanes
        dc.launch(collectives, n, x, probe, bufs["sums"], bufs["mins"], bufs["maxs"], bufs["shuffled"], ids,
                  local_size=local, accelerator=accelerator)
        width = int(ids[0, 0])
        assert width == accelerator.info["subgroup_size"]  # the kernel and acc.info tell the same width
        count = ids[:, 3]
        lanes = (np.arange(n) * 7 + 3) % count  # a permutation-ish mix of lanes inside each sub-group
        dc.launch(collectives, n, x, lanes, bufs["sums"], bufs["mins"], bufs["maxs"], bufs["shuffled"], ids,
                  local_size=local, accelerator=accelerator)
        want = model(x, lanes, local, width)
        np.testing.assert_array_equal(ids, want["ids"])
        for k in ("mins", "maxs", "shuffled"):
            np.testing.assert_array_equal(bufs[k], want[k], err_msg=f"{k} {dtype.__name__}")
        if np.issubdtype(dtype, np.integer):
            np.testing.assert_array_equal(bufs["sums"], want["sums"])
        else:  # the order of the additions is the device's
            np.testing.assert_allclose(bufs["sums"], want["sums"], rtol=1e-5 if dtype == np.float32 else 1e-12,
                                       atol=1e-3)


@dc.kernel
def block_sum(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    # a work-group reduction: sub-group sums, then the sub-group leaders through work-group memory
    partial = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    s = dc.subgroup_sum(x[dc.global_id(0)])
    if dc.subgroup_local_id() == 0:
        partial[dc.subgroup_id()] = s
    dc.barrier()
    if l == 0:
        total: dc.float32 = 0.0
        nsub = (dc.local_size(0) + dc.subgroup_size() - 1) // dc.subgroup_size()
        for k in range(nsub):
            total += partial[k]
        out[dc.group_id(0)] = total


@pytest.mark.parametrize("local", [256, 96, 40])
def test_work_group_reduction_built_on_subgroup_sums(accelerator, local):
    x = np.random.default_rng(0).integers(-50, 50, local * 5).astype(np.float32)
    out = np.zeros(5, np.float32)
    dc.launch(block_sum, x.size, x, out, local_size=local, accelerator=accelerator)
    np.testing.assert_array_equal(out, x.reshape(5, local).sum(axis=1))


@dc.kernel
def two_d(out: dc.Buffer[dc.int64, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    lin = dc.int32(dc.local_id(0) * dc.local_size(1) + dc.local_id(1))  # 32-bit: Metal reduces no int64
    out[i, j, 0] = dc.subgroup_id() * dc.subgroup_size() + dc.subgroup_local_id()
    out[i, j, 1] = dc.subgroup_sum(lin)
    out[i, j, 2] = dc.subgroup_shuffle(dc.int32(i * 1000 + j), 0)


def test_two_dimensional_groups_use_the_linear_local_id(accelerator):
    # the linear id runs along dimension 0 fastest: (l1 * L0 + l0)
    gs, ls = (12, 8), (6, 8)
    out = np.zeros((*gs, 3), np.int64)
    dc.launch(two_d, gs, out, local_size=ls, accelerator=accelerator)
    width = accelerator.info["subgroup_size"]
    for i in range(gs[0]):
        for j in range(gs[1]):
            l0, l1 = i % ls[0], j % ls[1]
            lin = l1 * ls[0] + l0
            assert out[i, j, 0] == lin
            base = lin // width * width
            members = [(b % ls[0], b // ls[0]) for b in range(base, min(base + width, ls[0] * ls[1]))]
            g0, g1 = i - l0, j - l1
            assert out[i, j, 1] == sum(a * ls[1] + b for a, b in members)
            a, b = members[0]
            assert out[i, j, 2] == (g0 + a) * 1000 + (g1 + b)


def test_launch_runs_whole_work_groups(cpu):
    x = np.zeros(50, np.float32)
    out = np.zeros(2, np.float32)
    with pytest.raises(dc.LaunchError, match="multiple of local_size"):
        dc.launch(block_sum, x.size, x, out, local_size=32, accelerator=cpu)


def test_cuda_source_compiles_with_nvrtc():
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is None:
        pytest.skip("NVRTC is not installed")
    for dtype in (np.float32, np.int32, np.uint32, np.float64, np.int64, np.uint64):
        x = np.zeros(4, dtype)
        args = (x, np.zeros(4, np.int64), x, x, x, x, np.zeros((4, 4), np.int64))
        src = collectives.source("cuda", *args)
        ok, log = harness.nvrtc_compile(src, "collectives")
        assert ok, log
    for k, args in ((block_sum, (np.zeros(4, np.float32), np.zeros(1, np.float32))),
                    (two_d, (np.zeros((2, 2, 3), np.int64),))):
        ok, log = harness.nvrtc_compile(k.source("cuda", *args), k.name)
        assert ok, log


def test_every_backend_prints_its_own_operations():
    x = np.zeros(4, np.float32)
    args = (x, np.zeros(4, np.int64), x, x, x, x, np.zeros((4, 4), np.int64))
    cuda = collectives.source("cuda", *args)
    assert "__shfl_down_sync" in cuda and "__shfl_sync" in cuda
    metal = collectives.source("metal", *args)
    assert "simd_sum(" in metal and "simd_shuffle(" in metal and "[[thread_index_in_simdgroup]]" in metal
    opencl = collectives.source("opencl", *args)
    assert "__local ulong dc_sg_buf[" in opencl and "barrier(CLK_LOCAL_MEM_FENCE)" in opencl
    assert "dc.subgroup_sum, sub-group by sub-group" in collectives.source("cpu", *args)


# ------------------------------------------------------------------------------------------- refusals

@dc.func
def helper(v: dc.float32) -> dc.float32:
    return dc.subgroup_sum(v)


@dc.kernel
def in_device_function(x: dc.Buffer[dc.float32]):
    x[0] = helper(x[0])


@dc.kernel
def in_while_condition(x: dc.Buffer[dc.float32]):
    k = 0
    while dc.subgroup_max(x[k]) > 0.0:
        k += 1


@dc.kernel
def in_conditional_expression(x: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x[i] = dc.subgroup_sum(x[i]) if i > 3 else 0.0


@dc.kernel
def in_or(x: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x[i] = float(x[i] > 0.0 or dc.subgroup_min(x[i]) > 0.0)


@dc.kernel
def small_int_sum(x: dc.Buffer[dc.int8]):
    x[0] = dc.subgroup_sum(x[0])


@dc.kernel
def complex_shuffle(x: dc.Buffer[dc.complex64]):
    x[0] = dc.subgroup_shuffle(x[0], 1)


@dc.kernel
def float_lane(x: dc.Buffer[dc.float32]):
    x[0] = dc.subgroup_shuffle(x[0], 1.5)


@dc.kernel
def with_argument(x: dc.Buffer[dc.int64]):
    x[0] = dc.subgroup_size(0)


def _line_of(fn, text: str) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fn.pyfunc)
    return start + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("kernel, error, message, marker", [
    (in_device_function, dc.KernelSyntaxError, "only available in kernels", None),
    (in_while_condition, dc.KernelSyntaxError, "in a while condition", "while dc.subgroup_max"),
    (in_conditional_expression, dc.KernelSyntaxError, "conditional expression", "if i > 3"),
    (in_or, dc.KernelSyntaxError, "`and`/`or`", "or dc.subgroup_min"),
    (small_int_sum, dc.KernelTypeError, "subgroup_sum() of int8 is not supported", "dc.subgroup_sum(x[0])"),
    (complex_shuffle, dc.KernelTypeError, "takes a real number", "dc.subgroup_shuffle(x[0], 1)"),
    (float_lane, dc.KernelTypeError, "must be an integer", "1.5"),
    (with_argument, dc.KernelTypeError, "takes no arguments", "subgroup_size(0)"),
])
def test_refusals_name_the_line(kernel, error, message, marker):
    with pytest.raises(error) as e:
        kernel.check()
    assert message in str(e.value)
    assert e.value.filename == __file__
    if marker is not None:
        assert e.value.lineno == _line_of(kernel, marker)
    else:
        assert e.value.lineno == _line_of(helper, "return dc.subgroup_sum(v)")


def test_int64_reductions_are_refused_on_metal_only():
    args = (np.zeros(4, np.int64), np.zeros(4, np.int64), *[np.zeros(4, np.int64)] * 4, np.zeros((4, 4), np.int64))
    with pytest.raises(dc.KernelTypeError, match="not supported on Metal"):
        collectives.source("metal", *args)
    assert "dc_sg_sum_int64" in collectives.source("cuda", *args)


def test_host_call_explains():
    with pytest.raises(RuntimeError, match="only be called inside"):
        dc.subgroup_sum(1.0)


def test_opencl_emulation_limits_the_work_group_size():
    try:
        acc = dc.accelerator("opencl")
    except Exception as e:  # noqa: BLE001 -- no OpenCL device here
        pytest.skip(f"no OpenCL device: {e}")
    if acc.info["max_work_group_size"] <= 1024:
        pytest.skip("the device's own limit is at most the emulation's")
    x = np.zeros(2048, np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(dc.LaunchError, match="at most 1024 per work-group"):
        dc.launch(block_sum, x.size, x, out, local_size=2048, accelerator=acc)


@pytest.mark.parametrize("local", [64, 48, 20])
def test_msl_runs_on_the_metal_shim(local):
    runner = pytest.importorskip("runner")
    if runner.shutil.which(os.environ.get("DOTCOMPUTE_SHIM_CXX", "clang++")) is None and \
            runner.shutil.which("g++") is None:
        pytest.skip("no C++ compiler for the Metal shim")
    rng = np.random.default_rng(local)
    n = local * 2
    for dtype in (np.float32, np.int32, np.uint32):
        x = rng.integers(0, 1000, n).astype(dtype)
        bufs = [np.zeros_like(x) for _ in range(4)]
        ids = np.zeros((n, 4), np.int64)
        width = 32  # the shim's SIMD-group width, Apple GPUs'
        count = np.array([len(m) for m in groups_of(n, local, width) for _ in m])
        lanes = (np.arange(n) * 7 + 3) % count
        args = [x, lanes, *bufs, ids]
        runner.run_msl(collectives.source("metal", *args), args, global_size=n, local_size=local)
        want = model(x, lanes, local, width)
        np.testing.assert_array_equal(ids, want["ids"])
        for got, k in zip(bufs, ("sums", "mins", "maxs", "shuffled"), strict=True):
            np.testing.assert_array_equal(got, want[k], err_msg=f"{k} {dtype.__name__}")
    x = rng.integers(-50, 50, local * 3).astype(np.float32)
    out = np.zeros(3, np.float32)
    runner.run_msl(block_sum.source("metal", x, out), [x, out], global_size=x.size, local_size=local)
    np.testing.assert_array_equal(out, x.reshape(3, local).sum(axis=1))


@dc.kernel
def shuffle_any(x: dc.Buffer, lanes: dc.Buffer[dc.int64], out: dc.Buffer):
    i = dc.global_id(0)
    out[i] = dc.subgroup_shuffle(x[i], lanes[i])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16])
def test_shuffle_moves_every_small_type_unchanged(accelerator, dtype):
    local, n = 40, 80
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 2, n) if dtype is np.bool_ else rng.integers(-100, 100, n)).astype(dtype)
    if dtype is np.float16:
        x = (rng.standard_normal(n) * 10).astype(dtype)
    width = accelerator.info["subgroup_size"]
    count = np.array([len(m) for m in groups_of(n, local, width) for _ in m])
    lanes = (np.arange(n) * 5 + 1) % count
    out = np.zeros_like(x)
    dc.launch(shuffle_any, n, x, lanes, out, local_size=local, accelerator=accelerator)
    want = np.zeros_like(x)
    for members in groups_of(n, local, width):
        want[members] = x[members][lanes[members]]
    np.testing.assert_array_equal(out, want)
    harness = pytest.importorskip("harness")
    if accelerator.backend == "cpu" and harness.nvrtc_lib() is not None:  # once per dtype: NVRTC takes it too
        ok, log = harness.nvrtc_compile(shuffle_any.source("cuda", x, lanes, out), "shuffle_any")
        assert ok, log
