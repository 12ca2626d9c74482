"""The OpenCL device, or a skip that says why there is none.

An OpenCL platform that is present on the machine (the ICD loader lists one)
but unusable through dotcompute is a failure, not a skip: that is the CI case
with PoCL installed.
"""

from __future__ import annotations

import ctypes

import pytest

import dotcompute as dc


def platform_count() -> int:
    """How many OpenCL platforms the ICD loader lists here, asked directly (0 without a loader)."""
    try:
        lib = ctypes.CDLL("libOpenCL.so.1")
    except OSError:
        return 0
    count = ctypes.c_uint32(0)
    status = lib.clGetPlatformIDs(ctypes.c_uint32(0), None, ctypes.byref(count))
    return count.value if status == 0 else 0


def opencl_status() -> dc.BackendInfo | None:
    try:
        listed = {b.name: b for b in dc.backends()}
    except ImportError as e:
        pytest.skip(f"the native module is not built: {e}")
    return listed.get("opencl")


@pytest.fixture(scope="session")
def opencl_plugin() -> dc.BackendInfo:
    """The opencl plugin's status (available or not); skips where the plugin is not installed."""
    status = opencl_status()
    if status is None:
        pytest.skip("the opencl plugin is not installed in this package")
    return status


@pytest.fixture(scope="session")
def ocl(opencl_plugin: dc.BackendInfo) -> dc.Accelerator:
    status = opencl_plugin
    if not status.available:
        if platform_count() > 0:
            pytest.fail(f"an OpenCL platform is installed but the opencl backend is unavailable: {status.reason}")
        pytest.skip(f"no OpenCL here: {status.reason}")
    return dc.accelerator("opencl:0")
