"""Launch-time behaviour of kernel-language kernels: argument checks, debug bounds checks,
barrier launches (docs/design.md, "The kernel language", "Launch semantics")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def copy1(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], s: dc.int32):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i] + s


@dc.kernel(debug=True)
def off_by_one(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i + 1] = a[i]  # OOB


def test_wrong_dtype_names_the_parameter(accelerator):
    with pytest.raises(TypeError, match="out"):
        dc.launch(copy1, 8, np.zeros(8, np.float32), np.zeros(8, np.float64), 1, accelerator=accelerator)


def test_wrong_ndim_names_the_parameter(accelerator):
    with pytest.raises(dc.KernelTypeError, match="a"):
        dc.launch(copy1, 8, np.zeros((2, 4), np.float32), np.zeros(8, np.float32), 1, accelerator=accelerator)


def test_wrong_argument_count(accelerator):
    with pytest.raises(TypeError):
        dc.launch(copy1, 8, np.zeros(8, np.float32), np.zeros(8, np.float32), accelerator=accelerator)


def test_float_for_int_scalar_names_the_parameter(accelerator):
    with pytest.raises(dc.KernelTypeError, match="s"):
        dc.launch(copy1, 8, np.zeros(8, np.float32), np.zeros(8, np.float32), 1.5, accelerator=accelerator)


def test_debug_mode_reports_out_of_bounds_write(accelerator):
    a, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    with pytest.raises(dc.KernelIndexError) as info:
        dc.launch(off_by_one, 16, a, out, accelerator=accelerator)
    msg = str(info.value)
    assert "out" in msg, msg
    assert "16" in msg, msg  # the offending index
    assert str(OOB_LINE) in msg, f"the message should name python line {OOB_LINE}: {msg}"


OOB_LINE = next(n + 1 for n, t in enumerate(Path(__file__).read_text().splitlines()) if t.rstrip().endswith("# OOB"))


def test_debug_env_variable_turns_checks_on(accelerator, monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "1")

    @dc.kernel
    def unchecked_write(out: dc.Buffer[dc.int32]):
        out[dc.global_id(0) + 3] = 1

    with pytest.raises(dc.KernelIndexError):
        dc.launch(unchecked_write, 8, np.zeros(8, np.int32), accelerator=accelerator)


@dc.kernel
def group_sums(x: dc.Buffer[dc.int32], total: dc.Buffer[dc.int32], groups: dc.Buffer[dc.int32]):
    acc = dc.shared((1,), dc.int32)
    lid = dc.local_id(0)
    if lid == 0:
        acc[0] = 0
    dc.barrier()
    dc.atomic_add(acc, 0, x[dc.global_id(0)])
    dc.barrier()
    if lid == 0:
        dc.atomic_add(total, 0, acc[0])
        dc.atomic_add(groups, 0, 1)


def test_barrier_kernel_gets_a_dividing_local_size(accelerator):
    x = np.arange(96, dtype=np.int32)
    total, groups = np.zeros(1, np.int32), np.zeros(1, np.int32)
    dc.launch(group_sums, 96, x, total, groups, accelerator=accelerator)
    assert total[0] == x.sum()
    assert groups[0] >= 1 and 96 % groups[0] == 0


def test_barrier_kernel_with_partial_group_is_refused(accelerator):
    x = np.arange(100, dtype=np.int32)
    with pytest.raises(dc.LaunchError):
        dc.launch(group_sums, 100, x, np.zeros(1, np.int32), np.zeros(1, np.int32), local_size=32,
                  accelerator=accelerator)


def test_read_only_numpy_inputs_are_untouched(accelerator):
    a = np.arange(8, dtype=np.float32)
    keep = a.copy()
    out = np.zeros(8, np.float32)
    dc.launch(copy1, 8, a, out, 2, accelerator=accelerator)
    np.testing.assert_array_equal(a, keep)
    np.testing.assert_array_equal(out, keep + 2)


def test_debug_error_carries_location_attributes(accelerator):
    a, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    with pytest.raises(dc.KernelIndexError) as info:
        dc.launch(off_by_one, 16, a, out, accelerator=accelerator)
    exc = info.value
    assert exc.lineno == OOB_LINE
    assert exc.index == 16
    assert Path(exc.filename).name == Path(__file__).name
    assert "out" in str(exc.buffer)


def _load(v: dc.Buffer[dc.float32], k: dc.int64) -> dc.float32:
    return v[k + 2]  # OOB-FUNC


load_past_end = dc.func(_load)


@dc.kernel(debug=True)
def reads_through_function(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = load_past_end(a, i)


def test_debug_error_inside_device_function(accelerator):
    line = next(n + 1 for n, t in enumerate(Path(__file__).read_text().splitlines())
                if t.rstrip().endswith("# OOB-FUNC"))
    with pytest.raises(dc.KernelIndexError) as info:
        dc.launch(reads_through_function, 8, np.ones(8, np.float32), np.zeros(8, np.float32),
                  accelerator=accelerator)
    assert info.value.lineno == line, str(info.value)
    assert "v" in str(info.value.buffer), str(info.value)


REBOUND = 2


@dc.kernel
def uses_rebound(out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = i * REBOUND


def test_rebinding_a_module_constant_recompiles(accelerator):
    global REBOUND
    out = np.zeros(8, np.int32)
    dc.launch(uses_rebound, 8, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, np.arange(8) * 2)
    try:
        REBOUND = 5
        dc.launch(uses_rebound, 8, out, accelerator=accelerator)
        np.testing.assert_array_equal(out, np.arange(8) * 5)
    finally:
        REBOUND = 2


def test_kernel_check_method():
    dc.kernel(lambda_free_ok).check()
    with pytest.raises(dc.KernelSyntaxError):
        dc.kernel(lambda_free_bad).check()


def lambda_free_ok(a: dc.Buffer[dc.float32]):
    a[0] = 1.0


def lambda_free_bad(a: dc.Buffer[dc.float32]):
    a[0] = [1.0][0]
