"""Streams and events: ordering, waiting, polling and timing."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def test_default_stream_is_stable(accelerator):
    s = accelerator.default_stream
    assert s is accelerator.default_stream
    assert s.accelerator is accelerator
    assert "default" in repr(s)


def test_record_synchronize_query_elapsed(accelerator):
    s = accelerator.stream()
    assert isinstance(s, dc.Stream) and s.accelerator is accelerator
    e1 = s.record()
    e2 = s.record()
    s.synchronize()
    assert e1.query() and e2.query()
    e2.synchronize()
    ms = e1.elapsed(e2)
    assert isinstance(ms, float) and ms >= 0.0
    assert e1.accelerator is accelerator


@dc.kernel
def _slow_then_set(flag: dc.Buffer[dc.int64], spins: dc.int64):
    acc = 0
    for i in range(spins):
        acc = (acc * 31 + i) % 1000003
    flag[1] = acc  # keeps the loop
    flag[0] = 1


def test_wait_orders_streams(accelerator):
    # Stream a runs a slow kernel; stream b is told to wait for a's event and then records its own.
    # b's event completing must mean a's work is done. (Without the wait b's event completes at
    # once, while a is still spinning. No buffer is shared: buffers order streams by themselves.)
    a, b = accelerator.stream(), accelerator.stream()
    flag = accelerator.zeros((2,), np.int64)
    dc.launch(_slow_then_set, 1, flag, 1000, accelerator=accelerator)  # compiled before timing matters
    accelerator.synchronize()
    # many work-items, so the CPU backend queues it on the stream instead of running it inline
    dc.launch(_slow_then_set, 1 << 16, flag, 2000, accelerator=accelerator, stream=a)
    e = a.record()
    b.wait(e)
    done = b.record()
    done.synchronize()
    assert e.query(), "b's event completed before the event it waits for"
    assert flag.numpy()[0] == 1


def test_type_errors():
    s = dc.accelerator("cpu").stream()
    with pytest.raises(TypeError):
        s.wait(s)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s.record().elapsed(1.0)  # type: ignore[arg-type]


def test_synchronize_makes_buffers_current(accelerator):
    b = accelerator.asarray(np.ones(100, np.float32))
    accelerator.synchronize()
    np.testing.assert_array_equal(b.numpy(), 1.0)


def test_default_stream_outlives_its_python_handles(run_python):
    # The core owns the default stream; dropping a Python handle to it must not free it.
    done = run_python(
        "import gc, dotcompute as dc\n"
        "acc = dc.accelerator('cpu:0')\n"
        "s = acc._native.default_stream\n"
        "del s\n"
        "gc.collect()\n"
        "acc._native.default_stream.synchronize()\n"
        "acc.default_stream.synchronize()\n"
        "print('ok')\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
