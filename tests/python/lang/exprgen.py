"""Random typed expression trees, printed as kernel source and evaluated by a reference.

The reference implements the kernel language's documented arithmetic rules independently of
the implementation (docs/kernel-language.md and docs/design.md, "The kernel language"):

* promotion (numpy 2, NEP 50): same type → it; two floats → the wider; int32 or int64 with a
  float → float64; two ints → the wider;
* literals are weak: an int literal takes the other operand's type (int it fits, or float);
  a float literal takes the other operand's float type, or float64 beside an int;
* integers wrap (two's complement); int ``//`` and ``%`` floor toward -inf, and by zero give 0;
* ``/`` is true division: a float type, float64 when both operands are ints;
* ``**``: int ** non-negative int is an int; int ** negative literal is a float64 (as Python);
  float ** int is the promoted type (float32 ** int64 is float64, as numpy);
* float ``//`` and ``%`` are Python's (the result of ``%`` has the divisor's sign);
* ``abs`` of the most negative int wraps to itself; ``dc.int32(float)`` truncates toward 0.

Floating-point results are compared with a tolerance derived from the magnitudes seen while
evaluating (the implementation may contract a*b+c into an FMA). Operations whose result jumps
(``//``, ``%``, comparisons, float→int casts, division) only take *exact* operands (leaves,
or integer-typed subtrees), so a rounding difference can never flip them. Elements whose
reference result is undefined (a float division by zero, NaN, overflow in a float→int cast)
are masked out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

INT_TYPES = ("int32", "int64")
FLOAT_TYPES = ("float32", "float64")
BITS = {"int32": 32, "int64": 64, "float32": 32, "float64": 64}


class Undefined(Exception):
    """The reference result is not defined by the rules (masked out)."""


@dataclass(frozen=True)
class Node:
    kind: str                       # var, lit, bin, un, cast, select
    op: str = ""
    children: tuple[Node, ...] = ()
    value: Any = None               # var index, or literal value
    type: str = ""                  # static type ("" for a weak literal)
    exact: bool = True              # no rounding can have happened in this subtree


def promote(a: str, b: str) -> str:
    if a == b:
        return a
    fa, fb = a in FLOAT_TYPES, b in FLOAT_TYPES
    if fa and fb:
        return a if BITS[a] >= BITS[b] else b
    if fa or fb:
        return "float64"  # every int type here is 32 or 64 bits: numpy needs float64 to hold it
    return a if BITS[a] >= BITS[b] else b


def literal_type(value: Any, other: str) -> str:
    if isinstance(value, int):
        return other  # small literals fit every int type
    return other if other in FLOAT_TYPES else "float64"


def operand_types(a: Node, b: Node) -> tuple[str, str]:
    ta = a.type or literal_type(a.value, b.type)
    tb = b.type or literal_type(b.value, a.type)
    return ta, tb


def result_type(op: str, a: Node, b: Node) -> str:
    ta, tb = operand_types(a, b)
    t = promote(ta, tb)
    if op == "/":
        return t if t in FLOAT_TYPES else "float64"
    if op == "**":
        if t in INT_TYPES and b.kind == "lit" and b.value < 0:
            return "float64"
        return t
    return t


# ---------------------------------------------------------------------------------------------
# Printing


def to_source(n: Node) -> str:
    if n.kind == "var":
        return f"x{n.value}[i]"
    if n.kind == "lit":
        return f"({n.value!r})"
    if n.kind == "bin":
        a, b = (to_source(c) for c in n.children)
        if n.op in ("min", "max"):
            return f"{n.op}({a}, {b})"
        return f"({a} {n.op} {b})"
    if n.kind == "un":
        (a,) = (to_source(c) for c in n.children)
        return f"abs({a})" if n.op == "abs" else f"(-{a})"
    if n.kind == "cast":
        return f"dc.{n.op}({to_source(n.children[0])})"
    if n.kind == "select":
        a, b, t, e = (to_source(c) for c in n.children)
        return f"({t} if {a} {n.op} {b} else {e})"
    raise ValueError(n.kind)


def kernel_source(root: Node, var_types: list[str], name: str = "prop") -> str:
    params = ", ".join(f"x{k}: dc.Buffer[dc.{t}]" for k, t in enumerate(var_types))
    return (f"import math\n\nimport dotcompute as dc\n\n\n"
            f"def {name}({params}, out: dc.Buffer[dc.{root.type}]):\n"
            f"    i = dc.global_id(0)\n"
            f"    if i < out.shape[0]:\n"
            f"        out[i] = {to_source(root)}\n")


# ---------------------------------------------------------------------------------------------
# Reference evaluation


def _wrap(v: int, t: str) -> int:
    bits = BITS[t]
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _np(t: str) -> Any:
    return np.dtype(t).type


def _conv(v: Any, src: str, dst: str) -> Any:
    """Value ``v`` of type ``src`` converted to ``dst`` (implicit conversions and casts)."""
    if dst in FLOAT_TYPES:
        return _np(dst)(float(v) if src in FLOAT_TYPES else int(v))
    if src in FLOAT_TYPES:
        f = float(v)
        if not math.isfinite(f):
            raise Undefined("non-finite float to int")
        t = math.trunc(f)
        if not -(1 << (BITS[dst] - 1)) <= t < (1 << (BITS[dst] - 1)):
            raise Undefined("float to int overflow")
        return t
    return _wrap(int(v), dst)


class Eval:
    """Evaluates one tree for one element; ``mag`` collects the largest float magnitude."""

    def __init__(self, env: list[Any], var_types: list[str]) -> None:
        self.env = env
        self.var_types = var_types
        self.mag = 0.0
        self.flops = 0
        self.eps = 0.0

    def _note(self, v: Any, t: str) -> Any:
        if t in FLOAT_TYPES:
            f = float(v)
            if not math.isfinite(f):
                raise Undefined("non-finite")
            self.mag = max(self.mag, abs(f))
            self.eps = max(self.eps, float(np.finfo(t).eps))
        return v

    def typed(self, n: Node, t: str) -> Any:
        """The value of ``n`` converted to ``t`` (a weak literal is simply of type ``t``)."""
        if n.kind == "lit":
            return _conv(n.value, "float64" if isinstance(n.value, float) else "int64", t)
        return _conv(self.ev(n), n.type, t)

    def ev(self, n: Node) -> Any:
        if n.kind == "var":
            t = self.var_types[n.value]
            v = self.env[n.value]
            return self._note(_np(t)(v) if t in FLOAT_TYPES else int(v), t)
        if n.kind == "un":
            v = self.ev(n.children[0])
            t = n.type
            if t in FLOAT_TYPES:
                return self._note(abs(v) if n.op == "abs" else -v, t)
            return _wrap(abs(v) if n.op == "abs" else -v, t)
        if n.kind == "cast":
            c = n.children[0]
            return self._note(_conv(self.ev(c), c.type, n.op), n.op)
        if n.kind == "select":
            a, b, th, el = n.children
            ta, tb = operand_types(a, b)
            ct = promote(ta, tb)
            x, y = self.typed(a, ct), self.typed(b, ct)
            take = {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y, "!=": x != y}[n.op]
            return self.typed(th if take else el, n.type)
        a, b = n.children
        op, t = n.op, n.type
        ta, tb = operand_types(a, b)
        if op == "**":
            base_t = t if t in FLOAT_TYPES else promote(ta, tb)
            x = self.typed(a, base_t)
            e = int(b.value)
            if base_t in FLOAT_TYPES:
                self.flops += abs(e) + 1
                with np.errstate(all="ignore"):
                    r = _np(base_t)(x) ** e if e >= 0 else _np(base_t)(1) / (_np(base_t)(x) ** -e)
                return self._note(r, base_t)
            return _wrap(int(x) ** e, t)
        ct = t
        if op == "/":
            x, y = self.typed(a, t), self.typed(b, t)
            if float(y) == 0.0:
                raise Undefined("division by zero")
            self.flops += 1
            return self._note(_np(t)(x) / _np(t)(y), t)
        x, y = self.typed(a, ct), self.typed(b, ct)
        if ct in INT_TYPES:
            x, y = int(x), int(y)
            if op == "+":
                return _wrap(x + y, ct)
            if op == "-":
                return _wrap(x - y, ct)
            if op == "*":
                return _wrap(x * y, ct)
            if op == "//":
                return 0 if y == 0 else _wrap(x // y, ct)
            if op == "%":
                return 0 if y == 0 else _wrap(x % y, ct)
            if op == "min":
                return min(x, y)
            if op == "max":
                return max(x, y)
            raise ValueError(op)
        x, y = _np(ct)(x), _np(ct)(y)
        self.flops += 1
        with np.errstate(all="ignore"):
            if op in ("//", "%") and float(y) == 0.0:
                raise Undefined("float floor division by zero")
            r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
                 "//": lambda: np.floor_divide(x, y), "%": lambda: np.mod(x, y),
                 "min": lambda: min(x, y), "max": lambda: max(x, y)}[op]()
        return self._note(_np(ct)(r), ct)


def evaluate(root: Node, var_types: list[str], inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(expected values, tolerance per element, mask of defined elements)."""
    n = len(inputs[0])
    want = np.zeros(n, root.type)
    tol = np.zeros(n)
    ok = np.ones(n, bool)
    for j in range(n):
        e = Eval([x[j] for x in inputs], var_types)
        try:
            v = e.ev(root)
        except (Undefined, OverflowError, ZeroDivisionError):
            ok[j] = False
            continue
        if root.type in FLOAT_TYPES:
            want[j] = v
            tol[j] = 8.0 * (e.flops + 1) * e.eps * max(e.mag, 1.0)
        else:
            want[j] = v
    return want, tol, ok


# ---------------------------------------------------------------------------------------------
# Generation (hypothesis)


def expression_strategy(var_types: list[str], max_depth: int = 4, allow_f64: bool = True) -> Any:
    from hypothesis import strategies as st

    cast_types = tuple(t for t in INT_TYPES + FLOAT_TYPES if allow_f64 or t != "float64")

    def ok_type(t: str) -> bool:
        return allow_f64 or t != "float64"

    @st.composite
    def gen(draw: Any, depth: int) -> Node:
        choices = ["var"] if depth == 0 else ["var", "bin", "bin", "bin", "un", "cast", "select"]
        kind = draw(st.sampled_from(choices))
        if kind == "var":
            k = draw(st.integers(0, len(var_types) - 1))
            return Node("var", value=k, type=var_types[k])
        if kind == "un":
            c = draw(gen(depth - 1))
            return Node("un", draw(st.sampled_from(["abs", "neg"])), (c,), type=c.type, exact=c.exact)
        if kind == "cast":
            c = draw(gen(depth - 1))
            t = draw(st.sampled_from(cast_types))
            if c.type in FLOAT_TYPES and t in INT_TYPES and not c.exact:
                t = "float32" if c.type == "float32" or not allow_f64 else "float64"
            return Node("cast", t, (c,), type=t, exact=c.exact and t in INT_TYPES or c.kind == "var" and t == c.type)
        if kind == "select":
            a = draw(exact_operand(depth - 1))
            b = draw(exact_operand_or_lit(depth - 1))
            th = draw(gen(depth - 1))
            el = draw(gen(depth - 1))
            t = promote(th.type, el.type)
            if not ok_type(t):
                return th
            if not ok_type(promote(*operand_types(a, b))):
                b = Node("lit", value=1)
            op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
            return Node("select", op, (a, b, th, el), type=t, exact=th.exact and el.exact and t in INT_TYPES)
        op = draw(st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "min", "max"]))
        if op == "**":
            a = draw(gen(depth - 1))
            e = draw(st.integers(-2 if a.type in INT_TYPES and a.exact else 0, 3))
            b = Node("lit", value=e)
        elif op in ("/", "//", "%"):
            a = draw(exact_operand(depth - 1))
            b = draw(exact_operand_or_lit(depth - 1))
        else:
            a = draw(gen(depth - 1))
            b = draw(operand_or_lit(depth - 1))
            if draw(st.booleans()):
                a, b = b, a
        t = result_type(op, a, b)
        if not ok_type(t):
            return a if a.kind != "lit" else b
        exact = t in INT_TYPES and a.exact and b.exact
        return Node("bin", op, (a, b), type=t, exact=exact)

    @st.composite
    def exact_operand(draw: Any, depth: int) -> Node:
        n = draw(gen(depth))
        if n.exact:
            return n
        k = draw(st.integers(0, len(var_types) - 1))
        return Node("var", value=k, type=var_types[k])

    @st.composite
    def exact_operand_or_lit(draw: Any, depth: int) -> Node:
        if draw(st.integers(0, 3)) == 0:
            return draw(literal())
        return draw(exact_operand(depth))

    @st.composite
    def operand_or_lit(draw: Any, depth: int) -> Node:
        if draw(st.integers(0, 3)) == 0:
            return draw(literal())
        return draw(gen(depth))

    @st.composite
    def literal(draw: Any) -> Node:
        if draw(st.booleans()):
            return Node("lit", value=draw(st.integers(-7, 9)))
        return Node("lit", value=draw(st.sampled_from([0.5, 1.25, -2.0, 3.0, -0.75, 10.0])))

    @st.composite
    def root(draw: Any) -> Node:
        n = draw(gen(max_depth))
        if n.kind == "lit":
            n = Node("var", value=0, type=var_types[0])
        return n

    return root()


def make_inputs(var_types: list[str], n: int, seed: int) -> list[np.ndarray]:
    """Moderate values (floats away from zero), with the int extremes mixed in."""
    rng = np.random.default_rng(seed)
    out = []
    for t in var_types:
        if t in INT_TYPES:
            info = np.iinfo(t)
            v = rng.integers(-50, 51, n).astype(t)
            v[rng.random(n) < 0.1] = info.min
            v[rng.random(n) < 0.1] = info.max
        else:
            v = (rng.uniform(0.5, 10.0, n) * rng.choice([-1.0, 1.0], n)).astype(t)
            v[: 3] = [1.0, -2.5, 4.0][: min(3, n)]
        out.append(v)
    return out
