"""Kernel checks of raw CUDA kernels on the CUDA simulator (simulated cuda:0): every seeded bug of
cuda_corpus.py is found by its check at its CUDA source line, the correct kernels run under every check
with no finding and the right results, and the launch behaves as for language kernels (nothing runs
after a finding, ``:warn`` logs and runs, ``DOTCOMPUTE_CHECK`` applies).

Run in a simulator session, as tests/run.sh's simulator phase does:

    DOTCOMPUTE_CUDA_SIM=1 python3 -m pytest tests/python/check/test_raw_cuda_checks.py
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from cuda_corpus import BUG_SOURCE, BUGS, CLEAN, CLEAN_SOURCE, READ_LINE, Case

import dotcompute as dc
from dotcompute.lang.check.raw_cuda import clang_available

_KERNELS: dict[tuple[str, bool], dc.RawKernel] = {}


@pytest.fixture(scope="module")
def sim() -> dc.Accelerator:
    cuda = [b for b in dc.backends() if b.name == "cuda" and b.available]
    if not cuda or not cuda[0].simulated:
        pytest.skip("cuda:0 is not the CUDA simulator in this session (run with DOTCOMPUTE_CUDA_SIM=1)")
    if not clang_available():
        pytest.skip("clang++ is absent: the checks of raw CUDA kernels need a trace build made with clang's "
                    "SanitizerCoverage (Debian package clang)")
    return dc.accelerator("cuda:0")


def _kernel(case: Case) -> dc.RawKernel:
    key = (case.id, case.kind is None)
    if key not in _KERNELS:
        _KERNELS[key] = dc.RawKernel(CLEAN_SOURCE if case.kind is None else BUG_SOURCE, case.id, backend="cuda",
                                     shared_mem=case.shared_mem)
    return _KERNELS[key]


def _launch(case: Case, acc: dc.Accelerator, check, args=None) -> tuple:
    args = case.make_args() if args is None else args
    dc.launch(_kernel(case), case.global_size, *args, local_size=case.local_size, accelerator=acc, check=check)
    return args


def test_cuda_corpus_covers_every_check():
    assert len(BUGS) >= 12 and {b.kind for b in BUGS} == {"memcheck", "racecheck", "synccheck", "initcheck"}
    assert all(b.line > 0 and "// BUG" in BUG_SOURCE.splitlines()[b.line - 1] for b in BUGS)


@pytest.mark.parametrize("case", BUGS, ids=[b.id for b in BUGS])
def test_cuda_bug_found_by_its_check_at_its_line(case, sim):
    args = case.make_args()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(dc.KernelCheckError) as ei:
        _launch(case, sim, case.kind, args)
    findings = ei.value.findings
    assert findings and all(f.kind == case.kind for f in findings), [str(f) for f in findings]
    hit = [f for f in findings if case.line in (f.line, f.other_line)]
    assert hit, (case.line, [str(f) for f in findings])
    f = hit[0]
    assert f.filename == "kernel.cu" and f"kernel.cu:{f.line}:" in f.message
    assert len(f.groups) == len(f.threads) >= 1
    if case.buffer is not None:
        assert f.buffer == case.buffer, str(f)
    if case.kind == "racecheck":
        assert f.hazard in ("write-write", "read-write") and len(f.threads) == 2 and f.threads[0] != f.threads[1]
    # the launch did not run: the arguments are as they were
    for a, b in zip(args, before, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def test_cuda_memcheck_names_buffer_offset_thread_and_block(sim):
    case = next(c for c in BUGS if c.id == "oob_x_by_one")
    with pytest.raises(dc.KernelCheckError) as ei:
        _launch(case, sim, "memcheck")
    f = ei.value.findings[0]
    # x has 64 floats; global thread 64 (block 2, thread 0) reads x[64]
    assert f.buffer == "x" and f.index == (64,) and f.threads == ((64,),) and f.groups == ((2,),)
    assert "byte offset 256" in f.message and "read" in f.message


def test_cuda_race_reports_both_threads_and_lines(sim):
    case = next(c for c in BUGS if c.id == "race_shared_neighbour")
    with pytest.raises(dc.KernelCheckError) as ei:
        _launch(case, sim, "racecheck")
    lines = {(f.other_line, f.line) for f in ei.value.findings}
    # the store s[t] = x[t] (line above) against the neighbour's read at the BUG line, in either order
    assert {(case.line - 1, case.line), (case.line, case.line - 1)} & lines, lines


@pytest.mark.parametrize("schedule", ["forward", "reverse", "lockstep", "random:1"])
@pytest.mark.parametrize("case", CLEAN, ids=[c.id for c in CLEAN])
def test_cuda_correct_kernel_has_no_finding(case, schedule, sim, monkeypatch):
    # the checks do not depend on the order the simulator runs a block's threads in (read per launch)
    monkeypatch.setenv("DOTCOMPUTE_CUDA_SIM_SCHEDULE", schedule)
    args = _launch(case, sim, "all")  # raises on any finding
    case.expect(args)


def test_cuda_warn_logs_and_runs(sim, caplog):
    case = next(c for c in BUGS if c.id == "race_shared_neighbour")
    with caplog.at_level(logging.WARNING, logger="dotcompute.check"):
        args = _launch(case, sim, "racecheck:warn")
    assert "racecheck" in caplog.text and "kernel.cu:" in caplog.text
    x, out = args
    # the launch ran, in the simulator's forward order: thread 63 read what thread 0 wrote, the others
    # read their neighbour's element before it was written (poisoned shared memory: NaN)
    assert out[63] == x[0] and np.isnan(out[:63]).all()


def test_cuda_env_check_applies(sim, monkeypatch):
    case = next(c for c in BUGS if c.id == "shared_read_before_write")
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "initcheck")
    k = dc.RawKernel(BUG_SOURCE, case.id, backend="cuda")  # a new kernel picks the variable up at launch
    with pytest.raises(dc.KernelCheckError):
        dc.launch(k, case.global_size, *case.make_args(), local_size=case.local_size, accelerator=sim)
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "off")
    dc.launch(k, case.global_size, *case.make_args(), local_size=case.local_size, accelerator=sim)


def test_cuda_only_the_named_checks_run(sim):
    case = next(c for c in BUGS if c.id == "shared_read_before_write")
    _launch(case, sim, "memcheck,racecheck")  # an initcheck bug: nothing to report here


def test_cuda_checks_without_clang_name_the_package(sim, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no clang++ (nor anything else) to be found
    monkeypatch.delenv("DOTCOMPUTE_CXX", raising=False)
    case = next(c for c in BUGS if c.id == "race_shared_neighbour")
    with pytest.raises(dc.DotComputeError, match=r"clang\+\+.*apt-get install clang"):
        _launch(case, sim, "racecheck")


def test_cuda_initcheck_reads_of_never_written_acc_empty_memory(sim):
    uninit = pytest.importorskip("dotcompute.runtime.uninit")
    from dotcompute.lang.check import parse_check

    parse_check("initcheck", "check")  # the checks are in use: acc.empty memory is tracked from here on
    if not uninit.active:
        pytest.skip("this runtime does not track acc.empty memory")
    x = sim.empty(64, np.float32)
    out = sim.zeros(64, np.float32)
    dc.launch(dc.RawKernel(CLEAN_SOURCE, "fill_first_half", backend="cuda"), 64, x, 64, local_size=32,
              accelerator=sim)
    with pytest.raises(dc.KernelCheckError) as ei:
        dc.launch(dc.RawKernel(CLEAN_SOURCE, "copy_all", backend="cuda"), 64, x, out, 64, local_size=32,
                  accelerator=sim, check="initcheck")
    f = ei.value.findings[0]
    assert f.kind == "initcheck" and f.buffer == "x" and f.line == READ_LINE and f.index == (32,), str(f)
    assert "acc.empty" in f.message


@pytest.mark.slow  # a source of its own: one more trace build (about 5 s with a cold kernel cache)
def test_cuda_template_kernel_by_name_expression(sim):
    src = r"""
template <class T>
__global__ void scale(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) x[i] = x[i] * a;
}
"""
    k = dc.RawKernel(src, "scale<double>", backend="cuda")
    x = np.ones(40)
    with pytest.raises(dc.KernelCheckError) as ei:
        dc.launch(k, 64, x, 2.0, 40, local_size=32, accelerator=sim, check="memcheck")
    f = ei.value.findings[0]
    assert (f.kind, f.line, f.buffer, f.index, f.threads) == ("memcheck", 5, "x", (40,), ((40,),)), str(f)
    np.testing.assert_array_equal(x, 1.0)  # nothing ran
