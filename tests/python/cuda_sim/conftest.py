"""Fixtures of the CUDA simulator suite.

The simulator is chosen when the runtime starts (DOTCOMPUTE_CUDA_SIM=1), so the tests of this
folder that use it run in a session started that way (tests/run.sh's simulator pass); in any
other session test_under_simulator.py runs this folder in such a subprocess.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_helpers import simulated_cuda0

import dotcompute as dc

KERNELS = Path(__file__).resolve().parent / "kernels"


@pytest.fixture(scope="session")
def sim() -> dc.Accelerator:
    """The simulated cuda:0; a skip when this session does not run on the CUDA simulator."""
    if not simulated_cuda0():
        pytest.skip("cuda:0 is not the CUDA simulator in this session (run with DOTCOMPUTE_CUDA_SIM=1)")
    return dc.accelerator("cuda:0")


@pytest.fixture(scope="session")
def cu_source():
    """``cu_source(name)``: the text of kernels/<name>.cu."""
    return lambda name: (KERNELS / f"{name}.cu").read_text()

