"""How long the CUDA simulator takes to build a kernel for the host (cuda/sim/host_build.hpp).

    python bench/sim_build_time.py                 # 12 distinct kernels in one fresh process
    python bench/sim_build_time.py --kernels 20 --name round14/sim_build

One child process (DOTCOMPUTE_CUDA_SIM=1, an empty kernel cache, its own TMPDIR) builds and runs
`--kernels` distinct raw CUDA kernels one after another and times each first launch: NVRTC's compile
(the simulator compiles every kernel with NVRTC first), the host build and the load. A process's
first two builds compile the whole shim with the kernel; the third also makes the shared runtime
object and precompiled header; later builds compile only the kernel's own code. Writes
bench/results/<name>.{json,md}. Measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
import dotcompute as dc
acc = dc.accelerator("cuda:0")
assert acc.info.get("simulated"), "cuda:0 is not the simulator"
src = ('extern "C" __global__ void k{i}(float* x, int n) {{ int t = blockIdx.x * blockDim.x + threadIdx.x; '
       'if (t < n) x[t] = x[t] * {i}.0f + 1.0f; }}')
x = acc.asarray(np.ones(256, np.float32))
times = []
for i in range(1, int(sys.argv[1]) + 1):
    k = dc.RawKernel(src.format(i=i), f"k{i}", backend="cuda")
    t = time.perf_counter()
    acc.launch(k, 256, x, np.int32(256), local_size=64)
    acc.synchronize()
    times.append(time.perf_counter() - t)
print(json.dumps(times))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=12)
    ap.add_argument("--name", default="sim_build", help="results file name under bench/results/")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, DOTCOMPUTE_CUDA_SIM="1", DOTCOMPUTE_CACHE_DIR=cache, TMPDIR=tmp)
        out = subprocess.run([sys.executable, "-c", CHILD, str(args.kernels)], env=env, capture_output=True,
                             text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(out.stderr[-2000:])
    times = json.loads(out.stdout.strip().splitlines()[-1])
    later = times[3:]
    summary = {"kernels": len(times), "first_two_s": times[:2], "third_s": times[2],
               "later_median_s": statistics.median(later) if later else None,
               "load": os.getloadavg()[0], "times_s": times}
    rows = ["| build | seconds |", "|---:|---:|"] + [f"| {i + 1} | {t:.3f} |" for i, t in enumerate(times)]
    md = (f"# Simulator host builds, one fresh process ({len(times)} distinct kernels)\n\n"
          f"Each figure is the first launch of a new raw CUDA kernel on the simulated cuda:0 (NVRTC, host "
          f"build, load). Builds 1-2: the whole shim with the kernel; build 3 also makes the shared runtime "
          f"object and header; later: the kernel's own code only. Median of builds 4-{len(times)}: "
          f"{summary['later_median_s']:.3f} s. Load average at the end: {summary['load']:.2f}.\n\n"
          + "\n".join(rows) + "\n")
    dest = Path(__file__).resolve().parent / "results" / args.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n")
    dest.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
