"""Run every benchmark in one process and compare dotcompute with numpy and the peers.

    python bench/run.py                 # everything available here
    python bench/run.py --quick         # fewer repeats (a smoke run)
    python bench/run.py --only launch,vadd
    python bench/run.py --areas         # then each area's benchmark too (ops, expr, pipeline, dask,
                                        # profile overhead, leak), one after the other in this run

Prints a table, writes bench/results/results.{json,md,png}. Peers are used when
installed (``pip install .[bench]``: numba, warp-lang, taichi). Numbers are
measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Report, Result, best_time, gbps  # noqa: E402
from peers import PEERS, load  # noqa: E402

LAUNCHES = 10_000


def dotcompute_runners() -> list:
    from dotcompute_workloads import DotComputeRunner

    import dotcompute as dc

    runners = []
    for acc in dc.devices():
        if acc.backend in ("cpu", "opencl", "cuda", "metal"):
            runners.append(DotComputeRunner(acc))
    return runners


def peer_runners(report: Report) -> list:
    runners = []
    for name in PEERS:
        try:
            runners.append(load(name))
        except Exception as exc:  # a missing or broken peer is reported, not fatal
            report.add(Result("(availability)", name, None, "", True, f"not installed: {exc.__class__.__name__}"))
    return runners


def bench_bandwidth(report: Report, runners: list, workload: str, n: int, repeat: int) -> None:
    for r in runners:
        method = getattr(r, workload.split()[0])
        try:
            fn, sync = method(n)
            seconds = best_time(fn, repeat=repeat, number=3, sync=sync)
            report.add(Result(f"{workload} {n // 2**20}M f32", r.name, gbps(3 * 4 * n, seconds), "GB/s", True))
        except Exception as exc:
            report.add(Result(f"{workload} {n // 2**20}M f32", r.name, None, "GB/s", True, f"error: {exc}"))


def bench_nbody(report: Report, runners: list, n: int, repeat: int) -> None:
    """One all-pairs acceleration step over n bodies, in billions of interactions per second, each
    result checked against numpy in float64 first (a wrong answer is reported, not timed)."""
    import numpy as np
    from peers import bodies, nbody_reference

    want = nbody_reference(bodies(n))
    for r in runners:
        try:
            fn, sync = r.nbody(n)
            fn()
            if sync:
                sync()
            got = _nbody_result(r)
            if got is not None and not np.allclose(got, want, rtol=2e-3, atol=2e-3 * np.abs(want).max()):
                report.add(Result(f"nbody {n}", r.name, None, "G interactions/s", True, "skipped: wrong result"))
                continue
            seconds = best_time(fn, repeat=repeat, sync=sync)
            report.add(Result(f"nbody {n}", r.name, n * n / seconds / 1e9, "G interactions/s", True))
        except Exception as exc:  # one framework's failure must not stop the run
            report.add(Result(f"nbody {n}", r.name, None, "G interactions/s", True,
                              f"error: {exc.__class__.__name__}"))


def _nbody_result(runner):
    """The output array of the runner's last nbody call, as numpy, where the runner keeps it."""
    import numpy as np

    out = getattr(runner, "last_out", None)
    return None if out is None else np.asarray(out.numpy() if hasattr(out, "numpy") else out)


def bench_launch(report: Report, runners: list, launches: int) -> None:
    for r in runners:
        try:
            fn, sync = r.launch()
            best = float("inf")
            for _ in range(3):
                fn()
                if sync:
                    sync()
                t0 = time.perf_counter()
                for _ in range(launches):
                    fn()
                if sync:
                    sync()
                best = min(best, (time.perf_counter() - t0) / launches)
            report.add(Result("launch overhead", r.name, best * 1e6, "us/launch", False))
        except Exception as exc:
            report.add(Result("launch overhead", r.name, None, "us/launch", False, f"error: {exc}"))


# first_call.py's framework names, as the other workloads' columns are titled
COLUMN = {"dotcompute": "dotcompute cpu:0", "numba": "numba (parallel)", "warp": "warp (cpu)",
          "taichi": "taichi (cpu)"}


def bench_first_call(report: Report, frameworks: list[str]) -> None:
    for fw in frameworks:
        column = COLUMN[fw]
        with tempfile.TemporaryDirectory() as cache:
            times = []
            for _ in range(2):
                proc = subprocess.run([sys.executable, str(HERE / "first_call.py"), fw, cache],
                                      capture_output=True, text=True, env=dict(os.environ))
                if proc.returncode != 0:
                    times = None
                    note = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
                    break
                times.append(float(proc.stdout.strip().splitlines()[-1]))
            if times is None:
                report.add(Result("first call, cold compile", column, None, "ms", False, note))
                continue
            report.add(Result("first call, cold compile", column, times[0], "ms", False))
            report.add(Result("first call, disk-cache hit", column, times[1], "ms", False))


def bench_cuda(report: Report) -> None:
    """The CUDA workloads; they need a GPU and say so when there is none."""
    import numpy as np
    from dotcompute_workloads import DotComputeRunner

    import dotcompute as dc

    try:
        acc = dc.accelerator("cuda")
        if acc.info.get("simulated") is True:  # these rows are for GPUs; the simulator has its own
            raise dc.BackendUnavailableError("cuda:0 is the CUDA simulator")
    except dc.BackendUnavailableError as e:
        for w in ("vadd 1M", "vadd 16M", "matmul 1K", "h2d+d2h 1 GB", "launch latency"):
            note = "skipped: no CUDA device" if "simulator" not in str(e) else "skipped: cuda:0 is simulated"
            report.add(Result(f"cuda {w}", "dotcompute cuda:0", None, "", True, note))
        return
    runner = DotComputeRunner(acc)
    for n in (2**20, 2**24):
        bench_bandwidth(report, [runner], "vadd", n, 10)
    fn, sync = runner.matmul(1024)
    seconds = best_time(fn, repeat=5, sync=sync)
    report.add(Result("cuda matmul 1K", runner.name, 2 * 1024**3 / seconds / 1e9, "GFLOP/s", True))
    host = np.ones(2**28, np.float32)
    dev = acc.empty(host.shape, np.float32)
    seconds = best_time(lambda: (dev.copy_from(host), dev.copy_to(host)), repeat=3, sync=acc.synchronize)
    report.add(Result("cuda h2d+d2h 1 GB", runner.name, gbps(2 * host.nbytes, seconds), "GB/s", True))
    bench_launch(report, [runner], LAUNCHES)


def bench_cuda_sim(report: Report) -> None:
    """The CUDA simulator's throughput (kernels on the CPU): not a performance target, reported so
    that a slowdown of the simulator itself shows; the real-GPU rows above stay for machines with one."""
    import json

    env = dict(os.environ, DOTCOMPUTE_CUDA_SIM="1")
    proc = subprocess.run([sys.executable, str(HERE / "cuda_sim_bench.py")], capture_output=True, text=True,
                          env=env, timeout=600)
    note = "CUDA simulator on the CPU; not a performance target"
    if proc.returncode != 0:
        report.add(Result("cuda-sim vadd 4M", "dotcompute cuda:0 (simulated)", None, "GB/s", True,
                          "skipped: " + (proc.stderr.strip().splitlines() or ["failed"])[-1]))
        return
    values = json.loads(proc.stdout.strip().splitlines()[-1])
    for key, value in values.items():
        workload, unit = key.rsplit(" ", 1)
        report.add(Result(f"cuda-sim {workload} (CPU simulator: not a performance target)",
                          "dotcompute cuda:0 (simulated)", value, unit, True, note))


# Each area's benchmark is its own script (own table and results file); --areas runs them after the
# core rows so that one command measures everything side by side with numpy and the peers.
AREAS = ["ops_bench.py", "expr_bench.py", "pipeline_bench.py", "dask_bench.py", "profile_overhead.py",
         "leak_bench.py"]


def run_areas(quick: bool) -> None:
    for script in AREAS:
        cmd = [sys.executable, str(HERE / script)]
        if quick and script == "ops_bench.py":
            cmd.append("--quick")
        print(f"\n== {script} ==", flush=True)
        proc = subprocess.run(cmd)
        if proc.returncode != 0:
            print(f"{script} exited with {proc.returncode}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and launches")
    ap.add_argument("--only", default="launch,vadd,fused,nbody,first_call,cuda,cuda_sim",
                    help="comma list of: launch, vadd, fused, nbody, first_call, cuda, cuda_sim")
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for results.{json,md,png}")
    ap.add_argument("--areas", action="store_true",
                    help="also run every area's benchmark script (" + ", ".join(AREAS) + ")")
    args = ap.parse_args()
    only = set(args.only.split(","))
    repeat = 3 if args.quick else 10
    report = Report()
    runners = dotcompute_runners() + peer_runners(report)
    if "launch" in only:
        bench_launch(report, runners, 1000 if args.quick else LAUNCHES)
    for workload in ("vadd", "fused"):
        if workload in only:
            for n in ((2**20, 2**24) if workload == "vadd" else (2**24,)):
                bench_bandwidth(report, runners, workload, n, repeat)
    if "nbody" in only:
        from dotcompute_workloads import DotComputeRunner

        # beside numba's fastmath column: dotcompute's IEEE default (numpy's bits), contract=True (FMAs
        # only) and fastmath=True
        ours = [r for r in runners if isinstance(r, DotComputeRunner)]
        fast = [DotComputeRunner(r.acc, contract=True) for r in ours] + \
            [DotComputeRunner(r.acc, fastmath=True) for r in ours]
        for n in ((1024,) if args.quick else (1024, 4096)):
            bench_nbody(report, runners + fast, n, repeat)
    if "first_call" in only:
        bench_first_call(report, ["dotcompute"] + [p for p in ("numba", "warp", "taichi")
                                                   if any(r.name.startswith(p) for r in runners)])
    if "cuda" in only:
        bench_cuda(report)
    if "cuda_sim" in only:
        bench_cuda_sim(report)
    print()
    print(report.table())
    report.write(Path(args.out))
    print(f"\nwrote {args.out}/results.json, results.md, results.png")
    if args.areas:
        run_areas(args.quick)


if __name__ == "__main__":
    main()
