"""Complex arithmetic helpers, written once for every C-like target.

A complex value is a two-member value with ``.x`` (real) and ``.y`` (imaginary): ``float2`` /
``double2`` in OpenCL C and MSL, a struct of the same layout (``alignas`` 8 / 16, as numpy's
complex64 / complex128 and CUDA's cuComplex) on the CPU and in CUDA. Each target supplies the
type name and ``dc_mk_<s>(re, im)``; everything else is generic C over those. The formulas are
numpy's (``npymath``): straightforward products, Smith's division with numpy's handling of a zero
divisor, ``abs`` as ``hypot``, ``exp`` keeping a zero imaginary part exact, and the usual
branch-cut-correct square root.
"""

from __future__ import annotations

from collections.abc import Callable

from ..types import ScalarType


def suffix(t: ScalarType) -> str:
    return "c64" if t.bits == 64 else "c128"


def render(op: str, t: ScalarType, q: str, cname: str, rname: str, math: Callable[[str], str]) -> str:
    """The C text of helper ``dc_<op>_<suffix>``; ``math(f)`` names the real type's math function ``f``."""
    s = suffix(t)
    C, R = cname, rname
    mk = f"dc_mk_{s}"
    name = f"dc_{op}_{s}"
    if op in ("cadd", "csub"):
        sym = "+" if op == "cadd" else "-"
        return f"{q} {C} {name}({C} a, {C} b) {{ return {mk}(a.x {sym} b.x, a.y {sym} b.y); }}"
    if op == "cmul":
        return f"{q} {C} {name}({C} a, {C} b) {{ return {mk}(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }}"
    if op == "cdiv":
        fabs = math("fabs")
        return (
            f"{q} {C} {name}({C} a, {C} b) {{\n"
            f"  {R} ar = {fabs}(b.x), ai = {fabs}(b.y);\n"
            f"  if (ar >= ai) {{\n"
            f"    if (ar == 0 && ai == 0) return {mk}(a.x / ar, a.y / ar);\n"
            f"    {R} rat = b.y / b.x, scl = ({R})1 / (b.x + b.y * rat);\n"
            f"    return {mk}((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);\n"
            f"  }}\n"
            f"  {R} rat = b.x / b.y, scl = ({R})1 / (b.y + b.x * rat);\n"
            f"  return {mk}((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);\n"
            f"}}")
    if op == "cneg":
        return f"{q} {C} {name}({C} a) {{ return {mk}(-a.x, -a.y); }}"
    if op == "conj":
        return f"{q} {C} {name}({C} a) {{ return {mk}(a.x, -a.y); }}"
    if op == "ceq":
        return f"{q} bool {name}({C} a, {C} b) {{ return a.x == b.x && a.y == b.y; }}"
    if op == "abs":
        return f"{q} {R} {name}({C} a) {{ return {math('hypot')}(a.x, a.y); }}"
    if op == "exp":
        return (f"{q} {C} {name}({C} a) {{\n"
                f"  {R} e = {math('exp')}(a.x);\n"
                f"  if (a.y == 0) return {mk}(e, a.y);\n"
                f"  return {mk}(e * {math('cos')}(a.y), e * {math('sin')}(a.y));\n"
                f"}}")
    if op == "sqrt":
        sqrt = math("sqrt")
        return (f"{q} {C} {name}({C} a) {{\n"
                f"  if (a.x == 0 && a.y == 0) return {mk}(({R})0, a.y);\n"
                f"  {R} t = {sqrt}(({math('fabs')}(a.x) + {math('hypot')}(a.x, a.y)) * ({R})0.5);\n"
                f"  if (a.x >= 0) return {mk}(t, a.y / (t + t));\n"
                f"  return {mk}({math('fabs')}(a.y) / (t + t), {math('copysign')}(t, a.y));\n"
                f"}}")
    raise ValueError(f"unknown complex helper {op!r}")


__all__ = ["render", "suffix"]
