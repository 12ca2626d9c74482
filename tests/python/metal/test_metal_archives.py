"""Metal binary archives: the GPU code of every pipeline state goes into one MTLBinaryArchive in
the kernel-cache folder, and a later process builds its pipelines from it. The double counts
the pipelines its archives served (``archive_hits``) and the lookups they could not serve."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

TWO_KERNELS = """
#include <metal_stdlib>
using namespace metal;
kernel void add_one(device float* x [[buffer(0)]], constant long& n [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
  if (i < n) x[i] = x[i] + 1.0f;
}
kernel void negate(device float* x [[buffer(0)]], constant long& n [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
  if (i < n) x[i] = -x[i];
}
"""

# One "process" of an application: two pipelines built, used, and what the archive did reported.
SCRIPT = f"""
import json, sys
import numpy as np, dotcompute as dc
sys.path.insert(0, {str(Path(__file__).parent)!r})
from conftest import MetalDouble, double_library_of_loaded_plugin
acc = dc.accelerator("metal")
x = acc.asarray(np.arange(8, dtype=np.float32))
for name in ("add_one", "negate"):
    dc.launch(dc.RawKernel({TWO_KERNELS!r}, name, backend="metal"), 8, x, 8, accelerator=acc)
assert (x.numpy() == -(np.arange(8) + 1)).all()
lib = double_library_of_loaded_plugin()
dbl = MetalDouble(lib) if lib else None
print(json.dumps({{
    "archive": acc.info.get("binary_archive"),
    "note": acc.info.get("binary_archive_note", ""),
    "hits": dbl.count("archive_hits") if dbl else None,
    "misses": dbl.count("archive_misses") if dbl else None,
}}))
"""


@pytest.fixture
def run_app(metal, metal_env, run_python, tmp_cache):
    """Runs SCRIPT in a new process with the test's kernel-cache folder; returns its report."""

    def run(**env: str) -> dict:
        proc = run_python(SCRIPT, env={**metal_env, "DOTCOMPUTE_CACHE_DIR": str(tmp_cache), **env})
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    return run


def _private(path: Path) -> bool:
    st = path.lstat()
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def test_a_second_process_builds_its_pipelines_from_the_archive(run_app, tmp_cache):
    first = run_app()
    archive = Path(first["archive"])
    assert archive.parent == tmp_cache, first  # in the (checked, private) kernel-cache folder
    assert archive.exists() and _private(archive)
    second = run_app()
    assert second["archive"] == first["archive"]
    if first["hits"] is None:
        return  # Apple hardware: no double to count what Metal did
    assert (first["hits"], first["misses"]) == (0, 2), first  # both compiled, both added
    assert (second["hits"], second["misses"]) == (2, 0), second  # both from the archive
    assert not list(tmp_cache.glob(".tmp.*")), "a temporary archive file was left behind"


def test_an_unreadable_archive_is_replaced(run_app, tmp_cache):
    archive = Path(run_app()["archive"])
    archive.write_bytes(b"\x00 truncated by a crash \xff")
    report = run_app()
    assert "discarded an unreadable archive" in report["note"], report
    if report["hits"] is not None:
        assert (report["hits"], report["misses"]) == (0, 2), report
        assert run_app()["hits"] == 2  # rewritten whole: the next process uses it again


def test_an_archive_other_users_can_write_is_not_loaded(run_app, tmp_cache):
    archive = Path(run_app()["archive"])
    archive.chmod(0o666)  # anyone could have planted GPU code in it
    report = run_app()
    assert "not loaded (other users can write it)" in report["note"], report
    if report["hits"] is not None:
        assert report["hits"] == 0, report
    assert _private(archive), oct(archive.stat().st_mode)  # replaced by this user's own file


@pytest.mark.parametrize("make", ["fifo", "huge"])
def test_a_fifo_or_huge_file_in_place_of_the_archive_is_not_loaded(run_app, tmp_cache, make):
    # issue 22: state files are checked (regular file, size bound) before anything reads them
    archive = Path(run_app()["archive"])
    archive.unlink()
    if make == "fifo":
        os.mkfifo(archive, 0o600)
    else:
        with open(archive, "wb") as f:  # sparse: no disk used
            f.truncate(50 << 30)
    report = run_app()
    why = "it is not a regular file" if make == "fifo" else "over the limit"
    assert "not loaded (" in report["note"] and why in report["note"], report
    assert _private(archive) and archive.stat().st_size < 1 << 30  # replaced by the new archive


def test_without_binary_archives_pipelines_still_build(metal, run_app, tmp_cache):
    if not metal.info.get("test_double"):
        pytest.skip("an OS without binary archives is modelled by the test double's DC_METAL_DOUBLE_ARCHIVES=0")
    report = run_app(DC_METAL_DOUBLE_ARCHIVES="0")
    assert report["archive"] is None and "no Metal binary archives" in report["note"], report
    assert (report["hits"], report["misses"]) == (0, 0), report
    assert not list(tmp_cache.glob("*.mtlarchive"))
