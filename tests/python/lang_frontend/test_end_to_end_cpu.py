"""Frontend + CPU emitter + the host compiler, without the runtime: the generated code computes what
the documented Python semantics say. (Compiled with g++ through the emitter tests' harness.)"""

import importlib.util
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

_HARNESS = Path(__file__).resolve().parents[1] / "lang_emit" / "harness.py"
if not _HARNESS.exists() or not (shutil.which("g++") or shutil.which("clang++")):
    pytest.skip("needs tests/python/lang_emit/harness.py and a host C++ compiler", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("_dc_emit_harness", _HARNESS)
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
# a private copy of the harness: compile without optimisation, which is what takes the time
harness.CPU_FLAGS = [f for f in harness.CPU_FLAGS if not f.startswith(("-O", "-march"))] + ["-O0"]

NI, NF = 12, 8
LIMIT = 3


@dc.func
def mix(p, q):
    return p * 2 + q


@dc.kernel
def semantics(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32], f: dc.Buffer[dc.float32],
              out_i: dc.Buffer[dc.int64, 2], out_f: dc.Buffer[dc.float64, 2]):
    i = dc.global_id(0)
    if i >= a.shape[0]:
        return
    x = a[i]
    y = b[i]
    z = f[i]
    out_i[i, 0] = x // y
    out_i[i, 1] = x % y
    out_i[i, 2] = x * x * x * 1000
    out_i[i, 3] = 0 <= x < 10
    out_i[i, 4] = y or 7
    out_i[i, 5] = min(x, y, LIMIT)
    out_i[i, 6] = abs(x) + (x > y) * 100
    out_i[i, 7] = math.floor(z)
    out_i[i, 8] = round(z)
    s = 0
    for k in range(x, -3, -2):
        s += k
    out_i[i, 9] = s
    n = 0
    while True:
        n += 1
        if n * n > abs(x):
            break
    out_i[i, 10] = n
    out_i[i, 11] = mix(x, 1)
    out_f[i, 0] = x / 4
    out_f[i, 1] = z * 2.5
    out_f[i, 2] = z // 1.5
    out_f[i, 3] = z % -1.5
    out_f[i, 4] = 2 ** -1 + x ** 2.0
    out_f[i, 5] = math.sqrt(abs(z)) if z < 0 else -z
    out_f[i, 6] = mix(z, 0.5)
    out_f[i, 7] = float(x) / 3 if x else 1.0


def reference(x: int, y: int, z: np.float32) -> tuple[list[int], list[float]]:
    def wrap32(v: int) -> int:
        return ((v + 2**31) % 2**32) - 2**31

    ints = [
        x // y if y else 0,
        x % y if y else 0,
        wrap32(wrap32(wrap32(x * x) * x) * 1000),
        int(0 <= x < 10),
        y or 7,
        min(x, y, LIMIT),
        abs(x) + (x > y) * 100,
        math.floor(z),
        round(float(z)),
        sum(range(x, -3, -2)),
    ]
    n = 0
    while True:
        n += 1
        if n * n > abs(x):
            break
    ints += [n, wrap32(x * 2 + 1)]
    f32 = np.float32
    floats = [
        x / 4,
        float(z * f32(2.5)),
        float(np.floor_divide(z, f32(1.5))),
        float(np.remainder(z, f32(-1.5))),
        0.5 + float(x) ** 2.0,
        float(np.sqrt(np.abs(z))) if z < 0 else float(-z),
        float(z * f32(2) + f32(0.5)),
        float(x) / 3 if x else 1.0,
    ]
    return ints, floats


def test_python_semantics_on_the_cpu():
    a = np.array([7, -7, 0, 9, -1, 46341, 13, -13, 5, 3], np.int32)
    b = np.array([2, 2, 5, -4, 0, 3, -5, 5, 0, 1], np.int32)
    f = np.array([2.75, -2.75, 0.0, -0.5, 1.5, 2.5, -3.25, 7.0, 0.25, -1.0], np.float32)
    out_i = np.zeros((a.size, NI), np.int64)
    out_f = np.zeros((a.size, NF), np.float64)
    emitted = semantics.specialize(semantics.types_for()).emit("cpu")
    harness.run_cpu(emitted, (16,), (4,), [a, b, f, out_i, out_f])
    for i in range(a.size):
        ints, floats = reference(int(a[i]), int(b[i]), f[i])
        assert list(out_i[i]) == ints, (i, a[i], b[i], f[i])
        np.testing.assert_allclose(out_f[i], floats, rtol=1e-6, err_msg=f"row {i}")


@dc.kernel
def shared_reverse(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    tile = dc.shared((8,), dc.float32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    tile[l] = x[g]
    dc.barrier()
    out[g] = tile[tile.shape[0] - 1 - l] + dc.atomic_add(x, 0, 0.0) * 0


def test_shared_memory_and_barrier_on_the_cpu():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros_like(x)
    emitted = shared_reverse.specialize(shared_reverse.types_for()).emit("cpu")
    harness.run_cpu(emitted, (32,), (8,), [x, out])
    np.testing.assert_array_equal(out, x.reshape(4, 8)[:, ::-1].ravel())
