"""The `dotcompute` command line, run as a user would (fresh processes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dotcompute as dc

KERNELS = Path(__file__).parent / "kernels"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "dotcompute.cli.main", *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


def test_version():
    done = _cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"dotcompute {dc.__version__}"


def test_cmake_dir_holds_the_package_config():
    done = _cli("--cmake-dir")
    assert done.returncode == 0
    path = Path(done.stdout.strip())
    assert path.parts[-2:] == ("cmake", "dotcompute")
    assert (path / "dotcompute-config.cmake").is_file()


def test_info_text(tmp_cache):
    done = _cli("info", env={"DOTCOMPUTE_CACHE_DIR": str(tmp_cache), "DOTCOMPUTE_TYPO": "1"})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"dotcompute {dc.__version__}" in out
    assert "cpu" in out and "available" in out
    assert "cpu:0" in out and "compute units" in out
    assert "host C++ compilers" in out
    assert str(tmp_cache) in out
    assert "DOTCOMPUTE_CACHE_DIR=" in out and "DOTCOMPUTE_TYPO=1  <- unknown" in out


def test_info_json_lists_unavailable_backends_with_reasons(tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "ghost.plugin.json").write_text(json.dumps(
        {"name": "ghost", "version": "1.0.0", "abi_version": 1, "library": "libdotcompute_ghost_nope.so"}))
    done = _cli("info", "--json", env={"DOTCOMPUTE_PLUGIN_PATH": str(folder)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    backends = {b["name"]: b for b in report["backends"]}
    assert backends["cpu"]["available"]
    assert not backends["ghost"]["available"] and "libdotcompute_ghost_nope.so" in backends["ghost"]["reason"]
    cpu = next(d for d in report["devices"] if d["id"] == "cpu:0")
    assert cpu["compute_units"] > 0 and "unified_memory" in cpu["features"]
    assert report["environment"]["DOTCOMPUTE_PLUGIN_PATH"] == str(folder)
    assert any(c["path"] for c in report["compilers"])
    assert {"dir", "entries", "bytes"} <= set(report["cache"])


def test_cache_clear_empties_the_cache(tmp_cache):
    fill = ("import numpy as np, dotcompute as dc\n"
            f"k = dc.RawKernel(open({str(KERNELS / 'vadd.cpp')!r}).read(), 'vadd_scaled')\n"
            "k.compile('cpu')\n")
    env = {"DOTCOMPUTE_CACHE_DIR": str(tmp_cache)}
    import os

    done = subprocess.run([sys.executable, "-c", fill], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    before = json.loads(_cli("info", "--json", env=env).stdout)["cache"]
    assert before["entries"] >= 1 and before["bytes"] > 0
    done = _cli("cache", "clear", env=env)
    assert done.returncode == 0, done.stderr
    assert f"removed {before['entries']} cached kernels" in done.stdout
    after = json.loads(_cli("info", "--json", env=env).stdout)["cache"]
    assert after["entries"] == 0 and after["bytes"] == 0


def test_no_command_prints_help():
    done = _cli()
    assert done.returncode == 2 and "info" in done.stdout


def test_console_script_is_installed():
    exe = shutil.which("dotcompute")
    if exe is None:
        pytest.skip("the dotcompute console script is not on PATH (package not installed with pip)")
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and dc.__version__ in done.stdout


def test_python_dash_m_dotcompute():
    done = subprocess.run([sys.executable, "-m", "dotcompute", "cache", "info"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dir: ") and "entries: " in done.stdout


def test_a_reader_that_goes_away_is_not_a_traceback():
    """`dotcompute info | head -1`: the pipe closes before the output is written; the command stops
    quietly (exit 141, as a process killed by SIGPIPE) instead of printing a BrokenPipeError."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "dotcompute", "info"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()  # before the interpreter has even started: every write fails
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=120) in (0, 141)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
