"""Every kind of generated expression kernel compiles with the real NVRTC and emits MSL (no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.expr import codegen, reduce

KINDS = ["sum", "prod", "min", "max", "mean", "argmin", "argmax"]


@pytest.fixture(scope="module")
def nvrtc():
    import dotcompute.cuda as dcuda

    if dcuda.nvrtc_library_path() is None:
        pytest.skip(f"NVRTC not installed ({dcuda.INSTALL_HINT})")
    return dcuda


@pytest.fixture(scope="module")
def generated() -> list:
    """Runs one of each kind of generated kernel on the CPU; returns the kernels it used."""
    cpu = dc.accelerator("cpu")
    with codegen.recording() as keys:
        _workload(cpu)
    return codegen.kernels(keys)


def _workload(cpu: dc.Accelerator) -> None:
    f = cpu.asarray(np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6))
    i = cpu.asarray(np.arange(6, dtype=np.int32))
    d = cpu.asarray(np.arange(12.0))
    (dc.where(f > 0, dc.sqrt(f), -f) * i // 3 % 5).numpy()  # broadcasting, math, where, floor ops
    (f[1:3, ::2] + f.T[1:3, 0:3]).numpy()  # views with offsets and strides
    (i ** 2 < 7).numpy()
    (abs(-(i & 3)) ^ ~i).numpy()
    d[2:8] = d[::2] * 1.5  # a store through a view (overlapping: copied first)
    f.reshape(24).numpy()
    for kind in KINDS:
        getattr(dc, kind)(f * 2.0)
        x = f[0] * 2.0  # 1-D: the GPU layout (grid stride) is generated too
        reduce.reduction_kernel(kind, x, gpu=True)


def test_expression_kernels_compile_with_nvrtc(generated: list, nvrtc) -> None:
    assert len(generated) >= 20
    for k in generated:
        nvrtc.compile(k.source("cuda"), arch="sm_80")  # raises CompilationError with the log


def test_expression_kernels_emit_msl_and_opencl(generated: list) -> None:
    assert len(generated) >= 20
    for k in generated:
        assert k.source("opencl")
        try:
            assert k.source("metal")
        except dc.KernelTypeError as e:  # Metal has no float64: refused when the kernel is built
            assert "float64" in str(e)
