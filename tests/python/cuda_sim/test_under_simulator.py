"""In a session that does not run on the CUDA simulator, this folder runs once in a subprocess
that does (DOTCOMPUTE_CUDA_SIM=1), so its simulator tests never go silently unrun."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sim_helpers import nvrtc_missing, simulated_cuda0

HERE = Path(__file__).resolve().parent


def test_this_folder_on_the_simulator(tmp_path):
    if simulated_cuda0():
        pytest.skip("this session already runs on the CUDA simulator")
    if nvrtc_missing():
        pytest.skip("NVRTC not installed (pip install 'dotcompute[cuda]')")
    env = dict(os.environ, DOTCOMPUTE_CUDA_SIM="1", DOTCOMPUTE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("DOTCOMPUTE_CUDA_SIM_DEVICES", None)
    # test_sim_devices starts its own interpreters and runs in this session already.
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(HERE),
                        "-k", "not test_sim_devices and not test_this_folder_on_the_simulator"],
                       capture_output=True, text=True, env=env, timeout=900, cwd=HERE.parents[2])
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    summary = r.stdout.strip().splitlines()[-1]
    assert " passed" in summary, r.stdout[-2000:]
    # the only skips allowed are the documented ones: the outside samples need their checkout, slow
    # tests run with --full, and the cuRAND tests need the optional nvidia-curand-cu12 (tests/run.sh
    # installs it); any other skip would be a simulator test silently not run
    skips = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED")]
    allowed = ("DOTCOMPUTE_CUDA_SAMPLES_DIR", "DOTCOMPUTE_RODINIA_DIR", "slow:", "pip install nvidia-curand-cu12")
    unexpected = [line for line in skips if not any(a in line for a in allowed)]
    assert not unexpected, "\n".join(unexpected)
