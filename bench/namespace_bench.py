"""The Array API namespace (issue 21): creation, manipulation, searching, set, sorting functions
timed beside numpy in the same run, 16M elements by default.

    python bench/namespace_bench.py                            # cpu:0, 16M elements, median of 5
    python bench/namespace_bench.py --n 1000000                # a smaller size (a quick look)
    python bench/namespace_bench.py --devices cpu:0,opencl:0@1M --only sort,take
    python bench/namespace_bench.py --name namespace_bench_opencl --devices opencl:0@4M

Each device entry may name its own size after ``@`` (``opencl:0@1M``: PoCL on 2 cores takes minutes
per row at 16M); numpy is timed at every size used. Inputs are Buffers made before timing (numpy:
the same data as numpy arrays). Each repetition times numpy and then dotcompute on the same
workload, alternating, so both see the same machine load; the figures are medians (of at most 3
where one call takes over 2 s). A timed
dotcompute call ends with its result computed (a pending expression, what ``dc.where`` and
``dc.clip`` return, is evaluated; the device is synchronised). Beside each device's time is its
ratio to numpy's (below 1: faster than numpy) and, from one extra call inside ``dc.profile()``,
the copies it made between host and device (``d2h``/``h2d``: count and bytes; on cpu:0 there
are none by construction; elsewhere a d2h beyond the few numbers that size a data-dependent
result — ``nonzero``, ``unique_*`` — or check indices would be a host round trip).

Writes bench/results/<name>.{json,md} (default name: namespace_bench). Measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Report, Result  # noqa: E402

import dotcompute as dc  # noqa: E402
from dotcompute.expr.lazy import is_pending  # noqa: E402
from dotcompute.namespace._common import concrete  # noqa: E402

ROWS = ("zeros", "ones", "full", "arange", "linspace", "eye", "asarray", "astype", "reshape", "concat",
        "stack", "flip", "roll", "repeat", "tile", "take", "take_along_axis", "nonzero", "count_nonzero",
        "unique_values", "unique_counts", "unique_inverse", "unique_all", "searchsorted", "sort", "argsort",
        "cumulative_sum", "where", "clip")


def _inputs(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    side = int(round(n ** 0.5))
    return {
        "a": rng.standard_normal(n // 2).astype(np.float32),
        "b": rng.standard_normal(n // 2).astype(np.float32),
        "x": rng.standard_normal(n).astype(np.float32),
        "m2": rng.standard_normal((side, n // side)).astype(np.float32),
        "small": rng.standard_normal(n // 4).astype(np.float32),
        "idx": rng.integers(0, n // 2, n).astype(np.int64),
        "idx2": rng.integers(0, n // side, (side, n // side)).astype(np.int64),
        "mask": (rng.random(n) < 0.5).astype(np.float32),
        "ints": rng.integers(0, 1 << 16, n).astype(np.int32),  # 65,536 distinct values
        "sorted": np.sort(rng.standard_normal(n).astype(np.float32)),
        "cond": rng.random(n) < 0.5,
    }


def _workloads(xp: Any, d: dict[str, Any], n: int, device: Any) -> dict[str, Callable[[], object]]:
    """The same calls for numpy (``device`` None) and for dotcompute (``device`` an Accelerator)."""
    on = {} if device is None else {"device": device}
    side = d["m2"].shape[0]
    return {
        "zeros": lambda: xp.zeros(n, dtype=xp.float32, **on),
        "ones": lambda: xp.ones(n, dtype=xp.float32, **on),
        "full": lambda: xp.full(n, 2.5, dtype=xp.float32, **on),
        "arange": lambda: xp.arange(n, dtype=xp.int64, **on),
        "linspace": lambda: xp.linspace(0.0, 1.0, n, dtype=xp.float32, **on),
        "eye": lambda: xp.eye(side, dtype=xp.float32, **on),
        "asarray": lambda: xp.asarray(d["host"], copy=True, **on),
        "astype": lambda: xp.astype(d["x"], xp.float64),
        "reshape": lambda: xp.reshape(d["x"], (side, n // side)),
        "concat": lambda: xp.concat([d["a"], d["b"]]),
        "stack": lambda: xp.stack([d["a"], d["b"]]),
        "flip": lambda: xp.flip(d["x"]),
        "roll": lambda: xp.roll(d["x"], 12345),
        "repeat": lambda: xp.repeat(d["small"], 4),
        "tile": lambda: xp.tile(d["small"], (4,)),
        "take": lambda: xp.take(d["a"], d["idx"]),
        "take_along_axis": lambda: xp.take_along_axis(d["m2"], d["idx2"], axis=1),
        "nonzero": lambda: xp.nonzero(d["mask"]),
        "count_nonzero": lambda: xp.count_nonzero(d["mask"]),
        "unique_values": lambda: xp.unique_values(d["ints"]),
        "unique_counts": lambda: xp.unique_counts(d["ints"]),
        "unique_inverse": lambda: xp.unique_inverse(d["ints"]),
        "unique_all": lambda: xp.unique_all(d["ints"]),
        "searchsorted": lambda: xp.searchsorted(d["sorted"], d["x"]),
        "sort": lambda: xp.sort(d["x"]),
        "argsort": lambda: xp.argsort(d["x"]),
        "cumulative_sum": lambda: xp.cumulative_sum(d["x"]),
        "where": lambda: xp.where(d["cond"], d["x"], 0.0),
        "clip": lambda: xp.clip(d["x"], -1.0, 1.0),
    }


def _ready(result: Any) -> Any:
    """A dotcompute result computed (pending expressions evaluated; views, as numpy's, stay views),
    tuples element by element."""
    if isinstance(result, tuple):
        return tuple(_ready(r) for r in result)
    return concrete(result) if is_pending(result) else result


def _size(text: str) -> int:
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:].upper(), 1)
    return int(float(text[:-1] if scale != 1 else text) * scale)


def _label(n: int) -> str:
    return f"{n / (1 << 20):g}M" if n >= 1 << 20 else f"{n / (1 << 10):g}K"


def _time(fn: Callable[[], object], sync: Callable[[], object] | None) -> float:
    t0 = time.perf_counter()
    fn()
    if sync is not None:
        sync()
    return time.perf_counter() - t0


def _copies(fn: Callable[[], object], acc: Any) -> dict[str, tuple[int, int]]:
    """Copies of one call between host and device, by direction: (count, bytes), from ``dc.profile()``."""
    with dc.profile() as prof:
        fn()
        acc.synchronize()
    return {way: (sum(1 for t in prof.transfers if t.direction == way),
                  sum(int(t.bytes) for t in prof.transfers if t.direction == way)) for way in ("d2h", "h2d")}


def _run_device(report: Report, spec: str, n: int, rows: list[str], repeat: int) -> None:
    acc = dc.accelerator(spec)
    host = _inputs(n)
    np_work = _workloads(np, {**host, "host": host["x"]}, n, None)
    bufs: dict[str, Any] = {k: acc.asarray(v) for k, v in host.items()}
    bufs["host"] = host["x"]  # asarray's input is host data, uploaded once per call
    work = _workloads(dc, bufs, n, acc)
    label = _label(n)
    for row in rows:
        ours = work[row]

        def call(f: Callable[[], object] = ours) -> object:
            return _ready(f())

        try:
            first = _time(call, acc.synchronize)  # compiles, warms caches (not counted)
        except (dc.DotComputeError, TypeError, ValueError) as exc:  # a device without the path: recorded
            report.add(Result(f"{row} {label}", f"dc {acc.id}", None, "ms", False, f"skipped ({exc})"))
            continue
        np_work[row]()
        ts_np, ts_dc = [], []
        for _ in range(repeat if first < 2.0 else min(repeat, 3)):  # alternating: both see the same load
            ts_np.append(_time(np_work[row], None))
            ts_dc.append(_time(call, acc.synchronize))
        t_np, t_dc = statistics.median(ts_np), statistics.median(ts_dc)
        moved = _copies(call, acc)
        report.add(Result(f"{row} {label}", f"numpy ({acc.id} run)", t_np * 1e3, "ms", False))
        report.add(Result(f"{row} {label}", f"dc {acc.id}", t_dc * 1e3, "ms", False))
        report.add(Result(f"{row} {label}", f"dc/numpy {acc.id}", t_dc / t_np, "x", False))
        for way, (count, nbytes) in moved.items():
            report.add(Result(f"{row} {label}", f"{way} {acc.id}", float(count), f"copies ({nbytes} B)", False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default=str(16 << 20), help="elements per input (default 16M; 1M, 4M, 500K)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--devices", default="cpu:0", help="comma-separated specs, each optionally @SIZE")
    parser.add_argument("--only", default=",".join(ROWS))
    parser.add_argument("--name", default="namespace_bench", help="results file stem in bench/results")
    args = parser.parse_args()
    rows = [r for r in args.only.split(",") if r]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        parser.error(f"--only: unknown rows {unknown}; known: {', '.join(ROWS)}")
    report = Report()
    sizes = {}
    for entry in args.devices.split(","):
        spec, _, size = entry.partition("@")
        n = _size(size or args.n)
        sizes[spec] = n
        _run_device(report, spec, n, rows, args.repeat)
    report.write_named(HERE / "results", args.name, {"sizes": sizes, "repeat": args.repeat},
                       note="Array API namespace beside numpy ({time}, {cpus} CPUs): median milliseconds of "
                            "alternating numpy/dotcompute calls in one run, lower is better; dc/numpy below 1 is "
                            "faster than numpy; d2h/h2d: copies between device and host in one call (dc.profile).")


if __name__ == "__main__":
    main()
