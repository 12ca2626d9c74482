"""OpenCL across processes: the on-disk binary cache, and an empty or broken OpenCL installation."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import textwrap
from pathlib import Path

import pytest

KERNELS = Path(__file__).parent / "kernels"

# Launches one raw kernel on opencl:0, checks the result, prints the cache statistics.
LAUNCH_AND_REPORT = textwrap.dedent("""
    import json, sys, numpy as np, dotcompute as dc
    from dotcompute.runtime import cache_info
    k = dc.RawKernel(open(sys.argv[1]).read(), "vadd_scaled", backend="opencl")
    n = 300
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    dc.launch(k, n, a, a, out, np.float32(2.0), n, accelerator=dc.accelerator("opencl:0"))
    assert (out == 3 * a).all(), out
    print(json.dumps(cache_info()))
""")

# Lists the backends, proves the CPU still computes, and what asking for opencl says.
LIST_BACKENDS = textwrap.dedent("""
    import json, numpy as np, dotcompute as dc
    listed = {b.name: {"available": b.available, "reason": b.reason} for b in dc.backends()}
    assert (dc.accelerator("cpu").asarray(np.arange(4, dtype=np.float32)).numpy() == np.arange(4)).all()
    try:
        dc.accelerator("opencl")
        error = None
    except dc.BackendUnavailableError as e:
        error = e.reason
    print(json.dumps({"backends": listed, "error": error}))
""")


def _run_script(run_python, script: str, env: dict[str, str], *args: str) -> str:
    code = f"import sys; sys.argv = ['probe', *{list(args)!r}]\n" + script
    done = run_python(code, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def _cached_blob_kinds(cache: Path) -> set[int]:
    """The kinds of the OpenCL program blobs in a kernel-cache folder (cpp/backends/opencl/
    binary_blob.h: 1 the driver's binary, 2 the source)."""
    kinds = set()
    for entry in cache.glob("*.dck"):
        data = entry.read_bytes()
        at = data.find(b"DCCLBIN1")
        if at >= 0:
            kinds.add(struct.unpack_from("<I", data, at + 8)[0])
    return kinds


def test_second_process_loads_the_cached_binary(ocl, tmp_path, run_python):
    env = {"DOTCOMPUTE_CACHE_DIR": str(tmp_path / "cache")}
    source = str(KERNELS / "vadd.cl")
    first = json.loads(_run_script(run_python, LAUNCH_AND_REPORT, env, source))
    assert first["misses"] >= 1 and first["entries"] >= 1, first
    if ocl.info["platform"] == "Portable Computing Language":
        # PoCL's binary, not the source: producing it costs a cold build about a third more CPU,
        # but a warm process then loads each program in ~20 ms instead of rebuilding it from
        # source against PoCL's cache (~70 ms a program; docs/operations.md)
        assert _cached_blob_kinds(tmp_path / "cache") == {1}
    second = json.loads(_run_script(run_python, LAUNCH_AND_REPORT, env, source))
    assert second["disk_hits"] >= 1, second
    assert second["misses"] == 0, second  # nothing was compiled again


def test_empty_platform_list_makes_opencl_unavailable(opencl_plugin, tmp_path, run_python):
    empty = tmp_path / "no-vendors"
    empty.mkdir()
    report = json.loads(_run_script(run_python, LIST_BACKENDS, {"OCL_ICD_VENDORS": str(empty)}))
    opencl = report["backends"]["opencl"]
    assert not opencl["available"]
    if "not found" in opencl["reason"] and "libOpenCL" in opencl["reason"]:
        pytest.skip(f"no OpenCL loader here at all: {opencl['reason']}")
    assert "no OpenCL platform found" in opencl["reason"]
    assert report["backends"]["cpu"]["available"]
    assert report["error"] and "no OpenCL platform found" in report["error"]


def test_library_that_is_not_a_loader_makes_opencl_unavailable(opencl_plugin, tmp_path, run_python):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the fake libOpenCL.so.1")
    fake = tmp_path / "fake"
    fake.mkdir()
    src = fake / "fake.c"
    src.write_text("int clGetPlatformIDs(unsigned n, void* p, unsigned* c) { if (c) *c = 0; return -1001; }\n")
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(fake / "libOpenCL.so.1")], check=True)
    report = json.loads(_run_script(run_python, LIST_BACKENDS, {"LD_LIBRARY_PATH": str(fake)}))
    opencl = report["backends"]["opencl"]
    assert not opencl["available"]
    assert "lacks clGetPlatformInfo" in opencl["reason"]
    assert report["backends"]["cpu"]["available"]
