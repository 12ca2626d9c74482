"""Running pipelines on every device: results against numpy, reruns, run_async, metrics."""

from __future__ import annotations

import concurrent.futures
import json

import numpy as np
import pytest
from pipeline_kernels import add, add_into, fill, scale

import dotcompute as dc

N = 4099  # not a multiple of any group size


def _diamond(acc, x):
    """x → (2x, 3x) → sum → host copy: the classic diamond."""
    a, b, c = (acc.empty(N, np.float32) for _ in range(3))
    got: list[np.ndarray] = []
    p = dc.Pipeline(accelerator=acc)
    p.add(scale, N, 2.0, x, a, name="left")
    p.add(scale, N, 3.0, x, b, name="right")
    p.add(add, N, a, b, c, name="join")
    p.add_host(lambda out: got.append(out.numpy()), c, name="save")
    return p, got


def test_diamond_matches_numpy(accelerator):
    host = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    x = accelerator.asarray(host)
    p, got = _diamond(accelerator, x)
    run = p.run()
    assert run.ok, run.summary()
    np.testing.assert_allclose(got[0], 5 * host, rtol=1e-6)
    assert set(p.dependencies("join")) == {"left", "right"}
    assert run.stages["join"].status == "ok" and run.stages["join"].attempts == 1
    assert run.stages["join"].accelerator == accelerator.id
    assert run.stages["join"].accelerator == accelerator and run.stages["join"].accelerator.id == accelerator.id
    assert run.stages["join"].accelerator.backend == accelerator.backend
    assert run.stages["save"].accelerator == "host"
    assert run.elapsed_ms > 0 and all(s.elapsed_ms >= 0 for s in run.stages.values())
    # independent branches were given streams of their own; the join continues one of them
    tracks = {n: s.track for n, s in run.stages.items()}
    assert tracks["left"] != tracks["right"] and tracks["join"] in (tracks["left"], tracks["right"])


def test_rerun_sees_new_input(accelerator):
    x = accelerator.asarray(np.ones(N, np.float32))
    p, got = _diamond(accelerator, x)
    p.run()
    for k in range(2, 5):
        x.copy_from(np.full(N, k, np.float32))
        assert p.run().ok
        np.testing.assert_allclose(got[-1], 5.0 * k)
    assert len(got) == 4


def test_war_ordering_reader_sees_old_data(accelerator):
    # "reader" must read x before "overwrite" replaces it, even on separate streams
    host = np.arange(N, dtype=np.float32)
    x = accelerator.asarray(host)
    y = accelerator.empty(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, x, y, name="reader")
    p.add(fill, N, -1.0, x, name="overwrite")
    p.add(add_into, N, x, y, name="then")  # RAW on x and y
    assert p.run().ok
    np.testing.assert_allclose(y.numpy(), 2 * host - 1)
    np.testing.assert_allclose(x.numpy(), -1)


def test_waw_ordering_last_writer_wins(accelerator):
    x = accelerator.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    for v in range(1, 6):
        p.add(fill, N, float(v), x, name=f"fill{v}")
    run = p.run()
    assert run.ok
    np.testing.assert_array_equal(x.numpy(), 5.0)


def test_host_steps_see_device_results_and_feed_later_kernels(accelerator):
    x = accelerator.asarray(np.arange(N, dtype=np.float32))
    y = accelerator.empty(N, np.float32)

    def negate_in_place(buf):
        with buf.host() as h:
            h *= -1

    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, x, y, name="double")
    p.add_host(negate_in_place, y, name="negate")
    p.add(add_into, N, x, y, name="plus_x")
    assert p.run().ok
    np.testing.assert_allclose(y.numpy(), -np.arange(N, dtype=np.float32))


def test_raw_kernel_stage_on_cpu(cpu):
    src = r"""
    #include <stdint.h>
    #include "dotcompute/cpu_kernel_abi.h"
    extern "C" void twice(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
      float* x = *(float* const*)launch->args[0];
      const uint64_t n = launch->global_size[0], l = launch->local_size[0];
      for (uint64_t g = gb; g < ge; ++g)
        for (uint64_t i = g * l; i < (g + 1) * l && i < n; ++i) x[i] *= 2.0f;
    }
    """
    k = dc.RawKernel(src, "twice")
    x = cpu.asarray(np.arange(N, dtype=np.float32))
    p = dc.Pipeline(accelerator=cpu)
    p.add(k, N, x, name="first")
    p.add(k, N, x, name="second")
    assert p.edges()[0][:2] == ("first", "second")
    assert p.run().ok
    np.testing.assert_allclose(x.numpy(), 4 * np.arange(N))


def test_callable_stages_with_and_without_stream(accelerator):
    x = accelerator.asarray(np.ones(N, np.float32))
    y = accelerator.zeros(N, np.float32)
    seen = []

    def two_launches(src, dst, stream=None):
        seen.append(stream)
        dc.launch(scale, N, 3.0, src, dst, accelerator=accelerator, stream=stream)
        dc.launch(add_into, N, src, dst, accelerator=accelerator, stream=stream)

    def on_default_stream(dst):
        dc.launch(add_into, N, dst, dst, accelerator=accelerator)  # dst *= 2

    p = dc.Pipeline(accelerator=accelerator)
    p.add(two_launches, x, y, name="expr", reads=[x], writes=[y])
    p.add(on_default_stream, y, name="op")
    run = p.run()
    assert run.ok and run.stages["expr"].kind == "call"
    assert isinstance(seen[0], dc.Stream)
    np.testing.assert_allclose(y.numpy(), 8.0)


def test_run_async_returns_a_future(accelerator):
    x = accelerator.asarray(np.full(N, 2, np.float32))
    p, got = _diamond(accelerator, x)
    fut = p.run_async()
    assert isinstance(fut, concurrent.futures.Future)
    run = fut.result(timeout=120)
    assert run.ok and isinstance(run, dc.PipelineRun)
    np.testing.assert_allclose(got[0], 10.0)
    # two runs queued at once run one after the other, each complete
    futs = [p.run_async(), p.run_async()]
    assert all(f.result(timeout=120).ok for f in futs)
    assert len(got) == 3
    p.close()


def test_summary_and_trace(accelerator, tmp_path):
    x = accelerator.asarray(np.ones(N, np.float32))
    p, _ = _diamond(accelerator, x)
    run = p.run()
    text = run.summary()
    for name in ("left", "right", "join", "save"):
        assert name in text
    assert "total" in text.splitlines()[-1]
    trace = json.loads(run.to_chrome_trace(tmp_path / "t.json").read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert names == {"left", "right", "join", "save"}
    tracks = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert len(tracks) >= 3  # two streams and a host worker
    for s in run.stages.values():
        assert s.start_ms is not None and s.end_ms is not None and s.end_ms >= s.start_ms


def test_numpy_arrays_as_stage_arguments(accelerator):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, x, y, name="s")
    p.add_host(lambda arr: arr.__iadd__(1), y, name="h")
    assert p.run().ok
    np.testing.assert_allclose(y, 2 * x + 1)


@pytest.mark.parametrize("n_stages", [1, 12])
def test_chains_of_tiny_stages(accelerator, n_stages):
    x = accelerator.zeros(16, np.float32)
    one = accelerator.asarray(np.ones(16, np.float32))
    p = dc.Pipeline(accelerator=accelerator)
    for _ in range(n_stages):
        p.add(add_into, 16, one, x)
    for _ in range(3):
        assert p.run().ok
    np.testing.assert_allclose(x.numpy(), 3 * n_stages)


def test_array_expression_and_operation_stages(accelerator):
    # array expressions and operations enqueue their own kernels: callable stages
    host = np.arange(N, dtype=np.float32)
    x = accelerator.asarray(host)
    y = accelerator.asarray(np.ones(N, np.float32))
    out = accelerator.empty(N, np.float32)
    totals: list[float] = []

    def expression(x, y, out):
        out[...] = x * 2.0 + y

    p = dc.Pipeline(accelerator=accelerator)
    p.add(expression, x, y, out, reads=[x, y], writes=[out])
    p.add_host(lambda o: totals.append(float(dc.sum(o))), out, name="total")
    assert p.run().ok
    np.testing.assert_allclose(out.numpy(), 2 * host + 1)
    assert totals[0] == pytest.approx(float((2 * host + 1).sum()), rel=1e-5)
    y.copy_from(np.zeros(N, np.float32))
    assert p.run().ok
    np.testing.assert_allclose(out.numpy(), 2 * host)


def test_stages_run_where_their_buffers_live_by_default(accelerator):
    x = accelerator.asarray(np.ones(N, np.float32))
    y = accelerator.empty(N, np.float32)
    p = dc.Pipeline()  # no accelerator: each device stage takes its first buffer's
    p.add(scale, N, 4.0, x, y, name="s")
    run = p.run()
    assert run.stages["s"].accelerator == accelerator.id
    np.testing.assert_allclose(y.numpy(), 4.0)
