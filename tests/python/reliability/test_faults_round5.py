"""Faults from the outside abuse run of issue 22: each ends in a clear exception or a documented
recovery (docs/reliability.md)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

import dotcompute as dc


def test_ctrl_c_during_run_does_not_let_the_next_run_overlap_the_interrupted_step() -> None:
    box = [0]
    started = threading.Event()
    release = threading.Event()

    def add_hundred() -> None:
        started.set()
        value = box[0]  # read-modify-write: two overlapping steps lose an update
        release.wait(30)
        box[0] = value + 100

    def interrupt_once_started() -> None:
        started.wait(30)
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C (the main thread handles it)

    p = dc.Pipeline(max_workers=4)
    p.add_host(add_hundred)
    threading.Thread(target=interrupt_once_started, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        p.run()
    assert not release.is_set()  # the interrupted step is still running
    started.clear()
    # released only after the second run has had the chance to start its own step
    timer = threading.Timer(0.2, release.set)
    timer.start()
    p.run()
    timer.join()
    assert box[0] == 200
    p.close()
