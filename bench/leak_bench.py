"""RSS growth over many launches with numpy arguments, per accelerator (issue 8's leak check).

    python bench/leak_bench.py [launches]

Prints one line per device: launches, seconds, RSS before and after, growth per launch.
tests/python/reliability/test_leak.py bounds the same growth (generously) in CI.
"""

from __future__ import annotations

import gc
import sys
import time

import numpy as np

import dotcompute as dc


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@dc.kernel
def scale(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], a: dc.float32):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i]


def main() -> None:
    launches = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    x = np.arange(256, dtype=np.float32)
    out = np.empty(256, np.float32)
    print(f"{'device':<10} {'launches':>9} {'seconds':>8} {'RSS before':>12} {'RSS after':>12} {'bytes/launch':>13}")
    for acc in dc.devices():
        for _ in range(500):
            dc.launch(scale, 256, x, out, 2.0, accelerator=acc)
        acc.synchronize()
        gc.collect()
        before = rss_bytes()
        t0 = time.perf_counter()
        for _ in range(launches):
            dc.launch(scale, 256, x, out, 2.0, accelerator=acc)
        acc.synchronize()
        seconds = time.perf_counter() - t0
        gc.collect()
        after = rss_bytes()
        per = (after - before) / launches
        print(f"{acc.id:<10} {launches:>9} {seconds:>8.2f} {before:>12} {after:>12} {per:>13.1f}")


if __name__ == "__main__":
    main()
