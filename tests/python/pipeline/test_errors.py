"""Error strategies with stages that really fail: a host step that raises, a kernel whose launch
fails (a barrier kernel whose local size does not divide its global size), a device out of memory."""

from __future__ import annotations

import numpy as np
import pytest
from pipeline_kernels import add_into, fill, needs_groups, scale

import dotcompute as dc

N = 1024


class Boom(RuntimeError):
    pass


def _explode(*_):
    raise Boom("host step failed on purpose")


def _failing_kernel_stage(p, x, y, **kw):
    # 1000 items in groups of 64: a barrier kernel cannot run partial groups, so the launch fails
    return p.add(needs_groups, 1000, x, y, local_size=64, **kw)


def _bufs(acc, n=4):
    return [acc.asarray(np.full(N, i + 1, np.float32)) for i in range(n)]


def test_the_failing_kernel_really_fails(accelerator):
    x, y = _bufs(accelerator, 2)
    with pytest.raises(dc.LaunchError, match="multiple of local_size"):
        dc.launch(needs_groups, 1000, x, y, local_size=64, accelerator=accelerator)


def test_abort_raises_naming_the_stage_and_cancels_the_rest(accelerator):
    x, y, z, w = _bufs(accelerator)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, x, y, name="first")
    _failing_kernel_stage(p, y, z, name="broken")
    p.add(scale, N, 2.0, z, w, name="after_broken")  # depends on broken
    p.add_host(lambda a: None, w, name="later")
    with pytest.raises(dc.PipelineError, match="'broken'") as info:
        p.run()
    err = info.value
    assert err.stage == "broken"
    assert isinstance(err.__cause__, dc.LaunchError)
    run = err.run
    assert not run.ok and run is p.last_run
    assert run.stages["first"].status == "ok"
    assert run.stages["broken"].status == "failed" and run.stages["broken"].error is err.__cause__
    assert run.stages["after_broken"].status == "skipped"
    assert run.stages["later"].status == "skipped"
    np.testing.assert_allclose(w.numpy(), 4.0)  # never touched


def test_abort_on_a_host_step(accelerator):
    x, y = _bufs(accelerator, 2)
    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(_explode, x, name="explode")
    p.add(scale, N, 2.0, x, y, name="uses_x")
    with pytest.raises(dc.PipelineError, match="explode.*Boom") as info:
        p.run()
    assert isinstance(info.value.__cause__, Boom)
    assert info.value.run.stages["uses_x"].status == "skipped"


def test_skip_skips_dependents_and_runs_the_rest(accelerator):
    x, y, z, w = _bufs(accelerator)
    p = dc.Pipeline(accelerator=accelerator)
    _failing_kernel_stage(p, x, y, name="broken", on_error="skip")
    p.add(scale, N, 10.0, y, z, name="needs_broken")
    p.add_host(lambda a: None, z, name="needs_needs_broken")
    p.add(scale, N, 3.0, x, w, name="independent")
    run = p.run()
    assert not run.ok
    assert run.stages["broken"].status == "failed"
    assert isinstance(run.stages["broken"].error, dc.LaunchError)
    assert run.stages["needs_broken"].status == "skipped"
    assert run.stages["needs_needs_broken"].status == "skipped"
    assert run.stages["independent"].status == "ok"
    assert run.failed == ["broken"] and run.skipped == ["needs_broken", "needs_needs_broken"]
    np.testing.assert_allclose(w.numpy(), 3.0)
    np.testing.assert_allclose(z.numpy(), 3.0)  # untouched
    assert "failed" in run.summary()


def test_continue_runs_dependents_anyway(accelerator):
    x, y = _bufs(accelerator, 2)
    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(_explode, x, name="explode", on_error="continue")
    p.add(scale, N, 5.0, x, y, name="dependent")
    run = p.run()
    assert run.stages["explode"].status == "failed" and isinstance(run.stages["explode"].error, Boom)
    assert run.stages["dependent"].status == "ok"
    np.testing.assert_allclose(y.numpy(), 5.0)


def test_retry_counts_attempts_until_success(accelerator):
    x, y = _bufs(accelerator, 2)
    calls = []

    def flaky(buf):
        calls.append(1)
        if len(calls) < 3:
            raise Boom(f"attempt {len(calls)}")
        with buf.host() as h:
            h += 1

    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(flaky, x, name="flaky", on_error="retry", retries=3)
    p.add(scale, N, 2.0, x, y, name="after")
    run = p.run()
    assert run.ok
    assert run.stages["flaky"].attempts == 3 and run.stages["flaky"].retries == 2
    assert run.stages["flaky"].error is None
    np.testing.assert_allclose(y.numpy(), 4.0)


def test_retry_gives_up_and_aborts(accelerator):
    x, y = _bufs(accelerator, 2)
    p = dc.Pipeline(accelerator=accelerator)
    _failing_kernel_stage(p, x, y, name="always_fails", on_error="retry", retries=2)
    with pytest.raises(dc.PipelineError, match="always_fails") as info:
        p.run()
    assert info.value.run.stages["always_fails"].attempts == 3


def test_retries_before_another_strategy(accelerator):
    x, y = _bufs(accelerator, 2)
    p = dc.Pipeline(accelerator=accelerator)
    _failing_kernel_stage(p, x, y, name="fails", on_error="skip", retries=1)
    run = p.run()
    assert run.stages["fails"].status == "failed" and run.stages["fails"].attempts == 2


def test_fallback_runs_the_stage_on_the_cpu(accelerator):
    if accelerator.backend == "cpu":
        pytest.skip("the stage already runs on the CPU (see test_fallback_on_the_cpu_itself_aborts)")
    # a device out of memory: with a 1-byte pool limit the launch cannot stage its numpy arrays
    host = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, host, out, name="oom", on_error="fallback")
    old = accelerator.memory.limit
    accelerator.memory.limit = 1
    try:
        run = p.run()
    finally:
        accelerator.memory.limit = old
    st = run.stages["oom"]
    assert run.ok and st.status == "ok" and st.fell_back
    assert st.accelerator == "cpu:0" and st.attempts == 2
    assert isinstance(st.error, dc.OutOfMemoryError)  # why it fell back
    np.testing.assert_allclose(out, 2 * host)


def test_fallback_copies_device_buffers_through_the_host(accelerator):
    if accelerator.backend == "cpu":
        pytest.skip("needs a non-CPU device")
    raw_cpu = dc.RawKernel(r"""
    #include <stdint.h>
    #include "dotcompute/cpu_kernel_abi.h"
    extern "C" void plus_one(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
      float* x = *(float* const*)launch->args[0];
      const uint64_t n = launch->global_size[0], l = launch->local_size[0];
      for (uint64_t g = gb; g < ge; ++g)
        for (uint64_t i = g * l; i < (g + 1) * l && i < n; ++i) x[i] += 1.0f;
    }
    """, "plus_one", backend="cpu")
    x = accelerator.asarray(np.arange(N, dtype=np.float32))
    y = accelerator.empty(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(raw_cpu, N, x, name="cpu_only", on_error="fallback")  # cannot launch on this device
    p.add(scale, N, 2.0, x, y, name="then")
    run = p.run()
    st = run.stages["cpu_only"]
    assert run.ok and st.fell_back and st.accelerator == "cpu:0"
    assert isinstance(st.error, dc.LaunchError)
    assert st.bytes_moved == 2 * x.nbytes  # in and back out
    np.testing.assert_allclose(y.numpy(), 2 * (np.arange(N) + 1))


def test_fallback_on_the_cpu_itself_aborts(cpu):
    x, y = _bufs(cpu, 2)
    p = dc.Pipeline(accelerator=cpu)
    _failing_kernel_stage(p, x, y, name="fails", on_error="fallback")
    with pytest.raises(dc.PipelineError, match="fails"):
        p.run()


def test_a_failed_run_can_be_rerun(accelerator):
    x, y = _bufs(accelerator, 2)
    state = {"fail": True}

    def sometimes(buf):
        if state["fail"]:
            raise Boom("not this time")

    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(sometimes, x, name="sometimes")
    p.add(add_into, N, x, y, name="accumulate")
    with pytest.raises(dc.PipelineError):
        p.run()
    state["fail"] = False
    run = p.run()
    assert run.ok
    np.testing.assert_allclose(y.numpy(), 3.0)


def test_pipeline_error_is_a_dotcompute_error_with_transient(accelerator):
    x, = _bufs(accelerator, 1)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(fill, N, 1.0, x, name="ok")
    p.add_host(_explode, x, name="explode")
    with pytest.raises(dc.DotComputeError) as info:
        p.run()
    assert isinstance(info.value, dc.PipelineError) and info.value.transient is False


def test_fallback_is_for_device_failures_only(accelerator):
    # a mistake in the call (here a ValueError from a callable stage) would fail on the CPU too
    x, = _bufs(accelerator, 1)

    def bad_call(buf, stream=None):
        raise ValueError("bad parameter")

    p = dc.Pipeline(accelerator=accelerator)
    p.add(bad_call, x, name="bad", on_error="fallback")
    with pytest.raises(dc.PipelineError) as info:
        p.run()
    st = info.value.run.stages["bad"]
    assert st.attempts == 1 and not st.fell_back and isinstance(st.error, ValueError)


def test_decisions_appear_in_the_profile(accelerator):
    x, y = _bufs(accelerator, 2)
    calls = []

    def flaky(buf):
        calls.append(1)
        if len(calls) == 1:
            raise Boom("once")

    p = dc.Pipeline(accelerator=accelerator, name="profiled")
    p.add_host(flaky, x, name="flaky", on_error="retry")
    p.add(scale, N, 2.0, x, y, name="after")
    with dc.profile() as prof:
        assert p.run().ok
    retries = [n for n in prof.notes if n.kind == "retry"]
    assert [(n.attrs["pipeline"], n.attrs["stage"]) for n in retries] == [("profiled", "flaky")]
    stages = {n.attrs["stage"]: n.attrs for n in prof.notes if n.kind == "pipeline_stage"}
    assert stages["flaky"]["attempts"] == 2 and stages["after"]["status"] == "ok"
    assert any(r.kernel == "scale" for r in prof.launches)


def test_a_bounds_check_failure_is_a_stage_failure(accelerator):
    from pipeline_kernels import off_by_one

    x, y, z = _bufs(accelerator, 3)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(off_by_one, N, x, y, name="oob", on_error="skip")
    p.add(scale, N, 2.0, y, z, name="uses_y")
    run = p.run()
    assert run.stages["oob"].status == "failed"
    assert isinstance(run.stages["oob"].error, dc.KernelIndexError)
    assert run.stages["uses_y"].status == "skipped"


def test_run_async_carries_the_pipeline_error(accelerator):
    x, = _bufs(accelerator, 1)
    with dc.Pipeline(accelerator=accelerator) as p:
        p.add_host(_explode, x, name="explode")
        fut = p.run_async()
        with pytest.raises(dc.PipelineError, match="explode"):
            fut.result(timeout=120)
    # a closed pipeline starts its threads again when it runs
    with pytest.raises(dc.PipelineError):
        p.run()
