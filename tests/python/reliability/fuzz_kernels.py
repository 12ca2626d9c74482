"""Random kernels for differential fuzzing: an expression tree over two int64 inputs and one
float32 input, optionally under an if/else and inside a small loop, printed as kernel-language
source and evaluated per element in pure Python with numpy scalars (numpy 2 promotion, Python's
floor division and modulo), which is the meaning the kernel language promises.

A tree is JSON-able nested lists, so failures are kept in fuzz_corpus/ and replayed as tests.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np

# leaves: ("x",) int64, ("y",) int64, ("f",) float32, ("i", v) int literal, ("k",) loop counter (int64)
INT_OPS = ("+", "-", "*", "//", "%", "min", "max", "abs", "neg", "where")
CMP_OPS = ("<", "<=", "==", "!=", ">", ">=")


def is_float(t: Any) -> bool:
    op = t[0]
    if op in ("x", "y", "i", "k"):
        return False
    if op == "f":
        return True
    if op in ("abs", "neg"):
        return is_float(t[1])
    if op == "where":
        return is_float(t[2]) or is_float(t[3])
    if op in ("//", "%"):
        return False  # only built over integers (see fuzz strategies)
    return is_float(t[1]) or is_float(t[2])


def src(t: Any) -> str:
    """Kernel-language (= Python) text of a tree."""
    op = t[0]
    if op in ("x", "y"):
        return f"{op}[i]"
    if op == "f":
        return "f[i]"
    if op == "k":
        return "k"
    if op == "i":
        return repr(int(t[1]))
    if op == "abs":
        return f"abs({src(t[1])})"
    if op == "neg":
        return f"(-{src(t[1])})"
    if op in ("min", "max"):
        return f"{op}({src(t[1])}, {src(t[2])})"
    if op == "where":
        return f"({src(t[2])} if {src(t[1])} else {src(t[3])})"
    if op in ("//", "%"):
        # the divisor is kept positive and nonzero, so the result is defined everywhere
        return f"({src(t[1])} {op} ({src(t[2])} % 7 + 1))"
    return f"({src(t[1])} {op} {src(t[2])})"


def kernel_source(prog: dict[str, Any]) -> str:
    """A module defining ``fuzzed`` for the program ``{"expr": tree, "cond": tree|None, "other":
    tree|None, "loop": n}``."""
    out_t = "dc.float64" if prog_is_float(prog) else "dc.int64"
    body = [f"    v = {out_t}({src(prog['expr'])})"]
    if prog.get("cond") is not None:
        body = [f"    if {src(prog['cond'])}:", f"        v = {out_t}({src(prog['expr'])})", "    else:",
                f"        v = {out_t}({src(prog['other'])})"]
    lines = ["import dotcompute as dc", "", "", "@dc.kernel",
             f"def fuzzed(x: dc.Buffer[dc.int64], y: dc.Buffer[dc.int64], f: dc.Buffer[dc.float32], "
             f"out: dc.Buffer[{out_t}]):",
             "    i = dc.global_id(0)",
             "    if i < out.shape[0]:"]
    inner = [f"    acc = {out_t}(0)", f"    for k in range({int(prog['loop'])}):"]
    inner += ["    " + line for line in body]
    inner += ["        acc += v"]
    lines += ["    " + line for line in inner] + ["        out[i] = acc", ""]
    return "\n".join(lines)


def prog_is_float(prog: dict[str, Any]) -> bool:
    return is_float(prog["expr"]) or (prog.get("other") is not None and is_float(prog["other"]))


def evaluate(t: Any, env: dict[str, Any]) -> Any:
    op = t[0]
    if op in ("x", "y", "f", "k"):
        return env[op]
    if op == "i":
        return int(t[1])  # a Python int literal: weakly typed (NEP 50)
    if op == "abs":
        return abs(evaluate(t[1], env))
    if op == "neg":
        return -evaluate(t[1], env)
    a = evaluate(t[1], env)
    if op == "where":
        return evaluate(t[2], env) if evaluate(t[1], env) else evaluate(t[3], env)
    b = evaluate(t[2], env)
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "//":
        return a // (b % 7 + 1)
    if op == "%":
        return a % (b % 7 + 1)
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "<": lambda: a < b, "<=": lambda: a <= b,
            "==": lambda: a == b, "!=": lambda: a != b, ">": lambda: a > b, ">=": lambda: a >= b}[op]()


def reference(prog: dict[str, Any], x: np.ndarray, y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """The expected output, element by element, in pure Python over numpy scalars."""
    out_t = np.float64 if prog_is_float(prog) else np.int64
    res = np.empty(len(x), out_t)
    with np.errstate(all="ignore"):
        for e in range(len(x)):
            acc = out_t(0)
            for k in range(int(prog["loop"])):
                env = {"x": x[e], "y": y[e], "f": f[e], "k": np.int64(k)}
                if prog.get("cond") is not None and not evaluate(prog["cond"], env):
                    v = evaluate(prog["other"], env)
                else:
                    v = evaluate(prog["expr"], env)
                acc = out_t(acc + out_t(v))
            res[e] = acc
    return res


def load_kernel(prog: dict[str, Any], folder: Path) -> Any:
    """Writes the source to a file (the kernel language reads its functions' source) and imports it."""
    text = kernel_source(prog)
    path = folder / f"fuzzed_{abs(hash(text)) % 10**12}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fuzzed


def save_failure(prog: dict[str, Any], corpus: Path) -> Path:
    text = json.dumps(prog, sort_keys=True)
    path = corpus / f"case_{abs(hash(text)) % 10**10}.json"
    path.write_text(text + "\n")
    return path
