"""Fuzz the frontend: mutated and random kernels raise only KernelSyntaxError/KernelTypeError.

Seeds are the conformance kernels (parsed from conformance_kernels.py); a seeded mutator
replaces expressions, statements, operators, names and annotations with things in and out of
the language, and every mutant that is still valid Python is compiled with
``dc.kernel(fn).source("cpu")``. Any other exception (an internal error, an assertion, a
crash in an emitter) is a bug. Bounded by count and time so the suite stays fast.
"""

from __future__ import annotations

import ast
import copy
import random
import time
import warnings
from pathlib import Path

import pytest
from srcload import load_function

import dotcompute as dc

ALLOWED = (dc.KernelSyntaxError, dc.KernelTypeError)
REGISTRY = Path(__file__).with_name("conformance_kernels.py")

HEADER = """\
import math

import numpy as np

import dotcompute as dc
import conformance_kernels as _ck

globals().update({k: v for k, v in vars(_ck).items() if not k.startswith("__")})


"""

EXPR_POOL = [
    "[1, 2]", "{}", "{1}", "'s'", "None", "lambda: 0", "1.5", "2 ** 70", "-1", "True", "dc.global_id(5)",
    "dc.global_id(0)", "dc.local_id(1)", "dc.shared((4,), dc.float32)", "math.gcd(1, 2)", "(1, 2)", "f'{1}'",
    "print", "dc.atomic_add(1, 2, 3)", "x[1.5]", "range(3)", "min()", "abs(1, 2)", "dc.barrier()",
    "not_defined", "...", "1j", "b'x'", "[i for i in range(2)]", "(yield)", "dc.float32", "dc.Buffer",
    "math.sqrt(-1)", "math.pi", "10 ** 30", "1 // 0", "1.0 / 0", "dc.int32(2 ** 40)", "dc.uint32(-1)",
    "max(1)", "int('3')", "len(x)", "x.shape", "x.shape[9]", "x.dtype", "dc.atomic_cas(x, 0, 1)",
    "dc.sqrt(1, 2)", "1 if True else 'a'", "not x", "x @ x", "x[0][0]", "x[:]", "x[...]",
    "dc.float32(1.0) ** dc.float32(2.0)", "2 ** -1", "True + True", "~1.5", "1 << 70", "-(2 ** 63)",
]
STMT_POOL = [
    "return 1", "break", "continue", "pass", "del q", "global q", "dc.barrier()", "q = [1]",
    "for q in x:\n    pass", "while True:\n    break", "q = 1.5", "q += 's'", "with q:\n    pass",
    "try:\n    pass\nexcept Exception:\n    pass", "import os", "assert q", "raise ValueError()", "q, r = 1, 2",
    "q = r = 1", "q: dc.float32 = 1", "q: int = 2.5", "s = dc.shared((8,), dc.int32)",
    "for q in range(1, 2, 0):\n    pass", "for q in range(1, 2, 3, 4):\n    pass", "x[0] = x", "x = 1",
    "dc.atomic_add(x, 0)", "q = dc.global_id(0)\nq = 1.5", "print(1)", "async_thing = 1", "nonlocal q",
    "class C:\n    pass", "def inner():\n    pass", "q = (1 if True else 2.5)", "q = x[0] if x else 0",
]
ANNOTATIONS = ["dc.Buffer[dc.float16]", "int", "float", "dc.Buffer[dc.float32, 4]", "None", "'str'",
               "dc.Buffer[dc.int8]", "list", "dc.Buffer[dc.float32, 0]", "dc.Buffer[3]", "dc.uint64", "bool",
               "dc.Buffer[dc.bool_, 2]", "dc.Buffer", "dc.float64", "dc.int32"]
BINOPS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr,
          ast.BitXor, ast.LShift, ast.RShift, ast.MatMult]


def seed_kernels() -> list[ast.FunctionDef]:
    """The conformance kernels with fixed signatures (generic ones need example arguments)."""
    tree = ast.parse(REGISTRY.read_text())
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
            continue
        dec = ast.unparse(node.decorator_list[0])
        if not dec.startswith("dc.kernel"):
            continue
        if any(a.annotation is not None and ast.unparse(a.annotation) == "dc.Buffer" for a in node.args.args):
            continue
        node = copy.deepcopy(node)
        node.decorator_list = []
        out.append(node)
    return out


def _parse_expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def mutate(fn: ast.FunctionDef, rng: random.Random) -> ast.FunctionDef:
    fn = copy.deepcopy(fn)
    for _ in range(rng.randint(1, 3)):
        exprs = [n for n in ast.walk(fn) if isinstance(n, ast.expr) and not isinstance(n, ast.expr_context)]
        bodies = [n for n in ast.walk(fn) if hasattr(n, "body") and isinstance(n.body, list) and n.body]
        choice = rng.randrange(6)
        if choice == 0 and exprs:  # replace an expression (in place: copy fields of a new node)
            target = rng.choice(exprs)
            new = _parse_expr(rng.choice(EXPR_POOL)) if rng.random() < 0.7 else copy.deepcopy(rng.choice(exprs))
            _replace_expr(fn, target, new)
        elif choice == 1 and bodies:  # replace or insert a statement
            body = rng.choice(bodies).body
            stmt = ast.parse(rng.choice(STMT_POOL)).body
            k = rng.randrange(len(body))
            if rng.random() < 0.5:
                body[k:k + 1] = stmt
            else:
                body[k:k] = stmt
        elif choice == 2:  # swap an operator
            ops = [n for n in ast.walk(fn) if isinstance(n, (ast.BinOp, ast.AugAssign))]
            if ops:
                rng.choice(ops).op = rng.choice(BINOPS)()
        elif choice == 3 and bodies:  # delete a statement
            body = rng.choice(bodies).body
            if len(body) > 1:
                del body[rng.randrange(len(body))]
        elif choice == 4 and fn.args.args:  # change an annotation
            rng.choice(fn.args.args).annotation = _parse_expr(rng.choice(ANNOTATIONS))
        else:  # rename a use of a name
            names = [n for n in ast.walk(fn) if isinstance(n, ast.Name)]
            if names:
                rng.choice(names).id = rng.choice([n.id for n in names] + ["q", "dc", "math", "print", "range"])
    return ast.fix_missing_locations(fn)


def _replace_expr(root: ast.AST, target: ast.expr, new: ast.expr) -> None:
    for parent in ast.walk(root):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, new)
                return
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is target:
                        value[k] = new
                        return


def random_kernel(rng: random.Random, n: int) -> ast.FunctionDef:
    """A kernel built from scratch out of pool statements and expressions."""
    lines = ["i = dc.global_id(0)"]
    for _ in range(rng.randint(1, 5)):
        r = rng.random()
        if r < 0.4:
            lines.append(f"q = {rng.choice(EXPR_POOL)}")
        elif r < 0.7:
            lines.append(rng.choice(STMT_POOL))
        else:
            lines.append(f"x[i] = {rng.choice(EXPR_POOL)}")
    body = "\n".join(lines).replace("\n", "\n    ")
    ann = rng.choice(["dc.Buffer[dc.float32]", "dc.Buffer[dc.int32, 2]", "dc.float32"])
    src = f"def rnd_{n}(x: {ann}, y: dc.int32):\n    {body}\n"
    return ast.parse(src).body[0]  # type: ignore[return-value]


def _compile_one(fn_ast: ast.FunctionDef) -> tuple[str, BaseException] | None:
    src = HEADER + ast.unparse(fn_ast) + "\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # e.g. "'set' object is not subscriptable"
        try:
            compile(src, "<mutant>", "exec")
        except SyntaxError:
            return None  # not Python: never reaches the frontend
        try:
            fn = load_function(src, fn_ast.name)
        except Exception:
            return None  # the module itself fails at import (e.g. a bad annotation evaluated eagerly)
    try:
        dc.kernel(fn).source("cpu")
    except ALLOWED:
        return None
    except RecursionError as e:
        return src, e
    except Exception as e:  # noqa: BLE001 -- anything else is the bug this test looks for
        return src, e
    return None


def _fuzz(make, budget_s: float, count: int) -> None:
    failures: list[tuple[str, BaseException]] = []
    tried = 0
    start = time.monotonic()
    for n in range(count):
        if time.monotonic() - start > budget_s:
            break
        tried += 1
        bad = _compile_one(make(n))
        if bad is not None:
            failures.append(bad)
    if failures:
        shown = "\n\n".join(f"{type(e).__name__}: {e}\n{src[len(HEADER):]}" for src, e in failures[:3])
        pytest.fail(f"{len(failures)} of {tried} fuzzed kernels raised something other than "
                    f"KernelSyntaxError/KernelTypeError:\n\n{shown}")
    assert tried >= 20


def test_mutated_conformance_kernels():
    seeds = seed_kernels()
    assert len(seeds) >= 30
    rng = random.Random(20261122)
    _fuzz(lambda n: mutate(rng.choice(seeds), rng), budget_s=8.0, count=400)


def test_random_kernels():
    rng = random.Random(4242)
    _fuzz(lambda n: random_kernel(rng, n), budget_s=4.0, count=300)
