"""The simulator's host builds share one precompiled shim header per process (cuda/sim/host_build.hpp).

Runs in a fresh interpreter with the simulator on, its own TMPDIR and an empty kernel cache, so it
works from any session; skipped where cuda:0 cannot be simulated here.
"""

from __future__ import annotations

import os

import pytest

CHILD = r"""
import os, numpy as np, dotcompute as dc
acc = dc.accelerator("cuda:0")
if not acc.info.get("simulated"):
    print("NOSIM"); raise SystemExit
src = ('extern "C" __global__ void k{i}(float* x, int n) {{ int t = blockIdx.x * blockDim.x + threadIdx.x; '
       'if (t < n) x[t] = x[t] * {i}.0f + 1.0f; }}')
for i in range(1, 6):  # five different kernels: the .gch is made at the third build
    k = dc.RawKernel(src.format(i=i), f"k{i}", backend="cuda")
    x = acc.asarray(np.full(100, 2.0, np.float32))
    acc.launch(k, 100, x, np.int32(100), local_size=32)
    assert (x.numpy() == 2.0 * i + 1.0).all(), (i, x.numpy()[:4])
tmp = os.environ["TMPDIR"]
mine = [d for d in os.listdir(tmp) if d.startswith(f"dcsim-pch-{os.getpid()}-")]
gch = [f for d in mine for _, _, files in os.walk(os.path.join(tmp, d)) for f in files if f.endswith(".gch")]
print("PID", os.getpid(), "DIRS", len(mine), "GCH", len(gch))
"""


def test_one_precompiled_header_per_process_removed_at_exit(tmp_path, tmp_cache, run_python):
    tmp = tmp_path / "tmp"
    tmp.mkdir(mode=0o700)
    # left by a process that was killed (a pid no process has: above the kernel's pid_max)
    orphan = tmp / "dcsim-pch-4194305-abc123"
    orphan.mkdir()
    (orphan / "dcsim_cuda.h.gch").write_text("left behind")
    # a live process's folder (this one's) is not touched
    alive = tmp / f"dcsim-pch-{os.getpid()}-def456"
    alive.mkdir()
    r = run_python(CHILD, env={"DOTCOMPUTE_CUDA_SIM": "1", "TMPDIR": str(tmp)}, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    if "NOSIM" in r.stdout:
        pytest.skip("cuda:0 cannot be simulated here (the simulator or NVRTC is missing)")
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("PID"))
    _, pid, _, dirs, _, gch = line.split()
    assert (dirs, gch) == ("1", "1"), line  # one folder, one .gch: every build used the same flags
    assert not orphan.exists(), "a dead process's precompiled header was left in TMPDIR"
    assert alive.exists(), "a live process's folder was removed"
    left = [d.name for d in tmp.iterdir() if d.name.startswith("dcsim")]
    assert left == [alive.name], f"the child (pid {pid}) left {left} behind"
