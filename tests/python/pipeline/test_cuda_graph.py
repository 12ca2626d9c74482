"""CUDA graph replay of reruns, checked on the CUDA driver test double (the CUDA plugin's host logic
against a fake driver that logs every stream, event, capture and graph operation). Skipped when
the double is not built (CMake target cuda_double) or NVRTC is missing."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cuda"))
from cuda_helpers import built_file  # noqa: E402
from test_cuda_availability import _plugin_folder  # noqa: E402
from test_interop_double import PRELUDE  # noqa: E402

BODY = """
    k = dc.RawKernel('extern "C" __global__ void twice(float* o, long long n) '
                     '{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) o[i] *= 2; }',
                     "twice", backend="cuda")
    res = {"has_nvrtc": has_nvrtc, "runs": []}
    if has_nvrtc:
        a, b = acc.zeros(1000, np.float32), acc.zeros(1000, np.float32)

        def pipeline(**kw):
            p = dc.Pipeline(accelerator=acc, **kw)
            p.add(k, 1000, a, np.int64(1000), name="A")
            p.add(k, 1000, b, np.int64(1000), name="B")
            p.add(k, 1000, a, np.int64(1000), name="C", after=["B"])
            return p

        def run(p, label):
            n = len(ops())
            r = p.run()
            new = ops()[n:]
            res["runs"].append({"label": label, "ok": r.ok, "replayed": r.replayed,
                                "status": sorted({s.status for s in r.stages.values()}),
                                "begin": sum(o.startswith("begin capture") for o in new),
                                "end": [o for o in new if o.startswith("end capture")],
                                "graphs": [o for o in new if o.startswith("graph launch")],
                                "direct": sum(o.startswith("launch ") for o in new)})

        p = pipeline()
        for i in range(3):
            run(p, f"run{i}")
        p.add_host(lambda x: None, a, name="H")   # a host step: no longer capturable
        run(p, "with_host")
        q = pipeline(cuda_graph=False)
        for i in range(3):
            run(q, f"off{i}")
    print(json.dumps(res))
"""


def test_reruns_replay_one_cuda_graph(run_python, tmp_path):
    double = built_file("libcuda_double.so", "tests/cuda_driver_double")
    if double is None:
        pytest.skip("the driver double is not built (build the CMake target cuda_double: tests/cuda_driver_double)")
    env = {"DOTCOMPUTE_PLUGIN_DIR": str(_plugin_folder(tmp_path, [])), "DOTCOMPUTE_CUDA_DRIVER": str(double),
           "TEST_DEVICES": "1", "DOTCOMPUTE_CUDA_SIM": "0"}  # the logging double, even in the simulator pass
    done = run_python(PRELUDE + textwrap.dedent(BODY), env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if not out["has_nvrtc"]:
        pytest.skip("NVRTC not installed: no kernel to capture")
    runs = {r["label"]: r for r in out["runs"]}
    assert all(r["ok"] and r["status"] == ["ok"] for r in out["runs"])
    # first run: ordinary launches on the pipeline's streams
    assert not runs["run0"]["replayed"] and runs["run0"]["direct"] == 3 and runs["run0"]["graphs"] == []
    # second run: captured once (three launches), then one graph launch
    assert runs["run1"]["replayed"] and runs["run1"]["begin"] == 1
    assert len(runs["run1"]["end"]) == 1 and runs["run1"]["end"][0].endswith("ops=3")
    assert len(runs["run1"]["graphs"]) == 1 and runs["run1"]["graphs"][0].endswith("ops=3")
    # third run: the same graph again, no new capture
    assert runs["run2"]["replayed"] and runs["run2"]["begin"] == 0 and len(runs["run2"]["graphs"]) == 1
    assert runs["run2"]["graphs"][0] == runs["run1"]["graphs"][0]
    # a host step makes the pipeline ordinary again; cuda_graph=False never captures
    assert not runs["with_host"]["replayed"] and runs["with_host"]["graphs"] == []
    for i in range(3):
        assert not runs[f"off{i}"]["replayed"] and runs[f"off{i}"]["graphs"] == [] and runs[f"off{i}"]["begin"] == 0


def _simulated_cuda():
    import dotcompute as dc

    for d in dc.devices():
        if d.backend == "cuda" and d.info.get("simulated"):
            return d
    return None


def test_reruns_replay_on_the_cuda_simulator():
    """The same replay, executed: on the CUDA simulator (DOTCOMPUTE_CUDA_SIM=1, the CI pass that runs
    the suites on a simulated cuda:0) the graph really runs, so every rerun's results are checked."""
    import numpy as np

    import dotcompute as dc

    acc = _simulated_cuda()
    if acc is None:
        pytest.skip("no simulated cuda device (run with DOTCOMPUTE_CUDA_SIM=1)")
    k = dc.RawKernel('extern "C" __global__ void twice(float* o, long long n) '
                     '{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) o[i] *= 2; }',
                     "twice", backend="cuda")
    n = 1000
    a, b = acc.zeros(n, np.float32), acc.zeros(n, np.float32)
    p = dc.Pipeline(accelerator=acc)
    p.add(k, n, a, np.int64(n), name="A")
    p.add(k, n, b, np.int64(n), name="B")
    p.add(k, n, a, np.int64(n), name="C", after=["B"])
    replayed = []
    for run_index in range(3):
        start = np.arange(n, dtype=np.float32) + run_index
        a.copy_from(start)
        b.copy_from(-start)
        run = p.run()
        assert run.ok, run
        replayed.append(run.replayed)
        np.testing.assert_array_equal(a.numpy(), 4 * start)   # A then C
        np.testing.assert_array_equal(b.numpy(), -2 * start)
    assert replayed == [False, True, True]
