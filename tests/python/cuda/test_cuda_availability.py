"""The cuda backend through the runtime: unavailable with its reason without a driver, and
working end to end (devices, memory, copies) against the driver test double. Each case runs
in a fresh interpreter so the runtime starts with the environment the case sets."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from cuda_helpers import built_file, real_cuda_device_count

PLUGIN_LIB = "libdotcompute_cuda.so"


def _plugin_library() -> Path:
    from dotcompute.runtime import package_dir

    installed = package_dir() / "plugins" / PLUGIN_LIB
    if installed.exists():
        return installed
    built = built_file(PLUGIN_LIB, "plugins")
    if built is None:
        pytest.skip("the CUDA plugin is not built (no libdotcompute_cuda.so in the package or build*/plugins)")
    return built


def _plugin_folder(tmp_path: Path, requires: list[str]) -> Path:
    """A copy of the package's plugin folder whose cuda manifest we control (used as DOTCOMPUTE_PLUGIN_DIR,
    which the loader reads first, so an installed cuda manifest cannot shadow ours)."""
    from dotcompute.runtime import package_dir

    library = _plugin_library()
    folder = tmp_path / "plugins"
    installed = package_dir() / "plugins"
    if installed.is_dir():
        shutil.copytree(installed, folder)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(library, folder / PLUGIN_LIB)
    manifest = {"name": "cuda", "version": "0.1.0", "abi_version": 1, "library": PLUGIN_LIB, "requires": requires}
    (folder / "cuda.plugin.json").write_text(json.dumps(manifest))
    return folder


PROBE = textwrap.dedent("""
    import json, dotcompute as dc
    info = {b.name: {"available": b.available, "reason": b.reason} for b in dc.backends()}
    try:
        dc.accelerator("cuda")
        error = None
    except dc.BackendUnavailableError as e:
        error = str(e)
    print(json.dumps({"backends": info, "error": error, "devices": [d.id for d in dc.devices()]}))
""")


def _probe(run_python, env: dict[str, str]) -> dict:
    done = run_python(PROBE, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_a_driver_cuda_is_listed_unavailable_with_the_reason(run_python, tmp_path):
    if real_cuda_device_count() or _loads("libcuda.so.1"):
        pytest.skip("an NVIDIA driver is installed here")
    # The shipped manifest (requires libcuda.so.1) and the plugin's own check (no requirement) both say why.
    for requires in (["libcuda.so.1"], []):
        folder = _plugin_folder(tmp_path / str(len(requires)), requires)
        env = {"DOTCOMPUTE_PLUGIN_DIR": str(folder), "DOTCOMPUTE_CUDA_DRIVER": ""}
        out = _probe(run_python, env)
        cuda = out["backends"]["cuda"]
        assert not cuda["available"]
        assert "libcuda.so.1" in cuda["reason"]
        assert out["error"] and "libcuda.so.1" in out["error"]
        assert "cpu:0" in out["devices"]  # every other backend is unaffected


def _loads(name: str) -> bool:
    import ctypes

    try:
        ctypes.CDLL(name)
        return True
    except OSError:
        return False


DOUBLE_PROBE = textwrap.dedent("""
    import json, numpy as np, dotcompute as dc, dotcompute.cuda
    # What the runtime does before the native module starts (idempotent): hand NVRTC's wheel path to the plugin.
    has_nvrtc = dotcompute.cuda.export_nvrtc_path() is not None
    acc = dc.accelerator("cuda")
    x = np.arange(1000, dtype=np.float32)
    buf = acc.asarray(x)
    back = buf.numpy()
    z = acc.zeros((3, 4), np.int32).numpy()
    # Compiled by the real NVRTC through the core's kernel cache, loaded into and launched on the
    # double (which records the launch but cannot run it).
    k = dc.RawKernel('extern "C" __global__ void vadd(const float* a, float* o, long long n) '
                     '{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) o[i] = a[i]; }',
                     "vadd", backend="cuda")
    out = acc.empty((1000,), np.float32)
    if has_nvrtc:
        acc.launch(k, 1000, buf, out, np.int64(1000))
        acc.synchronize()
    print(json.dumps({"id": acc.id if hasattr(acc, "id") else f"{acc.backend}:{acc.index}",
                      "name": acc.name, "info": str(acc.info),
                      "roundtrip": bool((back == x).all()), "zeros": int(np.abs(z).sum()),
                      "devices": [d.id for d in dc.devices()]}))
""")


def test_runtime_drives_the_driver_double(run_python, tmp_path):
    double = built_file("libcuda_double.so", "tests/cuda_driver_double")
    if double is None:
        pytest.skip("the driver double is not built (build the CMake tests: tests/cuda_driver_double)")
    folder = _plugin_folder(tmp_path, [])
    env = {"DOTCOMPUTE_PLUGIN_DIR": str(folder), "DOTCOMPUTE_CUDA_DRIVER": str(double)}
    done = run_python(DOUBLE_PROBE, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["id"] == "cuda:0"
    assert "driver double" in out["name"]
    assert "sm_90" in out["info"]
    assert out["roundtrip"]  # host -> "device" -> host through the core's pool and the plugin's copies
    assert out["zeros"] == 0
    assert "cuda:0" in out["devices"] and "cpu:0" in out["devices"]


def test_shipped_manifest_names_the_driver():
    manifest = json.loads((Path(__file__).resolve().parents[3] / "cuda" / "cuda.plugin.json").read_text())
    assert manifest["name"] == "cuda" and manifest["library"] == PLUGIN_LIB
    assert manifest["requires"] == ["libcuda.so.1"]
    assert manifest["abi_version"] == 1
    assert os.path.splitext(PLUGIN_LIB)[1] == ".so"
