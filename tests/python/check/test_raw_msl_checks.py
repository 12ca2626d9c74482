"""Kernel checks of raw MSL kernels on the Metal double (metal:0): every seeded bug of msl_corpus.py is
found by its check at its MSL line, the correct kernels run under every check with no finding and the
right results, and the launch behaves as for language kernels (nothing runs after a finding, ``:warn``
logs and runs, ``DOTCOMPUTE_CHECK`` applies).

Run as tests/run.sh's Metal phase does (the double loaded through DOTCOMPUTE_PLUGIN_PATH):

    DOTCOMPUTE_PLUGIN_PATH=build/metal-double DOTCOMPUTE_METAL_DOUBLE_DIR=build/metal-double \\
      PYTHONPATH=tests/python/metal python3 -m pytest -p metal_limits tests/python/check/test_raw_msl_checks.py
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from msl_corpus import BUGS, CLEAN, FLAT_BUGS, FLAT_CLEAN, Case

import dotcompute as dc
from dotcompute.lang.check.raw_metal import clang_available


@pytest.fixture(scope="module")
def metal() -> dc.Accelerator:
    if not any(b.name == "metal" and b.available for b in dc.backends()):
        pytest.skip("metal:0 is not loaded: run with DOTCOMPUTE_PLUGIN_PATH=build/metal-double (the Metal phase "
                    "of tests/run.sh)")
    if not clang_available():
        pytest.skip("clang++ is absent: the raw MSL checks compile the kernel with clang's SanitizerCoverage")
    return dc.accelerator("metal")


ALL_BUGS = BUGS + FLAT_BUGS


def _kernel(case: Case) -> dc.RawKernel:
    return dc.RawKernel(case.source, case.id, backend="metal")


def _launch(case: Case, acc: dc.Accelerator, check, args=None) -> tuple:
    args = case.make_args() if args is None else args
    dc.launch(_kernel(case), case.global_size, *args, local_size=case.local_size, accelerator=acc, check=check)
    return args


def test_the_corpus_covers_every_check():
    assert len(ALL_BUGS) >= 10 and {b.kind for b in BUGS} == {"memcheck", "racecheck", "synccheck", "initcheck"}
    assert all(b.line > 0 and "// BUG" in b.source.splitlines()[b.line - 1] for b in ALL_BUGS)


@pytest.mark.parametrize("case", ALL_BUGS, ids=[b.id for b in ALL_BUGS])
def test_bug_found_by_its_check_at_its_line(case, metal):
    args = case.make_args()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(dc.KernelCheckError) as ei:
        _launch(case, metal, case.kind, args)
    findings = ei.value.findings
    assert findings and all(f.kind == case.kind for f in findings), [str(f) for f in findings]
    assert any(case.line in (f.line, f.other_line) for f in findings), (case.line, [str(f) for f in findings])
    f = next(f for f in findings if case.line in (f.line, f.other_line))
    assert f.filename == "program_source" and f"program_source:{f.line}:" in f.message
    assert len(f.groups) == len(f.threads)
    if case.kind == "racecheck":
        assert len(f.threads) == 2 and f.threads[0] != f.threads[1] and f.hazard in ("write-write", "read-write")
    elif case.kind == "synccheck":
        assert len(f.threads) == 2 and f.buffer is None
    else:
        assert len(f.threads) == 1 and f.buffer and f.index is not None
    for a, b in zip(args, before, strict=True):  # the launch did not run
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def test_memcheck_names_the_buffer_and_the_element(metal):
    case = next(b for b in BUGS if b.id == "read_one_past_end")
    with pytest.raises(dc.KernelCheckError) as ei:
        _launch(case, metal, "memcheck")
    f = ei.value.findings[0]
    assert (f.buffer, f.index, f.threads) == ("x", (64,), ((63,),))
    case = next(b for b in BUGS if b.id == "threadgroup_overrun")
    with pytest.raises(dc.KernelCheckError) as ei:
        _launch(case, metal, "memcheck")
    f = ei.value.findings[0]
    assert (f.buffer, f.index) == ("tile", (32,)) and "threadgroup variable 'tile'" in f.message


@pytest.mark.parametrize("case", ALL_BUGS, ids=[b.id for b in ALL_BUGS])
def test_bug_found_under_all_checks(case, metal):
    with pytest.raises(dc.KernelCheckError) as ei:
        _launch(case, metal, "all")
    assert any(f.kind == case.kind for f in ei.value.findings)


@pytest.mark.parametrize("case", CLEAN + FLAT_CLEAN, ids=[c.id for c in CLEAN + FLAT_CLEAN])
def test_clean_kernels_have_no_findings(case, metal):
    args = _launch(case, metal, "all")
    assert case.expect is not None
    case.expect(args)


def test_warn_logs_and_launches(metal, caplog):
    case = next(b for b in BUGS if b.id == "global_accumulate")
    with caplog.at_level(logging.WARNING, logger="dotcompute.check"):
        args = _launch(case, metal, "racecheck:warn")
    assert "write-write race" in caplog.text and "program_source:" in caplog.text
    assert args[1][0] != 0  # the real launch ran


def test_dotcompute_check_applies_to_raw_msl(metal, monkeypatch):
    case = next(b for b in BUGS if b.id == "neighbour_without_barrier")
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "racecheck")
    with pytest.raises(dc.KernelCheckError):
        _launch(case, metal, None)
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "off")
    _launch(case, metal, None)  # runs (wrong, but unchecked)


def test_check_false_runs_unchecked(metal):
    case = next(b for b in BUGS if b.id == "global_accumulate")
    args = _launch(case, metal, False)
    assert args[1][0] != 0


def test_initcheck_sees_acc_empty_memory(metal):
    clean = next(c for c in CLEAN if c.id == "saxpy_guarded")
    _launch(clean, metal, "initcheck")  # checks are in use: acc.empty memory is tracked from here on
    src = metal.empty(64, np.float32)
    with src.host() as h:
        h[:40] = 1.0
    case = next(b for b in BUGS if b.id == "read_one_past_end")
    with pytest.raises(dc.KernelCheckError) as ei:
        dc.launch(_kernel(case), 63, src, np.zeros(64, np.float32), local_size=32, accelerator=metal,
                  check="initcheck")
    f = ei.value.findings[0]
    assert f.kind == "initcheck" and f.buffer == "x" and f.index == (40,) and f.threads == ((39,),)
    assert "acc.empty" in f.message and f.count == 24  # x[40] .. x[63]
    with src.host() as h:
        h[40:] = 2.0
    dc.launch(_kernel(case), 63, src, np.zeros(64, np.float32), local_size=32, accelerator=metal,
              check="initcheck")


def test_without_clang_the_error_names_the_compiler(metal, monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_SHIM_CXX", "g++")
    case = FLAT_BUGS[0]
    with pytest.raises(dc.DotComputeError, match="clang.*DOTCOMPUTE_SHIM_CXX"):
        _launch(case, metal, "memcheck")


def test_threadgroup_argument_window(metal):
    src = """#include <metal_stdlib>
using namespace metal;
kernel void tg_arg(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   threadgroup float* s [[threadgroup(0)]], uint i [[thread_position_in_grid]],
                   uint l [[thread_position_in_threadgroup]]) {
  s[l + 1] = x[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = s[l];
}"""
    k = dc.RawKernel(src, "tg_arg", backend="metal", shared_mem=32 * 4)
    with pytest.raises(dc.KernelCheckError) as ei:
        dc.launch(k, 64, np.arange(64, dtype=np.float32), np.zeros(64, np.float32), local_size=32,
                  accelerator=metal, check="memcheck")
    f = ei.value.findings[0]
    assert (f.kind, f.buffer, f.index, f.line) == ("memcheck", "s", (32,), 6)
    assert "threadgroup argument 's'" in f.message
