"""compile_source / ParamSpec / plan.launch: the path the kernel language launches through."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.runtime import NeedsStaging, ParamSpec, compile_source

SOURCE = (Path(__file__).parent / "kernels" / "scale_typed.cpp").read_text()
PARAMS = [ParamSpec("buffer", "x", np.dtype("float32"), ndim=1, written=True),
          ParamSpec("scalar", "a", np.dtype("float32"))]


@pytest.fixture(scope="module")
def plan():
    return compile_source(dc.accelerator("cpu"), SOURCE, "scale_typed").plan(PARAMS)


def test_plan_describes_its_signature(plan):
    assert plan.expanded_count == 3  # pointer + extent + scalar
    assert not plan.raw
    assert [p["name"] for p in plan.params] == ["x", "a"]
    assert plan.kernel.name == "scale_typed"


def test_launch_with_runtime_and_native_buffers(cpu, plan):
    x = cpu.asarray(np.arange(10, dtype=np.float32))
    plan.launch(10, None, (x, 2.0), None)
    plan.launch((10,), (4,), [x._native, np.float32(0.5)], cpu.default_stream)
    cpu.synchronize()
    np.testing.assert_array_equal(x.numpy(), np.arange(10, dtype=np.float32))
    plan.launch(10, None, (x, 3), None)  # an int for a float parameter converts
    np.testing.assert_array_equal(x.numpy(), 3 * np.arange(10, dtype=np.float32))


def test_numpy_arrays_are_zero_copy_on_the_cpu(cpu, plan):
    x = np.ones(100, np.float32)
    plan.launch(100, None, (x, 4.0), None)  # synchronous: x holds the result on return
    np.testing.assert_array_equal(x, 4.0)


def test_argument_errors_name_the_parameter(cpu, plan):
    with pytest.raises(dc.KernelTypeError, match="x"):
        plan.launch(4, None, (np.zeros(4, np.float64), 1.0), None)
    with pytest.raises(dc.KernelTypeError, match="x"):
        plan.launch(4, None, (np.zeros((2, 2), np.float32), 1.0), None)
    with pytest.raises(TypeError):
        plan.launch(4, None, (cpu.zeros((4,), np.float32),), None)
    with pytest.raises(TypeError, match="a"):
        plan.launch(4, None, (cpu.zeros((4,), np.float32), "two"), None)


def test_float_for_an_int_parameter_is_a_type_error(cpu):
    k = compile_source(cpu, SOURCE, "scale_typed")
    p = k.plan([ParamSpec("buffer", "x", np.float32, ndim=1, written=True), ParamSpec("scalar", "n", np.int32)])
    with pytest.raises(dc.KernelTypeError, match="n"):
        p.launch(4, None, (cpu.zeros((4,), np.float32), 1.5), None)


def test_bad_sizes_are_launch_errors(cpu, plan):
    x = cpu.zeros((4,), np.float32)
    with pytest.raises(dc.LaunchError):
        plan.launch((1, 2, 3, 4), None, (x, 1.0), None)
    with pytest.raises(dc.LaunchError):
        plan.launch(0, None, (x, 1.0), None)
    with pytest.raises(TypeError):
        plan.launch("10", None, (x, 1.0), None)


def test_param_spec_validation():
    with pytest.raises(ValueError):
        ParamSpec("pointer", "p", np.float32)
    with pytest.raises(ValueError):
        ParamSpec("scalar", "s", np.float32, ndim=1)
    assert ParamSpec("scalar", "s", "int64").dtype == np.dtype(np.int64)


def test_compile_source_checks_its_arguments(cpu):
    with pytest.raises(TypeError):
        compile_source(cpu, b"bytes", "f")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        compile_source(cpu, SOURCE, "")


def test_needs_staging_on_devices_without_unified_memory():
    others = [d for d in dc.devices() if not d.unified_memory and d.backend == "opencl"]
    if not others:
        pytest.skip("no OpenCL device without unified memory here")
    acc = others[0]
    src = "__kernel void fill(__global float* x, long n, float v) { size_t i = get_global_id(0); " \
          "if (i < n) x[i] = v; }"
    p = compile_source(acc, src, "fill").plan(
        [ParamSpec("buffer", "x", np.float32, ndim=1, written=True), ParamSpec("scalar", "v", np.float32)])
    with pytest.raises(NeedsStaging) as info:
        p.launch(8, None, (np.zeros(8, np.float32), 1.0), None)
    assert info.value.param == "x" and info.value.index == 0
    buf = acc.zeros((8,), np.float32)
    p.launch(8, None, (buf, 2.5), None)
    np.testing.assert_array_equal(buf.numpy(), 2.5)
