# ruff: noqa: F841, F401, F821, B007, E731 -- the broken kernels below are broken on purpose
"""Python outside the kernel language is refused at first compile, pointing at the right line.

Each broken function below marks its offending line with ``# ERR``; the test compiles it
(``dc.kernel(fn).source("cpu")``, which runs nothing) and checks the exception type, the
reported line, the file name and that the message shows the source line. ``dotcompute check``
is tested on whole files at the end.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dotcompute as dc

SYN = dc.KernelSyntaxError
TYP = dc.KernelTypeError
EITHER = (dc.KernelSyntaxError, dc.KernelTypeError)

MARK = "# ERR"


def host_helper(x):
    return x + 1


class Point:
    x = 1


# ---------------------------------------------------------------------------------------------
# The broken kernels. Each is an undecorated function; the test decorates it.


def k_list(a: dc.Buffer[dc.float32]):
    v = [1.0, 2.0]  # ERR
    a[0] = v[0]


def k_dict(a: dc.Buffer[dc.float32]):
    a[0] = {1: 2.0}[1]  # ERR


def k_set(a: dc.Buffer[dc.int32]):
    s = {1, 2}  # ERR
    a[0] = 1


def k_list_comprehension(a: dc.Buffer[dc.int32]):
    a[0] = [i for i in range(3)][0]  # ERR


def k_generator_expression(a: dc.Buffer[dc.int32]):
    a[0] = sum(i for i in range(3))  # ERR


def k_dict_comprehension(a: dc.Buffer[dc.int32]):
    d = {i: i for i in range(3)}  # ERR
    a[0] = 1


def k_string(a: dc.Buffer[dc.int32]):
    s = "abc"  # ERR
    a[0] = 1


def k_fstring(a: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    s = f"item {i}"  # ERR
    a[0] = 1


def k_try(a: dc.Buffer[dc.int32]):
    try:  # ERR
        a[0] = 1
    except Exception:
        a[0] = 2


def k_with(a: dc.Buffer[dc.int32]):
    with open("x") as f:  # ERR
        a[0] = 1


def k_yield(a: dc.Buffer[dc.int32]):
    a[0] = 1
    yield 1  # ERR


def k_lambda(a: dc.Buffer[dc.int32]):
    f = lambda x: x + 1  # ERR
    a[0] = 1


def k_global(a: dc.Buffer[dc.int32]):
    global MARK  # ERR
    a[0] = 1


def make_nonlocal():
    counter = 0

    def k_nonlocal(a: dc.Buffer[dc.int32]):
        nonlocal counter  # ERR
        a[0] = 1

    return k_nonlocal


def _recursive(n: dc.int32) -> dc.int32:
    if n <= 0:
        return 0
    return recursive(n - 1) + 1  # ERR


recursive = dc.func(_recursive)


def k_recursion(a: dc.Buffer[dc.int32]):
    a[0] = recursive(3)


def k_python_call(a: dc.Buffer[dc.int32]):
    a[0] = host_helper(1)  # ERR


def k_print(a: dc.Buffer[dc.int32]):
    print(a[0])  # ERR


def k_keyword_to_builtin(a: dc.Buffer[dc.int32]):
    i = dc.global_id(dim=0)  # ERR
    a[i] = 1


def k_assign_scalar_param(a: dc.Buffer[dc.int32], n: dc.int32):
    n = n + 1  # ERR
    a[0] = n


def k_return_value(a: dc.Buffer[dc.int32]):
    a[0] = 1
    return 1  # ERR


def k_type_change(a: dc.Buffer[dc.float32]):
    v = 1
    v = 2.5  # ERR
    a[0] = v


def k_del(a: dc.Buffer[dc.int32]):
    v = 1
    del v  # ERR
    a[0] = 1


@dc.func
def add2(x: dc.int32, y: dc.int32) -> dc.int32:
    return x + y


def k_star_args(a: dc.Buffer[dc.int32]):
    a[0] = add2(*a)  # ERR


def k_class(a: dc.Buffer[dc.int32]):
    class Inner:  # ERR
        pass
    a[0] = 1


def k_import(a: dc.Buffer[dc.float32]):
    import os  # ERR
    a[0] = 1.0


def k_undefined_name(a: dc.Buffer[dc.int32]):
    a[0] = not_defined_anywhere + 1  # ERR


def k_wrong_arg_count(a: dc.Buffer[dc.int32]):
    a[0] = add2(1)  # ERR


def k_float_index(a: dc.Buffer[dc.float32]):
    x = 1.5
    a[x] = 1.0  # ERR


def k_assert(a: dc.Buffer[dc.int32]):
    assert a.shape[0] > 0  # ERR
    a[0] = 1


def k_raise(a: dc.Buffer[dc.int32]):
    if a[0] < 0:
        raise ValueError("negative")  # ERR


def k_for_else(a: dc.Buffer[dc.int32]):
    for i in range(3):
        a[i] = i
    else:
        a[0] = 9  # ERR


def k_slice(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32]):
    b[0] = a[1:3]  # ERR


def k_is_none(a: dc.Buffer[dc.int32]):
    if a[0] is None:  # ERR
        a[0] = 1


def k_in(a: dc.Buffer[dc.int32]):
    if a[0] in (1, 2):  # ERR
        a[0] = 1


def k_iterate_buffer(a: dc.Buffer[dc.int32]):
    s = 0
    for v in a:  # ERR
        s += v
    a[0] = s


def k_wrong_index_count(a: dc.Buffer[dc.float32, 2]):
    a[0] = 1.0  # ERR


def k_bitwise_float(a: dc.Buffer[dc.float32]):
    a[0] = a[1] & 1  # ERR


def k_bad_dimension(a: dc.Buffer[dc.int32]):
    i = dc.global_id(3)  # ERR
    a[0] = i


def k_shape_out_of_range(a: dc.Buffer[dc.int32]):
    a[0] = a.shape[1]  # ERR


def k_shared_in_branch(a: dc.Buffer[dc.float32]):
    if a[0] > 0.0:
        s = dc.shared((4,), dc.float32)  # ERR
        s[0] = 1.0


def k_shared_runtime_shape(a: dc.Buffer[dc.float32], n: dc.int32):
    s = dc.shared((n,), dc.float32)  # ERR
    a[0] = s[0]


def _barrier_in_func(x: dc.int32) -> dc.int32:
    dc.barrier()  # ERR
    return x


barrier_in_func = dc.func(_barrier_in_func)


def k_barrier_in_func(a: dc.Buffer[dc.int32]):
    a[0] = barrier_in_func(1)


def k_none_value(a: dc.Buffer[dc.int32]):
    v = None  # ERR
    a[0] = 1


def k_range_float(a: dc.Buffer[dc.int32]):
    for i in range(2.5):  # ERR
        a[0] = 1


def k_unknown_math(a: dc.Buffer[dc.int32]):
    a[0] = math.gcd(a[1], a[2])  # ERR


def k_object_attribute(a: dc.Buffer[dc.int32]):
    a[0] = Point.x + 1.5j  # ERR


def k_array_as_number(a: dc.Buffer[dc.int32]):
    a[0] = a + 1  # ERR


def k_unannotated_misuse(a, n: dc.int32):
    a[0] = a * n  # ERR


def k_mutual_recursion(a: dc.Buffer[dc.int32]):
    a[0] = ping(3)


def _ping(n: dc.int32) -> dc.int32:
    return pong(n - 1) if n > 0 else 0


def _pong(n: dc.int32) -> dc.int32:
    return ping(n - 1) + 1  # ERR


ping = dc.func(_ping)
pong = dc.func(_pong)


# (function, expected exception type(s))
CASES = [
    (k_list, SYN), (k_dict, SYN), (k_set, SYN), (k_list_comprehension, SYN), (k_generator_expression, SYN),
    (k_dict_comprehension, SYN), (k_string, SYN), (k_fstring, SYN), (k_try, SYN), (k_with, SYN),
    (k_yield, SYN), (k_lambda, SYN), (k_global, SYN), (make_nonlocal(), SYN), (k_recursion, SYN),
    (k_python_call, SYN), (k_print, SYN), (k_keyword_to_builtin, SYN), (k_assign_scalar_param, SYN),
    (k_return_value, SYN), (k_type_change, TYP), (k_del, SYN), (k_star_args, SYN), (k_class, SYN),
    (k_import, SYN), (k_undefined_name, EITHER), (k_wrong_arg_count, TYP), (k_float_index, TYP),
    (k_assert, SYN), (k_raise, SYN), (k_for_else, SYN), (k_slice, SYN), (k_is_none, SYN), (k_in, SYN),
    (k_iterate_buffer, SYN), (k_wrong_index_count, TYP), (k_bitwise_float, TYP), (k_bad_dimension, TYP),
    (k_shape_out_of_range, TYP), (k_shared_in_branch, SYN), (k_shared_runtime_shape, EITHER),
    (k_barrier_in_func, SYN), (k_none_value, SYN), (k_range_float, TYP), (k_unknown_math, EITHER),
    (k_object_attribute, EITHER), (k_array_as_number, TYP), (k_unannotated_misuse, TYP),
    (k_mutual_recursion, SYN),
]


def marked_line(*fns) -> tuple[int, str]:
    """The absolute line number and text of the line marked ``# ERR`` in one of ``fns``."""
    for fn in fns:
        lines, start = inspect.getsourcelines(fn)
        for n, text in enumerate(lines):
            if MARK in text and not text.lstrip().startswith("#"):
                return start + n, text.split("#")[0].strip()
    raise AssertionError(f"no {MARK} marker in {fns}")


# where the error is in a device function the kernel calls, the marker is there
MARKED_IN = {k_recursion: _recursive, k_barrier_in_func: _barrier_in_func, k_mutual_recursion: _pong}


@pytest.mark.parametrize("fn, expected", CASES, ids=[f.__name__ for f, _ in CASES])
def test_refused_with_line(fn, expected):
    line, text = marked_line(MARKED_IN.get(fn, fn))
    with pytest.raises(EITHER) as info:
        dc.kernel(fn).source("cpu")
    exc = info.value
    assert isinstance(exc, expected), f"{fn.__name__}: got {type(exc).__name__}, expected {expected}: {exc}"
    assert getattr(exc, "lineno", None) == line, f"{fn.__name__}: reported line {exc.lineno}, expected {line}: {exc}"
    msg = str(exc)
    assert os.path.basename(__file__) in msg, f"{fn.__name__}: the message does not name the file: {msg}"
    assert str(line) in msg, f"{fn.__name__}: the message does not name line {line}: {msg}"
    assert text in msg, f"{fn.__name__}: the message does not show the source line {text!r}: {msg}"


def test_at_least_thirty_constructs():
    assert len(CASES) >= 30


def test_refused_on_every_backend_source():
    # the checker runs before any emitter: every target refuses the same way
    for backend in ("cpu", "cuda", "opencl", "metal"):
        with pytest.raises(SYN):
            dc.kernel(k_list).source(backend)


def test_launch_refuses_before_running():
    import numpy as np
    a = np.zeros(4, np.float32)
    with pytest.raises(SYN):
        dc.launch(dc.kernel(k_list), 4, a, accelerator=dc.accelerator("cpu"))
    assert (a == 0).all()


# ---------------------------------------------------------------------------------------------
# dotcompute check

BROKEN_FILE = '''\
import math

import dotcompute as dc

SCALE = 2.0


@dc.func
def helper(x: dc.float32) -> dc.float32:
    return x * SCALE


@dc.kernel
def good(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = helper(a[i]) + math.sqrt(2.0)


@dc.kernel
def bad_list(a: dc.Buffer[dc.float32]):
    v = [1.0, 2.0]  # BROKEN
    a[0] = v[0]


@dc.kernel(debug=True)
def bad_index(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    a[1.5] = 0.0  # BROKEN


@dc.func
def bad_func(x: dc.float32) -> dc.float32:
    return x + undefined_thing  # BROKEN
'''

CLEAN_FILE = '''\
import dotcompute as dc


@dc.func
def twice(x: dc.float32) -> dc.float32:
    return x * 2.0


@dc.kernel
def scale(a: dc.Buffer[dc.float32], s: dc.float32):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = twice(a[i]) * s
'''


def _run_check(path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    pkg_parent = str(Path(dc.__file__).resolve().parents[1])
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "dotcompute.cli.main", "check", str(path)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_check_reports_three_broken_kernels(tmp_path):
    path = tmp_path / "three_broken.py"
    path.write_text(BROKEN_FILE)
    expected = [n + 1 for n, text in enumerate(BROKEN_FILE.splitlines()) if "# BROKEN" in text]
    assert len(expected) == 3
    proc = _run_check(path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, f"exit status {proc.returncode}:\n{out}"
    reported = {int(m) for m in re.findall(r"three_broken\.py:(\d+)", out)}
    assert reported == set(expected), f"reported lines {sorted(reported)}, expected {expected}:\n{out}"
    for n in expected:
        text = BROKEN_FILE.splitlines()[n - 1].split("#")[0].strip()
        assert text in out, f"the diagnostic for line {n} does not show {text!r}:\n{out}"


def test_check_clean_file_exits_zero(tmp_path):
    path = tmp_path / "clean.py"
    path.write_text(CLEAN_FILE)
    proc = _run_check(path)
    assert proc.returncode == 0, f"exit status {proc.returncode}:\n{proc.stdout}{proc.stderr}"


def test_check_does_not_run_kernels(tmp_path):
    # checking must not launch anything: the file's top level (and its __main__ block) does not run
    path = tmp_path / "with_main.py"
    path.write_text(textwrap.dedent(CLEAN_FILE) + "\nif __name__ == '__main__':\n    raise SystemExit(3)\n")
    proc = _run_check(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
