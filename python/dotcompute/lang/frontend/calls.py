"""Lowering of calls: casts, Python builtins, math, dc builtins, atomics and device functions."""

from __future__ import annotations

import ast
import builtins
import cmath
import math
from typing import Any

import numpy as np

from .. import builtins as dcb
from .. import ir
from ..kinds import DeviceFunctionBase, KernelBase
from ..types import BOOL, COMPLEX64, COMPLEX128, FLOAT16, FLOAT32, FLOAT64, INDEX, INT64, ScalarType, scalar_type
from . import fold
from .exprs import BufferValue, StaticValue, is_number_tuple, is_table
from .signature import LiteralArg, WeakScalar
from .typing_rules import convert, is_weak, truth, unify, weakened

# Python's math module → (IR name, result rule). "f": float of the argument's type;
# "i": Python returns an int (floor/ceil/trunc) → float op then int64.
_PY_MATH: dict[Any, tuple[str, str]] = {
    math.sqrt: ("sqrt", "f"), math.exp: ("exp", "f"), math.expm1: ("expm1", "f"), math.log2: ("log2", "f"),
    math.log10: ("log10", "f"), math.log1p: ("log1p", "f"), math.sin: ("sin", "f"), math.cos: ("cos", "f"),
    math.tan: ("tan", "f"), math.asin: ("asin", "f"), math.acos: ("acos", "f"), math.atan: ("atan", "f"),
    math.sinh: ("sinh", "f"), math.cosh: ("cosh", "f"), math.tanh: ("tanh", "f"), math.asinh: ("asinh", "f"),
    math.acosh: ("acosh", "f"), math.atanh: ("atanh", "f"), math.erf: ("erf", "f"), math.erfc: ("erfc", "f"),
    math.lgamma: ("lgamma", "f"), math.gamma: ("tgamma", "f"), math.fabs: ("fabs", "f"),
    math.atan2: ("atan2", "f"), math.pow: ("pow", "f"), math.hypot: ("hypot", "f"), math.fmod: ("fmod", "f"),
    math.copysign: ("copysign", "f"), math.isnan: ("isnan", "b"), math.isinf: ("isinf", "b"),
    math.isfinite: ("isfinite", "b"), math.floor: ("floor", "i"), math.ceil: ("ceil", "i"),
    math.trunc: ("trunc", "i"), math.log: ("log", "f"),
}
for _name in ("cbrt", "exp2"):
    if hasattr(math, _name):
        _PY_MATH[getattr(math, _name)] = (_name, "f")

# numpy ufuncs accepted in kernels (numpy semantics: float results keep the float type)
_NP_MATH: dict[Any, str] = {
    np.sqrt: "sqrt", np.exp: "exp", np.exp2: "exp2", np.expm1: "expm1", np.log: "log", np.log2: "log2",
    np.log10: "log10", np.log1p: "log1p", np.sin: "sin", np.cos: "cos", np.tan: "tan", np.arcsin: "asin",
    np.arccos: "acos", np.arctan: "atan", np.sinh: "sinh", np.cosh: "cosh", np.tanh: "tanh",
    np.arcsinh: "asinh", np.arccosh: "acosh", np.arctanh: "atanh", np.floor: "floor", np.ceil: "ceil",
    np.trunc: "trunc", np.rint: "round", np.fabs: "fabs", np.arctan2: "atan2", np.power: "pow",
    np.hypot: "hypot", np.fmod: "fmod", np.copysign: "copysign", np.fmin: "fmin", np.fmax: "fmax",
    np.isnan: "isnan", np.isinf: "isinf", np.isfinite: "isfinite", np.cbrt: "cbrt",
    np.minimum: "min", np.maximum: "max", np.abs: "abs", np.conjugate: "conj",
}

#: cmath's functions that the kernel language has: they always give a complex value
_CMATH = {cmath.exp: "exp", cmath.sqrt: "sqrt"}

_HOST_FOLD = {
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "log2": math.log2, "log10": math.log10,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "atan2": math.atan2, "floor": math.floor,
    "ceil": math.ceil, "fabs": math.fabs, "tanh": math.tanh, "pow": math.pow, "trunc": math.trunc,
}


#: the types dc.bitcast() reinterprets between (same size: the first three, or the last three)
_BITCAST_TYPES = ("int32", "uint32", "float32", "int64", "uint64", "float64")

#: element types every backend has atomic read-modify-write operations for
_ATOMIC_DTYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")

def _is_array_function(fn: Any, name: str) -> bool:
    """numpy's ``name`` or dotcompute's array-expression one (``dc.clip``, ``dc.where``), recognised
    by module and name: the expression layer sits above the language and is not imported here."""
    if fn is getattr(np, name, None):
        return True
    return getattr(fn, "__name__", None) == name and str(getattr(fn, "__module__", "")).startswith("dotcompute.")


class CallLowering:
    """Mixin of FunctionLowerer for ``ast.Call``."""

    rep: Any
    builder: Any

    def call(self, node: ast.Call) -> ir.Expr:
        if isinstance(node.func, ast.Name) and node.func.id in self.scope:  # type: ignore[attr-defined]
            raise self.rep.syntax(node, f"{node.func.id!r} is a variable and cannot be called")
        if isinstance(node.func, ast.Attribute) and node.func.attr == "conjugate" and not node.args \
                and not node.keywords:
            base = self.value(node.func.value)  # type: ignore[attr-defined]
            if isinstance(base, ir.Expr):  # z.conjugate(), the method numpy and Python numbers have
                return self.math_values("conj", [base], node, python_ints=False)
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.rep.syntax(a, "*args are not supported in kernel calls")
        callee = self.value(node.func)  # type: ignore[attr-defined]
        if not isinstance(callee, StaticValue):
            raise self.rep.syntax(node, f"{ast.unparse(node.func)!r} cannot be called")
        fn = callee.value
        if isinstance(fn, DeviceFunctionBase):
            return self.device_call(fn, node)
        if isinstance(fn, KernelBase):
            raise self.rep.syntax(node, f"a kernel cannot call another kernel ({fn.__name__!r})",
                                  hint="make the callee a device function with @dc.func")
        if isinstance(fn, dcb.Builtin):
            return self.dc_builtin(fn, node)
        self.no_keywords(node, getattr(fn, "__name__", "this function"))
        if isinstance(fn, dcb.MathFunction):
            return self.math(fn.ir_name, node, python_ints=False)
        # Only the look-ups are guarded: a KernelTypeError (a TypeError) from lowering the call, such as
        # a wrong argument count, must reach the user instead of "not a function we know".
        try:
            py_math = _PY_MATH.get(fn)
            np_math = _NP_MATH.get(fn)
        except TypeError:
            py_math = np_math = None  # unhashable objects are no functions we know
        if _is_array_function(fn, "clip"):
            # np.clip(x, lo, hi) / dc.clip on numbers: max then min, with numpy's promotion of the three
            x, lo, hi = self.args(node, 3, "clip")
            low = self.math_values("max", [x, lo], node, python_ints=True)
            return self.math_values("min", [low, hi], node, python_ints=True)
        if _is_array_function(fn, "where"):
            # np.where(c, a, b) on numbers is a select: the conditional expression `a if c else b`
            if len(node.args) != 3:
                raise self.rep.type(node, f"where() takes 3 arguments in kernels (cond, a, b), got {len(node.args)}")
            select = ast.copy_location(ast.IfExp(test=node.args[0], body=node.args[1], orelse=node.args[2]), node)
            return self.expr(select)  # type: ignore[attr-defined]
        if py_math is not None:
            return self.py_math(py_math[0], py_math[1], node)
        if np_math is not None:
            return self.math(np_math, node, python_ints=False)
        if fn is np.real or fn is np.imag:
            (e,) = self.args(node, 1, fn.__name__)
            return self.real_imag(e, fn.__name__, node)  # type: ignore[attr-defined]
        if fn is np.angle or fn is cmath.phase:
            # the argument of a complex number: atan2(imag, real), a real result
            (e,) = self.args(node, 1, fn.__name__)
            parts = [self.real_imag(e, "imag", node), self.real_imag(e, "real", node)]  # type: ignore[attr-defined]
            return self.math_values("atan2", parts, node, python_ints=False)
        cm = _CMATH.get(fn) if callable(fn) else None
        if cm is not None:
            # cmath works in complex numbers: a real argument becomes complex of its precision first
            (e,) = self.args(node, 1, f"cmath.{cm}")
            if not e.type.is_complex:
                t = COMPLEX64 if e.type in (FLOAT32, FLOAT16) and not is_weak(e) else COMPLEX128
                e = convert(e, t, self.loc(node))  # type: ignore[attr-defined]
            return self.math_values(cm, [e], node, python_ints=False)
        t = scalar_type(fn) if isinstance(fn, type) or isinstance(fn, np.dtype) else None
        if t is not None:
            python_builtin = fn in (int, float, bool, complex)
            cast = self.cast(t, node, python_builtin=python_builtin)
            # int(x), float(x): a Python number (weak); dc.int32(x), np.float32(x): a numpy scalar (strong)
            if python_builtin and not isinstance(cast, ir.Const):
                cast = self.weak_copy(cast)
            return cast
        if fn is builtins.min or fn is builtins.max:
            return self.minmax(fn.__name__, node)
        if fn is builtins.abs:
            self.no_keywords(node, "abs")
            args = self.args(node, 1, "abs")
            return weakened(self.math_values("abs", args, node, python_ints=True), *args)
        if fn is builtins.round:
            return self.weak_copy(self.py_round(node))
        if fn is builtins.pow:
            args = self.args(node, 2, "pow")
            return self.binop("Pow", args[0], args[1], node)  # type: ignore[attr-defined]
        if fn is builtins.len:
            if len(node.args) != 1:
                raise self.rep.type(node, "len() takes exactly one argument")
            v = self.value(node.args[0])  # type: ignore[attr-defined]
            if isinstance(v, StaticValue) and (is_number_tuple(v.value) or is_table(v.value)):
                return ir.Const(value=len(v.value), type=INT64, weak=True, loc=self.loc(node))  # type: ignore[attr-defined]
            if not isinstance(v, BufferValue):
                raise self.rep.type(node, "len() takes an array in kernels")
            return self.shape_of(v.ref, 0, node)  # type: ignore[attr-defined]
        if fn is builtins.range:
            raise self.rep.syntax(node, "range() is only supported as the iterable of a for loop")
        if fn is builtins.print:
            raise self.rep.syntax(node, "print() is not supported in kernels",
                                  hint="write values into a buffer and print them on the host")
        name = getattr(fn, "__name__", ast.unparse(node.func))
        raise self.rep.syntax(node, f"calls to arbitrary Python functions are not supported in kernels: {name!r}",
                              hint="call only dc.* builtins, math functions, casts, min/max/abs, "
                                   "and device functions marked @dc.func")

    # ----------------------------------------------------------------------------- helpers

    def no_keywords(self, node: ast.Call, name: str) -> None:
        if node.keywords:
            raise self.rep.syntax(node.keywords[0].value if node.keywords[0].arg else node,
                                  f"keyword arguments are not supported for {name}()")

    def args(self, node: ast.Call, n: int | tuple[int, int], name: str) -> list[ir.Expr]:
        lo, hi = (n, n) if isinstance(n, int) else n
        if not lo <= len(node.args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise self.rep.type(node, f"{name}() takes {want} argument(s), got {len(node.args)}")
        return [self.expr(a) for a in node.args]  # type: ignore[attr-defined]

    def cast(self, t: ScalarType, node: ast.Call, python_builtin: bool) -> ir.Expr:
        self.no_keywords(node, t.name)
        if not node.args:
            return ir.Const(value=False if t.is_bool else (0.0 if t.is_float else 0), type=t, loc=self.loc(node))  # type: ignore[attr-defined]
        if t.is_complex and len(node.args) == 2:
            # complex(re, im) / np.complex64(re, im): both parts real numbers, as numpy and Python take them
            parts = self.args(node, 2, t.name if not python_builtin else "complex")
            for p, a in zip(parts, node.args, strict=True):
                if p.type.is_complex:
                    raise self.rep.type(a, f"the parts of {t.name}(re, im) must be real numbers, not {p.type}")
            parts = [convert(p, t.real_type, self.loc(node)) for p in parts]  # type: ignore[attr-defined]
            return ir.MathCall(name="complex", args=parts, type=t, loc=self.loc(node))  # type: ignore[attr-defined]
        (e,) = self.args(node, 1, t.name if not python_builtin else {BOOL: "bool", INT64: "int"}.get(t, "float"))
        if e.type.is_complex and not t.is_complex and not t.is_bool:
            raise self.rep.type(node, f"a {e.type} value cannot become {t}",
                                hint="take z.real, z.imag or abs(z) (numpy would drop the imaginary part)")
        if python_builtin and is_weak(e):
            # int(2.7), float(3): fold with Python, keep the literal weak
            v = {BOOL: bool, INT64: int, FLOAT64: float}[t](e.value)  # type: ignore[attr-defined]
            return ir.Const(value=v, type=t, weak=True, loc=self.loc(node))  # type: ignore[attr-defined]
        if t.is_bool:
            return truth(e)
        if e.type.is_complex and not t.is_complex:
            raise self.rep.type(node, f"a {e.type} value cannot become {t}",
                                hint="take z.real, z.imag or abs(z) (numpy would drop the imaginary part)")
        return convert(e, t, self.loc(node))  # type: ignore[attr-defined]

    def minmax(self, name: str, node: ast.Call) -> ir.Expr:
        self.no_keywords(node, name)
        if len(node.args) < 2:
            raise self.rep.type(node, f"{name}() takes at least 2 numbers in kernels",
                                hint="iterables are not supported")
        values = [self.expr(a) for a in node.args]  # type: ignore[attr-defined]
        result = values[0]
        for v in values[1:]:
            result = weakened(self.math_values(name, [result, v], node, python_ints=True), result, v)
        return result

    def weak_copy(self, e: ir.Expr) -> ir.Expr:
        """``e`` marked as a Python number; an expression that may be shared (a variable read, the
        operand a no-op conversion returned) is wrapped in a same-type Cast first."""
        if isinstance(e, ir.Const) or e.weak:
            return e
        if isinstance(e, (ir.Var, ir.BufferLoad, ir.Shape, ir.BuiltinId)):
            e = ir.Cast(value=e, type=e.type, loc=e.loc)
        e.weak = True
        return e

    def py_round(self, node: ast.Call) -> ir.Expr:
        self.no_keywords(node, "round")
        args = self.args(node, (1, 1), "round")
        e = args[0]
        if e.type.is_complex:
            raise self.rep.type(node, "round() is not defined for complex numbers")
        if not e.type.is_float or is_weak(e):
            if is_weak(e):
                return ir.Const(value=round(e.value), type=INT64, weak=True, loc=self.loc(node))  # type: ignore[attr-defined]
            return convert(e, INT64) if e.type.is_bool else e
        r = ir.MathCall(name="round", args=[e], type=e.type, loc=self.loc(node))  # type: ignore[attr-defined]
        return ir.Cast(value=r, type=INT64, loc=self.loc(node))  # type: ignore[attr-defined]

    def py_math(self, name: str, rule: str, node: ast.Call) -> ir.Expr:
        # Python's math module returns Python ints and floats: weak in promotion (NEP 50), so
        # x - math.floor(x) stays float32 and math.sqrt(x) * h stays float16; the value is computed
        # in the argument's float type (docs/kernel-language.md, "Math")
        e = self.math_module_call(name, rule, node)
        return e if rule == "b" else self.weak_copy(e)

    def math_module_call(self, name: str, rule: str, node: ast.Call) -> ir.Expr:
        if name == "log" and len(node.args) == 2:
            x, base = [self.expr(a) for a in node.args]  # type: ignore[attr-defined]
            lx = self.math_values("log", [x], node, python_ints=False, float64_ints=True)
            lb = self.math_values("log", [base], node, python_ints=False, float64_ints=True)
            return self.binop("TrueDiv", lx, lb, node)  # type: ignore[attr-defined]
        if rule == "i":
            (e,) = self.args(node, 1, f"math.{name}")
            if e.type.is_int or e.type.is_bool:
                return convert(e, INT64) if not is_weak(e) else ir.Const(value=int(e.value), type=INT64, weak=True,  # type: ignore[attr-defined]
                                                                          loc=e.loc)
            f = self.math_values(name, [e], node, python_ints=False)
            if isinstance(f, ir.Const):
                return ir.Const(value=int(f.value), type=INT64, weak=True, loc=f.loc)
            return ir.Cast(value=f, type=INT64, loc=self.loc(node))  # type: ignore[attr-defined]
        if name == "pow":
            # math.pow is always a float power
            args = self.args(node, 2, "math.pow")
            return self.math_values("pow", args, node, python_ints=False, float64_ints=True)
        return self.math(name, node, python_ints=False)

    def math(self, name: str, node: ast.Call, python_ints: bool) -> ir.Expr:
        arity, _ = ir.MATH_FUNCTIONS[name]
        args = self.args(node, arity, name)
        return self.math_values(name, args, node, python_ints=python_ints)

    def math_values(self, name: str, args: list[ir.Expr], node: ast.AST, python_ints: bool,
                    float64_ints: bool = True) -> ir.Expr:
        _, kind = ir.MATH_FUNCTIONS[name]
        loc = self.loc(node)  # type: ignore[attr-defined]
        t = args[0].type if len(args) == 1 else unify(args[0], args[1])
        if len(args) == 1 and is_weak(args[0]):
            t = args[0].type
        if t.is_complex or kind == "c":
            return self.complex_math(name, args, t, node)
        if kind == "n":
            if t.is_bool:
                t = INT64
            if all(is_weak(a) for a in args):
                host = {"min": builtins.min, "max": builtins.max, "abs": builtins.abs}[name]
                v = host(*[a.value for a in args])  # type: ignore[attr-defined]
                return ir.Const(value=v, type=args[0].type if name == "abs" else t, weak=True, loc=loc)
            if name == "abs" and not t.is_float and t.kind == "u":
                return args[0]
            return ir.MathCall(name=name, args=[convert(a, t) for a in args], type=t, loc=loc)
        if not t.is_float:
            t = FLOAT64
        if all(is_weak(a) for a in args) and name in _HOST_FOLD:
            try:
                v = fold.math_call(_HOST_FOLD[name], *[float(a.value) for a in args])  # type: ignore[attr-defined]
            except fold.FoldError:
                v = None  # outside the domain (sqrt(-1)): left to the device, which gives IEEE results
            if v is not None:
                if name in ("floor", "ceil", "trunc"):
                    v = float(v)
                return ir.Const(value=v, type=FLOAT64, weak=True, loc=loc)
        result = BOOL if kind == "f->b" else t
        return ir.MathCall(name=name, args=[convert(a, t) for a in args], type=result, loc=loc)

    def complex_math(self, name: str, args: list[ir.Expr], t: ScalarType, node: ast.AST) -> ir.Expr:
        """abs, dc.conj, dc.exp, dc.sqrt of a complex (numpy's functions); conj of a real is itself."""
        loc = self.loc(node)  # type: ignore[attr-defined]
        if name == "conj" and not t.is_complex:
            return args[0]
        if name not in ("abs", "conj", "exp", "sqrt"):
            hint = "complex numbers have no order; compare abs(z)" if name in ("min", "max") else \
                "complex values take abs, dc.conj, dc.exp, dc.sqrt, .real and .imag"
            raise self.rep.type(node, f"{name}() is not defined for {t} in kernels", hint=hint)
        z = ir.Const(value=complex(args[0].value), type=t, loc=loc) if is_weak(args[0]) else args[0]  # type: ignore[attr-defined]
        result = t.real_type if name == "abs" else t
        return ir.MathCall(name=name, args=[z], type=result, loc=loc)

    # ----------------------------------------------------------------------------- dc builtins

    def dc_builtin(self, fn: dcb.Builtin, node: ast.Call) -> ir.Expr:
        self.no_keywords(node, f"dc.{fn.name}")
        loc = self.loc(node)  # type: ignore[attr-defined]
        if fn.kind == "id":
            if not self.is_kernel:  # type: ignore[attr-defined]
                raise self.rep.syntax(node, f"dc.{fn.name}() is only available in kernels",
                                      hint="pass the value to the device function as an argument")
            if len(node.args) != 1:
                raise self.rep.type(node, f"dc.{fn.name}() takes exactly one argument, the dimension (0, 1 or 2)")
            d = self.constant_int(node.args[0], f"the dimension of dc.{fn.name}()")  # type: ignore[attr-defined]
            if not 0 <= d <= 2:
                raise self.rep.type(node.args[0], f"the dimension of dc.{fn.name}() must be 0, 1 or 2, not {d}")
            # a Python int when the body runs as Python: weak in promotion (x[i] * i stays float32)
            return ir.BuiltinId(kind=fn.name, dim=d, type=INDEX, weak=True, loc=loc)
        if fn.kind == "barrier":
            raise self.rep.syntax(node, f"dc.{fn.name}() is a statement and has no value")
        if fn.kind == "shared":
            raise self.rep.syntax(node, "dc.shared() may only be assigned to a name at the top level of a kernel",
                                  hint="write `tile = dc.shared((256,), dc.float32)` at the start of the kernel")
        if fn.kind == "atomic":
            return self.atomic(dcb.ATOMICS[fn], node)
        if fn.kind == "bitcast":
            return self.bitcast(node)
        if fn.kind == "subgroup":
            from .subgroups import lower_subgroup

            return lower_subgroup(self, fn, node)
        raise self.rep.syntax(node, f"dc.{fn.name} is not supported here")

    def bitcast(self, node: ast.Call) -> ir.Expr:
        """``dc.bitcast(x, dtype)``: x's bits as ``dtype`` (numpy's ``.view``). A Python number takes
        the type of its kind (int or float) and of dtype's size first: ``dc.bitcast(1.0, dc.uint32)``
        is the bits of float32 1.0."""
        if len(node.args) != 2:
            raise self.rep.type(node, f"dc.bitcast(x, dtype) takes 2 arguments, got {len(node.args)}")
        target = self.value(node.args[1])  # type: ignore[attr-defined]
        t = scalar_type(target.value) if isinstance(target, StaticValue) else None
        if t is None or t.name not in _BITCAST_TYPES:
            raise self.rep.type(node.args[1], "the dtype of dc.bitcast() must be one of "
                                              f"{', '.join(_BITCAST_TYPES)}")
        e = self.expr(node.args[0])  # type: ignore[attr-defined]
        if is_weak(e) and (e.type.is_float or e.type.is_int):
            kind = "float" if e.type.is_float else "int"
            e = convert(e, scalar_type(f"{kind}{t.itemsize * 8}"), self.loc(node))  # type: ignore[arg-type, attr-defined]
        if e.type.name not in _BITCAST_TYPES:
            raise self.rep.type(node.args[0], f"dc.bitcast() reinterprets {', '.join(_BITCAST_TYPES)} values, "
                                              f"not {e.type}")
        if e.type.itemsize != t.itemsize:
            raise self.rep.type(node, f"dc.bitcast() of a {e.type} value to {t}: the sizes differ "
                                      f"({e.type.itemsize} and {t.itemsize} bytes)",
                                hint=f"convert the value first, e.g. dc.bitcast(dc.float{t.itemsize * 8}(x), {t.name})"
                                if t.itemsize in (4, 8) else None)
        if e.type == t:
            return e
        return ir.MathCall(name="bitcast", args=[e], type=t, loc=self.loc(node))  # type: ignore[attr-defined]

    def atomic(self, op: str, node: ast.Call) -> ir.Expr:
        n = 4 if op == "cas" else 3
        shape = "(buf, index, compare, value)" if op == "cas" else "(buf, index, value)"
        if len(node.args) != n:
            raise self.rep.type(node, f"dc.atomic_{op}{shape} takes {n} arguments, got {len(node.args)}")
        target = self.value(node.args[0])  # type: ignore[attr-defined]
        if not isinstance(target, BufferValue):
            raise self.rep.type(node.args[0], f"the first argument of dc.atomic_{op}() must be a buffer or "
                                              "a dc.shared array")
        ref = target.ref
        if ref.dtype.is_bool:
            raise self.rep.type(node.args[0], "atomics on bool arrays are not supported")
        if ref.dtype.is_complex:
            raise self.rep.type(node.args[0], f"atomics on {ref.dtype} arrays are not supported",
                                hint="view the values as floats (a float32/float64 buffer of shape (n, 2), "
                                     "z.real and z.imag) and add the two parts atomically")
        if ref.dtype.name not in _ATOMIC_DTYPES:
            # GPUs have no 8/16-bit or half read-modify-write atomics
            raise self.rep.type(node.args[0], f"atomics on {ref.dtype} arrays are not supported",
                                hint="atomics take int32, uint32, int64, uint64, float32 or float64 arrays: "
                                     "accumulate into one of those and convert afterwards")
        indices = self.indices(ref, node.args[1], node.args[1])  # type: ignore[attr-defined]
        value = self.expr(node.args[-1])  # type: ignore[attr-defined]
        value = self.coerce_assign(value, ref.dtype, node.args[-1], f"{ref.py_name}[...]")  # type: ignore[attr-defined]
        compare = None
        if op == "cas":
            compare = self.coerce_assign(self.expr(node.args[2]), ref.dtype, node.args[2],  # type: ignore[attr-defined]
                                         f"{ref.py_name}[...]")
        self.note_access(ref, read=True, written=True)  # type: ignore[attr-defined]
        self.uses_atomics = True  # type: ignore[attr-defined]
        return ir.AtomicOp(op=op, buffer=ref, indices=indices, value=value, compare=compare, type=ref.dtype,
                           loc=self.loc(node))  # type: ignore[attr-defined]

    # ----------------------------------------------------------------------------- device functions

    def bind_arguments(self, fn: Any, decls: list[Any], node: ast.Call) -> list[ast.expr | None]:
        """The call's argument expression for each parameter of ``fn`` (positional, then keywords;
        None where the call gives none), refusing extra, unknown and repeated ones as Python does."""
        given: list[ast.expr | None] = list(node.args) + [None] * max(0, len(decls) - len(node.args))
        if len(node.args) > len(decls):
            raise self.rep.type(node, f"{fn.__name__}() takes {len(decls)} argument(s), got {len(node.args)}")
        names = [d.name for d in decls]
        for kw in node.keywords:
            if kw.arg is None:
                raise self.rep.syntax(kw.value, "**kwargs are not supported in kernel calls")
            if kw.arg not in names:
                raise self.rep.type(kw.value, f"{fn.__name__}() has no parameter {kw.arg!r}")
            i = names.index(kw.arg)
            if given[i] is not None:
                raise self.rep.type(kw.value, f"{fn.__name__}() got two values for {kw.arg!r}")
            given[i] = kw.value
        for i, d in enumerate(decls):
            if given[i] is None and getattr(d, "has_default", False):
                # a left-out parameter with a default: its value, as if written at the call
                given[i] = ast.copy_location(ast.Constant(value=d.default), node)
        return given

    def device_call(self, fn: Any, node: ast.Call) -> ir.Expr:
        decls = self.builder.param_decls(fn, node, self.rep)
        given = self.bind_arguments(fn, decls, node)
        args: list[ir.Expr | ir.BufferArg] = []
        types: list[Any] = []
        for decl, arg in zip(decls, given, strict=False):
            if arg is None:
                raise self.rep.type(node, f"{fn.__name__}() is missing the argument {decl.name!r}")
            v = self.value(arg)  # type: ignore[attr-defined]
            if isinstance(v, BufferValue):
                if v.ref.space != "global":
                    raise self.rep.type(arg, "dc.shared arrays cannot be passed to device functions",
                                        hint="pass the values, or do the work in the kernel")
                t = decl.buffer_type_for(v.ref, self.rep, arg)
                args.append(self.buffer_arg(v))  # type: ignore[attr-defined]
                types.append(t)
                continue
            e = v if isinstance(v, ir.Expr) else self.static_to_expr(v)  # type: ignore[attr-defined]
            if decl.spec is None and is_weak(e):
                types.append(LiteralArg.of(e.value))  # type: ignore[attr-defined]
                continue
            st = decl.scalar_type_for(e, self.rep, arg)
            if decl.spec is not None and e.type.is_float and not st.is_float and not is_weak(e):
                raise self.rep.type(arg, f"parameter {decl.name!r} of {fn.__name__}() is {st}; "
                                         f"a {e.type} argument would be truncated",
                                    hint=f"convert explicitly, e.g. dc.{st.name}(...)")
            if decl.spec is not None and is_weak(e):
                e = self.coerce_assign(e, st, arg, decl.name)  # type: ignore[attr-defined]
            # annotated parameters convert numbers like a store into a typed variable
            args.append(convert(e, st))
            types.append(WeakScalar(st) if decl.spec is None and e.weak and not st.is_complex else st)
        func = self.builder.function_for(fn, tuple(types), node, self.rep)
        for a, p in zip(args, func.params, strict=False):  # (buffers are never literals: pairs align)
            if isinstance(a, ir.BufferArg):
                self.note_access(a.buffer, read=p.read, written=p.written)  # type: ignore[attr-defined]
        self.uses_atomics |= self.builder.function_uses_atomics(func)  # type: ignore[attr-defined]
        rt = func.return_type
        if isinstance(rt, ScalarType):
            return ir.Call(func=func.name, args=args, type=rt, loc=self.loc(node))  # type: ignore[attr-defined]
        return ir.Call(func=func.name, args=args, type=BOOL, void=True, loc=self.loc(node))  # type: ignore[attr-defined]


__all__ = ["CallLowering"]
