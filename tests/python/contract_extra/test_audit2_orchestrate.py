"""Audit 2: "Running kernels well" -- dc.validate, dc.profile and the orchestrated launch options.

dc.validate with references that raise, return their outputs instead of writing them, or hold NaN;
dc.profile nested and closed out of order, from threads, exported to bad paths and to a Chrome trace
that parses; fallback= / retries= / precompile arguments checked.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.runtime import trace


@dc.kernel
def saxpy(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@dc.kernel
def split(x: dc.Buffer[dc.float32], lo: dc.Buffer[dc.float32], hi: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        lo[i] = x[i] - 1.0
        hi[i] = x[i] + 1.0


@dc.kernel
def bump(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0


N = 97


def _xyz():
    return np.arange(N, dtype=np.float32), np.ones(N, np.float32), np.zeros(N, np.float32)


# -- dc.validate ----------------------------------------------------------------------------------

def test_a_raising_reference_propagates_its_own_exception(accelerator):
    x, y, out = _xyz()

    def reference(a, x, y, out):
        raise ZeroDivisionError("the reference is broken")

    with pytest.raises(ZeroDivisionError, match="the reference is broken") as info:
        dc.validate(saxpy, N, 2.0, x, y, out, accelerator=accelerator, reference=reference)
    notes = getattr(info.value, "__notes__", None)
    if hasattr(info.value, "add_note"):
        assert notes and "reference" in notes[0]
    assert (out == 0).all()


def test_a_reference_may_return_its_outputs(accelerator):
    x, y, out = _xyz()
    rep = dc.validate(saxpy, N, 2.0, x, y, out, accelerator=accelerator,
                      reference=lambda a, x, y, out: a * x + y)
    assert rep.ok, str(rep)
    rep = dc.validate(split, N, x, np.zeros(N, np.float32), np.zeros(N, np.float32), accelerator=accelerator,
                      reference=lambda x, lo, hi: (x - 1, x + 1))
    assert rep.ok and set(rep.outputs) == {"lo", "hi"}
    wrong = dc.validate(split, N, x, np.zeros(N, np.float32), np.zeros(N, np.float32), accelerator=accelerator,
                        reference=lambda x, lo, hi: (x - 1, x + 2))
    assert not wrong.ok and wrong.outputs["lo"].ok and wrong.outputs["hi"].mismatches == N
    with pytest.raises(TypeError, match="2 output"):
        dc.validate(split, N, x, np.zeros(N, np.float32), np.zeros(N, np.float32), accelerator=accelerator,
                    reference=lambda x, lo, hi: x - 1 + 0 * hi)
    with pytest.raises(ValueError, match="shape"):
        dc.validate(saxpy, N, 2.0, x, y, out, accelerator=accelerator, reference=lambda a, x, y, out: x[:3])


def test_nan_on_one_side_is_a_mismatch_with_a_nonzero_error(accelerator):
    x, y, out = _xyz()

    def reference(a, x, y, out):
        out[:] = a * x + y
        out[5] = np.nan

    rep = dc.validate(saxpy, N, 2.0, x, y, out, accelerator=accelerator, reference=reference)
    o = rep.outputs["out"]
    assert not rep.ok and o.mismatches == 1 and o.first_mismatch[0] == 5
    assert o.max_abs_error == np.inf and o.max_rel_error == np.inf  # not 0 beside a mismatch
    # NaN on both sides matches
    xn = x.copy()
    xn[7] = np.nan
    rep = dc.validate(saxpy, N, 2.0, xn, y, out, accelerator=accelerator,
                      reference=lambda a, x, y, out: a * x + y)
    assert rep.ok and rep.outputs["out"].max_abs_error == 0.0


@pytest.mark.parametrize("bad", [float("nan"), -1.0, "1e-5", None])
def test_bad_tolerances_are_refused(bad):
    x, y, out = _xyz()
    with pytest.raises(ValueError, match="rtol"):
        dc.validate(saxpy, N, 2.0, x, y, out, accelerator="cpu", rtol=bad)
    with pytest.raises(ValueError, match="atol"):
        dc.validate(saxpy, N, 2.0, x, y, out, accelerator="cpu", atol=bad)


def test_validate_leaves_buffers_alone_and_reports_determinism(accelerator):
    xb = accelerator.asarray(np.arange(N, dtype=np.float32))
    ob = accelerator.zeros(N, np.float32)
    rep = dc.validate(saxpy, N, 2.0, xb, np.ones(N, np.float32), ob)
    assert rep.ok and rep.deterministic and bool(rep)
    assert rep.accelerator == accelerator.id
    assert (ob.numpy() == 0).all()  # never changes its arguments
    assert "OK" in str(rep)


# -- dc.profile -----------------------------------------------------------------------------------

def test_profiles_closed_out_of_order_stop_recording():
    x = np.zeros(N, np.float32)
    dc.launch(bump, N, x, accelerator="cpu")
    p1 = dc.profile().start()
    p2 = dc.profile().start()
    dc.launch(bump, N, x, accelerator="cpu")
    p1.stop()  # the outer one first
    dc.launch(bump, N, x, accelerator="cpu")
    p2.stop()
    dc.launch(bump, N, x, accelerator="cpu")
    assert trace.active is None  # nothing keeps recording after every profile closed
    assert len(p1.launches) == 1
    assert len(p2.launches) == 2
    assert len(p1._recorder.launches()) == 1  # the stopped recorder was not fed after stop()


def test_profiles_from_threads():
    barrier = threading.Barrier(4)
    counts: list[int] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            x = np.zeros(N, np.float32)
            with dc.profile() as prof:
                barrier.wait(30)
                dc.launch(bump, N, x, accelerator="cpu")
                barrier.wait(30)
            counts.append(sum(k.count for k in prof.kernels))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    # process-wide: each open profile sees all four launches made while every one was open
    assert counts == [4, 4, 4, 4]
    assert trace.active is None


def test_profile_write_errors_are_clear(tmp_path):
    with dc.profile() as prof:
        dc.launch(bump, N, np.zeros(N, np.float32), accelerator="cpu")
    missing = tmp_path / "no" / "such" / "folder" / "p.json"
    with pytest.raises(FileNotFoundError, match="does not exist") as info:
        prof.to_json(missing)
    assert str(missing.parent) in str(info.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        prof.to_chrome_trace(missing)
    with pytest.raises(IsADirectoryError, match="folder"):
        prof.to_json(tmp_path)
    with pytest.raises(TypeError):
        prof.to_json(3)
    # still usable afterwards
    prof.to_json(tmp_path / "p.json")
    assert json.loads((tmp_path / "p.json").read_text())["format"] == "dotcompute-profile"


def test_chrome_trace_is_valid_json(accelerator, tmp_path):
    x = accelerator.zeros(N, np.float32)
    with dc.profile() as prof:
        for _ in range(3):
            accelerator.launch(bump, N, x)
        x.numpy()
    path = tmp_path / "trace.json"
    doc = prof.to_chrome_trace(path)
    loaded = json.loads(path.read_text())
    assert loaded == json.loads(json.dumps(doc))
    spans = [e for e in loaded["traceEvents"] if e.get("ph") == "X"]
    assert sum(1 for e in spans if e["cat"] == "launch" and "bump" in e["name"]) == 3
    for e in spans:
        assert e["dur"] >= 0 and isinstance(e["ts"], (int, float))
    assert prof.kernels["bump"].count == 3


# -- launch options -------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error"), [({"retries": -1}, ValueError), ({"retries": "2"}, TypeError),
                                               ({"retries": 1.5}, TypeError), ({"fallback": True}, TypeError),
                                               ({"fallback": "vulkan"}, ValueError)])
def test_bad_launch_options(accelerator, kwargs, error):
    x = np.zeros(N, np.float32)
    with pytest.raises(error):
        dc.launch(bump, N, x, accelerator=accelerator, **kwargs)
    assert (x == 0).all()


def test_fallback_does_not_hide_a_wrong_argument(accelerator):
    with pytest.raises(dc.KernelTypeError, match="'a'"):
        dc.launch(bump, N, np.zeros(N, np.int32), accelerator=accelerator, fallback="cpu")


def test_best_runs_and_precompile_takes_a_single_accelerator(accelerator):
    x = np.zeros(N, np.float32)
    for _ in range(3):
        dc.launch(bump, N, x, accelerator="best")
    assert (x == 3).all()
    done = bump.precompile(accelerators=accelerator)
    assert [acc for acc, _ in done] == [accelerator.id]
    with pytest.raises(ValueError):
        bump.precompile(accelerators=["vulkan"])


def test_whole_program_profile_to_a_missing_folder_warns_at_exit(run_python, tmp_path):
    script = tmp_path / "whole_program.py"
    script.write_text("import numpy as np\nimport dotcompute as dc\n\n"
                      "@dc.kernel\ndef bump(a: dc.Buffer[dc.float32]):\n"
                      "    i = dc.global_id(0)\n    if i < a.shape[0]:\n        a[i] = a[i] + 1.0\n\n"
                      "dc.launch(bump, 8, np.zeros(8, np.float32), accelerator='cpu')\n")
    code = f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')"
    target = tmp_path / "missing" / "trace.json"
    done = run_python(code, env={"DOTCOMPUTE_PROFILE": str(target)})
    assert done.returncode == 0, done.stderr  # a finished program is not turned into a failure
    assert "Traceback" not in done.stderr
    assert done.stderr.count(str(target)) == 1 and "does not exist" in done.stderr
    ok = tmp_path / "trace.json"
    done = run_python(code, env={"DOTCOMPUTE_PROFILE": str(ok)})
    assert done.returncode == 0, done.stderr
    names = [e.get("name", "") for e in json.loads(ok.read_text())["traceEvents"]]
    assert any("bump" in n for n in names)


def test_fallback_warning_points_at_the_users_line(accelerator):
    if accelerator.backend == "cpu":
        pytest.skip("falls back to the CPU: needs another device")
    dc.orchestrate.launching.forget_warnings()
    x = np.zeros(N, np.float32)
    old = accelerator.memory.limit
    accelerator.memory.limit = 1  # staging the numpy argument runs out of device memory
    try:
        with pytest.warns(dc.DotComputeWarning, match="running it on cpu:0") as caught:
            dc.launch(bump, N, x, accelerator=accelerator, fallback="cpu")
    finally:
        accelerator.memory.limit = old
    assert (x == 1).all()
    assert [w.filename for w in caught] == [__file__]


def test_precompile_in_the_background_with_nothing_to_do_completes():
    missing = [b for b in ("metal", "cuda", "opencl") if not any(d.backend == b for d in dc.devices())]
    if not missing:
        pytest.skip("every backend has a device here")
    source = {"metal": "kernel void f(device float* a [[buffer(0)]]) {}",
              "cuda": 'extern "C" __global__ void f(float* a) {}', "opencl": "__kernel void f(__global float* a) {}"}
    k = dc.RawKernel(source[missing[0]], "f", backend=missing[0])
    assert k.precompile() == []
    assert k.precompile(wait=False).result(timeout=30) == []  # the Future used to never finish
    assert bump.precompile(accelerators=[], wait=False).result(timeout=30) == []


def test_best_survives_a_history_file_with_impossible_numbers(tmp_path):
    orch = dc.orchestrate
    x = np.zeros(N, np.float32)
    key = orch.history_module.history_key(bump, (N,), (x,))
    path = tmp_path / "history.json"
    # measured counts without a mean, a NaN mean, a negative one, bool counts: a hand-edited or foreign file
    path.write_text(json.dumps({"format": "dotcompute-history", "version": 1, "entries": {key: {
        d.id: {"n": 9, "fail": 0, "ms": [None, float("nan"), -1.0][i % 3]} for i, d in enumerate(dc.devices())},
        "other": {"cpu:0": {"n": True, "fail": 0, "ms": 1.0}}}}))
    assert orch.history_module.read(path) == {}
    orch.history.reset(path)
    try:
        for _ in range(3):
            dc.launch(bump, N, x, accelerator="best")
    finally:
        orch.history.reset()
    assert (x == 3).all()


def test_numpy_integers_are_retry_counts(accelerator):
    x = np.zeros(N, np.float32)
    dc.launch(bump, N, x, accelerator=accelerator, retries=np.int64(2))
    assert (x == 1).all()
    with pytest.raises(TypeError):
        dc.launch(bump, N, x, accelerator=accelerator, retries=np.float32(2))
