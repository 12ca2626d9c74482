"""dc.profile: launch, transfer and compile records; summary, JSON and Chrome trace exports."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from profile_kernels import fill, saxpy

import dotcompute as dc

N = 4096


def test_launches_and_copies_are_counted(accelerator):
    x = accelerator.asarray(np.ones(N, np.float32))
    y = accelerator.zeros(N, np.float32)
    dc.launch(saxpy, N, np.float32(2.0), x, y)  # warm: compiled outside the profile
    with dc.profile() as prof:
        for _ in range(5):
            dc.launch(saxpy, N, np.float32(2.0), x, y)
        dc.launch(fill, N, x, np.float32(3.0))
        host = y.numpy()
        y.copy_from(np.zeros(N, np.float32))
    np.testing.assert_array_equal(host, np.full(N, 12.0, np.float32))
    assert [(k.name, k.count) for k in sorted(prof.kernels, key=lambda k: k.name)] == [("fill", 1), ("saxpy", 5)]
    stats = {k.name: k for k in prof.kernels}
    assert stats["saxpy"].bytes == 5 * 2 * N * 4 and stats["saxpy"].accelerator == accelerator.id
    assert all(r.device_ms is not None and r.device_ms >= 0 and r.host_ms >= 0 for r in prof.launches)
    assert all(r.global_size == (N,) for r in prof.launches)
    assert [(t.direction, t.bytes) for t in prof.transfers] == [("d2h", N * 4), ("h2d", N * 4)]
    k = stats["saxpy"]
    assert 0 <= k.p50_ms <= k.p99_ms and k.total_ms == pytest.approx(k.mean_ms * 5)
    text = prof.summary()
    assert "saxpy" in text and "fill" in text and "d2h" in text


def test_numpy_arguments_show_their_staging_copies(accelerator):
    x = np.ones(N, np.float32)
    y = np.zeros(N, np.float32)
    with dc.profile() as prof:
        dc.launch(saxpy, N, np.float32(1.0), x, y, accelerator=accelerator)
    assert len(prof.launches) == 1
    if not accelerator.unified_memory:
        directions = sorted(t.direction for t in prof.transfers)
        assert directions == ["d2h", "h2d", "h2d"]  # x and y in, y (written) back


def test_compiles_are_recorded_with_their_cache_outcome(accelerator, tmp_path):
    # a fresh kernel (new source text) is a miss or a disk hit the first time, then a memory hit
    src = tmp_path / "fresh_kernel.py"
    src.write_text(textwrap.dedent(f'''
        import dotcompute as dc

        @dc.kernel
        def fresh(x: dc.Buffer[dc.float32]) -> None:
            x[dc.global_id(0)] = {np.random.default_rng().integers(1 << 30)}.0
    '''))
    import runpy

    fresh = runpy.run_path(str(src))["fresh"]
    x = np.zeros(8, np.float32)
    with dc.profile() as prof:
        dc.launch(fresh, 8, x, accelerator=accelerator)
        fresh.precompile(accelerators=[accelerator])
    caches = [c.cache for c in prof.compiles]
    assert caches[0] in ("miss", "disk") and caches[-1] == "memory"
    assert all(c.accelerator == accelerator.id and c.duration_ms >= 0 for c in prof.compiles)
    assert prof.launches[0].device_ms is not None


def test_json_and_chrome_trace(tmp_path, accelerator):
    x = accelerator.zeros(N, np.float32)
    with dc.profile() as prof:
        for v in range(7):
            dc.launch(fill, N, x, np.float32(v))
        x.numpy()
    doc = json.loads(prof.to_json(tmp_path / "p.json"))
    assert doc == json.loads((tmp_path / "p.json").read_text())
    assert len(doc["launches"]) == 7 and doc["kernels"][0]["count"] == 7
    prof.to_chrome_trace(tmp_path / "trace.json")
    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"]
    for e in events:
        assert {"name", "ph", "ts", "pid", "tid"} <= set(e), e
        assert e["ph"] in ("X", "i", "M")
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] >= 0
    launches = [e for e in events if e["ph"] == "X" and e.get("cat") == "launch"]
    assert len(launches) == 7 and {e["name"] for e in launches} == {"fill"}
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names[launches[0]["tid"]] == f"{accelerator.id} default stream"
    assert [e for e in events if e.get("cat") == "transfer"]


def test_one_track_per_stream(accelerator):
    x = accelerator.zeros(N, np.float32)
    s1, s2 = accelerator.stream(), accelerator.stream()
    with dc.profile() as prof:
        dc.launch(fill, N, x, np.float32(1), stream=s1)
        dc.launch(fill, N, x, np.float32(2), stream=s2)
        dc.launch(fill, N, x, np.float32(3), stream=s1)
        accelerator.synchronize()
    events = prof.to_chrome_trace()["traceEvents"]
    tids = [e["tid"] for e in events if e.get("cat") == "launch"]
    assert len(set(tids)) == 2 and tids[0] == tids[2]


def test_nested_profiles_both_see_the_inner_launches():
    x = np.zeros(8, np.float32)
    with dc.profile() as outer:
        dc.launch(fill, 8, x, np.float32(1), accelerator="cpu")
        with dc.profile() as inner:
            dc.launch(fill, 8, x, np.float32(2), accelerator="cpu")
    assert len(outer.launches) == 2 and len(inner.launches) == 1
    assert dc.runtime.trace.active is None


def test_nothing_is_recorded_outside_a_profile():
    x = np.zeros(8, np.float32)
    prof = dc.profile()
    dc.launch(fill, 8, x, np.float32(1), accelerator="cpu")
    assert prof.launches == [] and dc.runtime.trace.active is None
    with pytest.raises(TypeError, match="otel"):
        dc.profile(otel="yes")


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    x = np.zeros(N, np.float32)
    with dc.profile() as prof:
        dc.launch(fill, N, x, np.float32(1), accelerator="cpu")
    prof.plot(tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_dotcompute_profile_writes_a_trace_at_exit(run_python, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent('''
        import numpy as np
        import dotcompute as dc

        @dc.kernel
        def inc(x: dc.Buffer[dc.float32]) -> None:
            i = dc.global_id(0)
            x[i] = x[i] + 1.0

        x = np.zeros(64, np.float32)
        for _ in range(5):
            dc.launch(inc, 64, x, accelerator="cpu")
        assert (x == 5).all()
    '''))
    out = tmp_path / "trace.json"
    done = run_python(f"import runpy; runpy.run_path({str(script)!r})", env={"DOTCOMPUTE_PROFILE": str(out)})
    assert done.returncode == 0, done.stderr
    events = json.loads(out.read_text())["traceEvents"]
    assert len([e for e in events if e.get("cat") == "launch" and e["name"] == "inc"]) == 5


def test_kernels_by_name():
    x = np.zeros(8, np.float32)
    with dc.profile() as prof:
        dc.launch(fill, 8, x, np.float32(1), accelerator="cpu")
        dc.launch(fill, 8, x, np.float32(1), accelerator="cpu")
    assert prof.kernels["fill"].count == 2
    assert prof.kernels["fill", "cpu:0"] is not None and prof.kernels[0].name == "fill"
    with pytest.raises(KeyError, match="saxpy"):
        prof.kernels["saxpy"]


def test_long_profiles_release_finished_events(accelerator):
    from dotcompute.profile import records

    x = accelerator.zeros(64, np.float32)
    every = records._SETTLE_EVERY
    with dc.profile() as prof:
        for v in range(every):
            dc.launch(fill, 64, x, np.float32(v))
        accelerator.synchronize()  # the first batch is finished: the next settle releases its events
        for v in range(every):
            dc.launch(fill, 64, x, np.float32(v))
        held = sum(1 for e in prof._recorder._launches if e[8] is not None)
    assert held <= every
    assert len(prof.launches) == 2 * every
    assert all(r.device_ms is not None for r in prof.launches)
