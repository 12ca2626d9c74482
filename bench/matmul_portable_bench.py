"""The portable tiled matmul beside numpy (OpenBLAS) and the vendor path, one interleaved run (issue 24).

    python bench/matmul_portable_bench.py [--devices cpu:0,opencl:0] [--reps 5] [--out DIR]

For every device and shape, float32: numpy's matmul on host arrays, ``dc.ops.matmul`` with the
portable kernel forced (``prefer("portable")``) and with the vendor path (``prefer("vendor")``:
CLBlast on OpenCL where installed, numpy in place on cpu:0), each call's result read back
(``synchronize``), round-robin with a rotating first column so load changes hit every column alike,
each call after ``QUIET_S`` of quiet (OpenBLAS's threads poll for a while after a call); medians of ``--reps``
after one warm-up call. GFLOP/s = 2·m·n·k / median. Writes matmul.{json,md} into ``--out``.
The machine's load average is recorded at the start and the end: only ratios within one run
mean anything on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHAPES = [(256, 256, 256), (512, 512, 512), (1000, 1000, 1000), (1023, 1023, 1023), (1024, 1024, 1024),
          (4096, 256, 64)]  # (m, k, n); the last is tall and skinny


#: Seconds of quiet before every timed call. OpenBLAS's threads keep polling (sched_yield) for
#: ~0.1-0.2 s after a call returns, and on 2 cores they take a share of them from whatever runs next:
#: the portable 1024² product measured 23.8 GFLOP/s right after a numpy matmul, 24.4 after a 50 ms
#: pause, 29.5 after 200 ms, 31.6 with no numpy call around (2-core AVX2 EPYC, issue 24). Every
#: column gets the same pause, so each is timed on its own cores.
QUIET_S = 0.25


def _time(fn, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        time.sleep(QUIET_S)
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def run(devices: list[str], reps: int) -> dict:
    import dotcompute as dc

    rng = np.random.default_rng(24)
    rows = []
    load0 = os.getloadavg()
    for dev in devices:
        acc = dc.accelerator(dev)
        for m, k, n in SHAPES:
            a = rng.random((m, k), dtype=np.float32)
            b = rng.random((k, n), dtype=np.float32)
            da, db = acc.asarray(a), acc.asarray(b)
            ref = a @ b

            def numpy_mm(a=a, b=b):
                np.matmul(a, b)

            def dc_mm(path, da=da, db=db, acc=acc):
                def go():
                    with dc.ops.prefer(path):
                        r = dc.ops.matmul(da, db)
                    acc.synchronize()
                    return r
                return go

            cols = {"numpy": numpy_mm, "portable": dc_mm("portable"), "vendor": dc_mm("vendor")}
            for name in ("portable", "vendor"):  # warm-up (compiles) and a correctness check
                np.testing.assert_allclose(cols[name]().numpy(), ref, rtol=1e-3, atol=1e-3 * k)
            numpy_mm()
            times: dict[str, list[float]] = {c: [] for c in cols}
            order = list(cols)
            for rep in range(reps):
                # the starting column rotates, so a change in the machine's load hits every column
                for c in order[rep % 3:] + order[:rep % 3]:
                    times[c] += _time(cols[c], 1)
            med = {c: statistics.median(v) for c, v in times.items()}
            gf = {c: 2.0 * m * n * k / med[c] / 1e9 for c in cols}
            row = {"device": dev, "m": m, "k": k, "n": n, "median_s": med, "gflops": gf,
                   "portable_of_numpy": gf["portable"] / gf["numpy"],
                   "portable_of_vendor": gf["portable"] / gf["vendor"]}
            rows.append(row)
            print(f"{dev:<9} {m}x{k}x{n:<5} numpy {gf['numpy']:7.2f}  portable {gf['portable']:7.2f}  vendor "
                  f"{gf['vendor']:7.2f} GFLOP/s  portable = {row['portable_of_numpy']:.0%} of numpy, "
                  f"{row['portable_of_vendor']:.0%} of vendor", flush=True)
    return {"load_start": load0, "load_end": os.getloadavg(), "reps": reps, "rows": rows,
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def write(doc: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "matmul.json").write_text(json.dumps(doc, indent=1))
    ls, le = doc["load_start"], doc["load_end"]
    lines = [f"# Portable matmul vs numpy (OpenBLAS) and the vendor path, float32, {doc['when']}", "",
             f"Load average {ls[0]:.2f} / {ls[1]:.2f} / {ls[2]:.2f} at the start, {le[0]:.2f} / {le[1]:.2f} / "
             f"{le[2]:.2f} at the end (2 shared cores); medians of {doc['reps']} interleaved calls.", "",
             "| device | m×k×n | numpy GFLOP/s | portable GFLOP/s | vendor GFLOP/s | portable / numpy | "
             "portable / vendor |", "|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        g = r["gflops"]
        lines.append(f"| {r['device']} | {r['m']}×{r['k']}×{r['n']} | {g['numpy']:.2f} | {g['portable']:.2f} | "
                     f"{g['vendor']:.2f} | {r['portable_of_numpy']:.0%} | {r['portable_of_vendor']:.0%} |")
    (out / "matmul.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", default="cpu:0,opencl:0")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results" / "portable_issue24" / "matmul_after"))
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    doc = run([d for d in args.devices.split(",") if d], args.reps)
    write(doc, Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
