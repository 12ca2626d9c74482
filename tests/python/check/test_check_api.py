"""check= spellings, :warn, DOTCOMPUTE_CHECK, @dc.kernel(check=...), raw kernels, and what a checked
launch leaves behind."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang.check import parse_check


@dc.kernel
def overrun(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i <= out.shape[0]:
        out[i] = x[i] * 2.0


@dc.kernel(check="memcheck")
def overrun_checked(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i <= out.shape[0]:
        out[i] = x[i] * 2.0


@dc.kernel
def double(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] * 2.0


def args(n=16):
    return np.arange(n, dtype=np.float32), np.zeros(n, np.float32)


def test_spellings():
    assert parse_check("all").checks == ("memcheck", "racecheck", "synccheck", "initcheck")
    assert parse_check(" racecheck , memcheck ").checks == ("memcheck", "racecheck")
    assert parse_check("initcheck:warn").warn
    assert parse_check(True).checks == parse_check("all").checks
    assert parse_check(["synccheck"]).checks == ("synccheck",)
    assert parse_check(None) is None and parse_check("off") is None and parse_check(False) is None


@pytest.mark.parametrize("bad", ["memchek", "all,bogus", "memcheck:loud", ","])
def test_unknown_names_are_value_errors_naming_the_parameter(bad, cpu):
    with pytest.raises(ValueError, match="check"):
        dc.launch(double, 16, *args(), accelerator=cpu, check=bad)
    with pytest.raises(ValueError, match=r"dc.kernel\(check"):
        dc.kernel(check=bad)(double.pyfunc)


def test_finding_fields_and_nothing_runs(cpu):
    x, out = args()
    with pytest.raises(dc.KernelCheckError) as ei:
        dc.launch(overrun, 17, x, out, accelerator=cpu, check="memcheck")
    assert isinstance(ei.value, dc.DotComputeError)
    (f,) = ei.value.findings
    assert (f.kind, f.buffer, f.index, f.threads) == ("memcheck", "x", (16,), ((16,),)) or \
        (f.kind, f.buffer, f.index) == ("memcheck", "out", (16,))
    assert f.line == overrun.pyfunc.__code__.co_firstlineno + 4
    assert not out.any()  # the real launch did not run


def test_warn_logs_and_launches(cpu, caplog):
    x, out = args()
    with caplog.at_level(logging.WARNING, logger="dotcompute.check"):
        dc.launch(overrun, 17, x, out, accelerator=cpu, check="all:warn")
    assert "memcheck" in caplog.text and "out-of-bounds" in caplog.text


def test_kernel_level_check_and_launch_override(cpu):
    x, out = args()
    with pytest.raises(dc.KernelCheckError):
        dc.launch(overrun_checked, 17, x, out, accelerator=cpu)
    dc.launch(overrun_checked, 16, x, out, accelerator=cpu)  # in range: runs
    np.testing.assert_array_equal(out, x * 2)


def test_environment_variable(cpu, monkeypatch):
    x, out = args()
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "memcheck")
    with pytest.raises(dc.KernelCheckError):
        dc.launch(overrun, 17, x, out, accelerator=cpu)
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "nonsense")
    with pytest.raises(ValueError, match="DOTCOMPUTE_CHECK"):
        dc.launch(double, 16, x, out, accelerator=cpu)
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "off")
    dc.launch(double, 16, x, out, accelerator=cpu)
    np.testing.assert_array_equal(out, x * 2)


def test_clean_launch_on_buffers_gives_the_results(accelerator):
    x = accelerator.asarray(np.arange(64, dtype=np.float32))
    out = accelerator.zeros((64,), np.float32)
    dc.launch(double, 64, x, out, check="all")
    np.testing.assert_array_equal(out.numpy(), np.arange(64, dtype=np.float32) * 2)
    np.testing.assert_array_equal(x.numpy(), np.arange(64, dtype=np.float32))  # inputs untouched by the check


def test_raw_kernels_say_they_are_not_checked(cpu):
    src = """
#include <dotcompute/cpu_kernel_abi.h>
extern "C" void noop(const dc_cpu_launch*, uint64_t, uint64_t, void*) {}
"""
    try:
        raw = dc.RawKernel(src, "noop", backend="cpu")
    except Exception as e:  # noqa: BLE001 -- raw CPU kernels may need another spelling; the message is what matters
        pytest.skip(f"no raw CPU kernel here: {e}")
    with pytest.raises(dc.DotComputeError, match="raw kernel"):
        dc.launch(raw, 1, accelerator=cpu, check="memcheck")


def test_check_cannot_combine_with_orchestration():
    with pytest.raises(dc.LaunchError, match="check="):
        dc.launch(double, 16, *args(), accelerator="best", check="all")


def test_acc_launch_takes_check_and_profiles_note_it(cpu):
    x, out = args()
    with dc.profile() as p:
        with pytest.raises(dc.KernelCheckError):
            cpu.launch(overrun, 17, x, out, check="memcheck")
        cpu.launch(double, 16, x, out, check="all")
    notes = [n for n in p.notes if n.kind == "kernel_check"]
    assert [n.attrs["findings"] for n in notes] == [1, 0]
    assert notes[0].attrs["details"][0]["kind"] == "memcheck"


def test_errors_and_checked_kernels_pickle(cpu):
    import pickle

    x, out = args()
    with pytest.raises(dc.KernelCheckError) as ei:
        dc.launch(overrun, 17, x, out, accelerator=cpu, check="memcheck")
    err = pickle.loads(pickle.dumps(ei.value))  # Dask workers send errors back to the client
    assert err.findings == ei.value.findings and str(err) == str(ei.value)
    k = pickle.loads(pickle.dumps(overrun_checked))
    assert k.check_spec == overrun_checked.check_spec


def test_environment_checks_user_kernels_not_the_librarys(cpu, monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_CHECK", "all")
    x = cpu.asarray(np.arange(100, dtype=np.float32))
    np.testing.assert_allclose(dc.cumsum(x).numpy(), np.cumsum(np.arange(100, dtype=np.float32)))
    with pytest.raises(dc.KernelCheckError):  # while a user kernel is still checked
        dc.launch(overrun, 17, *args(), accelerator=cpu)
