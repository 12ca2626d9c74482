"""DLPack exports release their buffer whatever the consumer does (issue 22).

``np.from_dlpack`` of a CUDA buffer used to raise ``SystemError: ... returned NULL without setting an
exception`` and leak the buffer: numpy refuses a non-CPU tensor by raising BufferError and then
drops the capsule, whose destructor was a ctypes callback that cannot run while an exception is
set. The capsule and its deleter are now native (python/src/dlpack.cpp). Each check runs in a fresh
interpreter on the CUDA simulator, counting the device memory in use before and after a loop.
"""

from __future__ import annotations

import json

LOOP = """
import gc, json, numpy as np, dotcompute as dc

def in_use(acc):
    gc.collect()
    return acc.memory.stats()["in_use"]

out = {}
gpu = dc.accelerator("cuda:0")
x = np.arange(64 * 1024, dtype=np.float32)  # 256 KiB per buffer: 50 leaks would be 12.5 MiB
base = in_use(gpu)
errors = set()
for _ in range(50):
    b = gpu.asarray(x)
    try:
        np.from_dlpack(b)
    except Exception as e:  # numpy's own refusal of a device it cannot read
        errors.add(f"{type(e).__name__}: {e}")
    del b
out["cuda_errors"] = sorted(errors)
out["cuda_leaked"] = in_use(gpu) - base

base = in_use(gpu)
for versioned in (None, (1, 0)):  # capsules nobody consumes, legacy and DLPack 1.0
    for _ in range(20):
        b = gpu.asarray(x)
        capsule = b.__dlpack__(max_version=versioned)
        del b, capsule
out["unconsumed_leaked"] = in_use(gpu) - base

cpu = dc.accelerator("cpu:0")
base = in_use(cpu)
ok = True
for i in range(50):
    b = cpu.asarray(x + i)
    view = np.from_dlpack(b)  # shares the buffer's memory
    ok = ok and view.dtype == np.float32 and view[0] == i and view[-1] == x[-1] + i
    del b  # the view keeps the memory alive ...
    ok = ok and view[1] == 1 + i
    del view  # ... until numpy calls the deleter
out["cpu_ok"] = bool(ok)
out["cpu_leaked"] = in_use(cpu) - base
print(json.dumps(out))
"""


def test_refused_and_unconsumed_capsules_free_their_buffers(run_python):
    result = run_python(LOOP, env={"DOTCOMPUTE_CUDA_SIM": "1", "DOTCOMPUTE_BACKENDS": "cuda"}, timeout=300)
    assert result.returncode == 0, result.stderr
    # no "Exception ignored ... ctypes callback" or SystemError printed by a destructor
    assert "Exception ignored" not in result.stderr and "SystemError" not in result.stderr, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(out["cuda_errors"]) == 1, out["cuda_errors"]
    error = out["cuda_errors"][0]
    assert not error.startswith("SystemError"), error
    assert error.startswith(("BufferError", "RuntimeError")) and ("device" in error or "CPU" in error), error
    assert out["cuda_leaked"] == 0
    assert out["unconsumed_leaked"] == 0
    assert out["cpu_ok"] and out["cpu_leaked"] == 0
