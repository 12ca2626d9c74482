"""The namespace's common operations on an OpenCL CPU device (PoCL) beside cpu:0, in one run (issue 24).

    python bench/pocl_vs_cpu.py                      # 1M float32 elements, median of 5
    python bench/pocl_vs_cpu.py --n 4000000 --only sum,argmin_axis1

Both devices run on the same cores, so their ratio is the cost of the device path itself (kernel
shape, dispatch, copies) rather than of the hardware. Each repetition times cpu:0 then opencl:0 on
the same workload (inputs made before timing, the result forced: a pending expression is
evaluated and the device synchronised), each call after a --pause (default 0.15 s): OpenBLAS's
threads keep spinning for about 0.1 s after a call and took the cores from whichever device ran
next (matmul 1024² on opencl:0 right after cpu:0's: 57 ms, after 0.3 s: 49, alone: 31-38, one
loaded run each); figures are medians. The first call of each workload on
each device is a warm-up (kernel compiles are not timed; bench/cold_compile.py times those).
Writes bench/results/pocl_vs_cpu.{json,md} and lists every workload above --limit x (default 3).
Measurements, never pass/fail; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import dotcompute as dc
from dotcompute.expr.lazy import is_pending
from dotcompute.namespace._common import concrete

HERE = Path(__file__).resolve().parent


def _workloads(n: int) -> dict[str, Callable[[dict[str, Any]], Any]]:
    return {
        "add": lambda d: d["x"] + d["y"],
        "mul": lambda d: d["x"] * d["y"],
        "x**2": lambda d: d["x"] ** 2,
        "x**3": lambda d: d["x"] ** 3,
        "x**-2": lambda d: d["x"] ** -2,
        "x**3 f64": lambda d: d["x64"] ** 3,
        "x**8 f64": lambda d: d["x64"] ** 8,
        "x**0.5": lambda d: abs(d["x"]) ** 0.5,
        "sqrt": lambda d: dc.sqrt(abs(d["x"])),
        "exp": lambda d: dc.exp(d["x"]),
        "where": lambda d: dc.where(d["x"] > 0, d["x"], d["y"]),
        "clip": lambda d: dc.clip(d["x"], -0.5, 0.5),
        "astype f64": lambda d: d["x"].astype(np.float64),
        "sum": lambda d: dc.sum(d["x"]),
        "mean": lambda d: dc.mean(d["x"]),
        "min": lambda d: dc.min(d["x"]),
        "max": lambda d: dc.max(d["x"]),
        "argmin": lambda d: dc.argmin(d["x"]),
        "argmax": lambda d: dc.argmax(d["x"]),
        "sum(a*b+c)": lambda d: dc.sum(d["x"] * d["y"] + 1.0),
        "sum axis=1 (n/8, 8)": lambda d: dc.sum(d["m8"], axis=1),
        "sum axis=0 (n/8, 8)": lambda d: dc.sum(d["m8"], axis=0),
        "min axis=1 (n/8, 8)": lambda d: dc.min(d["m8"], axis=1),
        "argmin axis=1 (n/8, 8)": lambda d: dc.argmin(d["m8"], axis=1),
        "argmax axis=1 (n/8, 8)": lambda d: dc.argmax(d["m8"], axis=1),
        "argmax axis=0 (n/8, 8)": lambda d: dc.argmax(d["m8"], axis=0),
        "sum axis=1 (sq)": lambda d: dc.sum(d["sq"], axis=1),
        "sum axis=0 (sq)": lambda d: dc.sum(d["sq"], axis=0),
        "argmax axis=1 (sq)": lambda d: dc.argmax(d["sq"], axis=1),
        "mean axis=0 (sq)": lambda d: dc.mean(d["sq"], axis=0),
        "sum axis=0 (odd)": lambda d: dc.sum(d["odd"], axis=0),
        "std": lambda d: dc.std(d["x"]),
        "cumulative_sum": lambda d: dc.cumulative_sum(d["x"]),
        "sort": lambda d: dc.sort(d["x"]),
        "argsort": lambda d: dc.argsort(d["x"]),
        "matmul 256": lambda d: d["a256"] @ d["b256"],
        "matmul 1024": lambda d: d["a1024"] @ d["b1024"],
        "transpose copy (sq)": lambda d: dc.permute_dims(d["sq"], (1, 0)) + 0,
        "concat": lambda d: dc.concat([d["x"], d["y"]]),
        "flip": lambda d: dc.flip(d["x"]),
        "take": lambda d: dc.take(d["x"], d["idx"]),
        "nonzero": lambda d: dc.nonzero(d["x"] > 0),
        "count_nonzero": lambda d: dc.count_nonzero(d["x"] > 0),
        "searchsorted": lambda d: dc.searchsorted(d["sorted"], d["y"]),
        "x[::2] copy": lambda d: d["x"][::2] + 0,
    }


def _inputs(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    side = int(round(n ** 0.5))
    return {
        "x": rng.standard_normal(n).astype(np.float32),
        "y": rng.standard_normal(n).astype(np.float32),
        "m8": rng.standard_normal((n // 8, 8)).astype(np.float32),
        "sq": rng.standard_normal((side, side)).astype(np.float32),
        "odd": rng.standard_normal((side - 3, side + 1)).astype(np.float32),  # columns not a multiple of 8
        "x64": rng.standard_normal(n),
        "a256": rng.standard_normal((256, 256)).astype(np.float32),
        "b256": rng.standard_normal((256, 256)).astype(np.float32),
        "a1024": rng.standard_normal((1024, 1024)).astype(np.float32),
        "b1024": rng.standard_normal((1024, 1024)).astype(np.float32),
        "idx": rng.integers(0, n, n // 4).astype(np.int64),
        "sorted": np.sort(rng.standard_normal(n).astype(np.float32)),
    }


def _force(acc: Any, out: Any) -> None:
    """Evaluates pending expressions among the results and waits for the device."""
    for o in out if isinstance(out, tuple) else (out,):
        if is_pending(o):
            concrete(o)
    acc.synchronize()


def _time(acc: Any, fn: Callable[[dict[str, Any]], Any], data: dict[str, Any], pause: float = 0.0) -> float:
    time.sleep(pause)
    t0 = time.perf_counter()
    out = fn(data)
    _force(acc, out)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1 << 20, help="elements per 1-d input (default 1M)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--device", default="opencl:0")
    ap.add_argument("--only", default=None,
                    help="comma list of workload names (';' list where a name holds a comma: 'sum axis=0 (n/8, 8)')")
    ap.add_argument("--limit", type=float, default=3.0, help="list workloads whose ratio is above this")
    ap.add_argument("--pause", type=float, default=0.15, help="seconds of idle before each timed call")
    ap.add_argument("--name", default="pocl_vs_cpu", help="results file stem in bench/results")
    args = ap.parse_args()
    work = _workloads(args.n)
    if args.only:
        names = args.only.split(";") if ";" in args.only else args.only.split(",")
        work = {k: v for k, v in work.items() if k in names}
    host = _inputs(args.n)
    cpu, dev = dc.accelerator("cpu:0"), dc.accelerator(args.device)
    data = {a.id: {k: a.asarray(v) for k, v in host.items()} for a in (cpu, dev)}
    rows = []
    load0 = os.getloadavg()
    for name, fn in work.items():
        times: dict[str, list[float]] = {cpu.id: [], dev.id: []}
        try:
            for a in (cpu, dev):  # warm-up: compiles stay out of the figures
                _time(a, fn, data[a.id])
            for _ in range(args.repeat):
                for a in (cpu, dev):
                    times[a.id].append(_time(a, fn, data[a.id], args.pause))
        except Exception as exc:  # noqa: BLE001 - a workload a device refuses is reported, not fatal
            rows.append({"workload": name, "error": f"{type(exc).__name__}: {exc}"[:200]})
            print(f"{name:26s} error {exc}", flush=True)
            continue
        c, d = statistics.median(times[cpu.id]) * 1e3, statistics.median(times[dev.id]) * 1e3
        rows.append({"workload": name, "cpu_ms": c, "device_ms": d, "ratio": d / c})
        print(f"{name:26s} cpu:0 {c:9.3f} ms  {dev.id} {d:9.3f} ms  {d / c:7.2f} x", flush=True)
    meta = {"time": time.strftime("%Y-%m-%d %H:%M:%S"), "n": args.n, "device": dev.id, "repeat": args.repeat,
            "cpus": os.cpu_count(), "load_before": [round(v, 2) for v in load0],
            "load_after": [round(v, 2) for v in os.getloadavg()]}
    out = HERE / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    lines = [f"| workload | cpu:0 | {dev.id} | {dev.id} / cpu:0 |", "|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['workload']} | | error: {r['error']} | |")
        else:
            flag = f" **>{args.limit:g}x**" if r["ratio"] > args.limit else ""
            lines.append(f"| {r['workload']} | {r['cpu_ms']:.3f} ms | {r['device_ms']:.3f} ms | "
                         f"{r['ratio']:.2f} x{flag} |")
    over = [r["workload"] for r in rows if r.get("ratio", 0) > args.limit]
    note = (f"{dev.id} beside cpu:0 ({meta['time']}, {meta['cpus']} CPUs, {args.n:,} float32 elements per 1-d "
            f"input, median of {args.repeat} alternating calls after a warm-up, each after {args.pause:g} s idle; "
            f"load average "
            f"{', '.join(map(str, meta['load_before']))} before, {', '.join(map(str, meta['load_after']))} after). "
            f"Above {args.limit:g}x: {', '.join(over) if over else 'none'}.")
    (out / f"{args.name}.md").write_text(note + "\n\n" + "\n".join(lines) + "\n")
    print(note)


if __name__ == "__main__":
    main()
