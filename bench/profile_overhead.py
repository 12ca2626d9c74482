"""Launch overhead per layer, outside and inside ``dc.profile()`` (and with the orchestration options).

    python bench/profile_overhead.py [--launches 20000] [--rounds 7] [--json bench/results/profile_overhead.json]

Prints microseconds per launch of a one-element kernel on cpu:0 with buffer arguments (the hot
path), best of ``--rounds`` rounds, each layer from the native call up (the pybind11 plan call
the normal path makes, the fast path's native call and its Python gate, then the entry points),
and numpy's ufunc call (``np.add(h, a, out=h)`` on a one-element array) beside them as the
yardstick. The rounds
interleave the rows (round 1 of every row, then round 2, ...) so load that comes and goes on a
shared machine touches every row alike. A measurement, never pass/fail.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import time
from collections.abc import Callable

import numpy as np

import dotcompute as dc
from dotcompute.lang.launching import launch_kernel, signature_key
from dotcompute.runtime.fast_launch import attempt

_launch_module = importlib.import_module("dotcompute.launch")  # dc.launch is the function


@dc.kernel
def _touch(x: dc.Buffer[dc.float32], a: dc.float32) -> None:
    i = dc.global_id(0)
    x[i] = x[i] + a


def _round_us(fn: Callable[[], object], launches: int) -> float:
    t0 = time.perf_counter()
    for _ in range(launches):
        fn()
    return (time.perf_counter() - t0) / launches * 1e6


def _rows(acc: dc.Accelerator, x: dc.Buffer, a: np.float32) -> list[tuple[str, Callable[[], object], int]]:
    """(name, call, divisor of --launches) from the bottom layer up."""
    args = (x, a)
    entry = _touch._launches[(acc, signature_key(_touch, args), False)]
    h = np.zeros(1, np.float32)
    rows = [
        ("numpy np.add(h, a, out=h)", lambda: np.add(h, a, out=h), 1),
        ("native plan.launch", lambda: entry.plan.launch((1,), None, args, None), 1),
        # the launch fast path's native call (python/src/fast_launch.cpp), and its Python gate
        ("native FastLaunch", lambda: entry.fast(1, args), 1),
        ("fast_launch.attempt", lambda: attempt(acc, _touch, 1, args), 1),
        ("lang launch_kernel", lambda: launch_kernel(_touch, acc, (1,), None, args, None), 1),
        ("launch_on", lambda: _launch_module.launch_on(acc, _touch, 1, args), 1),
        ("acc.launch", lambda: acc.launch(_touch, 1, x, a), 1),
        ("dc.launch(accelerator=acc)", lambda: dc.launch(_touch, 1, x, a, accelerator=acc), 1),
        ("dc.launch", lambda: dc.launch(_touch, 1, x, a), 1),
    ]
    if "retries" in dc.launch.__code__.co_varnames:
        rows.append(("dc.launch(retries=1)", lambda: dc.launch(_touch, 1, x, a, retries=1), 1))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    ns = parser.parse_args()
    acc = dc.accelerator("cpu")
    x = acc.zeros(1, np.float32)
    a = np.float32(1.0)
    acc.launch(_touch, 1, x, a)
    acc.synchronize()
    rows = _rows(acc, x, a)
    best = {name: float("inf") for name, _, _ in rows}
    for _ in range(ns.rounds):
        for name, fn, div in rows:
            best[name] = min(best[name], _round_us(fn, ns.launches // div))
            acc.synchronize()
    if hasattr(dc, "profile"):
        with dc.profile():
            name = "acc.launch in dc.profile()"
            best[name] = min(_round_us(lambda: acc.launch(_touch, 1, x, a), ns.launches // 4)
                             for _ in range(ns.rounds))
    acc.synchronize()
    for name, us in best.items():
        print(f"{name:32s} {us:8.2f} us/launch")
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as f:
            json.dump({"unit": "us/launch", "machine": platform.processor() or platform.machine(),
                       "time": time.strftime("%Y-%m-%d %H:%M:%S"),
                       "load_average": [round(v, 2) for v in os.getloadavg()], "results": best}, f, indent=1)


if __name__ == "__main__":
    main()
