"""Conformance kernels for the scalar types, generated: one kernel per operator covering every pair.

Each kernel takes one 1-D buffer of edge values per dtype for the left operand (``x_<dtype>``) and
one for the right (``y_<dtype>``), and one 3-D output per result dtype (``o_<dtype>[slot, i, j]``).
Work-item ``(i, j)`` computes ``x_A[i] OP y_B[j]`` for every pair ``(A, B)`` the operator takes,
and ``x_A[i] OP <literal>`` for the weak-literal cases, each into its own local ``r<k>`` (so the
test can read the type the frontend gave it) and then into its slot. Batching every pair into one
kernel keeps the number of backend compiles to one per operator.

The expected values are numpy's, computed on the same arrays; ``Case.want`` does that.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]
INTS = [t for t in TYPES if t[0] in "iu"]
FLOATS = ["float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
NO_METAL = ("float64", "complex128")  # MSL has no double
N = 12

_X = {
    "bool": [0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1],
    "int8": [0, 1, -1, 2, -3, 5, 7, -8, 100, -100, 127, -128],
    "uint8": [0, 1, 2, 3, 5, 7, 8, 100, 127, 128, 200, 255],
    "int16": [0, 1, -1, 2, -3, 7, -8, 300, -300, 1000, 32767, -32768],
    "uint16": [0, 1, 2, 3, 7, 8, 255, 256, 1000, 32768, 40000, 65535],
    "int32": [0, 1, -1, 2, -3, 7, -8, 70000, -70000, 2**31 - 1, -2**31, 123456789],
    "uint32": [0, 1, 2, 3, 7, 8, 255, 65536, 2**31, 3000000000, 2**32 - 1, 123456789],
    "int64": [0, 1, -1, 2, -3, 7, -8, 2**40, -2**40, 2**63 - 1, -2**63, 10**15],
    "uint64": [0, 1, 2, 3, 7, 8, 2**32, 2**40, 2**63, 2**64 - 1, 10**15, 123],
    "float16": [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 3.0, 0.1, 100.0, 65504.0, math.inf, math.nan],
    "float32": [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 3.0, 0.1, 1e10, -3.4e38, math.inf, math.nan],
    "float64": [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 3.0, 0.1, 1e300, -1e-300, math.inf, math.nan],
    "complex64": [0, 1, -1, 1j, -2.5 + 1.5j, 3 - 4j, 0.1 + 0.2j, 1e10 - 1j, 2, -0.5j, 7 + 7j, complex(math.inf, 0)],
    "complex128": [0, 1, -1, 1j, -2.5 + 1.5j, 3 - 4j, 0.1 + 0.2j, 1e200 - 1j, 2, -0.5j, 7 + 7j,
                   complex(math.nan, 1)],
}
# right operands of ** (numpy refuses negative integer exponents) and of shifts (counts >= 0)
_POW_Y = {t: [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 7, 2] for t in INTS}
_POW_Y.update({t: [0.0, 1.0, 2.0, 0.5, -1.0, 3.0, 2.5, -2.0, 1.5, 0.0, 4.0, 10.0] for t in FLOATS + COMPLEX})
_SHIFT_Y = {t: [0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 33, 63] for t in INTS}
_BOOL_Y = [0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1]
# in range of every integer type: what float -> int casts are tested with (C and numpy leave
# out-of-range conversions undefined)
_CAST_SAFE = [0.0, 1.0, 2.5, 3.9, 7.0, 100.7, 127.0, 0.1, 5.5, 9.99, 64.0, 126.5]

ARITH = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**"}
BITS = {"and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}
CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
         "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift,
         "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
         "ne": np.not_equal}
SYMBOL = {**ARITH, **BITS, **CMP}


def x_values(t: str) -> np.ndarray:
    return np.array(_X[t], dtype=t)


def y_values(op: str, t: str) -> np.ndarray:
    if t == "bool":
        return np.array(_BOOL_Y, dtype=bool)
    if op == "pow":
        return np.array(_POW_Y[t], dtype=t)
    if op in ("lshift", "rshift") and t in INTS:
        return np.array(_SHIFT_Y[t], dtype=t)
    return np.array(_X[t], dtype=t)


def mixed_sign_64(a: str, b: str) -> bool:
    """A signed int with uint64: numpy's common type is float64, so it refuses bitwise operators."""
    return (a[0] == "i" and b == "uint64") or (b[0] == "i" and a == "uint64")


def takes(op: str, a: str, b: str) -> bool:
    """Whether the pair is compared with numpy (docs/kernel-language.md lists the exceptions)."""
    if a in COMPLEX or b in COMPLEX:
        # numpy refuses //, % and bitwise operators on complex; the language also refuses ordering
        # (Python does) and a complex ** that is not a small literal power
        return op in ("add", "sub", "mul", "truediv", "eq", "ne")
    if a == "bool" and b == "bool":
        # Python's meaning (True + True == 2) differs from numpy's (logical); both sides agree on these
        return op in ("truediv", "and", "or", "xor") or op in CMP
    if op in BITS:
        return a not in FLOATS and b not in FLOATS and not mixed_sign_64(a, b)
    return True


def literals(op: str) -> list[int | float]:
    if op == "pow":
        return [2, 3, 2.0]
    if op in BITS:
        return [3]
    return [3, 2.5]


@dataclass
class Case:
    """One computed value: ``x_a OP y_b`` (``lit`` None) or ``x_a OP lit``."""

    index: int
    op: str
    a: str
    b: str | None
    lit: int | float | None
    out: str = ""
    slot: int = 0

    def want(self) -> np.ndarray:
        x = x_values(self.a)[:, None]
        y = np.array([[self.lit]]) if self.b is None else y_values(self.op, self.b)[None, :]
        with np.errstate(all="ignore"):
            if self.b is None:
                r = UFUNC[self.op](x, self.lit)
            else:
                r = UFUNC[self.op](x, y)
        return np.broadcast_to(r, (N, N))


@dataclass
class OpKernel:
    op: str
    name: str
    types: list[str]
    cases: list[Case] = field(default_factory=list)
    outputs: dict[str, int] = field(default_factory=dict)  # result dtype -> slot count


def plan(op: str, *, metal: bool = False) -> OpKernel:
    """The cases of operator ``op``; ``metal``: only those with no float64 anywhere."""
    types = [t for t in TYPES if not (metal and t in NO_METAL)]
    k = OpKernel(op, f"types_{op}{'_metal' if metal else ''}", types)
    for a in types:
        for b in [*types, None]:
            lits = literals(op) if b is None else [None]
            for lit in lits:
                if b is not None and not takes(op, a, b):
                    continue
                if b is None and (a == "bool" or (op in BITS and a in FLOATS)):
                    continue
                if b is None and a in COMPLEX and (op in BITS or op in ("floordiv", "mod")
                                                   or op in CMP and op not in ("eq", "ne")
                                                   or (op == "pow" and not isinstance(lit, int))):
                    continue
                c = Case(len(k.cases), op, a, b, lit)
                out = c.want().dtype.name
                common = np.result_type(np.dtype(a), np.dtype(b) if b is not None else lit).name
                if metal and any(t in NO_METAL for t in (a, b, out, common)):
                    continue
                c.index = len(k.cases)
                c.out = out
                c.slot = k.outputs.get(out, 0)
                k.outputs[out] = c.slot + 1
                k.cases.append(c)
    return k


def _ann(t: str, ndim: int = 1) -> str:
    name = "bool_" if t == "bool" else t
    return f"dc.Buffer[dc.{name}, {ndim}]" if ndim > 1 else f"dc.Buffer[dc.{name}]"


def op_source(k: OpKernel) -> str:
    params = [f"x_{t}: {_ann(t)}" for t in k.types] + [f"y_{t}: {_ann(t)}" for t in k.types]
    params += [f"o_{t}: {_ann(t, 3)}" for t in k.types]
    lines = ["@dc.kernel", f"def {k.name}({', '.join(params)}):", "    i = dc.global_id(0)",
             "    j = dc.global_id(1)"]
    sym = SYMBOL[k.op]
    for c in k.cases:
        right = f"y_{c.b}[j]" if c.b is not None else repr(c.lit)
        lines.append(f"    r{c.index} = x_{c.a}[i] {sym} {right}")
        lines.append(f"    o_{c.out}[{c.slot}, i, j] = r{c.index}")
    return "\n".join(lines) + "\n"


UNARY = {"neg": ("-{}", np.negative), "inv": ("~{}", np.invert), "abs": ("abs({})", np.absolute)}


def unary_source(name: str, types: list[str]) -> str:
    """``o_T[k, i] = OP x_T[i]`` for each unary op k (neg, inv for ints, abs) and type T."""
    params = [f"x_{t}: {_ann(t)}" for t in types] + [f"o_{t}: {_ann(t, 2)}" for t in types]
    lines = ["@dc.kernel", f"def {name}({', '.join(params)}):", "    i = dc.global_id(0)"]
    for t in types:
        for k, (form, _) in enumerate(UNARY.values()):
            if form.startswith("~") and (t in FLOATS or t in COMPLEX):
                continue
            lines.append(f"    o_{t}[{k}, i] = {form.format(f'x_{t}[i]')}")
    return "\n".join(lines) + "\n"


def cast_source(name: str, types: list[str]) -> str:
    """``o_D[k, i] = dc.D(x_S[i])`` for every source S (k its index); floats into ints from ``z_S``."""
    params = [f"x_{t}: {_ann(t)}" for t in types] + [f"z_{t}: {_ann(t)}" for t in FLOATS if t in types]
    params += [f"o_{t}: {_ann(t, 2)}" for t in types]
    lines = ["@dc.kernel", f"def {name}({', '.join(params)}):", "    i = dc.global_id(0)"]
    for d in types:
        fn = "bool_" if d == "bool" else d
        for k, s in enumerate(types):
            if s in COMPLEX and d not in COMPLEX:
                continue  # refused: numpy would drop the imaginary part
            src = f"z_{s}[i]" if s in FLOATS and d in INTS else f"x_{s}[i]"
            lines.append(f"    o_{d}[{k}, i] = dc.{fn}({src})")
    return "\n".join(lines) + "\n"


def cast_inputs(types: list[str]) -> dict[str, np.ndarray]:
    out = {f"x_{t}": x_values(t) for t in types}
    out.update({f"z_{t}": np.array(_CAST_SAFE, dtype=t) for t in FLOATS if t in types})
    return out


def load(source: str, stem: str):
    """Import ``source`` from a file whose path depends only on its text, so ``inspect`` finds the
    kernels and the kernel cache stays warm between runs."""
    text = "import dotcompute as dc\n\n\n" + source
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "dotcompute-types-tests"
    folder.mkdir(exist_ok=True)
    path = folder / f"{stem}_{digest}.py"
    if not path.exists():
        tmp = path.with_suffix(f".{digest}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    spec = importlib.util.spec_from_file_location(f"dc_types_{stem}_{digest}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def op_args(k: OpKernel) -> list[np.ndarray]:
    args = [x_values(t) for t in k.types] + [y_values(k.op, t) for t in k.types]
    args += [np.zeros((max(1, k.outputs.get(t, 0)), N, N), dtype=t) for t in k.types]
    return args
