"""Faults injected into the fake plugin of the C++ tests (fake_inject), seen from Python: each
plugin status becomes the Python exception of errors.hpp's table for its call site, and the
runtime stays usable. Runs in a fresh process that loads the fake plugin from the C++ build
(DOTCOMPUTE_TEST_CUDA_BUILD, as tests/run.sh sets it, or build/dev)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("DOTCOMPUTE_TEST_CUDA_BUILD", ROOT / "build" / "dev"))
FAKE = BUILD / "tests" / "cpp" / "core" / "plugins" / "good"

SCRIPT = r'''
import ctypes
import numpy as np
import dotcompute as dc
from dotcompute.runtime import compile_source, ParamSpec
from dotcompute.runtime.native import native

nat = native()
INJECT = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int32)
inject = INJECT(nat.plugin_symbol("fake", "fake_inject"))
clear = ctypes.CFUNCTYPE(None)(nat.plugin_symbol("fake", "fake_inject_clear"))
acc = dc.accelerator("fake:1")  # separate device memory, so copies go through the plugin
SOURCE = "kernel fill_f32\n"
INVALID_ARGUMENT, OUT_OF_MEMORY, COMPILATION, LAUNCH, UNAVAILABLE, UNSUPPORTED, INTERNAL = range(1, 8)
n_compiles = [0]

def plan():
    n_compiles[0] += 1
    k = compile_source(acc, SOURCE + "# %d\n" % n_compiles[0], "fill_f32")
    return k.plan([ParamSpec("buffer", "x", np.dtype(np.float32), ndim=1, written=True),
                   ParamSpec("scalar", "v", np.dtype(np.float32))])

def kind(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "none"

buf = acc.empty((16,), np.float32)
p = plan()
host = np.empty(16, np.float32)
rows = []
for status in (INVALID_ARGUMENT, OUT_OF_MEMORY, COMPILATION, LAUNCH, UNAVAILABLE, UNSUPPORTED, INTERNAL):
    inject(b"compile", 1, status); c = kind(plan)
    inject(b"launch", 1, status); l = kind(lambda: p.launch((16,), None, (buf, 1.0), None))
    acc.synchronize()
    inject(b"memcpy_d2h", 1, status); r = kind(lambda: buf.copy_to(host))
    rows.append((status, c, l, r))
    clear()
print("ROWS", rows)
# allocation failure at the 2nd call (and the pool's retry), then normal work
acc.memory.trim()
keep = acc.empty((1000,), np.float32)
inject(b"mem_alloc", 1, OUT_OF_MEMORY); inject(b"mem_alloc", 1, OUT_OF_MEMORY)
try:
    acc.empty((3000,), np.float32)
    print("OOM none")
except MemoryError as e:
    print("OOM", type(e).__name__, isinstance(e, dc.OutOfMemoryError))
# the device is lost, then back
for call in (b"launch", b"stream_synchronize", b"memcpy_d2h"):
    inject(call, 0, UNAVAILABLE)
print("LOST", kind(lambda: p.launch((16,), None, (buf, 1.0), None)), kind(acc.synchronize),
      kind(lambda: buf.copy_to(host)))
clear()
p.launch((16,), None, (buf, 5.0), None)
buf.copy_to(host)
print("USABLE", bool((host == 5.0).all()))
'''

# errors.hpp's table, as Python classes: (status, compile, launch, copy)
EXPECTED = [
    (1, "CompilationError", "LaunchError", "DotComputeError"),
    (2, "OutOfMemoryError", "OutOfMemoryError", "OutOfMemoryError"),
    (3, "CompilationError", "CompilationError", "CompilationError"),
    (4, "LaunchError", "LaunchError", "LaunchError"),
    (5, "BackendUnavailableError", "BackendUnavailableError", "BackendUnavailableError"),
    (6, "CompilationError", "LaunchError", "DotComputeError"),
    (7, "DotComputeError", "DotComputeError", "DotComputeError"),
]


@pytest.mark.skipif(not (FAKE / "libdc_fake.so").exists(), reason=f"the C++ test build is not at {BUILD}")
def test_plugin_faults_from_python(tmp_path):
    script = tmp_path / "faults.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, DOTCOMPUTE_PLUGIN_PATH=str(FAKE), DOTCOMPUTE_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in r.stdout.splitlines() if " " in line}
    assert eval(lines["ROWS"]) == EXPECTED  # noqa: S307 - our own subprocess's repr
    assert lines["OOM"] == "OutOfMemoryError True"
    assert lines["LOST"] == "BackendUnavailableError BackendUnavailableError BackendUnavailableError"
    assert lines["USABLE"] == "True"
