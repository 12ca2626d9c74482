"""``@dc.kernel(fastmath=True)``: the backend compiler may trade IEEE results for speed (reordered sums,
approximate division and square roots, no NaN or infinity assumed); off by default."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang.compile_options import FAST_MATH_OPTIONS, compile_options


def _gravity(fastmath: bool):
    @dc.kernel(fastmath=fastmath)
    def gravity(pos: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32], eps: dc.float32):
        i = dc.global_id(0)
        n = pos.shape[1]
        if i < n:
            a = dc.float32(0.0)
            for j in range(n):
                dx = pos[0, j] - pos[0, i]
                dy = pos[1, j] - pos[1, i]
                r2 = dx * dx + dy * dy + eps
                a += dx / (r2 * dc.sqrt(r2))
            out[i] = a

    return gravity


@dc.kernel(fastmath=True)
def count_nans(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        out[i] = 1 if dc.isnan(x[i]) else 0


def test_fast_math_results_stay_close(accelerator):
    n = 300
    pos = np.random.default_rng(2).random((2, n), dtype=np.float32)
    p = pos.astype(np.float64)
    d = p[:, None, :] - p[:, :, None]
    r2 = (d * d).sum(axis=0) + 1e-3
    want = (d[0] / (r2 * np.sqrt(r2))).sum(axis=1)
    for fastmath in (False, True):
        out = np.zeros(n, np.float32)
        dc.launch(_gravity(fastmath), n, pos, out, np.float32(1e-3), accelerator=accelerator)
        np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())


def test_the_options_per_backend_and_the_default():
    # the default is numpy's arithmetic: no contraction (the CPU's generated code also needs -fwrapv)
    assert [compile_options(_gravity(False), b) for b in ("cpu", "cuda", "opencl", "metal")] == \
        ["-fwrapv -ffp-contract=off", "--fmad=false", "", ""]
    k = _gravity(True)
    assert [compile_options(k, b) for b in ("cpu", "cuda", "opencl", "metal")] == \
        ["-fwrapv " + FAST_MATH_OPTIONS["cpu"], "--use_fast_math", "-cl-fast-relaxed-math", "-ffast-math"]


def test_fast_math_assumes_no_nan_on_the_cpu_backend():
    """What the flag gives up, shown where the compiler is known (GCC/Clang -ffast-math folds a NaN
    test to false): the same kernel without it sees the NaN."""
    x = np.array([1.0, np.nan, 3.0], np.float32)
    fast = np.zeros(3, np.int32)
    dc.launch(count_nans, 3, x, fast, accelerator="cpu:0")
    ieee = np.zeros(3, np.int32)
    dc.launch(dc.kernel(count_nans.pyfunc), 3, x, ieee, accelerator="cpu:0")
    assert ieee.tolist() == [0, 1, 0]
    assert fast.tolist() == [0, 0, 0]  # a fast-math build: never served from the IEEE one's cache entry


def test_the_flag_is_checked_and_survives_pickling():
    with pytest.raises(TypeError, match="fastmath"):
        dc.kernel(fastmath="yes")(lambda x: None)
    k = pickle.loads(pickle.dumps(count_nans))
    assert k.fastmath is True and pickle.loads(pickle.dumps(_gravity(False))).fastmath is False


SCRIPT = '''
import numpy as np, dotcompute as dc

@dc.kernel(fastmath=True)
def twice(x: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        x[i] = x[i] * 2.0

tiny = np.array([1e-38], np.float32)
for acc in dc.devices():
    x = np.ones(4, np.float32)
    dc.launch(twice, 4, x, accelerator=acc)
    assert (x == 2).all(), acc
print((tiny * np.float32(0.01))[0] != 0)
'''


def test_a_fast_math_kernel_leaves_the_process_floating_point_alone(tmp_path):
    """Loading a kernel built with fast math must not turn on flush-to-zero for the whole process (a
    shared object linked with GCC's -ffast-math does so in its constructor): numpy would silently
    compute subnormal results as 0 from then on. Run in a child process, so that a failure cannot
    leak into the other tests."""
    import subprocess
    import sys

    script = tmp_path / "fastmath_ftz.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "True", "a fast-math kernel turned on flush-to-zero"
