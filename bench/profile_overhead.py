"""Launch overhead outside and inside ``dc.profile()`` (and with the orchestration options).

    python bench/profile_overhead.py [--launches 20000] [--json bench/results/profile_overhead.json]

Prints microseconds per launch of a one-element kernel on cpu:0 with buffer arguments
(the hot path), best of five rounds. A measurement, never pass/fail.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable

import numpy as np

import dotcompute as dc


@dc.kernel
def _touch(x: dc.Buffer[dc.float32], a: dc.float32) -> None:
    i = dc.global_id(0)
    x[i] = x[i] + a


def _per_launch_us(fn: Callable[[], None], launches: int) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(launches):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best / launches * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    ns = parser.parse_args()
    acc = dc.accelerator("cpu")
    x = acc.zeros(1, np.float32)
    a = np.float32(1.0)
    acc.launch(_touch, 1, x, a)
    acc.synchronize()
    rows = [("acc.launch", _per_launch_us(lambda: acc.launch(_touch, 1, x, a), ns.launches)),
            ("dc.launch", _per_launch_us(lambda: dc.launch(_touch, 1, x, a), ns.launches))]
    if hasattr(dc, "profile"):
        with dc.profile():
            rows.append(("acc.launch in dc.profile()",
                         _per_launch_us(lambda: acc.launch(_touch, 1, x, a), ns.launches // 4)))
        if "retries" in dc.launch.__code__.co_varnames:
            rows.append(("dc.launch(retries=1)",
                         _per_launch_us(lambda: dc.launch(_touch, 1, x, a, retries=1), ns.launches)))
    acc.synchronize()
    for name, us in rows:
        print(f"{name:32s} {us:8.2f} us/launch")
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as f:
            json.dump({"unit": "us/launch", "machine": platform.processor() or platform.machine(),
                       "results": dict(rows)}, f, indent=1)


if __name__ == "__main__":
    main()
