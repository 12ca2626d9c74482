"""No false positives: correct kernels run under every check with zero findings and the right results.

The fast test takes the conformance registry's barrier and atomics kernels and a few others; the slow one
takes all of it (tests/python/lang/conformance_kernels.py), and the realworld barrier suites under
DOTCOMPUTE_CHECK=all."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dotcompute as dc

HERE = Path(__file__).resolve()
REGISTRY = HERE.parents[1] / "lang" / "conformance_kernels.py"


def _registry():
    module = sys.modules.get("conformance_kernels")
    if module is None:
        spec = importlib.util.spec_from_file_location("conformance_kernels", REGISTRY)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["conformance_kernels"] = module
        spec.loader.exec_module(module)
    return module


reg = _registry()
FAST_IDS = {"saxpy", "floordiv_mod_int32", "bitwise_ops"}
FAST = [c for c in reg.CASES if c.id in FAST_IDS or c.tags & {"barrier", "atomic"}][:14]


def _run_clean(case, acc) -> None:
    inputs = reg.build_args(case)
    results = reg.copy_args(inputs)
    dc.launch(case.kernel, case.global_size, *results, local_size=case.local_size, accelerator=acc, check="all")
    reg.verify(case, inputs, results)


def test_fast_set_has_barrier_kernels():
    assert len(FAST) >= 6 and any("barrier" in c.tags for c in FAST)


@pytest.mark.parametrize("case", FAST, ids=lambda c: c.id)
def test_clean_kernels_have_no_findings(case, cpu):
    _run_clean(case, cpu)


@pytest.mark.slow
@pytest.mark.parametrize("case", reg.CASES, ids=lambda c: c.id)
def test_whole_conformance_registry_is_clean(case, cpu):
    _run_clean(case, cpu)


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["realworld/test_rw_barriers.py", "realworld/test_rw_reduce.py",
                                   "realworld/test_rw_stencil.py", "idioms/test_idioms_more.py",
                                   "types/test_vectors.py", "types/test_structs.py", "lang/test_subgroups.py"])
def test_realworld_suites_pass_under_all_checks(suite):
    env = dict(os.environ, DOTCOMPUTE_CHECK="all")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-k", "cpu",
                        str(HERE.parents[1] / suite)], env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode in (0, 5), r.stdout[-4000:] + r.stderr[-2000:]


@dc.kernel
def uniform_break(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    s[l] = x[dc.global_id(0)]
    total = dc.float32(0.0)
    for k in range(64):
        dc.barrier()
        if k == 8:
            break
        if l >= 1000:  # never taken: a divergent-looking but uniform exit
            continue
        total += s[(l + k) % 64]
    out[dc.global_id(0)] = total


@dc.kernel
def guarded_tail(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i >= x.shape[0]:
        return
    out[i] = x[i] + 1.0


def test_uniform_jumps_and_early_exits_are_clean(cpu):
    import numpy as np

    x = np.arange(128, dtype=np.float32)
    out = np.zeros(128, np.float32)
    dc.launch(uniform_break, 128, x, out, local_size=64, accelerator=cpu, check="all")
    want = [sum(x[(i // 64) * 64 + (i % 64 + k) % 64] for k in range(8)) for i in range(128)]
    np.testing.assert_allclose(out, want)
    out2 = np.zeros(100, np.float32)
    dc.launch(guarded_tail, 256, x[:100].copy(), out2, accelerator=cpu, check="all")
    np.testing.assert_array_equal(out2, x[:100] + 1)
