"""fallback=, retries= and the circuit breaker, driven by real device failures (a pool limit that
makes the device run out of memory, a backend that is not installed)."""

from __future__ import annotations

import textwrap
import time
import warnings

import numpy as np
import pytest
from orchestrate_kernels import double

import dotcompute as dc

N = 4096


def _data() -> tuple[np.ndarray, np.ndarray]:
    return np.arange(N, dtype=np.float32), np.zeros(N, np.float32)


def test_every_error_says_whether_it_is_transient():
    assert dc.OutOfMemoryError("x").transient is True
    for cls in (dc.CompilationError, dc.LaunchError, dc.KernelTypeError, dc.BackendUnavailableError,
                dc.PluginError, dc.KernelIndexError):
        assert cls("x").transient is False
    err = dc.LaunchError("busy")
    err.transient = True  # a raiser that knows better says so on the instance
    assert dc.orchestrate.is_transient(err)


def test_fallback_on_out_of_memory_warns_once_and_is_correct(gpu_like):
    x, y = _data()
    gpu_like.memory.limit = 1024  # smaller than any argument: staging the arrays fails
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dc.profile() as prof:
            dc.launch(double, N, x, y, accelerator=gpu_like, fallback="cpu")
            np.testing.assert_array_equal(y, 2 * x)
            y[:] = 0
            dc.launch(double, N, x, y, accelerator=gpu_like, fallback="cpu")
    np.testing.assert_array_equal(y, 2 * x)
    ours = [w for w in caught if issubclass(w.category, dc.DotComputeWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "OutOfMemoryError" in str(ours[0].message) and gpu_like.id in str(ours[0].message)
    assert [r.accelerator for r in prof.launches] == ["cpu:0", "cpu:0"]
    assert [n.attrs["to"] for n in prof.notes if n.kind == "fallback"] == ["cpu:0", "cpu:0"]


def test_fallback_for_an_unavailable_backend():
    if any(d.backend == "cuda" for d in dc.devices()):
        pytest.skip("CUDA is available here")
    x, y = _data()
    with pytest.warns(dc.DotComputeWarning, match="BackendUnavailableError"):
        dc.launch(double, N, x, y, accelerator="cuda", fallback="cpu")
    np.testing.assert_array_equal(y, 2 * x)


def test_without_fallback_the_error_names_its_device(gpu_like):
    x, y = _data()
    gpu_like.memory.limit = 1024
    with pytest.raises(dc.OutOfMemoryError) as info:
        dc.launch(double, N, x, y, accelerator=gpu_like, retries=1)
    assert info.value.accelerator == gpu_like.id
    assert not y.any()


def test_buffers_of_the_failed_device_are_not_moved(gpu_like):
    x = gpu_like.asarray(np.arange(N, dtype=np.float32))
    host = np.zeros(N, np.float32)  # staging this output needs device memory the limit refuses
    gpu_like.memory.limit = gpu_like.memory.stats()["in_use"]
    with pytest.raises(dc.OutOfMemoryError) as info:
        dc.launch(double, N, x, host, fallback="cpu")
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "not attempted" in notes and gpu_like.id in notes
    assert not host.any()


def test_bad_arguments_are_not_retried_nor_fallen_back():
    x = np.arange(N, dtype=np.float64)  # double() takes float32
    y = np.zeros(N, np.float32)
    with dc.profile() as prof:
        with pytest.raises(dc.KernelTypeError):
            dc.launch(double, N, x, y, accelerator="cpu", fallback="cpu", retries=3)
    assert not [n for n in prof.notes if n.kind in ("retry", "fallback")]
    with pytest.raises(ValueError, match="retries"):
        dc.launch(double, N, x, y, retries=-1)
    with pytest.raises(TypeError, match="fallback"):
        dc.launch(double, N, x, y, fallback=3.5)


def test_transient_errors_are_retried_until_they_pass(gpu_like):
    x, y = _data()
    gpu_like.memory.limit = 1024
    attempts = []

    def launch() -> None:
        attempts.append(1)
        dc.launch(double, N, x, y, accelerator=gpu_like)

    def free_memory(attempt: int, exc: BaseException) -> None:
        assert isinstance(exc, dc.OutOfMemoryError)
        gpu_like.memory.limit = None  # the memory pressure goes away between attempts

    dc.orchestrate.run_with_retries(launch, 3, acc_id=gpu_like.id, on_retry=free_memory)
    assert len(attempts) == 2
    np.testing.assert_array_equal(y, 2 * x)


def test_retries_give_up_after_n_more_attempts(gpu_like):
    x, y = _data()
    gpu_like.memory.limit = 1024
    with dc.profile() as prof:
        with pytest.raises(dc.OutOfMemoryError):
            dc.launch(double, N, x, y, accelerator=gpu_like, retries=2)
    assert [n.attrs["attempt"] for n in prof.notes if n.kind == "retry"] == [1, 2]


def test_circuit_breaker_opens_and_closes(gpu_like):
    breakers = dc.orchestrate.breakers
    breakers.configure(threshold=2, cooldown_s=0.3)
    x, y = _data()
    gpu_like.memory.limit = 1024
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dc.DotComputeWarning)
        for _ in range(2):
            dc.launch(double, N, x, y, accelerator=gpu_like, fallback="cpu")
        assert breakers.states()[gpu_like.id].state == "open"
        gpu_like.memory.limit = None  # the device would work now, but the breaker keeps work away
        with dc.profile() as prof:
            dc.launch(double, N, x, y, accelerator=gpu_like, fallback="cpu")
        assert [r.accelerator for r in prof.launches] == ["cpu:0"]
        assert [n.attrs["error"] for n in prof.notes if n.kind == "fallback"] == ["CircuitOpenError"]
        with pytest.raises(dc.BackendUnavailableError, match="circuit breaker") as info:
            dc.launch(double, N, x, y, accelerator=gpu_like, retries=1)  # refused, not tried
        assert info.value.transient
        time.sleep(0.35)  # the cool-down ends: one trial goes through and closes the breaker
        y[:] = 0
        with dc.profile() as prof:
            dc.launch(double, N, x, y, accelerator=gpu_like, fallback="cpu")
    assert [r.accelerator for r in prof.launches] == [gpu_like.id]
    np.testing.assert_array_equal(y, 2 * x)
    assert breakers.states()[gpu_like.id].state == "closed"
    assert [n.attrs["state"] for n in prof.notes if n.kind == "breaker"] == ["half-open", "closed"]


def test_open_breakers_show_in_dotcompute_info_during_a_run(run_python, tmp_path, gpu_like):
    script = tmp_path / "breaking.py"
    script.write_text(textwrap.dedent('''
        import subprocess, sys, warnings
        import numpy as np
        import dotcompute as dc

        @dc.kernel
        def double(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]) -> None:
            i = dc.global_id(0)
            y[i] = x[i] * 2.0

        dc.orchestrate.breakers.configure(threshold=1, cooldown_s=600)
        warnings.simplefilter("ignore")
        x = np.ones(4096, np.float32)
        dev = dc.accelerator(sys.argv[1])
        dev.memory.limit = 1024
        dc.launch(double, 4096, x, x.copy(), accelerator=dev, fallback="cpu")
        info = subprocess.run([sys.executable, "-m", "dotcompute", "info"], capture_output=True, text=True)
        print(info.stdout)
    '''))
    done = run_python(f"import sys, runpy; sys.argv = ['x', {gpu_like.id!r}]; runpy.run_path({str(script)!r})",
                      env={"DOTCOMPUTE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert "circuit breakers of running processes:" in done.stdout
    line = next(ln for ln in done.stdout.splitlines() if f" {gpu_like.id} " in ln and "pid" in ln)
    assert "open" in line and "cool-down ends in" in line
    assert not list((tmp_path / "cache" / "orchestrate" / "breakers").glob("*.json"))  # removed at exit


def test_plain_launch_errors_name_their_device(gpu_like):
    x, y = _data()
    gpu_like.memory.limit = 1024
    with pytest.raises(dc.OutOfMemoryError) as info:
        gpu_like.launch(double, N, x, y)
    assert info.value.accelerator == gpu_like.id and info.value.transient
