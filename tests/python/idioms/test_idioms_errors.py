"""What the docs promise for idioms the language refuses (or treats specially): the error kind,
the location and a hint that tells a porter what to write instead."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

TABLE = (1.0, 2.0, 4.0)


@dc.kernel
def int_accumulator(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x = 0
    x += a[i]  # LINE-INT-ACC
    out[i] = x


def test_int_accumulator_of_floats_is_refused_with_a_hint():
    with pytest.raises(dc.KernelTypeError) as ei:
        int_accumulator.check()
    e = ei.value
    lines = Path(__file__).read_text().splitlines()
    assert e.lineno == 1 + next(n for n, t in enumerate(lines) if t.endswith("# LINE-INT-ACC"))
    # x = 0 holds a Python int (weak, NEP 50): x + a[i] is float32, which an int64 variable cannot take
    assert "int64" in str(e) and "float32" in str(e)
    assert "0.0" in (e.hint or "")


@dc.kernel
def chained_index(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = a[i][0]


def test_chained_indexing_is_refused_with_a_hint():
    with pytest.raises(dc.KernelSyntaxError) as ei:
        chained_index.check()
    assert "a[i, j]" in (ei.value.hint or "")


@dc.kernel
def bad_unpack(a: dc.Buffer[dc.float32, 2]):
    n, m, k = a.shape
    a[0, 0] = n + m + k


def test_shape_unpacked_into_the_wrong_number_of_names():
    with pytest.raises(dc.KernelTypeError, match="2 dimension"):
        bad_unpack.check()


@dc.kernel
def table_runtime_index(out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = TABLE[i]


@dc.kernel
def table_out_of_range(out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = TABLE[3]


def test_constant_tuple_needs_a_constant_in_range_index():
    with pytest.raises(dc.KernelTypeError) as ei:
        table_runtime_index.check()
    assert "buffer" in (ei.value.hint or "")
    with pytest.raises(dc.KernelTypeError, match="out of range"):
        table_out_of_range.check()


@dc.kernel
def table_last(out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = TABLE[-1] * len(TABLE)


def test_rebinding_a_constant_tuple_recompiles(cpu):
    out = np.zeros(2, np.float32)
    dc.launch(table_last, 2, out, accelerator=cpu)
    assert out.tolist() == [12.0, 12.0]
    module = sys.modules[__name__]
    old = module.TABLE
    try:
        module.TABLE = (1.0, 5.0)
        dc.launch(table_last, 2, out, accelerator=cpu)
        assert out.tolist() == [10.0, 10.0]
    finally:
        module.TABLE = old


@dc.kernel
def narrow_loop_var_in_branch(n32: dc.int32, out: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    for k in range(n32):
        out[i] = k
    if i > 0:
        for k in range(i, n32):
            out[i] += k


def test_loop_variable_widening_inside_a_branch_is_refused_with_a_hint():
    # at the top of the body the variable is re-declared wider; inside a branch its type
    # would depend on the path taken, so the rule "one type per variable" applies
    with pytest.raises(dc.KernelTypeError) as ei:
        narrow_loop_var_in_branch.check()
    assert "own variable name" in (ei.value.hint or "")


@dc.kernel
def running_max(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    best = -math.inf  # LINE-BEST
    for j in range(len(a)):
        best = max(best, a[j])
    out[i] = best


@dc.kernel
def running_max32(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    best: dc.float32 = -math.inf
    for j in range(len(a)):
        best = max(best, a[j])
    out[i] = best


def test_float64_literal_on_metal_points_at_the_line_with_a_hint():
    with pytest.raises(dc.KernelTypeError) as ei:
        running_max.source("metal")
    e = ei.value
    assert e.text is not None and "best = -math.inf" in e.text
    assert "dc.float32" in (e.hint or "")
    assert "double" not in running_max32.source("metal")


def test_running_max_from_minus_infinity(accelerator):
    a = np.array([-3.0, 7.5, 2.0], np.float32)
    out = np.zeros(3, np.float32)
    dc.launch(running_max32, 3, a, out, accelerator=accelerator)
    assert out.tolist() == [7.5] * 3
