"""Property-based: random expression trees computed in a kernel equal the documented rules.

Each hypothesis example is one expression over three input vectors of random types
(int32/int64/float32/float64), compiled into ONE kernel that evaluates it for 64 elements;
exprgen.py holds the generator and the independent reference evaluator. Runs on every
available accelerator, and (float64-free trees) as MSL through the Metal shim.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from exprgen import FLOAT_TYPES, evaluate, expression_strategy, kernel_source, make_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from srcload import load_function

import dotcompute as dc

N = 64
ALL_TYPES = ["int32", "int64", "float32", "float64"]
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


def _check(root, var_types, src, inputs, got):
    want, tol, ok = evaluate(root, var_types, inputs)
    if root.type in FLOAT_TYPES:
        bad = ok & ~(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= tol)
    else:
        bad = ok & (got != want)
    if bad.any():
        j = int(np.argmax(bad))
        args = ", ".join(f"x{k}={inputs[k][j]!r}" for k in range(len(inputs)))
        raise AssertionError(f"{bad.sum()} of {N} elements differ; first at {j}: {args}: got {got[j]!r}, "
                             f"expected {want[j]!r} (tolerance {tol[j]:.3g})\n{src}")


def _tree(data, types, allow_f64=True):
    var_types = data.draw(st.lists(st.sampled_from(types), min_size=3, max_size=3), label="types")
    root = data.draw(expression_strategy(var_types, allow_f64=allow_f64), label="tree")
    return var_types, root


@SETTINGS
@given(data=st.data())
def test_expression_trees(accelerator, data):
    var_types, root = _tree(data, ALL_TYPES)
    src = kernel_source(root, var_types)
    kernel = dc.kernel(load_function(src, "prop"))
    inputs = make_inputs(var_types, N, seed=len(src))
    out = np.zeros(N, root.type)
    dc.launch(kernel, N, *inputs, out, accelerator=accelerator)
    _check(root, var_types, src, inputs, out)


@settings(SETTINGS, max_examples=25)
@given(data=st.data())
def test_expression_trees_metal_shim(data):
    runner = pytest.importorskip("runner")
    if not (shutil.which("clang++") or shutil.which("g++")):
        pytest.skip("the Metal shim needs clang++ or g++")
    var_types, root = _tree(data, ["int32", "int64", "float32"], allow_f64=False)
    src = kernel_source(root, var_types)
    kernel = dc.kernel(load_function(src, "prop"))
    inputs = make_inputs(var_types, N, seed=len(src))
    out = np.zeros(N, root.type)
    runner.run_msl(kernel.source("metal"), [*inputs, out], N)
    _check(root, var_types, src, inputs, out)
