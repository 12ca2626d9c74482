"""Cost of the kernel checks (docs/kernel-safety.md): launch time with check= against without, per check.

    python bench/check_bench.py [--repeat N] [--json PATH]

For a few conformance kernels (tests/python/lang/conformance_kernels.py) and a tiled reduction, each
launch is timed on cpu:0 (compiled and warmed first): plain, then with each check alone and all four.
A checked launch is the instrumented host run over copies of the arguments, then the real launch, so
the factor is (checked run + real run) / real run. Prints a table; never fails for being slow.

Run with DOTCOMPUTE_CUDA_SIM=1 it also times the correct raw CUDA kernels of
tests/python/check/cuda_corpus.py on the simulated cuda:0, plain and with each check (the trace build).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

import dotcompute as dc

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ["memcheck", "racecheck", "synccheck", "initcheck", "all"]
CASE_IDS = ["saxpy_large_prime_length", "shared_reduce_while_barrier", "tiled_matmul", "transpose_shared_tile",
            "histogram_shared_atomics", "stencil_laplacian", "nbody_step"]


def registry():
    spec = importlib.util.spec_from_file_location("conformance_kernels",
                                                  ROOT / "tests" / "python" / "lang" / "conformance_kernels.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["conformance_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


def best_of(fn, repeat: int) -> float:
    fn()  # compile and warm up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None)
    opts = ap.parse_args()
    reg = registry()
    cpu = dc.accelerator("cpu")
    cases = [c for c in reg.CASES if c.id in CASE_IDS] or reg.CASES[:4]
    rows = []
    for case in cases:
        args = reg.build_args(case)

        def run(check=None, case=case, args=args):
            dc.launch(case.kernel, case.global_size, *reg.copy_args(args), local_size=case.local_size,
                      accelerator=cpu, check=check)

        base = best_of(run, opts.repeat)
        row = {"kernel": case.id, "items": int(np.prod(case.global_size)), "plain_ms": base * 1e3}
        for c in CHECKS:
            row[c] = best_of(lambda c=c: run(c), opts.repeat) / base
        rows.append(row)
    head = f"{'kernel':28} {'items':>7} {'plain ms':>9} " + " ".join(f"{c:>9}" for c in CHECKS)
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['kernel']:28} {r['items']:7d} {r['plain_ms']:9.3f} " + " ".join(f"{r[c]:8.1f}x" for c in CHECKS))
    cuda = [b for b in dc.backends() if b.name == "cuda" and b.available and b.simulated]
    if cuda:
        rows += raw_cuda_rows(opts.repeat)
    if opts.json:
        opts.json.write_text(json.dumps(rows, indent=1))


def raw_cuda_rows(repeat: int) -> list[dict]:
    """The raw CUDA kernels' checks on the simulator: the same factor, per check."""
    sys.path.insert(0, str(ROOT / "tests" / "python" / "check"))
    import cuda_corpus

    sim = dc.accelerator("cuda:0")
    rows = []
    for case in cuda_corpus.CLEAN:
        kernel = dc.RawKernel(cuda_corpus.CLEAN_SOURCE, case.id, backend="cuda", shared_mem=case.shared_mem)

        def run(check=None, case=case, kernel=kernel):
            dc.launch(kernel, case.global_size, *case.make_args(), local_size=case.local_size, accelerator=sim,
                      check=check)
            sim.synchronize()

        base = best_of(run, repeat)
        row = {"kernel": f"raw cuda {case.id}", "items": int(np.prod(case.global_size)), "plain_ms": base * 1e3}
        for c in CHECKS:
            row[c] = best_of(lambda c=c: run(c), repeat) / base
        rows.append(row)
    head = f"{'raw CUDA kernel (simulator)':28} {'items':>7} {'plain ms':>9} " + " ".join(f"{c:>9}" for c in CHECKS)
    print()
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['kernel'][9:]:28} {r['items']:7d} {r['plain_ms']:9.3f} "
              + " ".join(f"{r[c]:8.1f}x" for c in CHECKS))
    return rows


if __name__ == "__main__":
    main()
