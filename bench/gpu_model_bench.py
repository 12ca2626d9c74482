"""The portable kernels on a modelled GPU (issue 24): CUDA simulator counters and predicted times.

    python bench/gpu_model_bench.py                 # H100 SXM (DOTCOMPUTE_CUDA_SIM_MODEL=a100: A100)
    python bench/ops_bench.py --gpu-model           # the same, from the operations bench

Runs dc.sum, dc.cumsum, dc.sort, dc.matmul and dc.fft.fft with the portable kernels forced
(``dc.ops.prefer("portable")``) on the simulated cuda:0 with GPU-model counters
(DOTCOMPUTE_CUDA_SIM=1 DOTCOMPUTE_CUDA_SIM_COUNTERS=1; this script restarts itself with them),
at sizes the simulator runs in seconds, and reports per operation and per kernel: 32-byte sectors
per global load/store request, coalescing (bytes asked / bytes moved), shared-memory bank passes
per request, active lanes, occupancy, and a ROOFLINE ESTIMATE of the operation's time on the
modelled GPU at the bench's full sizes. The estimate scales the measured sector traffic with the
operation's work (n, n log n, n^3) and takes max(bytes / DRAM bandwidth, flops / FP32 peak): no
caches (every sector a DRAM sector: an upper bound for matmul, whose tiles hit L2 on a GPU), no
launch latency, no instruction issue limits. A model, not a measurement. Writes
bench/results/gpu_model.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

# The seeds' table (issue 24): times measured on a GPU by the project's seeds, for comparison.
SEEDS_MS = {"vector add 1M": 0.3, "matmul 1024²": 12.0, "fft 2^20": 8.0}


def _workloads(dc):
    """name -> (simulated size, full size, work(n) for scaling, flops(n), make input, run)."""
    rng = np.random.default_rng(0)

    @dc.kernel
    def vector_add(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]) -> None:
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = a[i] + b[i]

    def vadd(acc, n):
        a, b, out = (acc.asarray(rng.random(n, dtype=np.float32)) for _ in range(3))
        return lambda: acc.launch(vector_add, n, a, b, out, local_size=256)

    def unary(fn, make):
        def setup(acc, n):
            x = acc.asarray(make(n))
            return lambda: fn(x)
        return setup

    def matmul(acc, n):
        a = acc.asarray(rng.random((n, n), dtype=np.float32))
        return lambda: dc.matmul(a, a)

    f32 = lambda n: rng.random(n, dtype=np.float32)  # noqa: E731
    c64 = lambda n: (rng.random(n) + 1j * rng.random(n)).astype(np.complex64)  # noqa: E731
    lin = lambda n: n  # noqa: E731
    nlogn = lambda n: n * math.log2(n)  # noqa: E731
    return {
        "vector add 1M": (1 << 16, 1 << 20, lin, lin, vadd),
        "sum 16M f32": (1 << 18, 1 << 24, lin, lin, unary(lambda x: float(dc.sum(x)), f32)),
        "cumsum 16M int32": (1 << 16, 1 << 24, lin, lambda n: 0.0,
                             unary(dc.cumsum, lambda n: rng.integers(0, 1000, n).astype(np.int32))),
        "sort 4M f32": (1 << 14, 1 << 22, lin, lambda n: 0.0, unary(dc.sort, f32)),
        "matmul 1024²": (64, 1024, lambda n: n**3, lambda n: 2.0 * n**3, matmul),
        "fft 2^20": (1 << 12, 1 << 20, nlogn, lambda n: 5.0 * nlogn(n), unary(dc.fft.fft, c64)),
    }


def _aggregate(kernels) -> dict:
    from dotcompute.profile import gpu_model

    def total(key, i=None):
        return sum((k.raw[key][i] if i is not None else sum(k.raw[key])) if isinstance(k.raw[key], list)
                   else k.raw[key] for k in kernels)

    ld, st = total("global_requests", 0), total("global_requests", 1)
    sectors = total("global_sectors")
    shared = total("shared_requests")
    mem = total("mem_instructions")
    return {
        "launches": sum(k.launches for k in kernels),
        "sectors_per_load_request": total("global_sectors", 0) / ld if ld else 0.0,
        "sectors_per_store_request": total("global_sectors", 1) / st if st else 0.0,
        "coalescing": min(1.0, total("global_bytes") / (sectors * 32)) if sectors else 1.0,
        "bank_conflicts": total("shared_wavefronts") - total("shared_ideal"),
        "bank_passes_per_request": total("shared_wavefronts") / shared if shared else 0.0,
        "active_lanes": total("mem_active_lanes") / mem if mem else 0.0,
        "dram_bytes": sectors * 32,
        "kernels": [k.as_dict() for k in kernels],
        "model": gpu_model.model().name,
    }


def run_here(out: Path) -> dict:
    """The bench itself (in a process started with the simulator and its counters on)."""
    import dotcompute as dc
    from dotcompute.profile import gpu_model

    gpu = gpu_model.model()
    acc = dc.accelerator("cuda:0")
    rows = {}
    for name, (n, full, work, flops, setup) in _workloads(dc).items():
        run = setup(acc, n)
        with dc.ops.prefer("portable"):
            run()  # compiles (trace builds) outside the profile
            acc.synchronize()
            with dc.profile() as prof:
                run()
                acc.synchronize()
        row = _aggregate(prof.gpu_counters)
        scale = work(full) / work(n)
        memory_ms = row["dram_bytes"] * scale / (gpu.dram_gbs * 1e9) * 1e3
        compute_ms = flops(full) / (gpu.fp32_tflops * 1e12) * 1e3
        row.update(simulated_size=n, full_size=full, predicted_ms=max(memory_ms, compute_ms),
                   memory_bound_ms=memory_ms, compute_bound_ms=compute_ms, seed_ms=SEEDS_MS.get(name))
        rows[name] = row
        print(f"{name:<18} sim n={n:<7} ld sec/req {row['sectors_per_load_request']:5.2f}  st sec/req "
              f"{row['sectors_per_store_request']:5.2f}  coalesced {row['coalescing']:4.0%}  bank conflicts "
              f"{row['bank_conflicts']:>6}  lanes {row['active_lanes']:4.1f}  launches {row['launches']:>3}  "
              f"roofline est. {row['predicted_ms']:8.3f} ms"
              + (f"  (seed {row['seed_ms']} ms)" if row["seed_ms"] else ""), flush=True)
    doc = {"model": gpu.name, "note": "GPU model from the CUDA simulator's counters: an ESTIMATE, not a measurement "
           "(roofline of sector bytes and flops at the full size; no caches, latency or launch overhead)",
           "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_model.json").write_text(json.dumps(doc, indent=1))
    lines = [f"# Portable kernels on a modelled {gpu.name} (CUDA simulator counters; estimates, not measurements)",
             "", "| operation | simulated n | ld sectors/req | st sectors/req | coalesced | bank conflicts | "
             "active lanes | launches | roofline estimate ms (full size) | seeds' GPU ms |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['simulated_size']} | {r['sectors_per_load_request']:.2f} | "
                     f"{r['sectors_per_store_request']:.2f} | {r['coalescing']:.0%} | {r['bank_conflicts']} | "
                     f"{r['active_lanes']:.1f} | {r['launches']} | {r['predicted_ms']:.3f} | {r['seed_ms'] or ''} |")
    lines += ["", "Per kernel (at the simulated size):", "",
              "| operation | kernel | ld sec/req | st sec/req | coalesced | bank passes/req | lanes | regs "
              "| occupancy |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        for k in r["kernels"]:
            lines.append(f"| {name} | {k['kernel']} | {k['sectors_per_load_request']:.2f} | "
                         f"{k['sectors_per_store_request']:.2f} | {k['coalescing']:.0%} | "
                         f"{k['bank_passes_per_request']:.2f} | {k['active_lanes']:.1f} | {k['registers']} | "
                         f"{k['occupancy_theoretical']:.0%} |")
    (out / "gpu_model.md").write_text("\n".join(lines) + "\n")
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for gpu_model.{json,md}")
    args = ap.parse_args(argv)
    if os.environ.get("DOTCOMPUTE_CUDA_SIM") == "1" and os.environ.get("DOTCOMPUTE_CUDA_SIM_COUNTERS") == "1":
        run_here(Path(args.out))
        return 0
    if shutil.which("clang++") is None:
        print("gpu model: skipped (the simulator's counters need clang++: apt-get install clang)")
        return 0
    env = dict(os.environ, DOTCOMPUTE_CUDA_SIM="1", DOTCOMPUTE_CUDA_SIM_COUNTERS="1")
    return subprocess.run([sys.executable, str(Path(__file__).resolve()), "--out", args.out], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
