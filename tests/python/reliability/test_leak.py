"""20,000 launches with numpy arguments must not grow the process: every staging buffer, plan
lookup and event is given back (bench/leak_bench.py prints the figures)."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import dotcompute as dc

LAUNCHES = 20_000
WARMUP = 500
# Generous: a leak of even 1 KiB per launch (20 MB) fails, allocator noise and caches do not.
BOUND_BYTES = 16 << 20


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@dc.kernel
def _scale(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], a: dc.float32):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i]


def run(acc: dc.Accelerator, launches: int) -> None:
    x = np.arange(256, dtype=np.float32)
    out = np.empty(256, np.float32)
    for _ in range(launches):
        dc.launch(_scale, 256, x, out, 2.0, accelerator=acc)
    acc.synchronize()
    np.testing.assert_array_equal(out, x * 2)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_launches_with_numpy_arguments_do_not_leak(accelerator):
    run(accelerator, WARMUP)  # compile, fill the pool and the plan caches
    gc.collect()
    before = rss_bytes()
    run(accelerator, LAUNCHES)
    gc.collect()
    growth = rss_bytes() - before
    assert growth < BOUND_BYTES, f"RSS grew by {growth} bytes over {LAUNCHES} launches on {accelerator.id}"
