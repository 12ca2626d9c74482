"""Per-call cost of the namespace on small arrays (16 and 1,000 float32 elements) on cpu:0, beside
numpy on the same data: what a loop of small steps pays in dotcompute's Python layers (building an
expression, planning its kernel, launching, reading back) rather than in the arithmetic.

    python bench/small_ops.py [--rounds 7] [--calls 2000] [--out bench/results/small_ops]

Each row is the best of ``--rounds`` rounds of ``--calls`` calls, the rows interleaved round by
round (load that comes and goes touches every row alike); kernels are compiled in a warm-up first.
Writes OUT.json and OUT.md. A measurement, never pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import dotcompute as dc

HERE = Path(__file__).resolve().parent


def _rows(xp: Any, a: Any, b: Any) -> dict[str, Callable[[], object]]:
    """The workloads, written once for numpy and for dotcompute (``xp``): each forces its result."""
    def host(v: Any) -> np.ndarray:
        return np.asarray(v)

    def axpb(x: Any, y: Any) -> Any:
        return x * y + 1.5

    # @dc.fuse replays the recorded kernel for a known signature: no expression built or planned
    fused = dc.fuse(axpb) if xp is dc else axpb
    return {
        "a + b (dotcompute: pending)": lambda: a + b,
        "(a + b) to host": lambda: host(a + b),
        "(a * b + 1.5) to host": lambda: host(a * b + 1.5),
        "the same by @dc.fuse, to host": lambda: host(fused(a, b)),
        "float(sum(a))": lambda: float(xp.sum(a)),
        "float(sum(a * b))": lambda: float(xp.sum(a * b)),
        "sqrt(a * a + 1) to host": lambda: host(xp.sqrt(a * a + 1)),
        "max(a) - min(a)": lambda: float(xp.max(a) - xp.min(a)),
    }


def _best_us(fn: Callable[[], object], calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--out", default=str(HERE / "results" / "small_ops"), help="results path without suffix")
    args = ap.parse_args()
    acc = dc.accelerator("cpu:0")
    rng = np.random.default_rng(0)
    results = []
    for n in (16, 1000):
        ha = rng.standard_normal(n).astype(np.float32)
        hb = rng.standard_normal(n).astype(np.float32)
        da, db = acc.asarray(ha), acc.asarray(hb)
        ours, theirs = _rows(dc, da, db), _rows(np, ha, hb)
        for f in (*ours.values(), *theirs.values()):  # compile and warm up
            f()
        best: dict[tuple[str, str], float] = {}
        for _ in range(args.rounds):
            for name in ours:
                for side, fn in (("dotcompute", ours[name]), ("numpy", theirs[name])):
                    us = _best_us(fn, args.calls)
                    best[(name, side)] = min(best.get((name, side), us), us)
        for name in ours:
            row = {"n": n, "workload": name, "dotcompute_us": round(best[(name, "dotcompute")], 2),
                   "numpy_us": round(best[(name, "numpy")], 2)}
            results.append(row)
            print(f"n={n:5d}  {name:32s} dotcompute {row['dotcompute_us']:8.2f} us   numpy {row['numpy_us']:7.2f} us",
                  flush=True)
    meta = {"time": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "cpus": os.cpu_count(),
            "load_end": [round(v, 2) for v in os.getloadavg()], "rounds": args.rounds, "calls": args.calls,
            "dotcompute": dc.__version__ if hasattr(dc, "__version__") else "", "numpy": np.__version__}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": results}, indent=2) + "\n")
    lines = [f"Small arrays on cpu:0 beside numpy ({meta['time']}, {meta['cpus']} CPUs, load average at the end "
             f"{meta['load_end']}; best of {args.rounds} rounds of {args.calls} calls, microseconds per call)", "",
             "| n | workload | dotcompute | numpy |", "|---|---|---|---|"]
    lines += [f"| {r['n']} | {r['workload']} | {r['dotcompute_us']:.2f} | {r['numpy_us']:.2f} |" for r in results]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
