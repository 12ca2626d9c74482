"""Broken plugins are listed with their reasons and never break the rest (each case in a fresh process)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from dotcompute.runtime import package_dir

HERE = Path(__file__).parent
REPO_INCLUDE = HERE.parents[2] / "cpp" / "include"

# Prints the backends as JSON, then proves cpu:0 still computes.
PROBE = textwrap.dedent("""
    import json, numpy as np, dotcompute as dc
    print(json.dumps([{"name": b.name, "available": b.available, "reason": b.reason} for b in dc.backends()]))
    b = dc.accelerator("cpu").asarray(np.arange(5, dtype=np.float32))
    assert (b.numpy() == np.arange(5)).all()
    assert [d.id for d in dc.devices()][0] == "cpu:0"
""")


def _backends(run_python, env: dict[str, str], cwd: Path | None = None) -> dict[str, dict]:
    done = run_python(PROBE, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout.strip().splitlines()[-1])
    assert any(b["name"] == "cpu" and b["available"] for b in listed)
    return {b["name"]: b for b in listed}


def _manifest(folder: Path, name: str, library: str, requires: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.plugin.json"
    path.write_text(json.dumps({"name": name, "version": "1.0.0", "abi_version": 1, "library": library,
                                "requires": requires or []}))
    return path


def _include_dir() -> Path:
    installed = package_dir() / "include"
    return installed if (installed / "dotcompute" / "backend_abi.h").exists() else REPO_INCLUDE


@pytest.fixture(scope="module")
def failing_plugin(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the test plugin")
    out = tmp_path_factory.mktemp("frob") / "libdotcompute_frob.so"
    subprocess.run([cc, "-shared", "-fPIC", "-fvisibility=hidden", f"-I{_include_dir()}",
                    str(HERE / "kernels" / "failing_plugin.c"), "-o", str(out)], check=True)
    return out


def test_missing_library_is_reported(run_python, tmp_path):
    _manifest(tmp_path / "plugins", "ghost", "libdotcompute_ghost_not_here.so")
    listed = _backends(run_python, {"DOTCOMPUTE_PLUGIN_PATH": str(tmp_path / "plugins")})
    assert not listed["ghost"]["available"]
    assert "libdotcompute_ghost_not_here.so" in listed["ghost"]["reason"]


def test_missing_dependency_is_named(run_python, tmp_path):
    _manifest(tmp_path / "plugins", "needy", "libdotcompute_needy.so", requires=["libdotcompute_dep_missing.so.3"])
    listed = _backends(run_python, {"DOTCOMPUTE_PLUGIN_PATH": str(tmp_path / "plugins")})
    assert not listed["needy"]["available"]
    assert "libdotcompute_dep_missing.so.3" in listed["needy"]["reason"]


def test_failing_initialize_gives_its_reason(run_python, tmp_path, failing_plugin):
    folder = tmp_path / "plugins"
    _manifest(folder, "frob", failing_plugin.name)
    shutil.copy(failing_plugin, folder / failing_plugin.name)
    listed = _backends(run_python, {"DOTCOMPUTE_PLUGIN_PATH": str(folder)})
    assert not listed["frob"]["available"]
    assert "frobnicator driver" in listed["frob"]["reason"]
    done = run_python("import dotcompute as dc; dc.accelerator('frob')",
                      env={"DOTCOMPUTE_PLUGIN_PATH": str(folder)})
    assert done.returncode != 0
    assert "BackendUnavailableError" in done.stderr and "frobnicator driver" in done.stderr
    assert "cpu:0" in done.stderr


def test_several_path_entries_and_a_garbled_manifest(run_python, tmp_path):
    good_dir, bad_dir = tmp_path / "a", tmp_path / "b"
    _manifest(good_dir, "ghost", "libdotcompute_ghost_not_here.so")
    bad_dir.mkdir()
    (bad_dir / "garbled.plugin.json").write_text("{not json")
    listed = _backends(run_python, {"DOTCOMPUTE_PLUGIN_PATH": os.pathsep.join([str(good_dir), str(bad_dir)])})
    assert "ghost" in listed
    unavailable = [b for b in listed.values() if not b["available"]]
    assert any("garbled" in b["reason"] or "garbled" in b["name"] for b in unavailable)


def test_entry_points_hand_plugins_to_the_runtime(run_python, tmp_path, failing_plugin):
    """A third-party wheel's `dotcompute.backends` entry points, one good path and one broken module."""
    plugin_dir = tmp_path / "frob_plugin"
    _manifest(plugin_dir, "frob", failing_plugin.name)
    shutil.copy(failing_plugin, plugin_dir / failing_plugin.name)
    site = tmp_path / "site"
    dist = site / "frobwheel-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: frobwheel\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[dotcompute.backends]\nfrob = frobwheel:plugin_path\nbroken = frobwheel_missing_module:plugin_path\n")
    (site / "frobwheel.py").write_text(f"def plugin_path():\n    return {str(plugin_dir)!r}\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    listed = _backends(run_python, env)
    assert "frobnicator driver" in listed["frob"]["reason"]
    assert not listed["broken"]["available"]
    assert "frobwheel_missing_module" in listed["broken"]["reason"]


UNLOAD = textwrap.dedent("""
    import gc, numpy as np, dotcompute as dc
    from dotcompute import runtime as rt
    cpu = rt.accelerator("cpu")
    manifest = next(b.manifest for b in rt.backends() if b.name == "cpu")
    buf = cpu.zeros((4,), np.float32)
    try:
        rt.unload_plugin("cpu")
        raise SystemExit("unloaded while a buffer was alive")
    except dc.PluginError as e:
        assert "cpu:0" in str(e), e
    assert rt.accelerator("cpu") is cpu  # still the one Python object
    del buf, cpu
    gc.collect()
    rt.unload_plugin("cpu")
    state = {b.name: b for b in rt.backends()}["cpu"]
    assert not state.available and state.reason == "unloaded", state
    assert "cpu:0" not in [d.id for d in rt.devices()]
    info = rt.load_plugin(manifest)
    assert info.available, info
    again = rt.accelerator("cpu")
    assert (again.asarray(np.arange(3.0)).numpy() == [0, 1, 2]).all()
    try:
        rt.load_plugin("/no/such/plugin.json")
    except dc.PluginError as e:
        assert "/no/such/plugin.json" in str(e)
    print("ok")
""")


def test_unload_and_reload(run_python):
    done = run_python(UNLOAD)
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.strip().endswith("ok")
