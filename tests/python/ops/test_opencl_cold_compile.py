"""PoCL's compile cache inside ours (runtime/opencl_cache.py) and ``dotcompute precompile --ops``
(cli/precompile_ops.py): the folder chosen, the user's setting kept, and a warmed operation that a
new process finds compiled."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.cli import precompile_ops
from dotcompute.runtime import opencl_cache


def _has_opencl() -> bool:
    return any(d.id.startswith("opencl:") for d in dc.devices())


needs_opencl = pytest.mark.skipif(not _has_opencl(), reason="no OpenCL device")


@pytest.fixture
def no_pocl_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POCL_CACHE_DIR", raising=False)
    monkeypatch.delenv(opencl_cache._MARKER, raising=False)  # noqa: SLF001


def test_pocl_cache_goes_inside_ours_owner_only(tmp_path: Path, no_pocl_env: None) -> None:
    folder = opencl_cache.point_pocl_cache(tmp_path)
    assert folder == str(tmp_path / "pocl")
    assert os.environ["POCL_CACHE_DIR"] == folder
    assert stat.S_IMODE((tmp_path / "pocl").stat().st_mode) == 0o700


def test_existing_folder_is_made_private(tmp_path: Path, no_pocl_env: None) -> None:
    (tmp_path / "pocl").mkdir(mode=0o777)
    os.chmod(tmp_path / "pocl", 0o777)
    assert opencl_cache.point_pocl_cache(tmp_path) == str(tmp_path / "pocl")
    assert stat.S_IMODE((tmp_path / "pocl").stat().st_mode) == 0o700


def test_users_setting_and_memory_only_cache_left_alone(tmp_path: Path, no_pocl_env: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert opencl_cache.point_pocl_cache("") is None
    assert "POCL_CACHE_DIR" not in os.environ
    monkeypatch.setenv("POCL_CACHE_DIR", str(tmp_path / "mine"))
    assert opencl_cache.point_pocl_cache(tmp_path) is None
    assert os.environ["POCL_CACHE_DIR"] == str(tmp_path / "mine")
    assert not (tmp_path / "pocl").exists()


def test_inherited_setting_follows_this_process_cache(tmp_path: Path, no_pocl_env: None) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert opencl_cache.point_pocl_cache(tmp_path / "a") == str(tmp_path / "a" / "pocl")
    # what a child process with another DOTCOMPUTE_CACHE_DIR sees: the parent's value and marker
    assert opencl_cache.point_pocl_cache(tmp_path / "b") == str(tmp_path / "b" / "pocl")
    assert os.environ["POCL_CACHE_DIR"] == str(tmp_path / "b" / "pocl")


def test_symlinked_folder_refused(tmp_path: Path, no_pocl_env: None) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "pocl").symlink_to(tmp_path / "elsewhere")
    assert opencl_cache.point_pocl_cache(tmp_path) is None
    assert "POCL_CACHE_DIR" not in os.environ


def test_clear_removes_contents_keeps_folder(tmp_path: Path, no_pocl_env: None) -> None:
    folder = Path(opencl_cache.point_pocl_cache(tmp_path) or "")
    (folder / "AB" / "CD").mkdir(parents=True)
    (folder / "AB" / "CD" / "program.bc").write_bytes(b"x" * 10)
    (folder / "tempfile_1").write_bytes(b"y" * 3)
    assert opencl_cache.clear_pocl_cache(tmp_path) == 13
    assert folder.is_dir() and not any(folder.iterdir())
    # a folder PoCL does not use (another POCL_CACHE_DIR) is not ours to empty
    (folder / "keep").write_bytes(b"z")
    os.environ["POCL_CACHE_DIR"] = str(tmp_path / "other")
    assert opencl_cache.clear_pocl_cache(tmp_path) == 0
    assert (folder / "keep").exists()


def test_parse_ops() -> None:
    assert precompile_ops.parse_ops(["sum,argmax:int64+float64", " min # comment"]) == [
        ("sum", None), ("argmax", ("int64", "float64")), ("min", None)]
    assert [n for n, _ in precompile_ops.parse_ops(["all"])] == list(precompile_ops.OPERATIONS)
    with pytest.raises(ValueError, match="unknown operation 'summ'"):
        precompile_ops.parse_ops(["summ"])
    with pytest.raises(ValueError, match="unknown dtype 'floaty'"):
        precompile_ops.parse_ops(["sum:floaty"])


def _run(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args] if args else [sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@needs_opencl
def test_precompiled_operation_is_a_cache_hit_in_a_new_process(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("POCL_CACHE_DIR", opencl_cache._MARKER)}  # noqa: SLF001
    env["DOTCOMPUTE_CACHE_DIR"] = str(tmp_path / "cache")
    warmed = _run("", env, "-m", "dotcompute.cli.main", "precompile", "--ops", "max:int32", "-a", "opencl:0")
    assert warmed.returncode == 0, warmed.stderr
    assert "max int32: warmed on opencl:0" in warmed.stdout
    # PoCL's work-group functions went into our folder, not ~/.cache/pocl
    assert list((tmp_path / "cache" / "pocl").rglob("*.so"))
    probe = """
import json, os, numpy as np, dotcompute as dc
from dotcompute.runtime import cache_info
acc = dc.accelerator("opencl:0")
x = np.arange(5000, dtype=np.int32)[::-1].copy()
got = [int(dc.max(acc.asarray(x))), int(dc.max(acc.asarray(x[:7]))), int(dc.max(acc.asarray(x[:900])))]
print(json.dumps({"got": got, "misses": cache_info()["misses"], "pocl": os.environ["POCL_CACHE_DIR"]}))
"""
    out = _run(probe, env)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["got"] == [4999, 4999, 4999]
    assert report["misses"] == 0  # every kernel of the three sizes came from the cache
    assert report["pocl"] == str(tmp_path / "cache" / "pocl")


@pytest.mark.parametrize("n", [33, 1000, 16384, 16385, 40_000])
def test_short_rows_path_on_cpu_devices_matches_numpy(accelerator: dc.Accelerator, n: int) -> None:
    """Around ROWS_ON_CPU_MAX (one work-item per row on CPU-type devices, the tree beyond): sums,
    extremes and arg-searches with ties and NaN, full and along an axis, against numpy."""
    rng = np.random.default_rng(n)
    x = rng.integers(-50, 50, n).astype(np.float32)  # many ties
    x[[n // 3, n - 1]] = 60.0  # the largest twice: argmax is the first
    with dc.ops.prefer("portable"):
        b = accelerator.asarray(x)
        assert float(dc.sum(b)) == float(x.sum(dtype=np.float64))  # integers: exact in float32
        assert [float(dc.min(b)), float(dc.max(b)), int(dc.argmin(b)), int(dc.argmax(b))] == \
            [x.min(), x.max(), x.argmin(), x.argmax()]
        y = x.copy()
        y[[n // 2, n // 2 + 1]] = np.nan
        bn = accelerator.asarray(y)
        assert np.isnan(float(dc.max(bn))) and int(dc.argmax(bn)) == n // 2 and int(dc.argmin(bn)) == n // 2
        m = np.stack([x, x[::-1]])
        bm = accelerator.asarray(m)
        np.testing.assert_array_equal(dc.argmax(bm, axis=1).numpy(), m.argmax(axis=1))
        np.testing.assert_array_equal(dc.sum(bm, axis=1).numpy(), m.sum(axis=1))
        i = accelerator.asarray(np.arange(n, dtype=np.int64) % 7)
        assert int(dc.sum(i)) == int((np.arange(n) % 7).sum()) and int(dc.argmax(i)) == 6


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_raw_bits_extreme_kernel_per_run_with_nan_and_inf(accelerator: dc.Accelerator, dtype: type) -> None:
    """lanes_extreme_fast_kernel (the per-run min/max of CPU-type devices): the floats' raw bits folded
    as integers, a run holding a NaN folded again in order; every run against numpy, with a NaN
    first in a run, a NaN after a smaller value, +-inf, a short last run, and runs spread over extra
    items."""
    from dotcompute.ops import reduce_kernels as rk
    from dotcompute.runtime.default_device import has_float64

    if dtype == np.float64 and not has_float64(accelerator):
        pytest.skip("no float64 on this device")
    run = rk.RUN
    n = 9 * run + 37
    x = np.random.default_rng(7).standard_normal(n).astype(dtype)
    x[0] = np.nan  # first element of run 0: every lane starts from it
    x[run + 500] = -1e9
    x[run + 501] = np.nan  # after a smaller value: a plain select would skip it
    x[3 * run + 17] = np.inf
    x[4 * run + 18] = -np.inf
    x[9 * run + 30] = np.nan  # in the short last run's tail
    runs = -(-n // run)
    b = accelerator.asarray(x)
    for smallest, ref in ((True, np.min), (False, np.max)):
        want = np.array([ref(x[i * run:(i + 1) * run]) for i in range(runs)], dtype)
        for spread in (1, 3):
            out = accelerator.empty((runs,), dtype)
            accelerator.launch(rk.lanes_extreme_fast_kernel(dtype, smallest), runs * spread, b, out, spread, run)
            np.testing.assert_array_equal(out.numpy(), want)
