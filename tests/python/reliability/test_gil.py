"""A destructor that waits for the device (a stream with queued work, dropped by Python) must
let other Python threads run meanwhile: the core marks the wait as a blocking section and the
module releases the GIL there."""

from __future__ import annotations

import threading
import time

import numpy as np

import dotcompute as dc


@dc.kernel
def _spin(flag: dc.Buffer[dc.int64], spins: dc.int64):
    acc = 0
    for i in range(spins):
        acc = (acc * 31 + i) % 1000003
    flag[1] = acc
    flag[0] = 1


def test_stream_destructor_releases_the_gil(accelerator):
    flag = accelerator.zeros((2,), np.int64)
    dc.launch(_spin, 1, flag, 10, accelerator=accelerator)  # compiled before the measurement
    accelerator.synchronize()
    stamps: list[int] = []  # when the other thread ran (it can only run while it holds the GIL)
    window: dict[str, int] = {}
    stop = threading.Event()

    def other() -> None:
        last = 0
        while not stop.is_set():
            now = time.perf_counter_ns()
            if now - last > 100_000:
                stamps.append(now)
                last = now

    def drop() -> None:
        s = accelerator.stream()
        scratch = accelerator.zeros((2,), np.int64)  # the only buffer that remembers the stream
        # many items: queued on the stream (not run inline), so ~Stream has to wait for it
        dc.launch(_spin, 1 << 16, scratch, 3000, accelerator=accelerator, stream=s)
        window["start"] = time.perf_counter_ns()
        del s, scratch  # the destructors run here, waiting for the kernel
        window["end"] = time.perf_counter_ns()

    runner = threading.Thread(target=other)
    runner.start()
    try:
        dropper = threading.Thread(target=drop)
        dropper.start()
        dropper.join(timeout=300)
    finally:
        stop.set()
        runner.join()
    # With the GIL held through the wait, the other thread could run only at the window's edges
    # (a thread switch just before or after the destructor), never in its middle third.
    third = (window["end"] - window["start"]) // 3
    middle = [t for t in stamps if window["start"] + third < t < window["end"] - third]
    assert middle, "no other thread ran while the stream's destructor waited for the device"
