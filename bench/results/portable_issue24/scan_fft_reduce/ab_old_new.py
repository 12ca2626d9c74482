"""Old-vs-new portable kernels beside numpy, in one process per version (issue 24, scan/FFT/reductions).

    git archive 0b9f0dd python/dotcompute | tar -x -C /tmp/i24/old   # the package before this work
    # plus the installed native parts (_native*.so, libdotcompute.so, include/, plugins/, cmake/)
    # copied or linked into /tmp/i24/old/python/dotcompute
    OLD=1 ROUNDS=5 python ab_old_new.py; ROUNDS=5 python ab_old_new.py   # alternately, twice

Prints one JSON line per run: the load average and the median ms of numpy's min, argmax, cumsum
(int32) and fft (complex64), and of the portable kernels (``prefer("portable")``) on cpu:0 and
opencl:0, interleaved round by round (16M elements; FFT 2^20).
"""

from __future__ import annotations

import json
import os
import sys
import time

if os.environ.get("OLD") == "1":  # the old copy instead of the editable install's redirect
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ScikitBuildRedirectingFinder"]
    sys.path.insert(0, os.environ.get("OLD_TREE", "/tmp/i24/old/python"))

import numpy as np  # noqa: E402

import dotcompute as dc  # noqa: E402

rng = np.random.default_rng(0)
f32 = rng.random(1 << 24, dtype=np.float32)
i32 = rng.integers(0, 1000, 1 << 24).astype(np.int32)
c64 = (rng.random(1 << 20) + 1j * rng.random(1 << 20)).astype(np.complex64)
rows = {"np.min": lambda: f32.min(), "np.argmax": lambda: f32.argmax(), "np.cumsum": lambda: np.cumsum(i32),
        "np.fft": lambda: np.fft.fft(c64)}


def portable(fn, b):
    def run():
        with dc.ops.prefer("portable"):
            r = fn(b)
            return r.numpy() if hasattr(r, "numpy") else r
    return run


for dev in ("cpu:0", "opencl:0"):
    acc = dc.accelerator(dev)
    rows[f"{dev} min"] = portable(dc.ops.min, acc.asarray(f32))
    rows[f"{dev} argmax"] = portable(dc.ops.argmax, acc.asarray(f32))
    rows[f"{dev} cumsum"] = portable(dc.ops.cumsum, acc.asarray(i32))
    rows[f"{dev} fft"] = portable(dc.ops.fft.fft, acc.asarray(c64))
for f in rows.values():
    f()  # compiles
ts: dict[str, list[float]] = {k: [] for k in rows}
for _ in range(int(os.environ.get("ROUNDS", "5"))):
    for k, f in rows.items():
        a = time.perf_counter()
        f()
        ts[k].append(time.perf_counter() - a)
med = {k: round(float(np.median(v)) * 1e3, 2) for k, v in ts.items()}
print(json.dumps({"old": os.environ.get("OLD") == "1", "file": dc.__file__, "load": os.getloadavg(), "ms": med}))
