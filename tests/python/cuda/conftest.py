"""Fixtures of the CUDA suites: NVRTC (or a skip) and a real CUDA device (or a skip)."""

from __future__ import annotations

import pytest
from cuda_helpers import real_cuda_device_count


@pytest.fixture(scope="session")
def nvrtc():
    """The dotcompute.cuda module, or a skip when NVRTC is not installed."""
    import dotcompute.cuda as dcuda

    if dcuda.nvrtc_library_path() is None:
        pytest.skip(f"NVRTC not installed ({dcuda.INSTALL_HINT})")
    return dcuda


@pytest.fixture(scope="session")
def cuda_device():
    """cuda:0 through dotcompute, or a skip with the reason "no CUDA device"."""
    if real_cuda_device_count() == 0:
        pytest.skip("no CUDA device")
    import dotcompute as dc

    return dc.accelerator("cuda:0")
