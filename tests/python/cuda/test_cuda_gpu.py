"""On a real CUDA device: the conformance suite on cuda:0, transfer bandwidth and launch
latency. Skipped with the reason "no CUDA device" where there is none. Under DOTCOMPUTE_CUDA_SIM=1
the conformance and capability tests run on the simulated cuda:0; the measurements skip."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

pytestmark = pytest.mark.gpu

REGISTRY = Path(__file__).resolve().parents[1] / "lang" / "conformance_kernels.py"


def _registry():
    module = sys.modules.get("conformance_kernels")
    if module is None:
        spec = importlib.util.spec_from_file_location("conformance_kernels", REGISTRY)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["conformance_kernels"] = module
        spec.loader.exec_module(module)
    return module


registry = _registry()

EMPTY = 'extern "C" __global__ void empty_kernel(float* p) { }'


@pytest.mark.parametrize("case", registry.CASES, ids=lambda c: c.id)
def test_conformance_on_cuda0(cuda_device, case):
    args = registry.build_args(case, seed=3)
    inputs = registry.copy_args(args)
    dc.launch(case.kernel, case.global_size, *args, local_size=case.local_size, accelerator=cuda_device)
    registry.verify(case, inputs, args)


def test_device_reports_its_capabilities(cuda_device):
    info = str(cuda_device.info)
    assert "sm_" in info and "compute_capability" in info
    assert cuda_device.backend == "cuda" and cuda_device.index == 0


def test_host_device_bandwidth(hardware_cuda_device):
    cuda_device = hardware_cuda_device
    n = 64 << 20  # 256 MB of float32
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    buf = cuda_device.empty((n,), np.float32)
    t0 = time.perf_counter()
    buf.copy_from(host)
    cuda_device.synchronize()
    h2d = time.perf_counter() - t0
    back = np.empty_like(host)
    t0 = time.perf_counter()
    buf.copy_to(back)
    d2h = time.perf_counter() - t0
    np.testing.assert_array_equal(back, host)
    gbps = (host.nbytes / h2d / 1e9, host.nbytes / d2h / 1e9)
    print(f"cuda:0 host->device {gbps[0]:.1f} GB/s, device->host {gbps[1]:.1f} GB/s")
    # PCIe 3 x16 gives ~12 GB/s; anything under 1 GB/s means the copies are broken (e.g. unpinned paging).
    assert min(gbps) > 1.0, gbps


def test_launch_latency(hardware_cuda_device):
    cuda_device = hardware_cuda_device
    kernel = dc.RawKernel(EMPTY, "empty_kernel", backend="cuda")
    buf = cuda_device.empty((1,), np.float32)
    stream = cuda_device.stream()
    for _ in range(10):  # compile, cache, warm up
        cuda_device.launch(kernel, 1, buf, stream=stream)
    stream.synchronize()
    count = 1000
    t0 = time.perf_counter()
    start = stream.record()
    for _ in range(count):
        cuda_device.launch(kernel, 1, buf, stream=stream)
    end = stream.record()
    stream.synchronize()
    host_us = (time.perf_counter() - t0) / count * 1e6
    device_ms = start.elapsed(end)
    print(f"cuda:0 launch: {host_us:.1f} us per launch on the host, {device_ms * 1000 / count:.1f} us on the device")
    assert device_ms > 0
    assert host_us < 1000, host_us  # a launch path over 1 ms is broken, not slow
