"""Audit: DESIGN.md "Running kernels well" — validate, profile, Pipeline, fallback, retries, precompile —
on every accelerator, through the public API only."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def saxpy(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@dc.kernel
def scale(a: dc.float32, x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i]


@dc.kernel
def add(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] + y[i]


N = 1000


def _data():
    rng = np.random.default_rng(7)
    return rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32), np.zeros(N, np.float32)


def test_validate_never_changes_its_arguments_and_reports(accelerator):
    x, y, out = _data()
    copies = [x.copy(), y.copy(), out.copy()]
    rep = dc.validate(saxpy, N, 2.0, x, y, out, accelerator=accelerator, reference="cpu", rtol=1e-5, atol=1e-8)
    assert rep.ok and bool(rep) and rep.deterministic
    o = rep.outputs["out"]
    assert o.max_abs_error <= 1e-6 and o.mismatches == 0 and o.first_mismatch is None
    assert "out" in str(rep)
    for a, c in zip((x, y, out), copies, strict=True):
        np.testing.assert_array_equal(a, c)
    # device buffers are not changed either
    dx, dy, dout = accelerator.asarray(x), accelerator.asarray(y), accelerator.zeros(N, np.float32)
    assert dc.validate(saxpy, N, 2.0, dx, dy, dout, accelerator=accelerator).ok
    assert (dout.numpy() == 0).all()


def test_validate_against_a_callable_finds_mismatches(accelerator):
    x, y, out = _data()

    def wrong(a, xs, ys, o):
        o[:] = a * xs + ys
        o[5] += 1.0

    rep = dc.validate(saxpy, N, 2.0, x, y, out, accelerator=accelerator, reference=wrong)
    assert not rep.ok and not bool(rep)
    o = rep.outputs["out"]
    assert o.mismatches == 1
    index, got, expected = o.first_mismatch
    assert index in (5, (5,)) and got == pytest.approx(expected - 1.0, abs=1e-5)
    assert (out == 0).all()


def test_profile_records_launches_and_exports(accelerator, tmp_path):
    x, y, out = _data()
    with dc.profile() as prof:
        for _ in range(3):
            dc.launch(saxpy, N, 2.0, x, y, out, accelerator=accelerator)
    rows = [k for k in prof.kernels if k.name == "saxpy" and k.accelerator == accelerator.id]
    assert len(rows) == 1 and rows[0].count == 3
    r = rows[0]
    assert r.total_ms >= 0 and r.mean_ms >= 0 and r.p50_ms >= 0 and r.p99_ms >= 0 and r.bytes > 0
    assert "saxpy" in str(prof.summary())
    prof.to_json(tmp_path / "p.json")
    prof.to_chrome_trace(tmp_path / "t.json")
    assert json.loads((tmp_path / "p.json").read_text())
    trace = json.loads((tmp_path / "t.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any("saxpy" in str(e.get("name", "")) for e in events)


def test_fallback_on_out_of_memory_runs_on_the_cpu_and_warns(accelerator):
    if accelerator.id == "cpu:0":
        pytest.skip("falls back to itself")
    x, y, out = _data()
    old = accelerator.memory.limit
    accelerator.memory.limit = 1024
    try:
        with pytest.raises(dc.OutOfMemoryError):
            dc.launch(saxpy, N, 2.0, x, y, out, accelerator=accelerator)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dc.launch(saxpy, N, 2.0, x, y, out, accelerator=accelerator, fallback="cpu")
        np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)
        assert any(issubclass(w.category, dc.DotComputeWarning) for w in caught)
    finally:
        accelerator.memory.limit = old


def test_retries_and_precompile(accelerator):
    x, y, out = _data()
    dc.launch(saxpy, N, 2.0, x, y, out, accelerator=accelerator, retries=2)
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)
    with pytest.raises(ValueError):
        dc.launch(saxpy, N, 2.0, x, y, out, accelerator=accelerator, retries=-1)
    done = scale.precompile(accelerators=[accelerator])
    assert accelerator.id in str(done)
    with pytest.raises(dc.DotComputeError):
        scale.precompile(accelerators=["no-such-backend"])


def test_pipeline_dag_reruns_and_strategies(accelerator):
    x = accelerator.asarray(np.arange(N, dtype=np.float32))
    a, b, c = (accelerator.zeros(N, np.float32) for _ in range(3))
    saved = []
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, x, a, name="double")
    p.add(scale, N, 3.0, x, b, name="triple")
    p.add(add, N, a, b, c, name="sum")
    p.add_host(lambda buf: saved.append(buf.numpy().copy()), c, name="save")
    run = p.run()
    assert run.ok and run.elapsed_ms >= 0
    assert {k: v.status for k, v in run.stages.items()} == dict.fromkeys(["double", "triple", "sum", "save"], "ok")
    np.testing.assert_allclose(saved[-1], 5 * np.arange(N, dtype=np.float32))
    x.copy_from(np.ones(N, np.float32))
    assert p.run().ok  # runs again, with the new input
    np.testing.assert_allclose(saved[-1], 5.0)
    dot = p.to_dot()
    assert "digraph" in dot and "double" in dot and "sum" in dot

    for strategy, dep_status in [("skip", "skipped"), ("continue", "ok")]:
        q = dc.Pipeline(accelerator=accelerator)
        q.add_host(lambda buf: 1 / 0, a, name="bad", on_error=strategy)
        q.add(scale, N, 1.0, a, b, name="dependent")
        q.add(scale, N, 1.0, x, c, name="independent")
        r = q.run()
        assert not r.ok
        assert r.stages["bad"].status == "failed" and isinstance(r.stages["bad"].error, ZeroDivisionError)
        assert r.stages["dependent"].status == dep_status
        assert r.stages["independent"].status == "ok"

    calls = []

    def flaky(buf):
        calls.append(1)
        raise RuntimeError("always")

    q = dc.Pipeline(accelerator=accelerator)
    q.add_host(flaky, a, name="flaky", on_error="retry", retries=2)
    with pytest.raises(dc.PipelineError, match="flaky"):
        q.run()
    assert len(calls) == 3  # the first attempt and two retries

    q = dc.Pipeline(accelerator=accelerator)
    q.add_host(lambda buf: 1 / 0, a, name="boom")
    with pytest.raises(dc.PipelineError, match="boom"):
        q.run()

    with pytest.raises(dc.KernelTypeError):
        dc.Pipeline(accelerator=accelerator).add(scale, N, 1.0, x)
    with pytest.raises(ValueError):
        dc.Pipeline(accelerator=accelerator).add(scale, N, 1.0, x, a, on_error="explode")


def test_one_pipeline_run_from_several_threads(accelerator):
    import threading

    x = accelerator.asarray(np.ones(N, np.float32))
    a, b = accelerator.zeros(N, np.float32), accelerator.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, x, a, name="first")
    p.add(scale, N, 3.0, a, b, name="second")
    oks, errors = [], []

    def go():
        try:
            for _ in range(5):
                oks.append(p.run().ok)
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=go) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert oks == [True] * 15
    assert (b.numpy() == 6).all()
