"""Waits release the GIL: Python threads keep running while one thread blocks on the device."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import dotcompute as dc

SLEEP = (Path(__file__).parent / "kernels" / "sleep.cpp").read_text()


def _python_ran_during(block) -> bool:
    """Whether a busy Python thread ran between 50 and 250 ms into ``block()`` (which lasts ~300 ms).

    With the GIL held through the wait, the other thread could run at most one
    switch interval (5 ms) after the start, never in that window.
    """
    seen = False
    stop = threading.Event()
    window: list[float] = []

    def spin() -> None:
        nonlocal seen
        while not stop.is_set():
            if window and window[0] <= time.perf_counter() <= window[1]:
                seen = True

    t = threading.Thread(target=spin)
    t.start()
    try:
        start = time.perf_counter()
        window[:] = [start + 0.05, start + 0.25]
        block()
        assert time.perf_counter() - start >= 0.25, "the kernel did not block long enough to tell"
    finally:
        stop.set()
        t.join()
    return seen


def test_stream_launch_and_synchronize_release_the_gil(cpu):
    k = dc.RawKernel(SLEEP, "sleep_ms")
    k.compile(cpu)
    s = cpu.stream()

    def launch_and_wait() -> None:
        # Tiny launches may run inline on the calling thread: the launch or the wait blocks, both without the GIL.
        dc.launch(k, 1, 300, accelerator=cpu, stream=s)
        s.synchronize()

    assert _python_ran_during(launch_and_wait)


def test_synchronous_launch_with_arrays_releases_the_gil(cpu):
    import numpy as np

    k = dc.RawKernel(SLEEP, "sleep_ms")
    k.compile(cpu)
    dummy = np.zeros(1, np.int64)
    assert _python_ran_during(lambda: dc.launch(k, 1, 300, dummy, accelerator=cpu))
