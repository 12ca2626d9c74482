"""Integer wrap semantics on the GPU backends (issue 22): the cases of int_wrap_cases.py on every
device of the session but the CPU (test_int_reduction_differential.py covers it under two compilers),
and on the simulated cuda:0 in a fresh interpreter when this session has no CUDA device (the
simulator is chosen when the runtime starts). tests/run.sh's Metal phase runs this file on metal:0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import dotcompute as dc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from int_wrap_cases import mismatches  # noqa: E402 -- the cases are shared with the child interpreter


def test_wrapping_integer_arithmetic_matches_numpy(accelerator) -> None:
    if accelerator.backend == "cpu":
        pytest.skip("the CPU backend is covered by test_int_reduction_differential.py (gcc and clang)")
    bad = mismatches(accelerator)
    assert bad == [], f"{len(bad)} mismatches on {accelerator.id}, first: {bad[:5]}"


@pytest.mark.slow  # tests/run.sh's simulator phase runs the test above on cuda:0
def test_wrapping_integer_arithmetic_on_simulated_cuda(run_python, tmp_cache) -> None:
    if any(d.id.startswith("cuda:") for d in dc.devices()):
        pytest.skip("this session has a CUDA device: the test above runs on it")
    code = ("import json, sys\n"
            f"sys.path.insert(0, {str(HERE)!r})\n"
            "import dotcompute as dc\n"
            "from int_wrap_cases import mismatches\n"
            "print('RESULT ' + json.dumps(mismatches(dc.accelerator('cuda:0'))))\n")
    r = run_python(code, env={"DOTCOMPUTE_CUDA_SIM": "1", "DOTCOMPUTE_BACKENDS": "cuda"}, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, r.stdout[-2000:] + r.stderr[-2000:]
    bad = json.loads(line[-1][len("RESULT "):])
    assert bad == [], f"{len(bad)} mismatches on the simulated cuda:0, first: {bad[:5]}"
