"""CPU backend: a launch of few work-items whose measured cost sends it to the thread pool runs on the
calling thread with the pool's helpers when its stream is idle (cpp/backends/cpu/src/plugin.cpp). The
results, the stream order around it and two Python threads launching at once are checked here; its
speed is in bench/speed_goals.py."""

from __future__ import annotations

import threading

import numpy as np

import dotcompute as dc


@dc.kernel
def _heavy_rows(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], m: dc.int64, reps: dc.int64):
    # each item loops over the first m elements of x `reps` times: with m = 512 and one rep about a
    # millisecond of work for 1,024 items, past the backend's inline budget and within what it runs on
    # the calling thread, so from the second launch on the pool's helpers join the caller; more reps
    # make a launch that is queued for the stream's worker
    i = dc.global_id(0)
    n = x.shape[0]
    if i < n:
        s = dc.float32(0.0)
        for r in range(reps):
            for j in range(m):
                s += x[j] * x[i] + dc.float32(r)
        out[i] = out[i] + s  # adds to out: a launch run out of order changes the result


@dc.kernel
def _add_one(out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = out[i] + dc.float32(1.0)


def _expected(x: np.ndarray, m: int, reps: int) -> np.ndarray:
    x64 = x.astype(np.float64)
    return (reps * x64[:m].sum() * x64 + m * reps * (reps - 1) / 2).astype(np.float32)


def test_heavy_few_items_match_numpy_and_keep_stream_order(cpu):
    n, m = 1024, 512
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    xb = cpu.asarray(x)
    for reps in (1, 1, 1, 8, 1):  # the first launch measures the kernel's cost; 8 reps: a queued launch
        want = _expected(x, m, reps)
        out = cpu.zeros(n, np.float32)
        cpu.launch(_heavy_rows, n, xb, out, m, reps)
        cpu.launch(_add_one, n, out)  # queued behind it on the same stream: must see its results
        np.testing.assert_allclose(out.numpy(), want + 1, rtol=1e-4)


def test_heavy_few_items_on_a_busy_stream_stay_ordered(cpu):
    n, m, reps = 1024, 512, 1
    x = np.random.default_rng(4).random(n, dtype=np.float32)
    xb = cpu.asarray(x)
    s = cpu.stream()
    out = cpu.zeros(n, np.float32)
    cpu.launch(_heavy_rows, n, xb, out, m, reps, stream=s)
    for _ in range(3):  # each waits for the previous one in the stream's order, whichever thread runs it
        cpu.launch(_heavy_rows, n, xb, out, m, reps, stream=s)
        cpu.launch(_add_one, n, out, stream=s)
    s.synchronize()
    np.testing.assert_allclose(out.numpy(), 4 * _expected(x, m, reps) + 3, rtol=1e-4)


def test_heavy_few_items_from_several_python_threads(cpu):
    # two threads launching on their own streams at once share the pool: each gets its own answer
    n, m, reps = 1024, 512, 1
    rng = np.random.default_rng(5)
    xs = [rng.random(n, dtype=np.float32) for _ in range(2)]
    errors: list[BaseException] = []

    def work(x: np.ndarray) -> None:
        try:
            s = cpu.stream()
            xb, out = cpu.asarray(x), cpu.zeros(n, np.float32)
            for k in range(1, 5):
                cpu.launch(_heavy_rows, n, xb, out, m, reps, stream=s)
                s.synchronize()
                np.testing.assert_allclose(out.numpy(), k * _expected(x, m, reps), rtol=1e-4)
        except BaseException as exc:  # noqa: BLE001 -- handed to the main thread's assertion
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
