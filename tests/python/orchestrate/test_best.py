"""accelerator="best" / "gpu": exploration, then the measured-fastest device; history kept on disk
across processes and tolerant of a corrupt file."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from orchestrate_kernels import double

import dotcompute as dc

N = 1 << 14


def test_best_explores_then_settles_on_the_device_that_works(gpu_like):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    gpu_like.memory.limit = 1024  # this device cannot even stage the arguments: it can never be fastest
    with dc.profile() as prof:
        for _ in range(12):
            y[:] = 0
            dc.launch(double, N, x, y, accelerator="best")
            np.testing.assert_array_equal(y, 2 * x)
    choices = [n.attrs for n in prof.notes if n.kind == "choice"]
    assert any(c["reason"].startswith("exploring") for c in choices)
    assert choices[-1]["accelerator"] == "cpu:0" and choices[-1]["reason"].startswith("fastest measured")
    assert {r.accelerator for r in prof.launches} == {"cpu:0"}  # failed launches never ran
    key = choices[-1]["key"]
    stats = dc.orchestrate.history.entry(key)
    assert stats[gpu_like.id]["fail"] >= 1 and stats[gpu_like.id]["n"] == 0
    assert stats["cpu:0"]["n"] >= dc.orchestrate.choose.EXPLORE


def test_best_measures_every_device_and_picks_the_lowest_mean(gpu_like):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    explore = dc.orchestrate.choose.EXPLORE
    runs = (explore + 1) * len(dc.devices()) + 3
    with dc.profile() as prof:
        for _ in range(runs):
            dc.launch(double, N, x, y, accelerator="best")
    np.testing.assert_array_equal(y, 2 * x)
    last = [n.attrs for n in prof.notes if n.kind == "choice"][-1]
    stats = dc.orchestrate.history.entry(last["key"])
    assert all(stats[d.id]["n"] >= explore for d in dc.devices())
    fastest = min(stats, key=lambda a: stats[a]["ms"])
    assert last["accelerator"] == fastest


def test_gpu_means_a_gpu_never_a_cpu_type_device():
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    gpus = {d.id for d in dc.devices() if d.type != "cpu"}
    if not gpus:  # cpu:0 and PoCL's CPU-type OpenCL device are not GPUs: refused, not run there
        with pytest.raises(dc.BackendUnavailableError, match="no GPU was found"):
            dc.launch(double, N, x, y, accelerator="gpu")
        assert not y.any()
        return
    with dc.profile() as prof:
        dc.launch(double, N, x, y, accelerator="gpu")
    assert {r.accelerator for r in prof.launches} <= gpus
    np.testing.assert_array_equal(y, 2 * x)


def test_best_with_buffer_arguments_stays_where_they_are(accelerator):
    x = accelerator.asarray(np.arange(N, dtype=np.float32))
    y = accelerator.zeros(N, np.float32)
    with dc.profile() as prof:
        dc.launch(double, N, x, y, accelerator="best")
    assert [r.accelerator for r in prof.launches] == [accelerator.id]
    np.testing.assert_array_equal(y.numpy(), 2 * x.numpy())


SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    import dotcompute as dc

    @dc.kernel
    def double(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]) -> None:
        i = dc.global_id(0)
        y[i] = x[i] * 2.0

    for acc in dc.devices():
        if acc.backend != "cpu":
            acc.memory.limit = 1024   # deterministic: only the CPU can run it
    x = np.arange(4096, dtype=np.float32)
    y = np.zeros_like(x)
    with dc.profile() as prof:
        for _ in range(int(sys.argv[1])):
            dc.launch(double, 4096, x, y, accelerator="best")
    assert (y == 2 * x).all()
    print(json.dumps([n.attrs for n in prof.notes if n.kind == "choice"]))
''')


def _run(run_python, tmp_path: Path, launches: int) -> list[dict]:
    script = tmp_path / "best_script.py"
    script.write_text(SCRIPT)
    code = f"import sys; sys.argv = ['x', '{launches}']; import runpy; runpy.run_path({str(script)!r})"
    done = run_python(code, env={"DOTCOMPUTE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_history_survives_a_new_process_and_a_corrupt_file(run_python, tmp_path, gpu_like):
    first = _run(run_python, tmp_path, 10)
    assert first[0]["reason"].startswith("exploring")
    path = tmp_path / "cache" / "orchestrate" / "history-v1.json"
    saved = json.loads(path.read_text())
    assert saved["version"] == 1 and saved["entries"]
    # a new process starts informed: no exploration, straight to the measured device
    second = _run(run_python, tmp_path, 1)
    assert second[0]["accelerator"] == "cpu:0" and second[0]["reason"].startswith("fastest measured")
    # a corrupt file is ignored (exploration again), then replaced by a valid one
    path.write_bytes(b"\x00{not json")
    third = _run(run_python, tmp_path, 10)
    assert third[0]["reason"].startswith("exploring")
    assert json.loads(path.read_text())["version"] == 1


def test_history_file_of_another_version_or_shape_is_ignored(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"version": 99, "entries": {"k": {}}}))
    assert dc.orchestrate.history_module.read(path) == {}
    path.write_text(json.dumps({"version": 1, "entries": {"k": {"cpu:0": {"n": "three"}}, "j": [1]}}))
    assert dc.orchestrate.history_module.read(path) == {}
    path.write_text(json.dumps({"version": 1, "entries": {"k": {"cpu:0": {"n": 3, "fail": 0, "ms": 0.5}}}}))
    assert dc.orchestrate.history_module.read(path) == {"k": {"cpu:0": {"n": 3, "fail": 0, "ms": 0.5}}}


def test_bad_specs_are_clear():
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="fallback"):
        dc.launch(double, 4, x, x, fallback="best")


def test_gpu_and_best_are_accelerator_specs():
    if not [d for d in dc.devices() if d.type != "cpu"]:
        with pytest.raises(dc.BackendUnavailableError, match="gpu"):
            dc.accelerator("gpu")
    else:
        assert dc.accelerator("gpu").type != "cpu"
        assert dc.accelerator("GPU") is dc.accelerator("gpu")
    assert dc.accelerator("best") is dc.accelerator("auto")


def test_best_keeps_raw_kernels_on_their_backend():
    if not any(d.backend == "opencl" for d in dc.devices()):
        pytest.skip("needs an OpenCL device")
    src = ("__kernel void twice(__global const float* x, __global float* y) {"
           " size_t i = get_global_id(0); y[i] = 2.0f * x[i]; }")
    twice = dc.RawKernel(src, "twice", backend="opencl")
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    with dc.profile() as prof:
        for _ in range(5):
            dc.launch(twice, 64, x, y, accelerator="best")
    assert {r.accelerator for r in prof.launches} == {"opencl:0"}
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("spec", ["Best", " BEST ", "GPU"])
def test_chosen_specs_are_case_insensitive(spec):
    """"Best"/"GPU" are the measured choice too (they used to skip it and fail as unknown backends)."""
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    if spec == "GPU" and all(d.type == "cpu" for d in dc.devices()):  # understood as "gpu", and no GPU here
        with pytest.raises(dc.BackendUnavailableError, match="no GPU was found"):
            dc.launch(double, 64, x, y, accelerator=spec)
        return
    with dc.profile() as prof:
        dc.launch(double, 64, x, y, accelerator=spec)
    np.testing.assert_array_equal(y, 2 * x)
    assert [n for n in prof.notes if n.kind == "choice"], "no measured choice was made"
