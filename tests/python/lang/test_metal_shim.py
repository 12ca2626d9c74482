"""Every conformance kernel Metal can express, as MSL compiled with the C++ shim and run on the CPU.

The shim (tests/support/metal_shim) stands in for a Mac: the MSL from ``kernel.source("metal")``
is compiled by clang++/g++ against a fake ``metal_stdlib`` and executed with one thread per
work-item in each group, so barriers, threadgroup memory and atomics really happen.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conformance_kernels import CASES, build_args, copy_args, emit_source, runs_on_metal, verify

runner = pytest.importorskip("runner", reason="tests/support/metal_shim is not on sys.path")

if not (shutil.which("clang++") or shutil.which("g++")):
    pytest.skip("the Metal shim needs clang++ or g++", allow_module_level=True)

METAL_CASES = [c for c in CASES if runs_on_metal(c)]


# The Metal pass of tests/run.sh runs every one of these kernels through the same runner, by way of
# the Metal plugin and its double (tests/python/lang/test_conformance.py on metal:0): here they run
# again only in the full run.
@pytest.mark.slow
@pytest.mark.parametrize("case", METAL_CASES, ids=lambda c: c.id)
def test_conformance_through_metal_shim(case):
    args = build_args(case, seed=1)
    inputs = copy_args(args)
    msl = emit_source(case, "metal", args)
    runner.run_msl(msl, args, case.global_size, case.local_size)
    verify(case, inputs, args)


def test_metal_refuses_what_it_cannot_express():
    import dotcompute as dc
    refused = [c for c in CASES if not runs_on_metal(c)]
    assert refused, "the registry has fp64 cases"
    for c in refused:
        with pytest.raises(dc.KernelTypeError, match="Metal"):
            emit_source(c, "metal")


def test_shim_reports_barrier_in_divergent_code():
    # a hand-written kernel where one item returns before the barrier: the shim must say so
    msl = """
#include <metal_stdlib>
using namespace metal;
kernel void k(device int* a [[buffer(0)]], constant long& n [[buffer(1)]],
              uint3 dc_gid [[thread_position_in_grid]], uint3 dc_lid [[thread_position_in_threadgroup]],
              uint3 dc_grp [[threadgroup_position_in_grid]], uint3 dc_gsz [[threads_per_grid]],
              uint3 dc_lsz [[threads_per_threadgroup]]) {
  if (dc_lid.x == 1) return;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  a[dc_gid.x] = 1;
}
"""
    with pytest.raises(runner.ShimError, match="barrier"):
        runner.run_msl(msl, [np.zeros(8, np.int32)], 8, 4)


def test_shim_rejects_double_like_metal():
    msl = """
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* a [[buffer(0)]], constant long& n [[buffer(1)]],
              uint3 dc_gid [[thread_position_in_grid]], uint3 dc_lid [[thread_position_in_threadgroup]],
              uint3 dc_grp [[threadgroup_position_in_grid]], uint3 dc_gsz [[threads_per_grid]],
              uint3 dc_lsz [[threads_per_threadgroup]]) {
  double d = a[dc_gid.x];
  a[dc_gid.x] = float(d * 2);
}
"""
    with pytest.raises(runner.ShimCompileError, match="poison"):
        runner.run_msl(msl, [np.zeros(8, np.float32)], 8)
