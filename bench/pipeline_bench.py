"""dc.Pipeline: a 6-stage image DAG against the same launches on one stream, and per-stage overhead.

    python bench/pipeline_bench.py                 # 4096 x 4096 float32, every device
    python bench/pipeline_bench.py --size 1024 --repeat 3 --devices cpu:0

The DAG (two independent branches joined)::

    brighten ─┬─ blur_h ── blur_v ─┬─ blend ── clamp
              └────── edges ───────┘

Reports, per device: the pipeline's wall time per run, the same six launches issued one after the
other on one stream, and the speed-up from concurrency; then ``p.run()`` on chains of tiny stages
(16 items) in microseconds per stage, beside a plain ``acc.launch`` of the same kernel. Writes
bench/results/pipeline.json. Measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

import dotcompute as dc

OUT = Path(__file__).resolve().parent / "results" / "pipeline.json"


@dc.kernel
def brighten(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2], gain: dc.float32):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j] * gain + 0.05


@dc.kernel
def blur_h(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        left = src[i, max(j - 1, 0)]
        right = src[i, min(j + 1, dst.shape[1] - 1)]
        dst[i, j] = 0.25 * left + 0.5 * src[i, j] + 0.25 * right


@dc.kernel
def blur_v(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        up = src[max(i - 1, 0), j]
        down = src[min(i + 1, dst.shape[0] - 1), j]
        dst[i, j] = 0.25 * up + 0.5 * src[i, j] + 0.25 * down


@dc.kernel
def edges(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        gx = src[i, min(j + 1, dst.shape[1] - 1)] - src[i, max(j - 1, 0)]
        gy = src[min(i + 1, dst.shape[0] - 1), j] - src[max(i - 1, 0), j]
        dst[i, j] = abs(gx) + abs(gy)


@dc.kernel
def blend(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = 0.7 * a[i, j] + 0.3 * b[i, j]


@dc.kernel
def clamp01(x: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] = min(max(x[i, j], 0.0), 1.0)


@dc.kernel
def bump(x: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        x[i] = x[i] + 1.0


def image_pipeline(acc: dc.Accelerator, n: int) -> tuple[dc.Pipeline, list, dc.Buffer, np.ndarray]:
    host = np.random.default_rng(0).random((n, n), dtype=np.float32)
    src = acc.asarray(host)
    b0, t1, b1, e1, out = (acc.empty((n, n), np.float32) for _ in range(5))
    shape = (n, n)
    launches = [(brighten, shape, (src, b0, np.float32(1.1))), (blur_h, shape, (b0, t1)), (blur_v, shape, (t1, b1)),
                (edges, shape, (b0, e1)), (blend, shape, (b1, e1, out)), (clamp01, shape, (out,))]
    p = dc.Pipeline(accelerator=acc, name="image")
    for kernel, size, args in launches:
        p.add(kernel, size, *args)
    return p, launches, out, host


def expected(host: np.ndarray) -> np.ndarray:
    b0 = host * np.float32(1.1) + np.float32(0.05)
    pad = np.pad(b0, 1, mode="edge")
    t1 = 0.25 * pad[1:-1, :-2] + 0.5 * b0 + 0.25 * pad[1:-1, 2:]
    tp = np.pad(t1, 1, mode="edge")
    b1 = 0.25 * tp[:-2, 1:-1] + 0.5 * t1 + 0.25 * tp[2:, 1:-1]
    e1 = np.abs(pad[1:-1, 2:] - pad[1:-1, :-2]) + np.abs(pad[2:, 1:-1] - pad[:-2, 1:-1])
    return np.clip(0.7 * b1 + 0.3 * e1, 0, 1)


def best_ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000.0


def bench_dag(acc: dc.Accelerator, n: int, repeat: int) -> dict:
    p, launches, out, host = image_pipeline(acc, n)
    p.run()  # compile everything, allocate streams
    np.testing.assert_allclose(out.numpy(), expected(host), rtol=1e-4, atol=1e-5)
    stream = acc.stream()

    def sequential() -> None:
        for kernel, size, args in launches:
            acc.launch(kernel, size, *args, stream=stream)
        stream.synchronize()

    sequential()
    # alternate the two so that load from elsewhere on the machine hits both alike
    pipe_ms = seq_ms = float("inf")
    for _ in range(repeat):
        pipe_ms = min(pipe_ms, best_ms(p.run, 1))
        seq_ms = min(seq_ms, best_ms(sequential, 1))
    run = p.run()
    return {"device": acc.id, "size": n, "pipeline_ms": pipe_ms, "sequential_ms": seq_ms,
            "speedup": seq_ms / pipe_ms, "stages": {k: s.elapsed_ms for k, s in run.stages.items()}}


def _per_item_us(fn, calls: int, items: int) -> float:
    t0 = time.perf_counter()
    for _ in range(max(1, calls)):
        fn()
    return (time.perf_counter() - t0) / (max(1, calls) * items) * 1e6


def bench_tiny(acc: dc.Accelerator, stages: int, runs: int) -> dict:
    x = acc.zeros(16, np.float32)
    p = dc.Pipeline(accelerator=acc)
    for _ in range(stages):
        p.add(bump, 16, x)
    p.run()
    stream = acc.stream()

    def launches() -> None:
        for _ in range(stages):
            acc.launch(bump, 16, x, stream=stream)
        stream.synchronize()

    # best of five rounds, the two alternating: the machine is shared, the minimum is the signal
    per_stage = per_launch = float("inf")
    for _ in range(5):
        per_stage = min(per_stage, _per_item_us(p.run, runs // 5, stages))
        per_launch = min(per_launch, _per_item_us(launches, runs // 5, stages))
    return {"device": acc.id, "stages": stages, "us_per_stage": per_stage, "us_per_plain_launch": per_launch,
            "overhead_us_per_stage": per_stage - per_launch}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--devices", default="", help="comma list of ids (default: every device)")
    parser.add_argument("--tiny-stages", type=int, default=50)
    parser.add_argument("--tiny-runs", type=int, default=200)
    ns = parser.parse_args()
    accs = [dc.accelerator(d) for d in ns.devices.split(",")] if ns.devices else dc.devices()
    dags, tiny = [], []
    print(f"6-stage image DAG, {ns.size}x{ns.size} float32 (best of {ns.repeat})")
    print(f"  {'device':<10} {'pipeline ms':>12} {'one stream ms':>14} {'speed-up':>9}")
    for acc in accs:
        r = bench_dag(acc, ns.size, ns.repeat)
        dags.append(r)
        print(f"  {acc.id:<10} {r['pipeline_ms']:12.2f} {r['sequential_ms']:14.2f} {r['speedup']:9.2f}x", flush=True)
    print(f"p.run() on a chain of {ns.tiny_stages} tiny stages (16 items), {ns.tiny_runs} runs")
    print(f"  {'device':<10} {'us/stage':>9} {'us/launch':>10} {'overhead us':>12}")
    for acc in accs:
        r = bench_tiny(acc, ns.tiny_stages, ns.tiny_runs)
        tiny.append(r)
        print(f"  {acc.id:<10} {r['us_per_stage']:9.2f} {r['us_per_plain_launch']:10.2f} "
              f"{r['overhead_us_per_stage']:12.2f}", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"machine": platform.machine(), "python": platform.python_version(),
            "time": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": len(__import__("os").sched_getaffinity(0))}
    OUT.write_text(json.dumps({"meta": meta, "dag": dags, "tiny": tiny}, indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
