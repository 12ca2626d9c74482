"""The kernel cache holds native code that is dlopen'ed: only a private folder is used, entries
must be this user's and pass their checksum, and concurrent processes compile a kernel once."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

# A fresh process: the runtime reads DOTCOMPUTE_CACHE_DIR once, when it starts. Prints a JSON line.
PROBE = r"""
import json, sys, warnings
import numpy as np
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import dotcompute as dc
    from dotcompute.runtime.cache import cache_info
    k = dc.RawKernel('''
#include "dotcompute/cpu_kernel_abi.h"
extern "C" void fill(const dc_cpu_launch* L, uint64_t g0, uint64_t g1, void*) {
  float* out = *(float* const*)L->args[0];
  for (uint64_t i = g0 * L->local_size[0]; i < g1 * L->local_size[0] && i < L->global_size[0]; ++i)
    out[i] = (float)i * TAG;
}''', "fill", backend="cpu", options="-DTAG=" + sys.argv[1])
    out = np.zeros(64, np.float32)
    dc.launch(k, 64, out, accelerator="cpu")
    assert (out == np.arange(64, dtype=np.float32) * float(sys.argv[1])).all()
    info = cache_info()
print(json.dumps({"warnings": [str(w.message) for w in caught], **info}))
"""


def _probe(script: Path, cache: Path, tag: str, env: dict[str, str] | None = None) -> dict:
    full = dict(os.environ, DOTCOMPUTE_CACHE_DIR=str(cache), **(env or {}))
    r = subprocess.run([sys.executable, str(script), tag], capture_output=True, text=True, env=full, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    p = tmp_path / "probe.py"
    p.write_text(PROBE)
    return p


def test_world_writable_cache_folder_is_refused(tmp_path, probe):
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)
    out = _probe(probe, shared, "3")
    assert out["dir"] != str(shared)
    assert any(str(shared) in w and "0o777" in w for w in out["warnings"]), out["warnings"]
    used = Path(out["dir"])
    st = used.stat()
    assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o022 == 0
    assert list(shared.iterdir()) == []  # nothing was written into the untrusted folder


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_cache_folder_owned_by_someone_else_is_refused(tmp_path, probe):
    theirs = tmp_path / "their-cache"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 65534, 65534)
    out = _probe(probe, theirs, "5")
    assert out["dir"] != str(theirs)
    assert any("owned by uid 65534" in w for w in out["warnings"]), out["warnings"]


def test_private_folder_is_created_0700_and_used_without_warning(tmp_path, probe):
    mine = tmp_path / "new" / "cache"
    out = _probe(probe, mine, "7")
    assert out["dir"] == str(mine) and out["warnings"] == [] and out["warning"] == ""
    assert stat.S_IMODE(mine.stat().st_mode) == 0o700
    entries = list(mine.glob("*.dck"))
    assert entries and all(stat.S_IMODE(e.stat().st_mode) == 0o600 for e in entries)


def test_entry_that_others_can_write_is_not_loaded(tmp_path, probe):
    cache = tmp_path / "cache"
    first = _probe(probe, cache, "9")
    assert first["misses"] >= 1
    assert _probe(probe, cache, "9")["disk_hits"] >= 1  # the entry is trusted as written
    for e in cache.glob("*.dck"):
        e.chmod(0o666)
    again = _probe(probe, cache, "9")
    assert again["disk_hits"] == 0 and again["misses"] >= 1  # rebuilt, not loaded


def test_cache_max_bytes_from_the_environment(tmp_path, probe):
    cache = tmp_path / "cache"
    assert _probe(probe, cache, "2", {"DOTCOMPUTE_CACHE_MAX_BYTES": "12345678"})["max_bytes"] == 12345678
    bad = _probe(probe, cache, "2", {"DOTCOMPUTE_CACHE_MAX_BYTES": "lots"})
    assert bad["max_bytes"] == 512 << 20
    assert any("DOTCOMPUTE_CACHE_MAX_BYTES='lots'" in w for w in bad["warnings"])
    r = subprocess.run([sys.executable, "-m", "dotcompute", "info"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, DOTCOMPUTE_CACHE_DIR=str(cache), DOTCOMPUTE_CACHE_MAX_BYTES="12345678"))
    assert r.returncode == 0, r.stderr
    assert "DOTCOMPUTE_CACHE_MAX_BYTES" in r.stdout and "12345678" in r.stdout


def test_concurrent_cold_compiles_build_once(tmp_path, probe):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, DOTCOMPUTE_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, str(probe), "11"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    # each process found the entry (a disk hit), or missed and then either built it (no hit) or waited
    # for the builder and read its entry (a miss and a disk hit)
    builders = [r for r in results if r["misses"] >= 1 and r["disk_hits"] == 0]
    assert len(builders) == 1, results
    assert not list(cache.glob(".lock.*"))  # lock files are removed by their holders
