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


class MetalDouble:
    """The test double behind the loaded Metal plugin, read through its test-only C functions:
    ``count(name)`` (``blit_copies``, ``archive_hits``, ``archive_misses``, ``private_buffers``)
    and ``storage_at(address)`` (the storage mode of the live buffer whose storage starts there:
    0 shared, 2 private; -1 none)."""

    def __init__(self, library: str) -> None:
        import ctypes

        # The plugin's own copy (same path: dlopen hands back the loaded library), so the
        # counters are the ones the plugin drives.
        self._lib = ctypes.CDLL(library)
        self._lib.dc_metal_double_count.argtypes = [ctypes.c_char_p]
        self._lib.dc_metal_double_count.restype = ctypes.c_long
        self._lib.dc_metal_double_buffer_storage.argtypes = [ctypes.c_void_p]
        self._lib.dc_metal_double_buffer_storage.restype = ctypes.c_int

    def count(self, name: str) -> int:
        value = int(self._lib.dc_metal_double_count(name.encode()))
        assert value >= 0, f"the double has no counter {name!r}"
        return value

    def storage_at(self, address: int) -> int:
        return int(self._lib.dc_metal_double_buffer_storage(address))


def double_library_of_loaded_plugin() -> str | None:
    """The test double's library beside the loaded Metal plugin (build.sh puts them together)."""
    for b in dc.backends():
        if b.name == "metal" and b.available and b.library:
            lib = Path(b.library).parent / "libdotcompute_metal_double.so"
            return str(lib) if lib.exists() else None
    return None


@pytest.fixture(scope="module")
def metal_double(metal: dc.Accelerator) -> MetalDouble:
    if not metal.info.get("test_double"):
        pytest.skip("reads the Metal test double's counters (on Apple hardware there is none)")
    lib = double_library_of_loaded_plugin()
    if lib is None:
        pytest.skip("the loaded Metal plugin has no test double beside it")
    return MetalDouble(lib)
