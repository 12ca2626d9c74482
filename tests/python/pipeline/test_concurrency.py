"""Independent stages really run at the same time, and cross-device pipelines.

No timing thresholds: each test is built so that running the stages one after another cannot
succeed (it would deadlock, caught by a timeout, or a kernel would give up waiting).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from pipeline_kernels import WAIT_FOR_FLAG, add, add_into, scale

import dotcompute as dc

N = 2048


def test_independent_host_steps_overlap(accelerator):
    # each step waits at a barrier for the other: run one after the other, the first would time out
    barrier = threading.Barrier(2, timeout=20)
    x, y = accelerator.zeros(N, np.float32), accelerator.zeros(N, np.float32)

    def meet(buf, value):
        barrier.wait()
        with buf.host() as h:
            h[:] = value

    p = dc.Pipeline(accelerator=accelerator)
    p.add_host(meet, x, 1.0, name="a")
    p.add_host(meet, y, 2.0, name="b")
    p.add(add, N, x, y, x, name="join")  # reads both: runs after the two have met
    run = p.run()
    assert run.ok, run.summary()
    np.testing.assert_allclose(x.numpy(), 3.0)
    a, b = run.stages["a"], run.stages["b"]
    assert a.start_ms < b.end_ms and b.start_ms < a.end_ms  # the overlap shows in the trace
    assert a.track != b.track


@pytest.mark.parametrize("items", [1, 1 << 15], ids=["inline-launch", "queued-launch"])
def test_device_stage_overlaps_a_host_step(cpu, items):
    # The kernel waits until the host step sets flag[0]; had the pipeline waited for the kernel
    # before starting the host step, the kernel would give up after ~10 s and store -1. With one
    # item the CPU backend runs the launch on the calling thread (the pipeline's coordinator), so
    # the host step must already have been handed to its thread.
    k = dc.RawKernel(WAIT_FOR_FLAG, "wait_for_flag")
    k.compile(cpu)
    flag = cpu.zeros(2, np.int32)
    # CPU buffers are host memory: a view taken now aliases what the running kernel reads (taking one
    # inside the step would first wait for the kernel, as host access to a busy buffer must)
    view = np.asarray(flag)

    def release(buf):
        view[0] = 1

    p = dc.Pipeline(accelerator=cpu)
    # declared independent: the pipeline is told the two touch the flag in a way that needs no ordering
    p.add(k, items, flag, name="wait", reads=[], writes=[])
    p.add_host(release, flag, name="release", reads=[], writes=[])
    assert p.edges() == []
    run = p.run()
    assert run.ok, run.summary()
    assert int(flag.numpy()[1]) == 1
    w, r = run.stages["wait"], run.stages["release"]
    assert r.start_ms < w.end_ms


def test_concurrency_is_bounded_by_max_workers(accelerator):
    # one host worker: the two steps run one after the other, so a barrier of two would break
    barrier = threading.Barrier(2, timeout=1)
    p = dc.Pipeline(accelerator=accelerator, max_workers=1)
    p.add_host(barrier.wait, name="a")
    p.add_host(barrier.wait, name="b")
    with pytest.raises(dc.PipelineError) as info:
        p.run()
    assert isinstance(info.value.__cause__, threading.BrokenBarrierError)


def _other_device(acc):
    for d in dc.devices():
        if d.id != acc.id:
            return d
    return None


def test_cross_device_pipeline(accelerator):
    other = _other_device(accelerator)
    if other is None:
        pytest.skip("needs two accelerators")
    host = np.arange(N, dtype=np.float32)
    x = accelerator.asarray(host)
    mid = accelerator.empty(N, np.float32)
    acc2 = other.zeros(N, np.float32)
    out = accelerator.empty(N, np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(scale, N, 2.0, x, mid, name="here")  # on accelerator
    p.add(add_into, N, mid, acc2, name="there", accelerator=other)  # reads mid from the other device
    p.add(scale, N, 0.5, acc2, out, name="back")  # acc2 lives on `other`: copied back here
    for k in (1, 2):
        run = p.run()
        assert run.ok, run.summary()
        np.testing.assert_allclose(acc2.numpy(), 2 * k * host)
        np.testing.assert_allclose(out.numpy(), k * host)
    st = run.stages
    assert st["here"].accelerator == accelerator.id and st["there"].accelerator == other.id
    assert st["back"].accelerator == accelerator.id
    assert st["there"].bytes_moved == mid.nbytes  # mid in; acc2 is the stage's own device's buffer
    assert st["back"].bytes_moved == acc2.nbytes  # acc2 in; out is not another device's buffer


def test_profile_shows_one_track_per_stream(accelerator):
    if not hasattr(dc, "profile"):
        pytest.skip("dc.profile is not available")
    x = accelerator.asarray(np.ones(N, np.float32))
    a, b, c = (accelerator.empty(N, np.float32) for _ in range(3))
    p = dc.Pipeline(accelerator=accelerator, cuda_graph=False)  # a replayed graph runs on one stream
    p.add(scale, N, 2.0, x, a, name="left")
    p.add(scale, N, 3.0, x, b, name="right")
    p.add(add, N, a, b, c, name="join")
    p.run()
    with dc.profile() as prof:
        p.run()
    streams = {r.stream for r in prof.launches if r.kernel == "scale"}
    assert len(streams) == 2
    np.testing.assert_allclose(c.numpy(), 5.0)
