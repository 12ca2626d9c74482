"""Many Python threads, each on its own stream, allocating, launching and freeing at once:
results stay right, nothing deadlocks, and the pool's in-use bytes return to their baseline."""

from __future__ import annotations

import gc
import threading

import numpy as np

import dotcompute as dc

THREADS = 8
ROUNDS = 20


@dc.kernel
def _axpb(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], a: dc.float32, b: dc.float32):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + b


def test_threads_on_own_streams(accelerator):
    n = 4096
    x_host = np.arange(n, dtype=np.float32)
    dc.launch(_axpb, n, x_host, np.empty(n, np.float32), 1.0, 0.0, accelerator=accelerator)  # compile once
    accelerator.synchronize()
    gc.collect()
    baseline = accelerator.memory.stats()["in_use"]
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(t: int) -> None:
        try:
            stream = accelerator.stream()
            start.wait()
            for r in range(ROUNDS):
                size = n + 64 * ((t * ROUNDS + r) % 7)  # several size classes at once
                x = accelerator.asarray(np.arange(size, dtype=np.float32))
                out = accelerator.empty((size,), np.float32)
                dc.launch(_axpb, size, x, out, float(t), float(r), accelerator=accelerator, stream=stream)
                if r % 3 == 0:  # numpy arguments too (staged or run in place)
                    host_out = np.empty(size, np.float32)
                    dc.launch(_axpb, size, np.arange(size, dtype=np.float32), host_out, 2.0, float(t),
                              accelerator=accelerator, stream=stream)
                    np.testing.assert_array_equal(host_out, np.arange(size, dtype=np.float32) * 2 + t)
                stream.synchronize()
                got = out.numpy()
                np.testing.assert_array_equal(got, np.arange(size, dtype=np.float32) * t + r)
                del x, out
            stream.synchronize()
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    assert not any(th.is_alive() for th in threads), "a worker thread hung"
    if errors:
        raise errors[0]
    accelerator.synchronize()
    gc.collect()
    assert accelerator.memory.stats()["in_use"] == baseline
