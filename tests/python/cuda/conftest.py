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


def _simulated_cuda0() -> bool:
    import dotcompute as dc

    return any(d.id == "cuda:0" and d.info.get("simulated") is True for d in dc.devices())


@pytest.fixture(scope="session")
def cuda_device():
    """cuda:0 through dotcompute (a real device, or the CUDA simulator's under DOTCOMPUTE_CUDA_SIM=1),
    or a skip with the reason "no CUDA device"."""
    if not _simulated_cuda0() and real_cuda_device_count() == 0:
        pytest.skip("no CUDA device")
    import dotcompute as dc

    return dc.accelerator("cuda:0")


@pytest.fixture
def hardware_cuda_device(cuda_device):
    """cuda:0 when it is real hardware: tests that measure the GPU skip on the simulator."""
    if cuda_device.info.get("simulated") is True:
        pytest.skip("measures hardware; cuda:0 is the CUDA simulator")
    return cuda_device
