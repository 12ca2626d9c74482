"""Audit 2: configuration (DESIGN.md "Configuration") and the `dotcompute` command with bad input.

A bad value of a setting that has a sensible default never takes a device away: cpu:0 is always
present. Each bad value is one DotComputeWarning naming the variable and the value; `dotcompute
info` lists it and the thread count in use. The CLI answers bad arguments with an exit status and
one line, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dotcompute as dc
from dotcompute import config

# A fresh process (the runtime reads its settings once, when it starts): every DotComputeWarning
# raised while starting it and running one kernel on cpu:0, and what it found, as one JSON line.
PROBE = r"""
import json, logging, warnings
import numpy as np
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import dotcompute as dc

    @dc.kernel
    def bump(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < a.shape[0]:
            a[i] = a[i] + 1.0

    ids = [d.id for d in dc.devices()]
    out = np.zeros(33, np.float32)
    dc.launch(bump, 33, out, accelerator="cpu:0")
    # accelerator="best" keeps a device history beside the kernel cache (saved at exit)
    for _ in range(4):
        dc.launch(bump, 33, np.zeros(33, np.float32), accelerator="best")
    threads = dc.accelerator("cpu:0").info.get("threads")
print(json.dumps({"warnings": [str(w.message) for w in caught if issubclass(w.category, dc.DotComputeWarning)],
                  "where": [w.filename for w in caught if issubclass(w.category, dc.DotComputeWarning)],
                  "ids": ids, "ran": bool((out == 1).all()), "threads": threads,
                  "log_level": logging.getLogger("dotcompute").getEffectiveLevel()}))
"""


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("DOTCOMPUTE_CPU_THREADS", "DOTCOMPUTE_BACKENDS", "DOTCOMPUTE_LOG", "DOTCOMPUTE_CACHE_DIR"):
        env.pop(name, None)
    env.update(extra)
    return env


def _probe(tmp_path: Path, **extra: str) -> dict:
    script = tmp_path / "probe_user_script.py"
    script.write_text(PROBE)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=_env(**extra), timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _cli(*args: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dotcompute", *args], capture_output=True, text=True,
                          env=_env(**extra), timeout=300, cwd=cwd)


# -- DOTCOMPUTE_CPU_THREADS ------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["abc", "0", "-1"])
def test_bad_cpu_thread_count_keeps_cpu0_and_warns_once(tmp_path, value):
    got = _probe(tmp_path, DOTCOMPUTE_CPU_THREADS=value)
    assert "cpu:0" in got["ids"], got  # DESIGN: cpu:0 always present
    assert got["ran"]
    mine = [w for w in got["warnings"] if "DOTCOMPUTE_CPU_THREADS" in w]
    assert len(mine) == 1, got["warnings"]
    assert repr(value) in mine[0] and "default" in mine[0]
    # the warning points at the user's script, not inside the package
    assert all(w.endswith("probe_user_script.py") for w in got["where"]), got["where"]
    assert isinstance(got["threads"], int) and got["threads"] >= 1


def test_valid_cpu_thread_count_is_used_without_a_warning(tmp_path):
    got = _probe(tmp_path, DOTCOMPUTE_CPU_THREADS="1")
    assert got["warnings"] == []
    assert got["threads"] == 1


def test_cpu_threads_accessor(monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_CPU_THREADS", " 3 ")
    assert config.cpu_threads() == 3
    for bad in ["audit2-x", "0", "-7", "1.5", "99999"]:
        monkeypatch.setenv("DOTCOMPUTE_CPU_THREADS", bad)
        with pytest.warns(dc.DotComputeWarning, match="DOTCOMPUTE_CPU_THREADS"):
            assert config.cpu_threads() is None
    # once per value: reading the setting again stays quiet
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert config.cpu_threads() is None
        assert config.problems() and "DOTCOMPUTE_CPU_THREADS" in config.problems()[0]


def test_info_shows_the_thread_count_in_use():
    r = _cli("info", DOTCOMPUTE_CPU_THREADS="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "threads: 1 (DOTCOMPUTE_CPU_THREADS)" in r.stdout
    r = _cli("info", DOTCOMPUTE_CPU_THREADS="abc")
    assert "Traceback" not in r.stdout + r.stderr
    assert "warning: DOTCOMPUTE_CPU_THREADS='abc'" in r.stdout
    assert "threads: " in r.stdout and "(default" in r.stdout
    assert r.returncode == 1  # info says the setup has a problem
    assert "DOTCOMPUTE_CPU_THREADS" not in r.stderr  # shown once, in the report


# -- DOTCOMPUTE_BACKENDS ---------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "unknown"), [("cuda,opencl,vulkan", ["vulkan"]), ("cpu,opnecl", ["opnecl"])])
def test_unknown_backend_names_are_warned_about(tmp_path, value, unknown):
    got = _probe(tmp_path, DOTCOMPUTE_BACKENDS=value)
    mine = [w for w in got["warnings"] if "DOTCOMPUTE_BACKENDS" in w]
    assert len(mine) == 1, got["warnings"]
    for name in unknown:
        assert repr(name) in mine[0]
    assert "known backends" in mine[0] and "opencl" in mine[0] and "cuda" in mine[0]
    assert "cpu:0" in got["ids"] and got["ran"]


def test_known_backend_names_are_quiet(tmp_path):
    got = _probe(tmp_path, DOTCOMPUTE_BACKENDS="cpu, OpenCL")
    assert got["warnings"] == []


def test_unknown_backends_accessor(monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_BACKENDS", "cpu,metal,opnecl,myplugin")
    assert config.unknown_backends() == ["opnecl", "myplugin"]
    assert config.unknown_backends(found=["myplugin"]) == ["opnecl"]  # a third-party plugin's name is known


# -- DOTCOMPUTE_LOG --------------------------------------------------------------------------------

def test_bad_log_level_falls_back_to_the_default(tmp_path):
    got = _probe(tmp_path, DOTCOMPUTE_LOG="chatty")
    assert "cpu:0" in got["ids"] and got["ran"]  # it used to stop the runtime (ValueError)
    mine = [w for w in got["warnings"] if "DOTCOMPUTE_LOG" in w]
    assert len(mine) == 1 and "'chatty'" in mine[0] and "default" in mine[0]
    assert got["log_level"] == 30  # WARNING: Python's default, untouched


def test_good_log_level_is_applied(tmp_path):
    got = _probe(tmp_path, DOTCOMPUTE_LOG="error")
    assert got["warnings"] == [] and got["log_level"] == 40


# -- the kernel cache folder -----------------------------------------------------------------------

@pytest.mark.parametrize("mode", [0o770, 0o777, 0o720])
def test_cache_folder_others_can_write_is_not_used(tmp_path, mode):
    folder = tmp_path / "shared-cache"
    folder.mkdir()
    folder.chmod(mode)
    got = _probe(tmp_path, DOTCOMPUTE_CACHE_DIR=str(folder))
    assert got["ran"]
    mine = [w for w in got["warnings"] if "kernel cache folder" in w]
    assert len(mine) == 1 and str(folder) in mine[0] and "other users can write it" in mine[0]
    # nothing was written (or would be loaded) there: no kernels, no device history either
    assert list(folder.iterdir()) == []
    assert all(w.endswith("probe_user_script.py") for w in got["where"]), got["where"]


def test_cache_folder_that_is_a_file_falls_back(tmp_path):
    path = tmp_path / "not-a-folder"
    path.write_text("x")
    got = _probe(tmp_path, DOTCOMPUTE_CACHE_DIR=str(path))
    assert got["ran"]
    assert any("not a folder" in w for w in got["warnings"]), got["warnings"]
    r = _cli("cache", "info", DOTCOMPUTE_CACHE_DIR=str(path))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert r.stderr.count("not a folder") == 1  # one warning line, not the warning twice


# -- the command line with bad arguments -----------------------------------------------------------

def _one_line_failure(r: subprocess.CompletedProcess, *needles: str) -> None:
    text = r.stdout + r.stderr
    assert r.returncode not in (0, None), text
    assert "Traceback" not in text, text
    for needle in needles:
        assert needle in text, text


def test_check_with_unreadable_inputs(tmp_path):
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"\xff\xfe\x00junk")
    _one_line_failure(_cli("check", str(binary)), "blob.py", "cannot read")
    _one_line_failure(_cli("check", str(tmp_path / "missing.py")), "missing.py", "cannot read")
    _one_line_failure(_cli("check", str(tmp_path)), "cannot read")
    _one_line_failure(_cli("check"), "FILE")


def test_precompile_with_bad_arguments(tmp_path):
    good = tmp_path / "kernels_ok.py"
    good.write_text("import dotcompute as dc\n\n@dc.kernel\ndef k(a: dc.Buffer[dc.float32]):\n    a[0] = 1.0\n")
    broken = tmp_path / "kernels_broken.py"
    broken.write_text("x = (\n")
    failing = tmp_path / "kernels_fail.py"
    failing.write_text("import no_such_module_for_audit2\n")
    r = _cli("precompile", str(tmp_path / "nope.py"))
    _one_line_failure(r, "no such file")
    _one_line_failure(_cli("precompile", str(broken)), "cannot import", "SyntaxError")
    _one_line_failure(_cli("precompile", str(failing)), "cannot import", "no_such_module_for_audit2")
    _one_line_failure(_cli("precompile", "no_such_module_for_audit2"), "cannot import")
    r = _cli("precompile", str(good), "-k", "nothere")
    _one_line_failure(r, "'nothere'", "kernels: k")
    _one_line_failure(_cli("precompile", str(good), "-a", "vulkan"), "vulkan")


def test_info_and_cache_with_bad_arguments():
    _one_line_failure(_cli("info", "--bogus"), "--bogus")
    _one_line_failure(_cli("cache"), "clear")
    _one_line_failure(_cli("cache", "nope"), "nope")
    _one_line_failure(_cli("frobnicate"), "frobnicate")


@pytest.mark.parametrize(("name", "value"), [("DOTCOMPUTE_DEBUG", "maybe"), ("DOTCOMPUTE_CPU_SPIN_US", "soon"),
                                             ("DOTCOMPUTE_CACHE_MAX_BYTES", "1GB")])
def test_info_names_settings_that_fail_when_used(name, value):
    r = _cli("info", **{name: value})
    assert "Traceback" not in r.stdout + r.stderr
    assert f"warning: {name}={value!r}" in r.stdout
    assert r.returncode == 1


def test_info_json_lists_the_warnings():
    r = _cli("info", "--json", DOTCOMPUTE_BACKENDS="cpu,opnecl", DOTCOMPUTE_LOG="chatty")
    report = json.loads(r.stdout)
    assert r.returncode == 1
    assert any("opnecl" in w for w in report["warnings"]) and any("chatty" in w for w in report["warnings"])
    assert any(d["id"] == "cpu:0" for d in report["devices"])
