"""Mistakes people make when porting C/CUDA kernels to Python, and what they are told.
Each error must be the documented class and point at the offending line."""

import subprocess
import sys

import numpy as np
import pytest
from realworld_helpers import line_of

import dotcompute as dc


def _compile_error(kernel, *args):
    with pytest.raises((dc.KernelSyntaxError, dc.KernelTypeError)) as ei:
        dc.launch(kernel, 4, *args, accelerator=dc.accelerator("cpu"))
    return ei.value


def _check(e, exc_type, tag):
    assert isinstance(e, exc_type), f"{type(e).__name__}: {e}"
    assert e.lineno == line_of(__file__, "# BAD-" + tag), str(e)
    assert e.filename.endswith("test_rw_mistakes.py")
    assert isinstance(e.offset, int) and e.offset >= 1


def test_true_division_as_index():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        out[i] = a[i / 2]  # BAD-DIV

    _check(_compile_error(k, np.zeros(4, np.float32), np.zeros(4, np.float32)), dc.KernelTypeError, "DIV")


def test_chained_indexing_of_2d_buffer():
    @dc.kernel
    def k(m: dc.Buffer[dc.float32, 2]):
        i = dc.global_id(0)
        m[i][0] = 1.0  # BAD-CHAIN

    e = _compile_error(k, np.zeros((4, 2), np.float32))
    assert e.lineno == line_of(__file__, "# BAD-CHAIN")
    assert "m[i, j]" in str(e) or "a[i, j]" in str(e) or "[i, " in str(e), str(e)  # the hint shows the fix


def test_too_few_indices():
    @dc.kernel
    def k(m: dc.Buffer[dc.float32, 2]):
        i = dc.global_id(0)
        m[i] = 1.0  # BAD-NIDX

    _check(_compile_error(k, np.zeros((4, 2), np.float32)), dc.KernelTypeError, "NIDX")


def test_assigning_to_a_parameter():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32], n: dc.int64):
        i = dc.global_id(0)
        n = n - 1  # BAD-PARAM
        a[i] = n

    e = _compile_error(k, np.zeros(4, np.float32), 3)
    assert e.lineno == line_of(__file__, "# BAD-PARAM")
    assert "n" in str(e)


def test_slice_of_buffer():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = a[0:2]  # BAD-SLICE

    _check(_compile_error(k, np.zeros(4, np.float32)), dc.KernelSyntaxError, "SLICE")


def test_iterating_over_a_buffer():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        s = 0.0
        for v in a:  # BAD-ITER
            s += v
        out[dc.global_id(0)] = s

    _check(_compile_error(k, np.zeros(4, np.float32), np.zeros(4, np.float32)), dc.KernelSyntaxError, "ITER")


def test_returning_a_value_from_a_kernel():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        return a[i] * 2.0  # BAD-RET

    e = _compile_error(k, np.zeros(4, np.float32))
    assert e.lineno == line_of(__file__, "# BAD-RET")


def test_shared_array_inside_branch():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < 4:
            t = dc.shared((4,), dc.float32)  # BAD-SHARED
            t[0] = 1.0
            a[i] = t[0]

    e = _compile_error(k, np.zeros(4, np.float32))
    assert e.lineno == line_of(__file__, "# BAD-SHARED")


@dc.func
def _fact(n: dc.int64) -> dc.int64:
    return 1 if n <= 1 else n * _fact(n - 1)  # BAD-REC


def test_recursive_device_function():
    @dc.kernel
    def k(a: dc.Buffer[dc.int64]):
        i = dc.global_id(0)
        a[i] = _fact(i)

    e = _compile_error(k, np.zeros(4, np.int64))
    assert "recurs" in str(e).lower(), str(e)


def test_barrier_in_device_function():
    @dc.func
    def sync_then(v: dc.float32) -> dc.float32:
        dc.barrier()  # BAD-BARRIER
        return v

    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = sync_then(a[i])

    e = _compile_error(k, np.zeros(4, np.float32))
    assert e.lineno == line_of(__file__, "# BAD-BARRIER")


def test_kernel_check_reports_without_launching():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = "x"  # BAD-STR

    with pytest.raises(dc.KernelSyntaxError) as ei:
        k.check()
    assert ei.value.lineno == line_of(__file__, "# BAD-STR")


def test_check_cli_on_a_user_file(tmp_path):
    src = tmp_path / "my_kernels.py"
    src.write_text(
        "import dotcompute as dc\n"
        "\n"
        "@dc.kernel\n"
        "def good(a: dc.Buffer[dc.float32]):\n"
        "    a[dc.global_id(0)] = 1.0\n"
        "\n"
        "@dc.kernel\n"
        "def bad(a: dc.Buffer[dc.float32]):\n"
        "    xs = [1.0, 2.0]\n"
        "    a[dc.global_id(0)] = xs[0]\n"
    )
    r = subprocess.run([sys.executable, "-m", "dotcompute", "check", str(src)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "my_kernels.py:9:" in r.stdout + r.stderr
    src.write_text("import dotcompute as dc\n\n@dc.kernel\ndef good(a: dc.Buffer[dc.float32]):\n"
                   "    a[dc.global_id(0)] = 1.0\n")
    r = subprocess.run([sys.executable, "-m", "dotcompute", "check", str(src)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
