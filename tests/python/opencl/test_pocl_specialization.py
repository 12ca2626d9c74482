"""PoCL's work-group specialization: off unless the user asked for it (cpp/backends/opencl/device.cpp).

With it on, PoCL builds a work-group function (LLVM code generation) for each local size a kernel is
launched with; off, the generic function in the program's binary serves every launch. The folders
PoCL writes in its cache say which were built: ``0-0-0`` for the generic function, ``<local size>-...``
for a specialised one.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

# One kernel launched at three local sizes, then the variable as the process sees it (the plugin sets
# it in the C environment, which os.environ does not re-read).
LAUNCH_THREE_LOCAL_SIZES = textwrap.dedent("""
    import ctypes, json, numpy as np, dotcompute as dc

    @dc.kernel
    def twice(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        out[i] = x[i] * 2.0

    acc = dc.accelerator("opencl:0")
    x = acc.asarray(np.arange(256, dtype=np.float32))
    for local in (8, 16, 64):
        out = acc.empty(256, dc.float32)
        dc.launch(twice, 256, x, out, local_size=local, accelerator=acc)
        assert (out.numpy() == 2 * np.arange(256, dtype=np.float32)).all()
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    print(json.dumps({"variable": (libc.getenv(b"POCL_WORK_GROUP_SPECIALIZATION") or b"").decode()}))
""")


def _pocl_platform(ocl) -> bool:
    return "Portable Computing Language" in json.dumps(ocl.info)


def _launch(run_python, tmp_path: Path, extra_env: dict[str, str]) -> tuple[str, set[str]]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("POCL_CACHE_DIR", "DOTCOMPUTE_SET_POCL_CACHE_DIR", "POCL_WORK_GROUP_SPECIALIZATION")}
    env.update(extra_env, DOTCOMPUTE_CACHE_DIR=str(tmp_path / "cache"))
    script = tmp_path / "launch_three_local_sizes.py"  # a file: the kernel's source must be readable
    script.write_text(LAUNCH_THREE_LOCAL_SIZES)
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", env=env)
    assert proc.returncode == 0, proc.stderr
    variable = json.loads(proc.stdout.strip().splitlines()[-1])["variable"]
    built = {so.parent.name for so in (tmp_path / "cache" / "pocl").rglob("*.so") if "twice" in so.name}
    return variable, built


def test_pocl_builds_one_work_group_function_for_every_local_size(ocl, tmp_path, run_python):
    if not _pocl_platform(ocl):
        pytest.skip("opencl:0 is not PoCL: the variable is PoCL's")
    variable, built = _launch(run_python, tmp_path, {})
    assert variable == "0"
    assert built == {"0-0-0"}  # the generic function, from the binary; nothing per local size


def test_a_users_specialization_setting_is_kept(ocl, tmp_path, run_python):
    if not _pocl_platform(ocl):
        pytest.skip("opencl:0 is not PoCL: the variable is PoCL's")
    variable, built = _launch(run_python, tmp_path, {"POCL_WORK_GROUP_SPECIALIZATION": "1"})
    assert variable == "1"
    assert {"8", "16", "64"} <= {name.split("-")[0] for name in built}  # one build per local size
