"""dotcompute.dask: a 2-D heat-equation stencil time loop on a Dask array, three ways.

    python bench/dask_bench.py                       # 8192 x 8192 float32, 10 steps, chunks of 2048
    python bench/dask_bench.py --size 4096 --chunk 1024 --steps 10 --repeat 2

1. dask + dotcompute: ``dcd.map_overlap(step, u, depth=1, boundary="periodic")`` per step, on a
   ``distributed.LocalCluster`` of 2 process workers (1 thread each), every worker pinned to cpu:0;
2. dask + numpy: the same graph with a numpy step function, on the same cluster;
3. both again with all the steps between one halo exchange (``depth=steps``; dotcompute:
   ``iterations=steps``, numpy: a loop in the block function) -- communication-avoiding;
4. single-process dotcompute: the whole array, ``dc.launch`` per step on cpu:0 (no Dask).

Reports wall time (best of ``--repeat``, graph building and result gathering included), the speed-up
of dask + dotcompute over dask + numpy, and the scaling efficiency of dask + dotcompute against
single-process dotcompute (``T_single / (workers * T_dask)``). The three results are compared.
Writes bench/results/dask.json and dask.md. Measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import dask.array as da
import distributed
import numpy as np

import dotcompute as dc
import dotcompute.dask as dcd

OUT = Path(__file__).resolve().parent / "results"
ALPHA = 0.2  # diffusion number (stable below 0.25)


@dc.kernel
def heat_step(u: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    # on a grown block: clamped reads keep the outer ring (which Dask trims away) in bounds
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        c = u[i, j]
        lap = u[max(i - 1, 0), j] + u[min(i + 1, n - 1), j] + u[i, max(j - 1, 0)] + u[i, min(j + 1, m - 1)] - 4.0 * c
        out[i, j] = c + 0.2 * lap


@dc.kernel
def heat_step_periodic(u: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    # the whole array with periodic wrap-around (single process, no halo); selects, not %, so the
    # inner loop stays vectorisable
    i = dc.global_id(0)
    j = dc.global_id(1)
    n, m = u.shape
    if i < n and j < m:
        c = u[i, j]
        up = i - 1 if i > 0 else n - 1
        down = i + 1 if i < n - 1 else 0
        left = j - 1 if j > 0 else m - 1
        right = j + 1 if j < m - 1 else 0
        out[i, j] = c + 0.2 * (u[up, j] + u[down, j] + u[i, left] + u[i, right] - 4.0 * c)


def numpy_step(u: np.ndarray) -> np.ndarray:
    p = np.pad(u, 1, mode="edge")  # the outer ring of a grown block is trimmed away
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - np.float32(4.0) * u
    return u + np.float32(ALPHA) * lap


def numpy_steps(u: np.ndarray, steps: int) -> np.ndarray:
    for _ in range(steps):
        u = numpy_step(u)
    return u


def initial(size: int, chunk: int) -> da.Array:
    return da.random.default_rng(0).random((size, size), chunks=chunk, dtype=np.float32)


def run_dask_dc(client: distributed.Client, u0: da.Array, steps: int, per_exchange: int = 1) -> np.ndarray:
    u = u0
    for _ in range(steps // per_exchange):
        u = dcd.map_overlap(heat_step, u, depth=per_exchange, boundary="periodic", iterations=per_exchange)
    return client.compute(u).result()


def run_dask_numpy(client: distributed.Client, u0: da.Array, steps: int, per_exchange: int = 1) -> np.ndarray:
    u = u0
    for _ in range(steps // per_exchange):
        u = u.map_overlap(numpy_steps, depth=per_exchange, boundary="periodic", dtype=np.float32, steps=per_exchange)
    return client.compute(u).result()


def run_single(u0: np.ndarray, steps: int, acc: dc.Accelerator) -> np.ndarray:
    a = acc.asarray(u0)
    b = acc.empty(u0.shape, np.float32)
    for _ in range(steps):
        dc.launch(heat_step_periodic, u0.shape, a, b, accelerator=acc)
        a, b = b, a
    return a.numpy()


def best(fn, repeat: int) -> tuple[float, np.ndarray]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--chunk", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--device", default="cpu:0", help="the accelerator every worker is pinned to")
    args = ap.parse_args()
    print(f"heat stencil {args.size}x{args.size} float32, {args.steps} steps, chunks {args.chunk}, "
          f"{args.workers} process workers", flush=True)
    acc = dc.accelerator(args.device)
    # each worker's CPU backend gets its share of the cores (as dask-cuda gives each worker one GPU)
    share = str(max(1, (os.cpu_count() or 1) // args.workers))
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", env={"DOTCOMPUTE_CPU_THREADS": share})
    with cluster, distributed.Client(cluster) as client:
        devices = dcd.pin_devices(client, devices=[args.device])
        u0 = client.persist(initial(args.size, args.chunk))  # the data starts on the workers
        distributed.wait(u0)
        run_dask_dc(client, initial(256, 128), 1)  # workers import dotcompute and compile
        t_dc, r_dc = best(lambda: run_dask_dc(client, u0, args.steps), args.repeat)
        print(f"  dask + dotcompute:                 {t_dc:.3f} s", flush=True)
        t_np, r_np = best(lambda: run_dask_numpy(client, u0, args.steps), args.repeat)
        print(f"  dask + numpy:                      {t_np:.3f} s", flush=True)
        k = args.steps
        t_dck, r_dck = best(lambda: run_dask_dc(client, u0, args.steps, k), args.repeat)
        print(f"  dask + dotcompute, {k} steps/exchange: {t_dck:.3f} s", flush=True)
        t_npk, r_npk = best(lambda: run_dask_numpy(client, u0, args.steps, k), args.repeat)
        print(f"  dask + numpy, {k} steps/exchange:      {t_npk:.3f} s", flush=True)
        host = u0.compute()
    run_single(host[:64, :64].copy(), 1, acc)  # compile outside the timing
    t_single, r_single = best(lambda: run_single(host, args.steps, acc), args.repeat)
    print(f"  single-process dotcompute ({acc.id}): {t_single:.3f} s", flush=True)
    diff = {
        "dask+dc vs dask+numpy": float(np.max(np.abs(r_dc - r_np))),
        "dask+dc vs single-process": float(np.max(np.abs(r_dc - r_single))),
        "dask+dc k steps/exchange vs 1 step/exchange": float(np.max(np.abs(r_dck - r_dc))),
        "dask+numpy k steps/exchange vs dask+dc": float(np.max(np.abs(r_npk - r_dc))),
    }
    seconds = {"dask+dotcompute": t_dc, "dask+numpy": t_np,
               f"dask+dotcompute, {k} steps/exchange": t_dck, f"dask+numpy, {k} steps/exchange": t_npk,
               "single-process dotcompute": t_single}
    speedup = t_np / t_dc
    speedup_k = t_npk / t_dck
    efficiency = t_single / (args.workers * t_dc)
    efficiency_k = t_single / (args.workers * t_dck)
    print(f"  speed-up over dask+numpy: {speedup:.2f}x (1 step/exchange), {speedup_k:.2f}x ({k} steps/exchange)")
    print(f"  scaling efficiency vs single-process dotcompute: {efficiency:.2f} (1 step/exchange), "
          f"{efficiency_k:.2f} ({k} steps/exchange)")
    for name, v in diff.items():
        print(f"  max |{name}| = {v:.2e}")
    result = {
        "meta": {"machine": platform.machine(), "python": platform.python_version(),
                 "time": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": os.cpu_count(),
                 "load_average": os.getloadavg(), "size": args.size, "chunk": args.chunk, "steps": args.steps,
                 "workers": args.workers, "repeat": args.repeat, "worker_devices": devices},
        "seconds": seconds,
        "speedup_vs_dask_numpy": {"1 step/exchange": speedup, f"{k} steps/exchange": speedup_k},
        "scaling_efficiency": {"1 step/exchange": efficiency, f"{k} steps/exchange": efficiency_k},
        "max_abs_diff": diff,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "dask.json").write_text(json.dumps(result, indent=2))
    md = ["| heat stencil | seconds |", "|---|---|"]
    md += [f"| {name} | {v:.3f} |" for name, v in seconds.items()]
    md.append(f"\nspeed-up over dask+numpy: {speedup:.2f}x (1 step per halo exchange), {speedup_k:.2f}x "
              f"({k} steps per exchange); scaling efficiency vs single-process dotcompute: {efficiency:.2f} / "
              f"{efficiency_k:.2f}. {args.size}x{args.size} float32, {args.steps} steps, chunks {args.chunk}, "
              f"{args.workers} process workers, {os.cpu_count()} cores shared with other jobs "
              f"(load average {os.getloadavg()[0]:.1f}).")
    (OUT / "dask.md").write_text("\n".join(md) + "\n")

if __name__ == "__main__":
    main()
