"""Issue 24's portable-kernel goals side by side in one run (round 9): each row times numpy, the
default (vendor) path and the portable path in interleaved rounds and reports medians.

    python bench/portable_round9.py [--rounds 9] [--out bench/results/portable_round9.json]
                                    [--only reduce,matmul,sort]

* min/max of 16M float32 on cpu:0: numpy, ``dc.min`` by default (numpy in threads) and under
  ``prefer("portable")`` (lanes_extreme_fast_kernel), goal >= 0.8x the default path;
* matmul 1024² float32 on cpu:0: numpy (OpenBLAS) and the portable tiled kernel, with the CPU
  backend's long regions in strips (now) and in one loop (``lang.emit.cpu.STRIP_MIN_STATEMENTS``
  raised past the kernel's size, the code before this round) built beside it; goal >= 40 % of OpenBLAS;
* sort of 4M normal float32 on opencl:0 (PoCL) and cpu:0: numpy, ``dc.ops.sort`` by default (numpy
  on a host copy on PoCL) and portable (radix); goal on PoCL <= 2x the default path.

Prints a JSON line per row and writes them all, with the load average before and after, to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import dotcompute as dc
from dotcompute.lang.emit import cpu as emit_cpu
from dotcompute.ops import dispatch
from dotcompute.ops import matmul_kernels as mk

HERE = Path(__file__).resolve().parent


def _interleaved(fns: dict[str, Callable[[], object]], rounds: int, pause: float = 0.02) -> dict[str, float]:
    """Median milliseconds of each function, the functions taking turns within every round."""
    for f in fns.values():  # compile and warm up
        f()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(rounds):
        # every other round in reverse order: no function always runs right after the same one
        for k, f in (reversed(fns.items()) if r % 2 else fns.items()):
            # a pause first: OpenBLAS's threads keep spinning for a while after a call (about 0.1 s)
            # and slowed whichever function ran next (the kernel timed after numpy lost up to half)
            time.sleep(pause)
            t = time.perf_counter()
            f()
            times[k].append((time.perf_counter() - t) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def _reduce_rows(rounds: int) -> list[dict]:
    acc = dc.accelerator("cpu:0")
    x = np.random.default_rng(1).standard_normal(1 << 24).astype(np.float32)
    b = acc.asarray(x)
    rows = []
    for name in ("min", "max"):
        op = getattr(dc, name)

        def path(mode: str, op: Callable = op) -> Callable[[], float]:
            def f() -> float:
                with dispatch.prefer(mode):
                    return float(op(b))
            return f

        ref = float(getattr(np, name)(x))
        assert path("auto")() == ref and path("portable")() == ref
        ms = _interleaved({"numpy": lambda n=name: getattr(np, n)(x), "dc default": path("auto"),
                           "dc portable": path("portable")}, rounds * 3)
        rows.append({"row": f"{name} 16M f32", "device": "cpu:0", "unit": "ms", **ms,
                     "portable speed / default": round(ms["dc default"] / ms["dc portable"], 2)})
    return rows


def _matmul_row(rounds: int) -> dict:
    acc = dc.accelerator("cpu:0")
    n = 1024
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    bm = rng.random((n, n), dtype=np.float32)
    A, B, C = acc.asarray(a), acc.asarray(bm), acc.empty((n, n), np.float32)  # noqa: N806
    groups = -(-n // mk.TILE) * mk.LOCAL

    def kernel_run(kernel: object) -> Callable[[], object]:
        def f() -> object:
            acc.launch(kernel, (groups, groups, 1), A, B, C, n, n, n, 0, 0, local_size=(mk.LOCAL, mk.LOCAL, 1))
            acc.synchronize()
            return C
        return f

    def portable() -> object:
        with dispatch.prefer("portable"):
            r = dc.matmul(A, B)
        acc.synchronize()
        return r

    saved = emit_cpu.STRIP_MIN_STATEMENTS
    emit_cpu.STRIP_MIN_STATEMENTS = 10**9  # built now: the kernel's regions in one loop, as before
    one_loop = kernel_run(mk.tiled_kernel.__wrapped__(np.float32, 0, (2, 2, 2)))
    one_loop()
    emit_cpu.STRIP_MIN_STATEMENTS = saved
    ref = a @ bm
    for f in (portable, one_loop):
        np.testing.assert_allclose(f().numpy(), ref, rtol=1e-4)
    ms = _interleaved({"numpy": lambda: a @ bm, "dc portable": portable, "dc portable, one loop (before)": one_loop},
                      rounds, pause=0.3)
    gflops = {k: round(2 * n**3 / (v / 1e3) / 1e9, 1) for k, v in ms.items()}
    return {"row": "matmul 1024² f32", "device": "cpu:0", "unit": "GFLOP/s", **gflops,
            "portable / numpy": round(gflops["dc portable"] / gflops["numpy"], 2)}


def _sort_rows(rounds: int) -> list[dict]:
    x = np.random.default_rng(0).standard_normal(1 << 22).astype(np.float32)
    ref = np.sort(x)
    rows = []
    for dev in ("opencl:0", "cpu:0"):
        try:
            acc = dc.accelerator(dev)
        except Exception as exc:  # a machine without PoCL: the row says so
            rows.append({"row": "sort 4M f32", "device": dev, "skipped": str(exc)})
            continue
        b = acc.asarray(x)

        def path(mode: str, b: object = b, acc: object = acc) -> Callable[[], object]:
            def f() -> object:
                with dispatch.prefer(mode):
                    r = dc.ops.sort(b)
                acc.synchronize()
                return r
            return f

        assert np.array_equal(path("portable")().numpy(), ref)
        ms = _interleaved({"numpy": lambda: np.sort(x), "dc default": path("auto"), "dc portable": path("portable")},
                          rounds)
        rows.append({"row": "sort 4M f32", "device": dev, "unit": "ms", **ms,
                     "portable time / default": round(ms["dc portable"] / ms["dc default"], 2)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out", default=str(HERE / "results" / "portable_round9.json"))
    ap.add_argument("--only", default="reduce,matmul,sort", help="comma list of: reduce, matmul, sort")
    args = ap.parse_args(argv)
    parts = {"reduce": lambda: _reduce_rows(args.rounds), "matmul": lambda: [_matmul_row(args.rounds)],
             "sort": lambda: _sort_rows(args.rounds)}
    wanted = args.only.split(",")
    if unknown := [w for w in wanted if w not in parts]:
        ap.error(f"--only: unknown part(s) {', '.join(unknown)}; choose from {', '.join(parts)}")
    load_start = os.getloadavg()
    rows = [row for w in wanted for row in parts[w]()]
    load_end = os.getloadavg()
    for r in rows:
        print(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()}))
    print(f"load average: {load_start} at the start, {load_end} at the end")
    Path(args.out).write_text(json.dumps({"time": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                                          "rounds": args.rounds, "load_start": load_start, "load_end": load_end,
                                          "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
