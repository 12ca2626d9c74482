"""The launch fast path (runtime/fast_launch.py, python/src/fast_launch.cpp): a cached kernel launched
with plain arguments in one native call. It must give the results of the normal path, and hand every
case it does not take back to it before anything runs, so that errors, staging, views, debug and
profiling behave as before."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.runtime.fast_launch import attempt


@dc.kernel
def _axpy(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], a: dc.float32) -> None:
    i = dc.global_id(0)
    out[i] = a * x[i] + out[i]


@dc.kernel
def _scatter(idx: dc.Buffer[dc.int32], out: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    out[idx[i]] = 1.0


@dc.kernel
def _generic_scale(x: dc.Buffer, s) -> None:  # noqa: ANN001 -- typed by its arguments
    i = dc.global_id(0)
    x[i] = x[i] * s


@dc.kernel
def _put(out: dc.Buffer[dc.float64], f: dc.float32, i: dc.int64, u: dc.uint64, b: dc.bool_) -> None:
    out[0] = dc.float64(f)
    out[1] = dc.float64(i)
    out[2] = dc.float64(u >> 32)
    out[3] = 1.0 if b else 0.0


def _filed(kernel: dc.Kernel, acc: dc.Accelerator) -> bool:
    return kernel._fast.get(acc) is not None


def test_a_cached_launch_takes_the_fast_path_with_the_same_results(accelerator):
    x = accelerator.asarray(np.arange(64, dtype=np.float32))
    out = accelerator.zeros(64, np.float32)
    accelerator.launch(_axpy, 64, x, out, np.float32(2.0))
    # filed where the entry needs nothing of Python (on cpu:0; OpenCL kernels take their global size
    # as arguments, so they keep the normal path)
    assert _filed(_axpy, accelerator) or accelerator.backend != "cpu"
    if _filed(_axpy, accelerator):
        assert attempt(accelerator, _axpy, 64, (x, out, 1.0))  # the fast path itself: True, it launched
    else:
        accelerator.launch(_axpy, 64, x, out, 1.0)
    accelerator.launch(_axpy, 64, x, out, np.float32(0.5))
    dc.launch(_axpy, (64,), x, out, 1, accelerator=accelerator)
    np.testing.assert_array_equal(out.numpy(), 4.5 * np.arange(64, dtype=np.float32))


def test_an_index_past_a_buffer_is_refused_before_anything_runs(cpu):
    x = cpu.asarray(np.ones(8, np.float32))
    out = cpu.zeros(8, np.float32)
    cpu.launch(_axpy, 8, x, out, 1.0)
    assert _filed(_axpy, cpu)
    short = cpu.zeros(4, np.float32)
    for size, args in ((9, (x, out, 1.0)), (8, (x, short, 1.0)), ((8,), (short, out, 1.0))):
        assert not attempt(cpu, _axpy, size, args)  # the native facts check says no
        with pytest.raises(dc.LaunchError, match="out of bounds"):
            cpu.launch(_axpy, size, *args)
    np.testing.assert_array_equal(out.numpy(), np.ones(8, np.float32))  # only the first launch ran
    np.testing.assert_array_equal(short.numpy(), np.zeros(4, np.float32))


def test_wrong_arguments_get_the_normal_paths_errors(cpu):
    x, out = cpu.zeros(4, np.float32), cpu.zeros(4, np.float32)
    cpu.launch(_axpy, 4, x, out, 1.0)
    with pytest.raises(dc.KernelTypeError, match="'out'") as info:
        cpu.launch(_axpy, 4, x, cpu.zeros(4, np.float64), 1.0)
    assert "_axpy" in str(info.value) and "_axpy_" not in str(info.value)  # the kernel the user wrote
    with pytest.raises(dc.KernelTypeError):
        dc.launch(_axpy, 4, x, out, accelerator=cpu)
    with pytest.raises(dc.KernelTypeError, match="'a'"):
        cpu.launch(_axpy, 4, x, out, "1.0")
    with pytest.raises(dc.LaunchError):
        cpu.launch(_axpy, 0, x, out, 1.0)
    with pytest.raises(dc.LaunchError, match="out of bounds"):
        cpu.launch(_axpy, 4, x, out[:2], 1.0)


def test_numpy_arrays_and_views_take_the_normal_path(cpu):
    x = cpu.asarray(np.arange(8, dtype=np.float32))
    out = cpu.zeros(8, np.float32)
    cpu.launch(_axpy, 8, x, out, 1.0)
    host = np.zeros(8, np.float32)
    assert not attempt(cpu, _axpy, 8, (x, host, 1.0))
    cpu.launch(_axpy, 8, x, host, 2.0)
    np.testing.assert_array_equal(host, 2 * np.arange(8, dtype=np.float32))
    view = out[2:6]
    cpu.launch(_axpy, 4, x[:4], view, 1.0)
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 4, 6, 8, 6, 7])


@pytest.mark.parametrize("f, i, u, b", [
    (np.float32(2.5), np.int64(-7), np.uint64(2**63 + 2**40), np.bool_(True)),
    (2.5, -7, 2**63 + 2**40, True),
    (np.float64(1.25), np.int32(9), np.uint32(5), np.False_),
    (np.float16(0.5), np.int8(-3), np.uint16(7), False),  # float16: the normal path's conversion
])
def test_scalar_arguments_carry_their_values(cpu, f, i, u, b):
    out = cpu.zeros(4, np.float64)
    cpu.launch(_put, 1, out, 0.0, 0, 0, False)
    assert _filed(_put, cpu)
    cpu.launch(_put, 1, out, f, i, u, b)
    assert out.numpy().tolist() == [float(np.float32(f)), float(i), float(int(u) >> 32), float(bool(b))]


def test_scalars_that_do_not_fit_name_the_parameter(cpu):
    out = cpu.zeros(4, np.float64)
    cpu.launch(_put, 1, out, 0.0, 0, 0, False)
    for u in (-1, np.int64(-1), np.int8(-1)):
        with pytest.raises(dc.KernelTypeError, match="argument 'u'.*uint64"):
            cpu.launch(_put, 1, out, 1.0, 1, u, True)
    with pytest.raises(dc.KernelTypeError, match="argument 'i'"):
        cpu.launch(_put, 1, out, 1.0, np.uint64(2**63), 1, True)
    with pytest.raises(dc.KernelTypeError, match="'i'"):
        cpu.launch(_put, 1, out, 1.0, 2**63, 1, True)


def test_a_generic_kernel_keeps_one_specialisation_per_signature(cpu):
    x32, x64 = cpu.asarray(np.ones(4, np.float32)), cpu.asarray(np.ones(4, np.float64))
    for _ in range(3):  # alternating signatures: each launch its own specialisation
        cpu.launch(_generic_scale, 4, x32, 2.0)
        cpu.launch(_generic_scale, 4, x64, 3)
    cpu.launch(_generic_scale, 4, x64, 0.5)  # int -> float: a new signature, not the filed one's
    np.testing.assert_array_equal(x32.numpy(), np.full(4, 8.0, np.float32))
    np.testing.assert_array_equal(x64.numpy(), np.full(4, 13.5, np.float64))


def test_profiling_sees_fast_path_launches(cpu):
    x, out = cpu.zeros(4, np.float32), cpu.zeros(4, np.float32)
    cpu.launch(_axpy, 4, x, out, 1.0)
    assert _filed(_axpy, cpu)
    with dc.profile() as prof:
        for _ in range(3):
            cpu.launch(_axpy, 4, x, out, 1.0)
            dc.launch(_axpy, 4, x, out, 1.0, accelerator=cpu)
        cpu.synchronize()
    assert sum(1 for r in prof.launches if r.kernel == "_axpy") == 6


def test_debug_mode_switched_on_after_the_fast_path_was_filed(cpu, monkeypatch):
    monkeypatch.delenv("DOTCOMPUTE_DEBUG", raising=False)
    out = cpu.zeros(8, np.float32)
    cpu.launch(_scatter, 4, cpu.asarray(np.arange(4, dtype=np.int32)), out)
    assert _filed(_scatter, cpu)
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "1")
    with pytest.raises(dc.KernelIndexError):  # a debug launch checks every access
        cpu.launch(_scatter, 4, cpu.asarray(np.array([0, 1, 2, 8], np.int32)), out)
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "0")
    cpu.launch(_scatter, 4, cpu.asarray(np.arange(4, 8, dtype=np.int32)), out)
    np.testing.assert_array_equal(out.numpy(), np.ones(8, np.float32))


def test_kernels_with_checks_and_raw_kernels_have_no_fast_path(cpu):
    checked = dc.kernel(check="memcheck")(_axpy.pyfunc)
    x, out = cpu.zeros(4, np.float32), cpu.zeros(4, np.float32)
    cpu.launch(checked, 4, x, out, 1.0)
    assert not checked._fast
    raw = dc.RawKernel("void raw_fill() {}", "raw_fill", backend="cpu")  # (compiled on its first launch)
    assert not attempt(cpu, raw, 1, (out,))


SCALE = 2.0


@dc.kernel
def _scale_by_module_constant(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    out[i] = x[i] * SCALE


def _closure_kernel(offset: float) -> dc.Kernel:
    @dc.kernel
    def shift(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]) -> None:
        i = dc.global_id(0)
        out[i] = x[i] + offset

    return shift


def test_a_kernel_reading_a_module_constant_takes_the_fast_path_and_sees_it_rebound(cpu):
    # the operations' kernels read their modules' constants: they keep the fast path, after the same
    # check of each captured name that the normal path makes before a launch
    global SCALE
    x = cpu.asarray(np.arange(16, dtype=np.float32))
    out = cpu.zeros(16, np.float32)
    cpu.launch(_scale_by_module_constant, 16, x, out)
    assert _filed(_scale_by_module_constant, cpu)
    assert attempt(cpu, _scale_by_module_constant, 16, (x, out))
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(16, dtype=np.float32))
    try:
        SCALE = 3.0
        # the filed launcher declines (nothing runs), the normal path lowers the kernel again
        assert not attempt(cpu, _scale_by_module_constant, 16, (x, out))
        np.testing.assert_array_equal(out.numpy(), 2 * np.arange(16, dtype=np.float32))
        cpu.launch(_scale_by_module_constant, 16, x, out)
        np.testing.assert_array_equal(out.numpy(), 3 * np.arange(16, dtype=np.float32))
        cpu.launch(_scale_by_module_constant, 16, x, out)  # the new entry's fast path
        np.testing.assert_array_equal(out.numpy(), 3 * np.arange(16, dtype=np.float32))
    finally:
        SCALE = 2.0
    dc.launch(_scale_by_module_constant, 16, x, out, accelerator=cpu)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(16, dtype=np.float32))


def test_a_kernel_reading_a_closure_variable_takes_the_fast_path(cpu):
    shift = _closure_kernel(1.5)
    x = cpu.asarray(np.arange(8, dtype=np.float32))
    out = cpu.zeros(8, np.float32)
    cpu.launch(shift, 8, x, out)
    assert _filed(shift, cpu)
    cpu.launch(shift, 8, x, out)
    np.testing.assert_array_equal(out.numpy(), np.arange(8, dtype=np.float32) + 1.5)
