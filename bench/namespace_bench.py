"""The Array API namespace (issue 21): concat/stack/take/nonzero/unique_values/searchsorted on cpu:0
beside numpy, at 16M elements by default.

    python bench/namespace_bench.py               # 16M elements, best of 5
    python bench/namespace_bench.py --n 1000000   # a smaller size (a quick look)
    python bench/namespace_bench.py --devices cpu:0,opencl:0

Inputs are Buffers made before timing (numpy: the same data as numpy arrays); each timed call ends
with its result ready (the namespace functions return computed Buffers; a device is synchronised).
On cpu:0 the functions run numpy on the buffers' own memory (the host fast path), writing into the
result Buffer where numpy takes ``out=``; other devices run the namespace's portable kernels.
Writes bench/results/namespace.{json,md}. Measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Report, Result, best_time  # noqa: E402

import dotcompute as dc  # noqa: E402

ROWS = ("concat", "stack", "take", "nonzero", "unique_values", "searchsorted")


def _inputs(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "a": rng.standard_normal(n // 2).astype(np.float32),
        "b": rng.standard_normal(n // 2).astype(np.float32),
        "idx": rng.integers(0, n // 2, n).astype(np.int64),
        "mask": (rng.random(n) < 0.5).astype(np.float32),
        "ints": rng.integers(0, 1 << 16, n).astype(np.int32),  # 65,536 distinct values
        "sorted": np.sort(rng.standard_normal(n).astype(np.float32)),
        "values": rng.standard_normal(n).astype(np.float32),
    }


def _workloads(xp: object, d: dict[str, object]) -> dict[str, Callable[[], object]]:
    return {
        "concat": lambda: xp.concat([d["a"], d["b"]]),
        "stack": lambda: xp.stack([d["a"], d["b"]]),
        "take": lambda: xp.take(d["a"], d["idx"]),
        "nonzero": lambda: xp.nonzero(d["mask"]),
        "unique_values": lambda: xp.unique_values(d["ints"]),
        "searchsorted": lambda: xp.searchsorted(d["sorted"], d["values"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16 << 20, help="elements per input (default 16M)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--devices", default="cpu:0")
    parser.add_argument("--only", default=",".join(ROWS))
    args = parser.parse_args()
    rows = [r for r in args.only.split(",") if r]
    host = _inputs(args.n)
    report = Report()
    label = f"{args.n / (1 << 20):g}M"
    np_work = _workloads(np, host)
    for row in rows:
        t = best_time(np_work[row], repeat=args.repeat)
        report.add(Result(f"{row} {label}", "numpy", t * 1e3, "ms", False))
    for spec in args.devices.split(","):
        acc = dc.accelerator(spec)
        bufs = {k: acc.asarray(v) for k, v in host.items()}
        work = _workloads(dc, bufs)
        for row in rows:
            try:
                t = best_time(work[row], repeat=args.repeat, sync=acc.synchronize)
                report.add(Result(f"{row} {label}", f"dc {acc.id}", t * 1e3, "ms", False))
            except dc.DotComputeError as exc:  # a device without the path: recorded, not fatal
                report.add(Result(f"{row} {label}", f"dc {acc.id}", None, "ms", False, f"skipped ({exc})"))
    report.write_named(HERE / "results", "namespace", {"n": args.n},
                       note="Array API namespace rows ({time}, {cpus} CPUs): best-of-N milliseconds, lower is "
                            "better.")


if __name__ == "__main__":
    main()
