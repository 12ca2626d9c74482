"""Array expressions: fused ``a * x + y * y - 3.0`` against a hand-written kernel and numpy.

    python bench/expr_bench.py                    # 16M float32, every device
    python bench/expr_bench.py --n 1000000 --repeat 3 --devices cpu:0

Rows, per device: ``dc.sum(a*x + y*y - 3.0)`` (ONE fused kernel) beside a hand-written fused
kernel followed by ``dc.sum`` and beside numpy (which makes temporaries); the materialised
``z = a*x + y*y - 3.0`` beside the hand-written kernel and numpy; then the first evaluation of a
new expression in a fresh process (generation + compilation) and of the same expression in
another fresh process that finds it in the disk cache. Writes bench/results/expressions.json
(``--out`` names another file). Measurements, never pass/fail.

Math modes (issue 22): expressions compute numpy's bits (no contraction) unless a ``@dc.fuse``
function asks for ``contract=True`` (``a*x + ...`` may become FMAs) or ``fastmath=True``. The
materialised workload runs as ``@dc.fuse`` and as the hand-written kernel in each of the three modes,
with the largest difference from the IEEE result (relative, in units of float32's epsilon).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import dotcompute as dc

OUT = Path(__file__).resolve().parent / "results" / "expressions.json"


def _hand(**options: bool) -> dc.Kernel:
    """The hand-written fused kernel, compiled with ``options`` (contract=, fastmath=)."""
    @dc.kernel(name="hand_fused", **options)
    def hand_fused(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], z: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < z.shape[0]:
            z[i] = a * x[i] + y[i] * y[i] - 3.0

    return hand_fused


hand_fused = _hand()
MATH_MODES = {"contract=True": _hand(contract=True), "fastmath=True": _hand(fastmath=True)}


def best(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


FIRST_CALL = """
import time, numpy as np
t0 = time.perf_counter()
import dotcompute as dc
acc = dc.accelerator({dev!r})
x = acc.asarray(np.ones(1000, np.float32)); y = acc.asarray(np.ones(1000, np.float32))
t1 = time.perf_counter()
z = (x * {c} + dc.exp(y) * y - 3.0) / (y + 2.0)
z.numpy()
t2 = time.perf_counter()
print((t2 - t1) * 1e3)
"""


def first_call(dev: str, cache: str, c: float) -> float:
    env = dict(os.environ, DOTCOMPUTE_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(dev=dev, c=c)], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--devices", default="")
    ap.add_argument("--out", type=Path, default=OUT, help="the JSON file to write")
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    hx, hy = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a = np.float32(2.5)
    rows = []

    def row(workload: str, framework: str, ms: float, note: str = "") -> None:
        gbs = 3 * 4 * n / (ms * 1e-3) / 1e9 if "materialised" in workload else 2 * 4 * n / (ms * 1e-3) / 1e9
        rows.append({"workload": workload, "framework": framework, "ms": round(ms, 3), "GB/s": round(gbs, 2),
                     "note": note})
        print(f"  {workload:<34} {framework:<30} {ms:9.2f} ms  {gbs:7.2f} GB/s  {note}", flush=True)

    print(f"n = {n} float32")
    row("sum(a*x + y*y - 3) ", "numpy", best(lambda: float(np.sum(a * hx + hy * hy - np.float32(3.0))), args.repeat))
    row("z = a*x + y*y - 3 materialised", "numpy", best(lambda: a * hx + hy * hy - np.float32(3.0), args.repeat))
    wanted = [d for d in args.devices.split(",") if d]
    for acc in dc.devices():
        if not wanted or acc.id in wanted:
            bench_device(acc, a, hx, hy, n, args.repeat, rng, row, rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": {"machine": platform.machine(), "n": n,
                                             "time": time.strftime("%Y-%m-%d %H:%M:%S")}, "rows": rows}, indent=2))
    print(f"wrote {args.out}")


def bench_device(acc: dc.Accelerator, a: np.float32, hx: np.ndarray, hy: np.ndarray, n: int, repeat: int,
                 rng: np.random.Generator, row: object, rows: list) -> None:
    """The fused and hand-written rows for one accelerator."""
    x, y = acc.asarray(hx), acc.asarray(hy)
    z = acc.empty(n, np.float32)

    def fused_sum() -> float:
        return float(dc.sum(a * x + y * y - 3.0))

    def hand_sum() -> float:
        acc.launch(hand_fused, n, a, x, y, z)
        return float(dc.sum(z))

    def fused_z() -> None:
        w = a * x + y * y - 3.0
        w._native  # noqa: B018 -- evaluates (one kernel) without a host copy
        acc.synchronize()

    def into_z() -> None:
        z[...] = a * x + y * y - 3.0  # the same kernel shape, written into an existing buffer
        acc.synchronize()

    def hand_z() -> None:
        acc.launch(hand_fused, n, a, x, y, z)
        acc.synchronize()

    ref = float(np.sum(a * hx.astype(np.float64) + hy.astype(np.float64) ** 2 - 3.0))
    got = fused_sum()
    note = f"rel. err {abs(got - ref) / abs(ref):.1e}"
    row("sum(a*x + y*y - 3) ", f"dc.sum(expr) {acc.id}", best(fused_sum, repeat), note)
    row("sum(a*x + y*y - 3) ", f"hand kernel + dc.sum {acc.id}", best(hand_sum, repeat))
    row("z = a*x + y*y - 3 materialised", f"expression {acc.id}", best(fused_z, repeat))
    row("z = a*x + y*y - 3 materialised", f"z[...] = expression {acc.id}", best(into_z, repeat))
    row("z = a*x + y*y - 3 materialised", f"hand kernel {acc.id}", best(hand_z, repeat))
    ieee = z.numpy().copy()
    eps = np.finfo(np.float32).eps
    for mode, options in (("IEEE", {}), ("contract=True", {"contract": True}), ("fastmath=True", {"fastmath": True})):
        fused = dc.fuse(lambda x, y: a * x + y * y - 3.0, **options)

        def fuse_z(fused: Any = fused) -> Any:
            out = fused(x, y)  # Buffers in: a Buffer out, computed by the one recorded kernel
            acc.synchronize()
            return out

        ms = best(fuse_z, repeat)
        diff = np.abs(fuse_z().numpy().astype(np.float64) - ieee) / np.maximum(np.abs(ieee), 1.0)
        row("z = a*x + y*y - 3 materialised", f"@dc.fuse({mode}) {acc.id}", ms,
            f"max diff from IEEE {diff.max() / eps:.1f} eps, {np.count_nonzero(diff)} of {n} differ")
    for mode, kernel in MATH_MODES.items():
        def mode_z(kernel: dc.Kernel = kernel) -> None:
            acc.launch(kernel, n, a, x, y, z)
            acc.synchronize()

        ms = best(mode_z, repeat)
        diff = np.abs(z.numpy().astype(np.float64) - ieee) / np.maximum(np.abs(ieee), 1.0)
        row("z = a*x + y*y - 3 materialised", f"hand kernel {mode} {acc.id}", ms,
            f"max diff from IEEE {diff.max() / eps:.1f} eps, {np.count_nonzero(diff)} of {n} differ")
    with tempfile.TemporaryDirectory() as cache:
        c = float(rng.integers(1, 10**6))  # a constant baked into no kernel: structure decides
        cold = first_call(acc.id, cache, c)
        warm = first_call(acc.id, cache, c + 1)
    rows.append({"workload": "first evaluation", "framework": acc.id, "compile_ms": round(cold, 2),
                 "disk_cache_hit_ms": round(warm, 2)})
    print(f"  first evaluation of a new expression on {acc.id}: {cold:.1f} ms (generate + compile); "
          f"in a new process from the disk cache: {warm:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
