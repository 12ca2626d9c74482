"""Mutated kernels given to the frontend raise KernelSyntaxError / KernelTypeError or lower cleanly,
never another exception."""

import ast
import copy
import math
import random
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang.frontend import parse_tree
from dotcompute.lang.kernel import DeviceFunction, Kernel

HERE = Path(__file__).parent
SEED_FILES = ["test_lowering.py", "test_end_to_end_cpu.py", "test_launch.py"]


def seeds():
    trees = [ast.parse((HERE / name).read_text()) for name in SEED_FILES]
    funcs, exprs, stmts = [], [], []
    for tree in trees:
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef) and any("kernel" in ast.unparse(d) for d in n.decorator_list):
                funcs.append(n)
            elif isinstance(n, ast.expr):
                exprs.append(n)
            elif isinstance(n, ast.stmt) and not isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                stmts.append(n)
    return funcs, exprs, stmts


@dc.func
def helper(x, y):
    return x * y


def mutate(rng, f, exprs, stmts):
    f = copy.deepcopy(f)
    nodes = list(ast.walk(f))
    for _ in range(rng.randint(1, 4)):
        target = rng.choice(nodes)
        for name, value in ast.iter_fields(target):
            if isinstance(value, ast.expr) and rng.random() < 0.5:
                setattr(target, name, copy.deepcopy(rng.choice(exprs)))
            elif isinstance(value, list) and value and isinstance(value[0], ast.stmt) and rng.random() < 0.5:
                value.insert(rng.randrange(len(value) + 1), copy.deepcopy(rng.choice(stmts)))
            elif isinstance(value, list) and value and isinstance(value[0], ast.stmt) and rng.random() < 0.2:
                del value[rng.randrange(len(value))]
                if not value:
                    value.append(ast.Pass())
    return ast.fix_missing_locations(f)


@pytest.mark.parametrize("seed", range(4))
def test_mutated_kernels_raise_only_kernel_errors(seed):
    funcs, exprs, stmts = seeds()
    rng = random.Random(seed)
    namespace = {"dc": dc, "math": math, "np": np, "helper": helper, "FACTOR": 2.0, "LIMIT": 3,
                 "SCALE": 3, "OFFSET": 0.5, "mix": helper}
    lowered = refused = 0
    for _ in range(150):
        f = mutate(rng, rng.choice(funcs), exprs, stmts)
        try:
            text = ast.unparse(f)
            tree = ast.parse(text).body[0]
        except (SyntaxError, ValueError, RecursionError):
            continue
        parsed = parse_tree(tree, "<fuzz>", tuple(text.splitlines(True)), dict(namespace))
        obj = Kernel.from_parsed(parsed) if rng.random() < 0.8 else DeviceFunction.from_parsed(parsed)
        try:
            obj.check()
            lowered += 1
        except (dc.KernelSyntaxError, dc.KernelTypeError) as e:
            assert e.lineno is None or e.lineno >= 1
            str(e)
            refused += 1
    assert lowered > 10 and refused > 10
