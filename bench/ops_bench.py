"""Array operations (issue 10): dc.sum/min/argmax/cumsum/sort/argsort/matmul/fft beside numpy and peers.

    python bench/ops_bench.py                       # every row, every device
    python bench/ops_bench.py --quick --devices cpu:0 --only sum,matmul

Per device, two dotcompute columns: the default dispatch ("auto": the vendor path where there is one,
numpy/SciPy on CPU buffers, the lanes kernel / numpy in threads for large full reductions; the path
taken is in the JSON note) and the portable kernel-language implementation forced
(``dc.ops.prefer("portable")``); on OpenCL devices a third for the vendor library forced
(``prefer("vendor")``: CLBlast for matmul, clFFT for the FFTs) when it is installed. numpy is the
reference column; numba (parallel, fastmath) joins the sum row when installed; scipy.fft (pocketfft,
all cores) the FFT rows. Inputs are device Buffers made before timing; every timed call ends with the
result ready (a synchronize, or a host read of a 0-d result). Times are best-of-N milliseconds
(matmul: GFLOP/s); N is larger for the millisecond rows, because the machine is shared.
Writes bench/results/operations.{json,md}. ``--crossover`` instead times dc.sum/dc.min on cpu:0 per
size and path (plain numpy, lanes, threads) to place the size thresholds of ops/reduce.py
(bench/results/operations_crossover.md). First-use (compile) times on PoCL, cold and warm, are
bench/cold_compile.py's (bench/results/cold_compile.md). Measurements, never pass/fail.
After the rows, the portable kernels' GPU-model counters and predicted H100 times from the CUDA
simulator (bench/gpu_model_bench.py, about two minutes; bench/results/gpu_model.{json,md}: a model,
not a measurement); ``--gpu-model`` runs only that part, ``--no-gpu-model`` leaves it out.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Report, Result, best_time  # noqa: E402

import dotcompute as dc  # noqa: E402
from dotcompute.ops import clblast, clfft, dispatch  # noqa: E402

ROWS = ("sum", "min", "argmax", "cumsum", "sort", "argsort", "matmul", "fft", "fft2")
RNG = np.random.default_rng(0)


def _numba_sum() -> Callable[[np.ndarray], float] | None:
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(parallel=True, fastmath=True, cache=False)
    def nsum(x):
        s = np.float32(0)
        for i in numba.prange(x.size):
            s += x[i]
        return s

    return nsum


def _inputs(quick: bool) -> dict[str, np.ndarray]:
    n16 = 2**24
    return {
        "f32_16m": RNG.random(n16, dtype=np.float32),
        "i32_16m": RNG.integers(0, 1000, n16).astype(np.int32),
        "f32_4m": RNG.random(2**22, dtype=np.float32),
        "i32_4m": RNG.integers(0, 2**31 - 1, 2**22).astype(np.int32),
        "mat": RNG.random((1024, 1024), dtype=np.float32),
        "c64_1m": (RNG.random(2**20) + 1j * RNG.random(2**20)).astype(np.complex64),
        "c64_1k2": (RNG.random((1000, 1000)) + 1j * RNG.random((1000, 1000))).astype(np.complex64),
    }


# workload name -> (input key, numpy function, dotcompute function, unit)
def _workloads() -> dict[str, tuple[str, Callable, Callable, str]]:
    return {
        "sum": ("f32_16m", np.sum, lambda b: float(dc.sum(b)), "ms"),
        "min": ("f32_16m", np.min, lambda b: float(dc.min(b)), "ms"),
        "argmax": ("f32_16m", np.argmax, lambda b: int(dc.argmax(b)), "ms"),
        "cumsum": ("i32_16m", np.cumsum, dc.cumsum, "ms"),
        "sort": ("f32_4m", np.sort, dc.sort, "ms"),
        "argsort": ("i32_4m", lambda x: np.argsort(x, kind="stable"), dc.argsort, "ms"),
        "matmul": ("mat", lambda x: x @ x, lambda b: dc.matmul(b, b), "GFLOP/s"),
        "fft": ("c64_1m", np.fft.fft, dc.fft.fft, "ms"),
        "fft2": ("c64_1k2", np.fft.fft2, dc.fft.fft2, "ms"),
    }


LABEL = {"sum": "sum 16M f32", "min": "min 16M f32", "argmax": "argmax 16M f32", "cumsum": "cumsum 16M int32",
         "sort": "sort 4M f32", "argsort": "argsort 4M int32 (stable)", "matmul": "matmul 1024² f32",
         "fft": "fft 2^20 c64", "fft2": "fft2 1000×1000 c64"}


def _value(unit: str, seconds: float) -> float:
    return 2 * 1024**3 / seconds / 1e9 if unit == "GFLOP/s" else seconds * 1e3


VENDOR_LIB = {"matmul": ("CLBlast", clblast.library), "fft": ("clFFT", clfft.library),
              "fft2": ("clFFT", clfft.library)}
FAST_ROWS = ("sum", "min", "argmax")  # a few milliseconds each: more repeats against the shared machine's noise


def _path_of(fn: Callable[[], object]) -> str:
    """The dispatch path (and library) the call takes, from the dispatch listeners."""
    seen: list[str] = []

    def note(op: str, acc: str, path: str) -> None:
        seen.append(path)

    dispatch.listeners.append(note)
    try:
        fn()
    finally:
        dispatch.listeners.remove(note)
    return ",".join(dict.fromkeys(seen))


def _bench_row(report: Report, row: str, x: np.ndarray, work: tuple, accs: list, nsum: Callable | None,
               repeat: int) -> None:
    _, np_fn, dc_fn, unit = work
    label = LABEL[row]
    if row in FAST_ROWS:
        repeat *= 6
    ref = best_time(lambda: np_fn(x), repeat=repeat)
    report.add(Result(label, "numpy", _value(unit, ref), unit, unit != "ms"))
    if row == "sum":
        if nsum is None:
            report.add(Result(label, "numba (parallel, fastmath)", None, unit, False, "skipped: no numba"))
        else:
            s = best_time(lambda: nsum(x), repeat=repeat)
            report.add(Result(label, "numba (parallel, fastmath)", _value(unit, s), unit, False,
                              f"{ref / s:.2f}x numpy"))
    if row in ("fft", "fft2"):
        import scipy.fft

        fn = getattr(scipy.fft, row)
        s = best_time(lambda: fn(x, workers=os.cpu_count()), repeat=repeat)
        report.add(Result(label, "scipy.fft (workers=all)", _value(unit, s), unit, False, f"{ref / s:.2f}x numpy"))
    for acc in accs:
        buf = acc.asarray(x)
        modes = [("auto", "tiled", ""), ("portable", "tiled", " portable")]
        if row == "matmul":
            modes.append(("portable", "naive", " portable naive"))
        if acc.backend == "opencl" and row in VENDOR_LIB and VENDOR_LIB[row][1]() is not None:
            modes.append(("vendor", "tiled", f" {VENDOR_LIB[row][0]}"))
        for mode, kernel, suffix in modes:
            col = f"dc {acc.id}{suffix}"
            if row == "matmul":
                def fn(b=buf, k=kernel):
                    return dc.matmul(b, b, kernel=k)
            else:
                def fn(b=buf):
                    return dc_fn(b)
            reps = 1 if (mode == "portable" and row in ("sort", "argsort")) or kernel == "naive" else repeat
            try:
                with dispatch.prefer(mode):
                    path = _path_of(fn)
                    s = best_time(fn, repeat=reps, sync=acc.synchronize)
                report.add(Result(label, col, _value(unit, s), unit, unit != "ms",
                                  f"{ref / s:.2f}x numpy; path {path}"))
            except Exception as exc:  # a failing row is reported, not fatal
                report.add(Result(label, col, None, unit, unit != "ms", f"error: {exc}"))


def crossover(out: Path) -> None:
    """Per size and path on cpu:0, beside numpy: where lanes/threads pay for dc.sum and dc.min of
    float32, and where the portable scan beats numpy's cumsum for int32 (ops/scan.py SCAN_MIN)."""
    acc = dc.accelerator("cpu:0")
    lines = ["| n | op | numpy | dc vendor (numpy) | dc lanes | dc threads |", "|---|---|---|---|---|---|"]
    for exp in range(14, 25, 2):
        x = RNG.random(1 << exp, dtype=np.float32)
        b = acc.asarray(x)
        for name in ("sum", "min"):
            cells = [f"{best_time(lambda n=name, a=x: getattr(np, n)(a), repeat=30) * 1e6:.0f} us"]
            for mode in ("vendor", "lanes", "threads"):
                with dispatch.prefer(mode):
                    t = best_time(lambda n=name, a=b: getattr(dc, n)(a).item(), repeat=30)
                cells.append(f"{t * 1e6:.0f} us")
            lines.append(f"| 2^{exp} | {name} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    scan = ["| n | numpy | dc vendor (numpy) | dc portable | auto path |", "|---|---|---|---|---|"]
    for mib in (1, 2, 4, 6, 8, 12, 16):
        x = RNG.integers(0, 100, mib << 20, dtype=np.int32)
        b = acc.asarray(x)
        reps = 10 if mib >= 4 else 30
        cells = [f"{best_time(lambda a=x: np.cumsum(a), repeat=reps) * 1e3:.2f} ms"]
        for mode in ("vendor", "portable"):
            with dispatch.prefer(mode):
                t = best_time(lambda a=b: dc.cumsum(a), repeat=reps, sync=acc.synchronize)
            cells.append(f"{t * 1e3:.2f} ms")
        cells.append(_path_of(lambda a=b: dc.cumsum(a)))
        scan.append(f"| {mib}M | " + " | ".join(cells) + " |")
        print(scan[-1], flush=True)
    (out / "operations_crossover.md").write_text(
        "dc.sum / dc.min of float32 on cpu:0, best of 30 (microseconds, including the 0-d result's read), per "
        "forced path. A forced path that does not apply takes the auto choice: lanes is for sums only (min: "
        "threads above THREADS_MIN, else numpy), threads is not used for float sums (lanes above LANES_MIN).\n\n"
        + "\n".join(lines) + "\n\n"
        "dc.cumsum of int32 Buffers on cpu:0 (int64 result), best of 10-30 (milliseconds, synchronized), per forced "
        "path, and the path auto takes (ops/scan.py SCAN_MIN: the portable scan from 8M elements).\n\n"
        + "\n".join(scan) + f"\n\nLoad average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}.\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--only", default=",".join(ROWS), help="comma list of: " + ", ".join(ROWS))
    ap.add_argument("--devices", default=None, help="comma list of device ids (default: every device)")
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for operations.{json,md}")
    ap.add_argument("--crossover", action="store_true", help="time the reduction and scan paths per size instead")
    ap.add_argument("--gpu-model", action="store_true",
                    help="only the portable kernels' simulator counters and predicted GPU times (gpu_model_bench.py)")
    ap.add_argument("--no-gpu-model", action="store_true", help="leave the simulator's GPU-model section out")
    args = ap.parse_args()
    if args.gpu_model:
        import gpu_model_bench

        sys.exit(gpu_model_bench.main(["--out", args.out]))
    if args.crossover:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        crossover(out)
        return
    only = [r for r in ROWS if r in set(args.only.split(","))]
    repeat = 2 if args.quick else 5
    accs = [dc.accelerator(d) for d in args.devices.split(",")] if args.devices else dc.devices()
    data = _inputs(args.quick)
    works = _workloads()
    nsum = _numba_sum()
    report = Report()
    for row in only:
        _bench_row(report, row, data[works[row][0]], works[row], accs, nsum, repeat)
    report.write_named(Path(args.out), "operations", {"devices": [a.id for a in accs], "repeat": repeat,
                                                     "fast_rows_repeat": repeat * 6})
    if not args.no_gpu_model:
        import gpu_model_bench

        print("\nportable kernels on a modelled GPU (CUDA simulator counters; estimates, not measurements):")
        gpu_model_bench.main(["--out", args.out])


if __name__ == "__main__":
    main()
