"""Regression tests for the defects of issue 8 that a user hits through the public API."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

KERNELS = Path(__file__).parent.parent / "runtime" / "kernels"

OPENCL_VADD = """
__kernel void vadd_scaled(__global const float* a, __global const float* b, __global float* out, double s,
                          long n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = (float)(a[i] * s) + b[i];
}
"""


# --- a large dc.shared array used to overflow the CPU worker's stack (a segfault) --------------------
def test_local_memory_is_reported(accelerator):
    limit = accelerator.info["local_memory"]
    assert isinstance(limit, int) and limit > 0


def test_too_large_shared_array_is_refused_with_its_name_and_the_limit(accelerator):
    @dc.kernel
    def huge(out: dc.Buffer[dc.float32]):
        scratch = dc.shared((1 << 26,), dc.float32)
        i = dc.global_id(0)
        scratch[dc.local_id(0)] = 1.0
        dc.barrier()
        out[i] = scratch[dc.local_id(0)]

    out = accelerator.zeros((128,), np.float32)
    limit = accelerator.info["local_memory"]
    with pytest.raises(dc.LaunchError, match=rf"'scratch'.*limit of {limit} bytes"):
        dc.launch(huge, 128, out, local_size=64, accelerator=accelerator)
    # the runtime is still usable, and a kernel whose arrays fit runs and is right
    @dc.kernel
    def fits(out: dc.Buffer[dc.float32]):
        tile = dc.shared((64,), dc.float32)
        lid = dc.local_id(0)
        tile[lid] = dc.float32(lid)
        dc.barrier()
        out[dc.global_id(0)] = tile[63 - lid]

    dc.launch(fits, 128, out, local_size=64, accelerator=accelerator)
    np.testing.assert_array_equal(out.numpy(), np.tile(np.arange(63, -1, -1, dtype=np.float32), 2))


def test_shared_array_at_the_limit_runs_in_a_fresh_process(tmp_path):
    # exactly the reported limit on the CPU: it must fit the worker stacks (pool and caller threads)
    code = """
import numpy as np, dotcompute as dc
acc = dc.accelerator("cpu")
n = acc.info["local_memory"] // 4
@dc.kernel
def edge(out: dc.Buffer[dc.float32]):
    big = dc.shared((N,), dc.float32)
    lid = dc.local_id(0)
    big[N - 1 - lid] = dc.float32(lid)
    dc.barrier()
    out[dc.global_id(0)] = big[N - 1 - lid]
""".replace("N", "262144")
    code += """
out = np.zeros(256, np.float32)
dc.launch(edge, 256, out, local_size=64, accelerator=acc)
assert (out == np.tile(np.arange(64, dtype=np.float32), 4)).all(), out
print("ok")
"""
    script = tmp_path / "edge.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


# --- raw kernels with read-only numpy arrays lost their writes silently ------------------------------
def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _vadd(acc: dc.Accelerator, **kw) -> dc.RawKernel:
    if acc.backend == "cpu":
        return dc.RawKernel((KERNELS / "vadd.cpp").read_text(), "vadd_scaled", backend="cpu", **kw)
    if acc.backend == "opencl":
        return dc.RawKernel(OPENCL_VADD, "vadd_scaled", backend="opencl", **kw)
    pytest.skip(f"no raw vadd for {acc.backend}")


def test_raw_kernel_refuses_a_read_only_output(accelerator):
    k = _vadd(accelerator)
    n = 100
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = _ro(np.zeros(n, np.float32))
    with pytest.raises(ValueError, match="argument 2 is a read-only numpy array"):
        dc.launch(k, n, a, b, out, 2.0, n, accelerator=accelerator)
    assert (out == 0).all()
    # inputs that are read-only are refused too unless declared
    with pytest.raises(ValueError, match="argument 0"):
        dc.launch(k, n, _ro(a.copy()), b, np.zeros(n, np.float32), 2.0, n, accelerator=accelerator)


def test_raw_kernel_read_only_declaration(accelerator):
    names = ("a", "b") if accelerator.backend == "opencl" else (0, 1)
    k = _vadd(accelerator, read_only=names)
    assert k.read_only == frozenset({0, 1})
    n = 100
    a, b = _ro(np.arange(n, dtype=np.float32)), _ro(np.ones(n, np.float32))
    out = np.zeros(n, np.float32)
    dc.launch(k, n, a, b, out, 2.0, n, accelerator=accelerator)
    accelerator.synchronize()
    np.testing.assert_allclose(out, np.arange(n) * 2 + 1)
    k2 = pickle.loads(pickle.dumps(k))
    assert k2.read_only == k.read_only


def test_raw_kernel_read_only_bad_declarations():
    src = (KERNELS / "vadd.cpp").read_text()
    with pytest.raises(ValueError, match="position"):
        dc.RawKernel(src, "vadd_scaled", backend="cpu", read_only=("a",))
    with pytest.raises(ValueError, match="not a parameter"):
        dc.RawKernel(OPENCL_VADD, "vadd_scaled", backend="opencl", read_only=("zz",))
    with pytest.raises(TypeError, match="read_only"):
        dc.RawKernel(src, "vadd_scaled", backend="cpu", read_only=(1.5,))
    with pytest.raises(ValueError, match="negative"):
        dc.RawKernel(src, "vadd_scaled", backend="cpu", read_only=(-1,))
