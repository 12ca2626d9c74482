"""Hypothesis-generated expression trees (depth ≤ 5, random dtypes, broadcastable shapes) against numpy."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dotcompute as dc

DTYPES = ["bool", "int32", "int64", "uint32", "float32", "float64"]
SHAPES = [(4, 6), (6,), (1, 6), (4, 1), (1,), ()]
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
    # floor division and modulo by divisors ≥ 1 (numpy and kernels agree on x // 0 only for floats)
    "fdiv": lambda a, b: a // (abs(b) + 1), "mod": lambda a, b: a % (abs(b) + 1),
    "min": lambda a, b: np.minimum(a, b) if isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
    else dc.minimum(a, b),
    "max": lambda a, b: np.maximum(a, b) if isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
    else dc.maximum(a, b),
}
UNARY = {"neg": lambda a: -a, "abs": abs,
         "sqrt": lambda a: np.sqrt(abs(a)) if isinstance(a, np.ndarray) else dc.sqrt(abs(a))}

leaves = st.tuples(st.just("leaf"), st.sampled_from(DTYPES), st.sampled_from(SHAPES), st.integers(0, 2**16))
# windows onto bigger arrays (views): rows 2..5 of an (8, 6) array, every other element of a (12,) one
views = st.tuples(st.just("view"), st.sampled_from(DTYPES), st.sampled_from(["rows", "strided"]), st.integers(0, 99))
scalars = st.tuples(st.just("scalar"), st.sampled_from([2, -1, 0.5, True]))


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.tuples(st.sampled_from(sorted(BINARY)), children, children),
        st.tuples(st.sampled_from(sorted(UNARY)), children),
        st.tuples(st.just("where"), children, children, children),
    )


trees = st.recursive(st.one_of(leaves, views, scalars), _extend, max_leaves=8)


def depth(t: tuple) -> int:
    return 0 if t[0] in ("leaf", "scalar", "view") else 1 + max(depth(c) for c in t[1:])


def data(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "uint32":
        return rng.integers(0, 9, shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-9, 9, shape).astype(dtype)
    return (rng.standard_normal(shape) * 4).astype(dtype)


def evaluate(t: tuple, leaf: callable) -> object:
    kind = t[0]
    if kind == "leaf":
        return leaf(t)
    if kind == "view":
        base = leaf(("leaf", t[1], (8, 6) if t[2] == "rows" else (12,), t[3]))
        return base[2:6] if t[2] == "rows" else base[::2]
    if kind == "scalar":
        return t[1]
    args = [evaluate(c, leaf) for c in t[1:]]
    if all(not isinstance(a, (np.ndarray, dc.Buffer)) for a in args):
        args[0] = leaf(("leaf", "float64", (), 1))  # keep at least one array in every operation
    if kind == "where":
        c = args[0]
        return np.where(c, args[1], args[2]) if isinstance(args[0], np.ndarray) or not any(
            isinstance(a, dc.Buffer) for a in args) else dc.where(c, args[1], args[2])
    if kind in UNARY:
        return UNARY[kind](args[0])
    return BINARY[kind](*args)


def _all_supported(t: tuple, leaf: callable) -> bool:
    """Whether every intermediate numpy result of ``t`` has a dtype array expressions compute with."""
    if t[0] in ("leaf", "scalar", "view"):
        return True
    if not all(_all_supported(c, leaf) for c in t[1:]):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(evaluate(t, leaf)).dtype.name in DTYPES


def test_random_expression_trees(accelerator: dc.Accelerator) -> None:
    @settings(max_examples=30, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(trees.filter(lambda t: 1 <= depth(t) <= 5))
    def check(tree: tuple) -> None:
        host: dict[tuple, np.ndarray] = {}

        def np_leaf(t: tuple) -> np.ndarray:
            return host.setdefault(t, data(t[1], t[2], t[3]))

        def dc_leaf(t: tuple) -> dc.Buffer:
            arr = np_leaf(t)
            return accelerator.asarray(arr) if arr.ndim else arr  # numpy 0-d arrays: strong scalars

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = np.asarray(evaluate(tree, np_leaf))
            except (TypeError, OverflowError) as e:
                err = type(e)
            else:
                # a numpy result dtype kernels lack (sqrt of bool is float16) is refused with a TypeError
                err = None if _all_supported(tree, np_leaf) else TypeError
        if err is not None:
            try:
                evaluate(tree, dc_leaf)
            except err:
                return
            raise AssertionError(f"numpy raised {err.__name__} for {tree}, dotcompute did not")
        got = evaluate(tree, dc_leaf)
        got = got.numpy() if isinstance(got, dc.Buffer) else np.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype, (tree, got.dtype, want.dtype)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=2e-5 if want.dtype == np.float32 else 1e-9, atol=1e-6,
                                       err_msg=str(tree))
        else:
            np.testing.assert_array_equal(got, want, err_msg=str(tree))

    check()
