"""dc.launch / acc.launch argument forms, streams and events, and launches from several threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def vadd(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


@dc.kernel
def add_one(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0


@dc.kernel
def fill2d(a: dc.Buffer[dc.int32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] = i * 100 + j


N = 300


@pytest.mark.parametrize("gsize", [N, (N,), [N], np.int64(N), np.int32(N), (np.int64(N),)])
def test_global_size_forms(accelerator, gsize):
    a = accelerator.asarray(np.arange(N, dtype=np.float32))
    out = accelerator.zeros(N, np.float32)
    dc.launch(vadd, gsize, a, a, out, accelerator=accelerator)
    accelerator.synchronize()
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(N, dtype=np.float32))


@pytest.mark.parametrize("lsize", [None, 1, 7, 32, (32,), [64], np.int64(16)])
def test_local_size_forms(accelerator, lsize):
    a = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    accelerator.launch(vadd, N, a, a, out, local_size=lsize)
    np.testing.assert_array_equal(out, 2 * a)


def test_2d_launch_with_tuple_and_list(accelerator):
    for gsize, lsize in [((5, 7), None), ([5, 7], [1, 7]), ((5, 7), (2, 3))]:
        m = accelerator.zeros((5, 7), np.int32)
        accelerator.launch(fill2d, gsize, m, local_size=lsize)
        accelerator.synchronize()
        np.testing.assert_array_equal(m.numpy(), np.arange(5)[:, None] * 100 + np.arange(7))


@pytest.mark.parametrize(("gsize", "exc"), [
    (2.0, TypeError), ("8", TypeError), (None, TypeError), (True, TypeError), ((4, 2.0), TypeError),
    (0, ValueError), (-3, ValueError), ((), ValueError), ((1, 2, 3, 4), ValueError), ((4, 0), ValueError),
])
def test_bad_global_size(accelerator, gsize, exc):
    a = accelerator.zeros(4, np.float32)
    with pytest.raises(exc, match="global_size") as info:
        dc.launch(add_one, gsize, a, accelerator=accelerator)
    assert isinstance(info.value, dc.LaunchError)


@pytest.mark.parametrize(("lsize", "exc"), [(0, ValueError), (2.5, TypeError), ("4", TypeError), ((4, 1), ValueError)])
def test_bad_local_size(accelerator, lsize, exc):
    a = accelerator.zeros(4, np.float32)
    with pytest.raises(exc, match="local_size") as info:
        dc.launch(add_one, 4, a, local_size=lsize, accelerator=accelerator)
    assert isinstance(info.value, dc.LaunchError)


def test_bad_arguments_name_the_parameter(accelerator):
    a = accelerator.zeros(8, np.float32)
    with pytest.raises(dc.KernelTypeError, match="out"):
        dc.launch(vadd, 8, a, a, accelerator.zeros(8, np.float64), accelerator=accelerator)
    with pytest.raises(TypeError):
        dc.launch(vadd, 8, a, a, accelerator=accelerator)
    with pytest.raises(TypeError, match="'a'"):
        dc.launch(vadd, 8, [1.0] * 8, a, a, accelerator=accelerator)
    with pytest.raises(TypeError, match="kernel"):
        dc.launch(lambda x: x, 8, a, accelerator=accelerator)
    with pytest.raises(TypeError, match="stream"):
        dc.launch(add_one, 8, a, accelerator=accelerator, stream=3)


def test_accelerator_resolution(accelerator):
    a = accelerator.zeros(8, np.float32)
    dc.launch(add_one, 8, a)  # from the buffer
    dc.launch(add_one, 8, a, accelerator=accelerator.id)  # a spec string
    dc.launch(add_one, 8, a, stream=accelerator.stream())  # from the stream
    accelerator.synchronize()
    assert (a.numpy() == 3).all()


def test_stream_of_another_accelerator_is_refused(accelerator):
    others = [d for d in dc.devices() if d is not accelerator]
    if not others:
        pytest.skip("needs a second device")
    a = accelerator.zeros(8, np.float32)
    with pytest.raises(dc.LaunchError, match=others[0].id):
        dc.launch(add_one, 8, a, accelerator=accelerator, stream=others[0].stream())


def test_events_and_ordering_across_streams(accelerator):
    n = 1 << 18
    s1, s2 = accelerator.stream(), accelerator.stream()
    x = accelerator.zeros(n, np.float32)
    start = s1.record()
    for _ in range(5):
        dc.launch(add_one, n, x, accelerator=accelerator, stream=s1)
    done = s1.record()
    s2.wait(done)
    y = accelerator.empty(n, np.float32)
    dc.launch(vadd, n, x, x, y, accelerator=accelerator, stream=s2)
    end = s2.record()
    s2.synchronize()
    assert end.query() and done.query()
    assert (y.numpy() == 10).all()
    assert start.elapsed(done) >= 0.0
    assert start.elapsed(start) == pytest.approx(0.0, abs=1e-3)
    e = s1.record()
    e.synchronize()
    assert e.query() is True
    s1.synchronize()
    accelerator.synchronize()


def test_event_and_stream_errors(accelerator):
    s = accelerator.stream()
    e = s.record()
    with pytest.raises(TypeError, match="Event"):
        e.elapsed(3)
    with pytest.raises(TypeError, match="Event"):
        s.wait(None)
    others = [d for d in dc.devices() if d is not accelerator]
    if others:
        with pytest.raises(ValueError, match=others[0].id):
            e.elapsed(others[0].stream().record())


def test_stream_and_event_repr(accelerator):
    s = accelerator.stream()
    assert accelerator.id in repr(s) and accelerator.id in repr(s.record())
    assert s.accelerator is accelerator and s.record().accelerator is accelerator


def test_launches_from_many_threads(accelerator):
    errors: list[BaseException] = []
    shared = accelerator.zeros(1000, np.float32)

    def work(k: int) -> None:
        try:
            a = np.full(1000, k, np.float32)
            out = np.zeros(1000, np.float32)
            mine = accelerator.zeros(1000, np.float32)
            stream = accelerator.stream()
            for _ in range(10):
                dc.launch(vadd, 1000, a, a, out, accelerator=accelerator)
                assert (out == 2 * k).all()
                dc.launch(add_one, 1000, mine, accelerator=accelerator, stream=stream)
                dc.launch(vadd, 1000, shared, shared, accelerator.empty(1000, np.float32), accelerator=accelerator)
            stream.synchronize()
            assert (mine.numpy() == 10).all()
        except BaseException as e:  # noqa: BLE001 -- reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@dc.kernel
def copy_into(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i] = a[i]


def test_host_access_waits_for_queued_stream_work(accelerator):
    """numpy(), host(), np.asarray, copy_to and copy_from are ordered after launches queued on any stream."""
    n = 1 << 18
    s = accelerator.stream()
    x = accelerator.zeros(n, np.float32)

    def queue(times: int) -> None:
        for _ in range(times):
            dc.launch(add_one, n, x, accelerator=accelerator, stream=s)

    queue(4)
    assert x.numpy()[-1] == 4
    queue(4)
    with x.host() as h:
        assert h[-1] == 8
        h[:] = 100  # then a launch must see the host write
    queue(1)
    s.synchronize()
    assert x.numpy()[0] == 101
    queue(2)
    assert np.asarray(x)[-1] == 103
    queue(2)
    out = np.empty(n, np.float32)
    x.copy_to(out)
    assert out[-1] == 105
    y = accelerator.empty(n, np.float32)
    dc.launch(copy_into, n, x, y, accelerator=accelerator, stream=s)
    x.copy_from(np.zeros(n, np.float32))  # must not overwrite x before the queued read
    s.synchronize()
    assert y.numpy()[-1] == 105 and x.numpy()[-1] == 0


def test_a_buffer_dropped_with_pending_work_is_not_reused_early(accelerator):
    n = 1 << 18
    s = accelerator.stream()
    z = accelerator.zeros(n, np.float32)
    for _ in range(5):
        dc.launch(add_one, n, z, accelerator=accelerator, stream=s)
    del z
    w = accelerator.zeros(n, np.float32)
    s.synchronize()
    assert (w.numpy() == 0).all()


def test_waiting_on_another_accelerators_event_is_a_value_error(accelerator):
    others = [d for d in dc.devices() if d is not accelerator]
    if not others:
        pytest.skip("needs a second device")
    with pytest.raises(ValueError, match=others[0].id):
        accelerator.stream().wait(others[0].stream().record())


def test_numpy_arguments_are_synchronous_even_on_a_stream(accelerator):
    n = 1 << 18
    s, s2 = accelerator.stream(), accelerator.stream()
    x = accelerator.zeros(n, np.float32)
    for _ in range(5):
        dc.launch(add_one, n, x, accelerator=accelerator, stream=s)
    out = np.zeros(n, np.float32)
    dc.launch(vadd, n, x, x, out, accelerator=accelerator, stream=s)
    assert (out == 10).all()
    a = np.zeros(n, np.float32)
    for _ in range(3):
        dc.launch(add_one, n, a, accelerator=accelerator, stream=s2)
    assert (a == 3).all()


def test_cold_start_from_many_threads(run_python, tmp_path):
    """The first runtime use happening on several threads at once: one Accelerator per device, no errors."""
    script = tmp_path / "cold_start.py"  # a file: kernels need their source text
    script.write_text("""
import threading
import numpy as np
import dotcompute as dc

@dc.kernel
def add_one(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0

specs = ["cpu", "auto", "opencl", "cpu:0"]
errors, seen = [], []
barrier = threading.Barrier(8)

def work(k):
    try:
        barrier.wait()
        try:
            acc = dc.accelerator(specs[k % len(specs)])
        except dc.BackendUnavailableError:
            acc = dc.accelerator("cpu")
        seen.append(acc)
        a = np.zeros(100, np.float32)
        dc.launch(add_one, 100, a, accelerator=acc)
        assert (a == 1).all()
    except BaseException as e:
        errors.append(repr(e))

threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
assert all(dc.accelerator(a.id) is a for a in seen)
print("ok")
""")
    result = run_python(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
