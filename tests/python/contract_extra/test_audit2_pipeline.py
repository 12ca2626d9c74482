"""Audit 2: dc.Pipeline (DESIGN.md "Running kernels well") beyond the happy path.

Stages that touch their own pipeline while it runs (this hung), bad graphs refused without damage,
every error strategy with exact attempt counts, runs from two threads at once, reruns after a
failure, and to_dot with names that need escaping.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def bump(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0


@dc.kernel
def scale(k: dc.float32, x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = k * x[i]


N = 256


class Flaky:
    """A host step that fails its first ``failures`` calls."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, *args: object) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(f"flaky failure {self.calls}")


def _run_with_timeout(fn, seconds: float = 60):
    """Runs ``fn`` on a thread; a hang fails the test instead of blocking the suite."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 -- handed to the test
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the pipeline hung"
    return box


# -- a stage that uses its own pipeline -----------------------------------------------------------

@pytest.mark.parametrize("action", ["add_host", "add", "run", "close"])
def test_a_host_step_cannot_use_its_own_running_pipeline(accelerator, action):
    b = accelerator.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)

    def meddle() -> None:
        if action == "add_host":
            p.add_host(lambda: None, name="late")
        elif action == "add":
            p.add(bump, N, b, name="late")
        elif action == "run":
            p.run()
        else:
            p.close()

    p.add(bump, N, b, name="first")
    p.add_host(meddle, name="meddler")
    box = _run_with_timeout(p.run)
    err = box.get("error")
    assert isinstance(err, dc.PipelineError), box
    assert "meddler" in str(err) and "own pipeline" in str(err)
    assert isinstance(err.__cause__, RuntimeError)
    assert p.stages == ["first", "meddler"]  # nothing was added
    # the pipeline still works, and another pipeline may be used from a stage
    other = dc.Pipeline(accelerator=accelerator)
    other.add(bump, N, b, name="other")
    q = dc.Pipeline(accelerator=accelerator)
    q.add_host(lambda: other.run(), name="runs_another")
    assert _run_with_timeout(q.run)["value"].ok
    assert (b.numpy() == 2).all()


def test_a_callable_stage_cannot_add_to_its_own_pipeline(accelerator):
    b = accelerator.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)

    def enqueue(buf, stream=None):  # runs inline on the coordinator (it takes stream=)
        p.add(bump, N, buf, name="sneaked_in")

    p.add(enqueue, b, name="callable")
    box = _run_with_timeout(p.run)
    assert isinstance(box.get("error"), dc.PipelineError), box
    assert p.stages == ["callable"]


# -- bad graphs -----------------------------------------------------------------------------------

def test_bad_after_and_names_leave_the_pipeline_unchanged(accelerator):
    b = accelerator.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(bump, N, b, name="a")
    with pytest.raises(ValueError, match="'nope'"):
        p.add(bump, N, b, name="b", after=["nope"])
    with pytest.raises(ValueError, match="cycle"):
        p.add_host(lambda: None, name="c", after="c")
    with pytest.raises(ValueError, match="already exists"):
        p.add(bump, N, b, name="a")
    with pytest.raises(ValueError, match="already exists"):
        p.add_host(lambda: None, name="a")
    with pytest.raises(TypeError):
        p.add_host(lambda: None, after=[3])
    with pytest.raises(ValueError, match="on_error"):
        p.add_host(lambda: None, on_error="ignore")
    assert p.stages == ["a"] and len(p.edges()) == 0
    assert p.run().ok and (b.numpy() == 1).all()


# -- strategies -----------------------------------------------------------------------------------

def test_skip_skips_the_whole_dependent_chain_only(accelerator):
    b, c = accelerator.zeros(N, np.float32), accelerator.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(Flaky(10), b, name="broken", on_error="skip")
    p.add(bump, N, b, name="child")
    p.add(bump, N, b, name="grandchild")
    p.add(bump, N, c, name="independent")
    run = p.run()
    assert not run.ok
    assert run.stages["broken"].status == "failed" and run.stages["broken"].attempts == 1
    assert run.stages["child"].status == "skipped" and run.stages["grandchild"].status == "skipped"
    assert run.stages["independent"].status == "ok"
    assert (b.numpy() == 0).all() and (c.numpy() == 1).all()


def test_continue_runs_dependents(accelerator):
    b = accelerator.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(Flaky(10), b, name="broken", on_error="continue")
    p.add(bump, N, b, name="child")
    run = p.run()
    assert run.stages["broken"].status == "failed" and run.stages["child"].status == "ok"
    assert run.failed == ["broken"] and (b.numpy() == 1).all()


@pytest.mark.parametrize(("failures", "retries", "ok", "attempts"), [(2, 2, True, 3), (3, 2, False, 3),
                                                                     (0, 3, True, 1)])
def test_retry_attempt_counts(accelerator, failures, retries, ok, attempts):
    b = accelerator.zeros(N, np.float32)
    flaky = Flaky(failures)
    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(flaky, name="flaky", on_error="retry", retries=retries)
    p.add(bump, N, b, name="after_it", after=["flaky"])
    if ok:
        run = p.run()
        assert run.ok and (b.numpy() == 1).all()
    else:
        with pytest.raises(dc.PipelineError, match="flaky") as info:
            p.run()
        run = info.value.run
        assert run.stages["after_it"].status == "skipped"
    assert run.stages["flaky"].attempts == attempts == flaky.calls
    assert run.stages["flaky"].retries == attempts - 1


def test_fallback_after_retries_counts_every_attempt(accelerator):
    if accelerator.backend == "cpu":
        pytest.skip("falls back to the CPU: needs another device")
    host = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, host, out, name="oom", on_error="fallback", retries=2)
    old = accelerator.memory.limit
    accelerator.memory.limit = 1  # staging the numpy arguments runs out of device memory
    try:
        run = p.run()
    finally:
        accelerator.memory.limit = old
    st = run.stages["oom"]
    assert run.ok and st.fell_back and st.accelerator == "cpu:0"
    assert st.attempts == 4  # 1 + 2 retries on the device, then the CPU
    np.testing.assert_array_equal(out, 2 * host)


def test_a_failed_run_can_run_again(accelerator):
    b = accelerator.zeros(N, np.float32)
    flaky = Flaky(1)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(bump, N, b, name="before")
    p.add_host(flaky, b, name="flaky")
    p.add(bump, N, b, name="after")
    with pytest.raises(dc.PipelineError):
        p.run()
    assert p.last_run is not None and p.last_run.stages["after"].status == "skipped"
    run = p.run()
    assert run.ok and all(s.attempts == 1 for s in run.stages.values())
    assert (b.numpy() == 3).all()  # before twice, after once


# -- two threads run one pipeline -----------------------------------------------------------------

def test_two_threads_run_one_pipeline_at_once(accelerator):
    a, b = accelerator.zeros(N, np.float32), accelerator.zeros(N, np.float32)
    seen: list[float] = []
    p = dc.Pipeline(accelerator=accelerator)
    p.add(bump, N, a, name="bump_a")
    p.add(bump, N, b, name="bump_b")
    p.add(scale, N, 1.0, a, b, name="copy_a_to_b", after=["bump_b"])
    p.add_host(lambda buf: seen.append(float(buf.numpy()[0])), b, name="look")
    runs: list[dc.PipelineRun] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def go() -> None:
        try:
            barrier.wait(30)
            for _ in range(5):
                runs.append(p.run())
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "hung"
    assert not errors, errors
    assert len(runs) == 10 and all(r.ok for r in runs)
    assert (a.numpy() == 10).all()
    assert sorted(seen) == [float(i) for i in range(1, 11)]  # runs one after another, none interleaved


# -- to_dot ---------------------------------------------------------------------------------------

def test_to_dot_escapes_odd_stage_names(accelerator):
    b = accelerator.zeros(N, np.float32)
    names = ['say "hi"', "back\\slash", "two\nlines", "<html>&{x}", "tab\tand ünïcode", "semi;colon -> arrow"]
    p = dc.Pipeline(accelerator=accelerator, name='my "pipe"')
    for name in names:
        p.add(bump, N, b, name=name)
    dot = p.to_dot()
    lines = dot.splitlines()
    assert lines[0].startswith('digraph "my \\"pipe\\"" {') and lines[-1] == "}"
    quoted = re.compile(r'"((?:[^"\\]|\\.)*)"')
    for line in lines[1:-1]:
        # every statement is on one line and its quotes balance once escapes are taken out
        stripped = quoted.sub("", line)
        assert '"' not in stripped, line
    q = r'"(?:[^"\\]|\\.)*"'
    node = re.compile(rf"\s*({q}) \[label={q}.*\];")
    edge = re.compile(rf"\s*{q} -> {q} \[label={q}.*\];")
    ids = [m.group(1)[1:-1] for m in map(node.fullmatch, lines) if m]
    unescape = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
    decoded = [re.sub(r'\\\\|\\"|\\n', lambda m: unescape[m.group(0)], i) for i in ids]
    assert decoded == names
    assert sum(1 for line in lines if edge.fullmatch(line)) == len(names) - 1


def test_run_trace_to_a_missing_folder_is_a_clear_error(accelerator, tmp_path):
    p = dc.Pipeline(accelerator=accelerator)
    p.add(bump, N, accelerator.zeros(N, np.float32), name="b")
    run = p.run()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run.to_chrome_trace(tmp_path / "missing" / "trace.json")
    out = run.to_chrome_trace(tmp_path / "trace.json")
    assert '"traceEvents"' in out.read_text()
