"""``"gpu"`` means a GPU (or another non-CPU device type): never cpu:0, never a CPU-type OpenCL
device such as PoCL's; "auto" and "best" keep working where there is no GPU."""

from __future__ import annotations

import pytest

import dotcompute as dc
from dotcompute.runtime.registry import gpu_candidates


def test_gpu_candidates_are_never_cpu_type_devices():
    every = dc.devices()
    candidates = gpu_candidates()
    assert all(d.type != "cpu" for d in candidates)
    assert {d.id for d in candidates} == {d.id for d in every if d.type != "cpu"}
    # GPUs before other non-CPU types
    types = [d.type for d in candidates]
    assert types == sorted(types, key=lambda t: t != "gpu")


def test_gpu_refuses_cpu_type_devices_naming_them():
    cpu_type = [d for d in dc.devices() if d.type == "cpu"]
    if len(cpu_type) == len(dc.devices()):
        with pytest.raises(dc.BackendUnavailableError, match="no GPU was found") as info:
            dc.accelerator("gpu")
        for d in cpu_type:  # the message says why the OpenCL CPU device was not taken
            if d.backend != "cpu":
                assert d.id in str(info.value) and "CPU-type" in str(info.value)
        assert info.value.reason == "no GPU found"
    else:
        assert dc.accelerator("gpu").type != "cpu"
    # with or without a GPU, "auto" and "best" still resolve
    assert dc.accelerator("auto") in dc.devices()
    assert dc.accelerator("best") is dc.accelerator("auto")


def test_gpu_is_the_simulated_cuda_device_not_pocl(run_python):
    # the CUDA simulator's device has type "gpu": "gpu" takes it, not PoCL's CPU-type opencl:0
    code = ("import dotcompute as dc\n"
            "from dotcompute.runtime.registry import gpu_candidates\n"
            "print(dc.accelerator('gpu').id, [d.id for d in gpu_candidates()])\n")
    proc = run_python(code, env={"DOTCOMPUTE_CUDA_SIM": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cuda:0", "['cuda:0']"]
