"""The Metal plugin's tests: on Linux against the Metal test double (tests/metal_double).

``metal``: the ``metal:0`` accelerator. Where the plugin is not already loaded (it is when
DOTCOMPUTE_PLUGIN_PATH names the double's build folder, as tests/run.sh does), the double is
built into DOTCOMPUTE_METAL_DOUBLE_DIR (default: a session temp folder) and loaded with
``dc.runtime.load_plugin``. Without clang/GNUstep the tests skip with the reason.
"""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import dotcompute as dc

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "tests" / "metal_double" / "build.sh"


def _loaded() -> bool:
    return any(b.name == "metal" and b.available for b in dc.backends())


@pytest.fixture(scope="session")
def metal_plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the Metal plugin built against the test double."""
    given = os.environ.get("DOTCOMPUTE_METAL_DOUBLE_DIR")
    out = Path(given) if given else tmp_path_factory.mktemp("metal-double")
    if (out / "metal.plugin.json").exists() and (out / "libdotcompute_metal.so").exists():
        return out
    if platform.system() == "Darwin":
        pytest.skip("on macOS the plugin is built with the real Metal framework (pip install .), not the double")
    proc = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.skip("cannot build the Metal test double (needs clang, gobjc++, libgnustep-base-dev, "
                    f"libblocksruntime-dev): {proc.stderr.strip()[-800:]}")
    return out


@pytest.fixture(scope="module")
def metal(request: pytest.FixtureRequest) -> Iterator[dc.Accelerator]:
    """metal:0. A plugin this fixture loaded is unloaded again after the module (best effort),
    so that suites running later in the same session do not find a new device ("auto" would
    prefer it to the CPU)."""
    loaded_here = not _loaded()  # on a Mac `pip install .` ships the real plugin: nothing to build
    if loaded_here:
        info = dc.runtime.load_plugin(request.getfixturevalue("metal_plugin_dir"))
        if not info.available:
            pytest.fail(f"the Metal plugin built against the double is unavailable: {info.reason}")
    yield dc.accelerator("metal:0")
    if loaded_here:
        gc.collect()
        try:
            dc.runtime.unload_plugin("metal")
        except dc.PluginError as e:  # objects of it still alive somewhere: leave it loaded
            warnings.warn(f"the Metal test-double plugin stays loaded: {e}", stacklevel=1)


@pytest.fixture
def metal_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Environment for a subprocess that should see metal:0."""
    if platform.system() == "Darwin":
        return {}
    metal_plugin_dir = request.getfixturevalue("metal_plugin_dir")
    paths = [p for p in os.environ.get("DOTCOMPUTE_PLUGIN_PATH", "").split(":") if p]
    if str(metal_plugin_dir) not in paths:  # the same manifest twice would list two metal backends
        paths.insert(0, str(metal_plugin_dir))
    return {"DOTCOMPUTE_PLUGIN_PATH": ":".join(paths)}
