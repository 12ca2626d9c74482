"""Audit: dotcompute.dask (DESIGN.md "Beyond one machine") and what a newcomer meets on the command line."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def axpb(x: dc.Buffer[dc.float32], a: dc.float32, b: dc.float32, out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + b


@dc.kernel
def split(x: dc.Buffer[dc.float32], up: dc.Buffer[dc.float32], down: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        up[i] = x[i] + 1.0
        down[i] = x[i] - 1.0


@dc.kernel
def smooth(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    n = x.shape[0]
    if i < n:
        left = x[i - 1] if i > 0 else x[i]
        right = x[i + 1] if i < n - 1 else x[i]
        out[i] = (left + x[i] + right) / 3.0


def test_dask_blocks_overlap_and_reductions(accelerator):
    da = pytest.importorskip("dask.array")
    import dask

    import dotcompute.dask as dcd

    xn = np.arange(100, dtype=np.float32)
    with dask.config.set(scheduler="threads"):
        # chunks with an empty block in the middle: its output is empty too, nothing launched for it
        for chunks in (30, ((50, 0, 50),)):
            x = da.from_array(xn, chunks=chunks)
            y = dcd.map_blocks(axpb, x, 2.0, 1.0, accelerator=accelerator.id)
            np.testing.assert_allclose(y.compute(), 2 * xn + 1)
            assert float(dcd.sum(y).compute()) == pytest.approx(float((2 * xn + 1).sum()))
        up, down = dcd.map_blocks(split, da.from_array(xn, chunks=40), accelerator=accelerator.id)
        np.testing.assert_allclose(up.compute(), xn + 1)
        np.testing.assert_allclose(down.compute(), xn - 1)
        s = dcd.map_overlap(smooth, da.from_array(xn, chunks=25), depth=1, boundary="nearest",
                            accelerator=accelerator.id)
        padded = np.pad(xn, 1, mode="edge")
        np.testing.assert_allclose(s.compute(), (padded[:-2] + padded[1:-1] + padded[2:]) / 3, rtol=1e-6)
        with pytest.raises(dc.KernelTypeError, match="'x'"):
            dcd.map_blocks(axpb, da.from_array(xn.astype(np.float64), chunks=30), 2.0, 1.0).compute()


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "dotcompute", *args], capture_output=True, text=True,
                          env=full, timeout=300)


def test_info_lists_every_configuration_variable():
    r = _cli("info", env={"DOTCOMPUTE_DEBUG": "1"})
    assert r.returncode == 0, r.stderr
    for name in ["DOTCOMPUTE_CACHE_DIR", "DOTCOMPUTE_PLUGIN_PATH", "DOTCOMPUTE_BACKENDS", "DOTCOMPUTE_CXX",
                 "DOTCOMPUTE_DEBUG", "DOTCOMPUTE_LOG", "DOTCOMPUTE_CUDA_DRIVER", "DOTCOMPUTE_NVRTC",
                 "DOTCOMPUTE_CUDA_SIM", "DOTCOMPUTE_PROFILE"]:
        assert name in r.stdout, name
    assert "DOTCOMPUTE_DEBUG=1" in r.stdout
    assert "cpu:0" in r.stdout


def test_info_reports_a_bad_setting_without_a_traceback():
    r = _cli("info", env={"DOTCOMPUTE_LOG": "not-a-level"})
    assert r.returncode != 0
    assert "Traceback" not in r.stderr + r.stdout
    assert "DOTCOMPUTE_LOG" in r.stdout + r.stderr


def test_help_and_no_command():
    r = _cli("--help")
    assert r.returncode == 0 and "info" in r.stdout
    r = _cli()
    assert "usage" in (r.stdout + r.stderr).lower() and "Traceback" not in r.stderr


def test_kernel_errors_point_at_the_users_file(tmp_path):
    script = tmp_path / "user_kernels.py"
    script.write_text(
        "import numpy as np\n"
        "import dotcompute as dc\n"
        "\n"
        "@dc.kernel\n"
        "def bad(a: dc.Buffer[dc.float32]):\n"
        "    i = dc.global_id(0)\n"
        "    a[i] = {1: 2}\n"
        "\n"
        "dc.launch(bad, 4, np.zeros(4, np.float32), accelerator='cpu')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1  # a Python exception, not a signal
    assert "KernelSyntaxError" in r.stderr
    assert "user_kernels.py" in r.stderr and "7" in r.stderr
    assert "terminate called" not in r.stderr and "Segmentation" not in r.stderr
