"""Differential fuzzing: hypothesis builds kernels (expressions over mixed int64/float32 inputs,
floor division and modulo, min/max/abs, conditional expressions, if/else, loops) and every
available backend must give what a pure-Python evaluation gives. A fixed, small number of
examples keeps it inside the CI budget; every failure found is kept in fuzz_corpus/ and replayed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dotcompute as dc

from .fuzz_kernels import CMP_OPS, load_kernel, reference, save_failure

CORPUS = Path(__file__).parent / "fuzz_corpus"
N = 64
EXAMPLES = int(os.environ.get("DOTCOMPUTE_FUZZ_EXAMPLES", "8"))


def _trees(depth: int, loop: bool) -> st.SearchStrategy:
    leaves = [st.just(["x"]), st.just(["y"]), st.just(["f"]),
              st.sampled_from([-1000, -7, -1, 0, 1, 3, 1000]).map(lambda v: ["i", v])]
    if loop:
        leaves.append(st.just(["k"]))
    leaf = st.one_of(leaves)
    if depth == 0:
        return leaf
    sub = _trees(depth - 1, loop)
    int_leaf = st.one_of([st.just(["x"]), st.just(["y"])] + ([st.just(["k"])] if loop else []))
    cond = st.tuples(st.sampled_from(CMP_OPS), sub, sub).map(list)
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(["+", "-", "min", "max"]), sub, sub).map(list),
        st.tuples(st.just("*"), sub, leaf).map(list),  # products of a leaf stay inside int64
        st.tuples(st.sampled_from(["//", "%"]), int_leaf, int_leaf).map(list),
        st.tuples(st.sampled_from(["abs", "neg"]), sub).map(list),
        st.tuples(st.just("where"), cond, sub, sub).map(list),
    )


@st.composite
def programs(draw: st.DrawFn) -> dict:
    loop = draw(st.integers(1, 3))
    expr = draw(_trees(3, loop > 1))
    prog = {"expr": expr, "cond": None, "other": None, "loop": loop}
    if draw(st.booleans()):
        prog["cond"] = draw(st.tuples(st.sampled_from(CMP_OPS), _trees(1, loop > 1), _trees(1, loop > 1)).map(list))
        prog["other"] = draw(_trees(2, loop > 1))
    return prog


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(-1000, 1001, N).astype(np.int64)
    y = rng.integers(-1000, 1001, N).astype(np.int64)
    x[:4] = [0, -1, 1, -1000]  # edge values always present
    y[:4] = [-1, 0, -1000, 1000]
    f = (rng.standard_normal(N) * 100).astype(np.float32)
    return x, y, f


def check(prog: dict, tmp: Path) -> None:
    kernel = load_kernel(prog, tmp)
    x, y, f = _inputs(len(json.dumps(prog)))
    expected = reference(prog, x, y, f)
    for acc in dc.devices():
        # int64 with float32 is float64 (numpy 2), anywhere in a program (a comparison too): the
        # programs need fp64, which some devices (Metal) do not have; they refuse such kernels
        if "fp64" not in acc.info.get("features", []):
            continue
        out = np.zeros(N, expected.dtype)
        dc.launch(kernel, N, x, y, f, out, accelerator=acc)
        acc.synchronize()
        if expected.dtype.kind == "f":
            scale = max(1.0, float(np.abs(expected).max()))
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6 * scale, err_msg=f"{acc.id}: {prog}")
        else:
            np.testing.assert_array_equal(out, expected, err_msg=f"{acc.id}: {prog}")


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(prog=programs())
def test_random_kernels_match_python(prog, tmp_path_factory):
    try:
        check(prog, tmp_path_factory.mktemp("fuzz"))
    except AssertionError:
        if os.environ.get("DOTCOMPUTE_FUZZ_SAVE"):
            save_failure(prog, CORPUS)
        raise


@pytest.mark.parametrize("case", sorted(CORPUS.glob("*.json")), ids=lambda p: p.stem)
def test_corpus(case, tmp_path):
    check(json.loads(case.read_text()), tmp_path)
