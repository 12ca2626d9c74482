"""dc.validate: passes right kernels, reports a planted mismatch exactly, never changes its arguments."""

from __future__ import annotations

import numpy as np
import pytest
from orchestrate_kernels import bump, double, planted, scale

import dotcompute as dc

N = 1000


def _twice(x: np.ndarray, y: np.ndarray) -> None:
    y[:] = x * 2


def test_a_right_kernel_passes_against_the_cpu(accelerator):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    rep = dc.validate(double, N, x, y, accelerator=accelerator, reference="cpu")
    assert rep.ok and bool(rep) and rep.deterministic
    out = rep.outputs["y"]
    assert (out.mismatches, out.first_mismatch, out.max_abs_error, out.max_rel_error) == (0, None, 0.0, 0.0)
    assert list(rep.outputs) == ["y"]  # x is only read
    assert not y.any() and (x == np.arange(N)).all()  # the arguments are untouched


def test_a_planted_mismatch_is_reported_exactly(accelerator):
    x = np.arange(N, dtype=np.float32)
    y = np.full(N, -1.0, np.float32)
    rep = dc.validate(planted, N, x, y, accelerator=accelerator, reference=_twice)
    assert not rep.ok and not bool(rep)
    out = rep.outputs["y"]
    assert out.mismatches == 1
    assert out.first_mismatch == (7, 0.0, 14.0)
    assert out.max_abs_error == 14.0 and out.max_rel_error == 1.0
    assert out.deterministic
    text = str(rep)
    assert "MISMATCH" in text and "1/1000" in text and "7, 0.0, 14.0" in text
    assert (y == -1).all()


def test_in_place_kernels_start_from_fresh_copies(accelerator):
    x = np.arange(N, dtype=np.float32)
    rep = dc.validate(bump, N, x, accelerator=accelerator)
    assert rep.ok, str(rep)
    assert (x == np.arange(N)).all()


def test_buffers_and_generic_kernels(accelerator):
    x = accelerator.asarray(np.linspace(0, 1, N, dtype=np.float64))
    y = accelerator.zeros(N, np.float64)

    def expected(x: np.ndarray, y: np.ndarray, a: float) -> None:
        y[:] = x * a

    rep = dc.validate(scale, N, x, y, np.float32(3.0), accelerator=accelerator, reference=expected, rtol=1e-6)
    assert rep.ok, str(rep)
    assert not y.numpy().any()


def test_tolerances_decide():
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)

    def nearly(x: np.ndarray, y: np.ndarray) -> None:
        y[:] = x * 2 * (1 + 1e-4)

    assert not dc.validate(double, N, x, y, accelerator="cpu", reference=nearly, rtol=1e-6)
    assert dc.validate(double, N, x, y, accelerator="cpu", reference=nearly, rtol=1e-3)


def test_raw_kernels_need_declared_outputs(gpu_like):
    if gpu_like.backend != "opencl":
        pytest.skip("the raw kernel below is OpenCL C")
    raw = dc.RawKernel("__kernel void twice(__global const float* x, __global float* y) {"
                       " size_t i = get_global_id(0); y[i] = 2.0f * x[i]; }", "twice", backend="opencl")
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    with pytest.raises(TypeError, match="outputs"):
        dc.validate(raw, N, x, y, accelerator=gpu_like, reference=_twice)
    rep = dc.validate(raw, N, x, y, accelerator=gpu_like, reference=_twice, outputs=[1])
    assert rep.ok and list(rep.outputs) == ["arg1"]


def test_bad_parameters_are_named():
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="rtol"):
        dc.validate(double, 4, x, x, rtol=-1)
    with pytest.raises(TypeError, match="reference"):
        dc.validate(double, 4, x, x, reference=3)
    with pytest.raises(ValueError, match="outputs"):
        dc.validate(double, 4, x, x, outputs=["nope"])


@dc.kernel
def planted_2d(x: dc.Buffer[dc.float32, 2], y: dc.Buffer[dc.float32, 2]) -> None:
    i, j = dc.global_id(0), dc.global_id(1)
    y[i, j] = x[i, j] + 1.0
    if i == 2 and j == 3:
        y[i, j] = -5.0


def test_nd_outputs_report_a_tuple_index(accelerator):
    x = np.zeros((4, 6), np.float32)
    y = np.zeros((4, 6), np.float32)

    def ref(x: np.ndarray, y: np.ndarray) -> None:
        y[...] = x + 1

    rep = dc.validate(planted_2d, (4, 6), x, y, accelerator=accelerator, reference=ref)
    assert rep.outputs["y"].first_mismatch == ((2, 3), -5.0, 1.0)
    assert rep.outputs["y"].mismatches == 1
