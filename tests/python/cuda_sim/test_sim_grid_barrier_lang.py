"""``dc.grid_barrier()`` in the kernel language: every work-item of the launch waits there. On CUDA the
kernel is launched cooperatively (cuLaunchCooperativeKernel, all blocks resident) and the barrier is
cooperative groups' grid sync; run here on the simulated cuda:0 against numpy. The other backends
refuse it when the kernel is compiled, naming themselves (issue 23)."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def scale_by_sum(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], partial: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    g = dc.global_size(0)
    n = x.shape[0]
    s = x[0] * 0.0
    for j in range(i, n, g):
        s += x[j]
    partial[i] = s
    dc.grid_barrier()  # every partial sum is written
    if i == 0:
        t = s * 0.0
        for k in range(g):
            t += partial[k]
        partial[g] = t
    dc.grid_barrier()  # the total is written
    total = partial[g]
    for j in range(i, n, g):
        out[j] = x[j] / total


def _run(acc: dc.Accelerator, n: int, items: int, group: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(0.5, 1.5, n, dtype=np.float32)
    out = acc.zeros((n,), np.float32)
    partial = acc.zeros((items + 1,), np.float32)
    dc.launch(scale_by_sum, items, acc.asarray(x), out, partial, local_size=group, accelerator=acc)
    return x, out.numpy()


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:3"])
def test_grid_barrier_two_phases_against_numpy(sim, monkeypatch, schedule):
    monkeypatch.setenv("DOTCOMPUTE_CUDA_SIM_SCHEDULE", schedule)
    x, got = _run(sim, n=3000, items=4 * 64, group=64)
    np.testing.assert_allclose(got, x / x.sum(dtype=np.float64), rtol=1e-4)


def test_grid_too_large_for_a_cooperative_launch_is_refused(sim):
    # 1024-item groups: the device holds multiprocessors x (threads per SM // 1024) of them at once
    resident = sim.info["multiprocessors"] * (sim.info["max_threads_per_multiprocessor"] // 1024)
    with pytest.raises(dc.LaunchError, match="CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"):
        _run(sim, n=100, items=(resident + 1) * 1024, group=1024)


def test_backends_without_a_cooperative_launch_refuse_it_by_name():
    acc = dc.accelerator("cpu:0")
    with pytest.raises(dc.KernelTypeError, match=r"dc.grid_barrier\(\) is not available on the cpu backend"):
        _run(acc, n=100, items=64, group=64)
    opencl = [d for d in dc.devices() if d.backend == "opencl"]
    if opencl:
        with pytest.raises(dc.KernelTypeError, match=r"not available on the opencl backend"):
            _run(opencl[0], n=100, items=64, group=64)
