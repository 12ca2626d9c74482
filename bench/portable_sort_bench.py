"""The portable radix sort beside numpy and the default (vendor/host) path, in one run (issue 24).

    python bench/portable_sort_bench.py [--before COMMIT] [--devices cpu:0,opencl:0] [--n 4194304]

Per device and workload (sort of float32 normal keys, sort of int32 uniform keys, stable argsort of
float32 keys), interleaved rounds (numpy, then each dotcompute variant, then again), medians:

* ``numpy``: ``np.sort`` / ``np.argsort(kind="stable")`` of the host array;
* ``dc default``: ``dc.ops.sort`` with the default dispatch (cpu:0: numpy on the buffer's memory;
  PoCL: numpy on a host copy, the path the issue calls the vendor path there);
* ``dc portable``: ``dc.ops.sort`` under ``prefer("portable")``: the radix kernels;
* ``dc portable before``: with ``--before COMMIT``, the portable sort of that commit (its
  ops/sort.py and ops/sort_kernels.py loaded beside the current ones), for a before/after in one run.

Writes bench/results/portable_issue24/radix_bitcast/portable_sort.{json,md} and prints the table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _load_before(commit: str) -> Any:
    """The sort module of ``commit`` as ``dotcompute.ops.sort_before`` (its kernels as
    ``dotcompute.ops.sort_kernels_before``): real files, since kernels are read with inspect."""
    folder = Path(tempfile.mkdtemp(prefix="dc-sort-before-"))
    mods = {}
    for name in ("sort_kernels", "sort"):
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:python/dotcompute/ops/{name}.py"],
                              check=True, capture_output=True, text=True).stdout
        text = text.replace("from . import sort_kernels as sk", "from . import sort_kernels_before as sk")
        path = folder / f"{name}_before.py"
        path.write_text(text)
        full = f"dotcompute.ops.{name}_before"
        spec = importlib.util.spec_from_file_location(full, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        mod.__package__ = "dotcompute.ops"
        sys.modules[full] = mod
        spec.loader.exec_module(mod)
        mods[name] = mod
    return mods["sort"]


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=None, help="a commit whose portable sort runs beside the current one")
    ap.add_argument("--devices", default="cpu:0,opencl:0")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default=str(HERE / "results" / "portable_issue24" / "radix_bitcast"))
    args = ap.parse_args(argv)

    import dotcompute as dc
    from dotcompute.ops import dispatch

    before = _load_before(args.before) if args.before else None
    rng = np.random.default_rng(0)
    n = args.n
    data = {"sort f32": rng.standard_normal(n).astype(np.float32),
            "sort i32": rng.integers(-2**31, 2**31 - 1, n, dtype=np.int32),
            "argsort f32 (stable)": rng.standard_normal(n).astype(np.float32)}
    rows = []
    load_start = os.getloadavg()
    for dev in args.devices.split(","):
        acc = dc.accelerator(dev)
        for name, x in data.items():
            arg = name.startswith("argsort")
            b = acc.asarray(x)
            want = np.argsort(x, kind="stable") if arg else np.sort(x)

            def numpy_run(x: np.ndarray = x, arg: bool = arg) -> Any:
                return np.argsort(x, kind="stable") if arg else np.sort(x)

            def dc_run(mod: Any, path: str, b: Any = b, arg: bool = arg) -> Any:
                with dispatch.prefer(path):
                    r = mod.argsort(b) if arg else mod.sort(b)
                return r.numpy() if hasattr(r, "numpy") else r

            variants = {"numpy": numpy_run,
                        "dc default": lambda: dc_run(dc.ops, "auto"),
                        "dc portable": lambda: dc_run(dc.ops, "portable")}
            if before is not None:
                variants["dc portable before"] = lambda: dc_run(before, "portable")
            for label, fn in variants.items():  # warm-up (compiles) and a check of every variant
                got = fn()
                if not np.array_equal(got, want, equal_nan=not arg):
                    raise AssertionError(f"{dev} {name} {label}: wrong result")
            times: dict[str, list[float]] = {k: [] for k in variants}
            for _ in range(args.rounds):
                for label, fn in variants.items():
                    t = time.perf_counter()
                    fn()
                    times[label].append(time.perf_counter() - t)
            med = {k: _median_ms(v) for k, v in times.items()}
            row = {"device": dev, "workload": name, "n": n, **{f"{k} ms": round(v, 2) for k, v in med.items()},
                   "portable / numpy": round(med["dc portable"] / med["numpy"], 2),
                   "portable / default": round(med["dc portable"] / med["dc default"], 2)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    load_end = os.getloadavg()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "load_start": load_start,
            "load_end": load_end, "before": args.before, "rounds": args.rounds}
    (out / "portable_sort.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    cols = [c for c in rows[0] if c not in ("n",)]
    lines = [f"# Portable radix sort beside numpy, one run ({meta['date_utc']} UTC)", "",
             f"`python bench/portable_sort_bench.py{' --before ' + args.before if args.before else ''}`; "
             f"n = {n}; median of {args.rounds} interleaved rounds (each includes the copy back to numpy); load "
             f"average {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end (2 shared cores).", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    (out / "portable_sort.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
