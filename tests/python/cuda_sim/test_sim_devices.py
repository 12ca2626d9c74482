"""Configured simulated devices (DOTCOMPUTE_CUDA_SIM_DEVICES), in fresh interpreters: several
devices with peer copies, the configured properties, out-of-memory at the configured size, and
a malformed configuration reported clearly. These run in every session (they start their own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from sim_helpers import nvrtc_missing

pytestmark = pytest.mark.skipif(nvrtc_missing(), reason="NVRTC not installed (pip install 'dotcompute[cuda]')")

SIM = {"DOTCOMPUTE_CUDA_SIM": "1"}


def run_script(tmp_path, code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Runs `code` from a file (kernels need their source on disk) in a fresh interpreter."""
    script = tmp_path / "script.py"
    script.write_text(code)
    full = dict(os.environ, DOTCOMPUTE_CACHE_DIR=str(tmp_path / "cache"), **env)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full, timeout=300)

TWO_DEVICES = r"""
import json, numpy as np, dotcompute as dc

@dc.kernel
def twice(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < y.shape[0]:
        y[i] = 2.0 * x[i]

d0, d1 = dc.accelerator("cuda:0"), dc.accelerator("cuda:1")
xs = np.arange(10000, dtype=np.float32)
x0 = d0.asarray(xs)
x1 = x0.copy_to_device(d1)           # a peer copy between simulated devices
y1 = d1.zeros((10000,), np.float32)
d1.launch(twice, 10000, x1, y1)
back = y1.copy_to_device(d0)
print(json.dumps({"ok": bool((back.numpy() == 2 * xs).all()),
                  "names": [d0.name, d1.name], "cc": [d0.info["compute_capability"], d1.info["compute_capability"]],
                  "memory": [d0.info["memory"], d1.info["memory"]], "sms": d1.info["compute_units"]}))
"""


def test_two_devices_with_peer_copies(tmp_path):
    env = {**SIM, "DOTCOMPUTE_CUDA_SIM_DEVICES": "1;cc=8.0,memory=40G,sms=108"}
    r = run_script(tmp_path, TWO_DEVICES, env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["ok"]
    assert all("simulated" in name for name in out["names"])
    assert out["cc"] == [[9, 0], [8, 0]]
    assert out["memory"] == [80 << 30, 40 << 30] and out["sms"] == 108


OOM = r"""
import numpy as np, dotcompute as dc
acc = dc.accelerator("cuda:0")
a = acc.empty((8 << 20,), np.float32)       # 32 MiB of the 64 MiB device
try:
    acc.empty((16 << 20,), np.float32)      # 64 MiB more cannot fit
except dc.OutOfMemoryError as e:
    print("OOM", e)
del a
b = acc.empty((12 << 20,), np.float32)      # 48 MiB fits once the first is gone
print("after", b.shape[0])
"""


def test_out_of_memory_at_the_configured_size(tmp_path):
    r = run_script(tmp_path, OOM, {**SIM, "DOTCOMPUTE_CUDA_SIM_DEVICES": "memory=64M"})
    assert r.returncode == 0, r.stderr
    assert "OOM" in r.stdout and "after 12582912" in r.stdout


def test_a_malformed_configuration_leaves_cuda_unavailable(tmp_path):
    code = "import dotcompute as dc; print([(b.name, b.available, b.reason) for b in dc.backends()])"
    r = run_script(tmp_path, code, {**SIM, "DOTCOMPUTE_CUDA_SIM_DEVICES": "cc=9.0,colour=green"})
    assert r.returncode == 0, r.stderr
    assert "('cuda', False" in r.stdout
    # The simulator's reason ("unknown key 'colour'") is what the user sees where libcuda.so.1 exists;
    # elsewhere the core reports the manifest's missing libcuda.so.1 instead.
