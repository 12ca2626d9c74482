"""The printer shared by every C-like target; targets override small hooks.

The printer walks the typed IR once per function. Expressions print to fully
parenthesised strings; statements append lines. Everything a kernel needs
beyond its body (Python-semantics helpers, atomics, bounds checks, pragmas)
is requested while printing and collected in ``prelude``, so the final source
carries only what the kernel uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import KernelSyntaxError, KernelTypeError
from .. import ir
from ..types import (
    BOOL,
    COMPLEX128,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    INT32,
    INT64,
    UINT32,
    UINT64,
    BufferType,
    ScalarType,
    VoidType,
)
from . import complex_helpers
from .helpers import SUFFIX, HelperStyle, helper_name, render


@dataclass(frozen=True)
class ExpandedParam:
    """One parameter of an entry point in the expanded ABI (docs/design.md, "Seams").

    ``kind``: "buffer" (a data pointer), "extent" (an int64 extent of ``source``),
    "scalar", "debug" (the int64[4] report buffer) or "global_size" (the three
    trailing int64 scalars of the cuda and opencl targets).
    """

    kind: str
    name: str
    dtype: ScalarType
    source: str            # the Python parameter it comes from ("" for hidden ones)
    dim: int = -1          # extents and global sizes: which dimension
    const: bool = False    # buffers: read-only


class CLikePrinter:
    backend = ""
    ext = "c"
    line_directives = True
    #: address-space qualifier of global buffer pointers ("" / "__global" / "device")
    global_space = ""
    shared_space = ""
    restrict = "__restrict__"
    #: 64-bit literal suffix
    ll = "LL"

    def __init__(self, module: ir.Module, debug: bool) -> None:
        self.module = module
        self.kernel = module.kernel
        self.debug = debug or module.kernel.debug
        self.prelude: dict[str, str] = {}
        self.features: set[str] = set()
        self.out: list[str] = []
        self.indent = 0
        self.fn: ir.Function | None = None
        self.loop_depth = 0
        self.filename = module.kernel.filename or "<kernel>"
        self._last_line = -1
        self.current: ir.Node = module.kernel  # the statement being printed, for error locations

    # ------------------------------------------------------------------ hooks a target overrides
    def tname(self, t: ScalarType) -> str:
        raise NotImplementedError

    def storage(self, t: ScalarType) -> str:
        """The C type of one element of a buffer/shared array of ``t`` in memory."""
        return self.tname(t)

    def helper_style(self) -> HelperStyle:
        raise NotImplementedError

    def func_qualifier(self) -> str:
        return "static inline"

    def builtin(self, kind: str, dim: int) -> str:
        raise NotImplementedError

    def barrier(self) -> str:
        raise NotImplementedError

    def math_fn(self, name: str, t: ScalarType) -> str:
        raise NotImplementedError

    def inf(self, t: ScalarType) -> str:
        raise NotImplementedError

    def nan(self, t: ScalarType) -> str:
        raise NotImplementedError

    def atomic_helper(self, op: str, t: ScalarType, space: str) -> str:
        """Register the helper for ``op`` on ``t`` in ``space`` and return its name. Every atomic
        helper has the signature ``T name(SPACE T* p, int64 k, T v[, T cmp])`` and does nothing
        (returns 0) when ``k < 0`` (a failed debug bounds check)."""
        raise NotImplementedError

    def report_helper(self) -> str:
        """Register ``dc_report(dbg, id, flat, line)`` (first violation wins) and return its name."""
        raise NotImplementedError

    def kernel_return(self) -> str:
        return "return;"

    # ------------------------------------------------------------------ output
    def emit(self, text: str) -> None:
        self.out.append("  " * self.indent + text)

    def mark(self, node: ir.Node) -> None:
        line = node.loc.line
        if line <= 0 or line == self._last_line:
            return
        self._last_line = line
        if self.line_directives:
            fname = self.filename.replace("\\", "\\\\").replace('"', '\\"')
            self.out.append(f'#line {line} "{fname}"')
        else:
            self.emit(f"// {self.filename}:{line}")

    def reset_lines(self) -> None:
        """After generated glue: point compiler messages back at the generated file."""
        if self.line_directives and self._last_line != -1:
            self.out.append("#line RESET")
        self._last_line = -1

    def need(self, key: str, text: str) -> None:
        if key not in self.prelude:
            self.prelude[key] = text

    def helper(self, op: str, t: ScalarType, t2: ScalarType | None = None) -> str:
        # float16 values are computed in float32 (rounded back by the caller, see f16_round)
        t, t2 = compute_type(t), (None if t2 is None else compute_type(t2))
        name = helper_name(op, t, t2)
        if t == FLOAT64 or t2 == FLOAT64:
            self.features.add("fp64")
        self.need(name, render(self.helper_style(), op, t, t2))
        return name

    # ------------------------------------------------------------------ names
    def var(self, name: str) -> str:
        return name

    def extent(self, buf_name: str, dim: int) -> str:
        return f"dc_{buf_name}_n{dim}"

    def debug_param(self) -> str:
        return "dc_dbg"

    # ------------------------------------------------------------------ float16
    def f16_round_fn(self) -> str:
        """Register and name ``float f(float)``: its argument rounded to the nearest float16 (ties to
        even), as numpy rounds every float16 operation's result."""
        raise NotImplementedError

    def f16_from_f64(self, v: str) -> str:
        """A float64 rounded to float16 (as a float). This default rounds through float32, which
        differs from numpy's direct rounding when the float32 lands exactly half-way between two
        halves; targets that can convert directly override it."""
        return self.f16_round(f"((float){v})", FLOAT16)

    def f16_round(self, text: str, t: ScalarType) -> str:
        return f"{self.f16_round_fn()}({text})" if t == FLOAT16 else text

    # ------------------------------------------------------------------ complex
    def complex_decl(self, t: ScalarType) -> str:
        """The target's declaration of complex type ``t`` (if not built in) and ``dc_mk_<s>(re, im)``."""
        raise NotImplementedError

    def chelper(self, op: str, t: ScalarType) -> str:
        self.note_type(t)
        name = f"dc_{op}_{complex_helpers.suffix(t)}"
        r = t.real_type
        self.need(name, complex_helpers.render(op, t, self.func_qualifier(), self.tname(t), self.tname(r),
                                               lambda f: self.math_fn(f, r)))
        return name

    def complex_cast(self, v: str, src: ScalarType, dst: ScalarType) -> str:
        s, r = complex_helpers.suffix(dst), self.tname(dst.real_type)
        if not src.is_complex:
            return f"dc_mk_{s}(({r})({v}), ({r})0)"
        name = f"dc_cvt_{s}_{complex_helpers.suffix(src)}"
        self.need(name, f"{self.func_qualifier()} {self.tname(dst)} {name}({self.tname(src)} v) "
                        f"{{ return dc_mk_{s}(({r})v.x, ({r})v.y); }}")
        return f"{name}({v})"

    # ------------------------------------------------------------------ types and literals
    def note_type(self, t: ScalarType) -> None:
        if t == FLOAT64 or t == COMPLEX128:
            self.features.add("fp64")
        if t.is_complex:
            self.need(f"dc_ctype_{t.name}", self.complex_decl(t))

    def literal(self, value: bool | int | float, t: ScalarType) -> str:
        self.note_type(t)
        if t == BOOL:
            return "true" if value else "false"
        if t.is_complex:
            z, r = complex(value), t.real_type
            return f"dc_mk_{complex_helpers.suffix(t)}({self.literal(z.real, r)}, {self.literal(z.imag, r)})"
        if t.is_float:
            t = compute_type(t)  # a float16 constant is already rounded (const_value)
            v = float(value)
            if math.isnan(v):
                return self.nan(t)
            if math.isinf(v):
                return self.inf(t) if v > 0 else f"(-{self.inf(t)})"
            text = repr(v)
            if "e" not in text and "." not in text and "n" not in text:
                text += ".0"
            return text + "f" if t == FLOAT32 else text
        v = int(value)
        if t.bits < 32:
            return f"(({self.tname(t)}){v})"
        if t == UINT64:
            return f"{v}u{self.ll}"
        if t == INT32:
            return "(-2147483647 - 1)" if v == -(2 ** 31) else str(v)
        if t == UINT32:
            return f"{v}u"
        if t == INT64:
            if v == -(2 ** 63):
                return f"(-9223372036854775807{self.ll} - 1)"
            return f"{v}{self.ll}"
        raise KernelTypeError(f"no literal of type {t}")

    # ------------------------------------------------------------------ expressions
    def expr(self, e: ir.ExprLike) -> str:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise self.error(e, f"the {self.backend} emitter cannot print {type(e).__name__}")
        return method(e)

    def e_Const(self, e: ir.Const) -> str:
        return self.literal(e.value, e.type)

    def e_Var(self, e: ir.Var) -> str:
        self.note_type(e.type)
        return self.var(e.name)

    def e_Bind(self, e: ir.Bind) -> str:
        return f"({self.var(e.name)} = {self.expr(e.value)})"

    def e_BinOp(self, e: ir.BinOp) -> str:
        t, op = e.type, e.op
        self.note_type(t)
        a = self.expr(e.left)
        b = self.expr(e.right)
        if t.is_complex:
            if op not in _COMPLEX_OPS:
                raise self.error(e, f"the operator {op} on complex reached the emitter")
            return f"{self.chelper(_COMPLEX_OPS[op], t)}({a}, {b})"
        if op in ("Add", "Sub", "Mult"):
            if t.is_signed:
                return f"{self.helper({'Add': 'wadd', 'Sub': 'wsub', 'Mult': 'wmul'}[op], t)}({a}, {b})"
            if t == BOOL:
                raise self.error(e, "arithmetic on bool reached the emitter")
            sym = {"Add": "+", "Sub": "-", "Mult": "*"}[op]
            if t == UINT32:
                return f"(({self.tname(t)})({a} {sym} {b}))"
            if t.is_int and t.bits < 32:
                # in unsigned 32 bits: C would promote to int, and uint16 * uint16 could overflow it
                u = self.tname(UINT32)
                return f"(({self.tname(t)})(({u}){a} {sym} ({u}){b}))"
            return self.f16_round(f"({a} {sym} {b})", t)
        if op == "TrueDiv":
            return self.f16_round(f"({a} / {b})", t)
        if op == "FloorDiv":
            return self.f16_round(f"{self.helper('floordiv', t)}({a}, {b})", t)
        if op == "Mod":
            return self.f16_round(f"{self.helper('mod', t)}({a}, {b})", t)
        if op == "Pow":
            return self.f16_round(self.power(e, a, b), t)
        if op in ("LShift", "RShift"):
            name = self.helper("shl" if op == "LShift" else "shr", t)
            return f"{name}({a}, ({self.tname(INT64)})({b}))"
        if op in ("BitAnd", "BitOr", "BitXor"):
            sym = {"BitAnd": "&", "BitOr": "|", "BitXor": "^"}[op]
            if t == BOOL:
                return f"(({a} {sym} {b}) != 0)"
            return f"(({self.tname(t)})({a} {sym} {b}))"
        raise self.error(e, f"unknown operator {op}")

    def power(self, e: ir.BinOp, a: str, b: str) -> str:
        t = e.type
        small = isinstance(e.right, ir.Const) and e.right.type.is_int and e.right.value in (0, 1, 2, 3)
        if t.is_int and small and t.is_signed:
            n = int(e.right.value)
            if n == 0:
                return self.literal(1, t)
            out = a
            for _ in range(n - 1):
                out = f"{self.helper('wmul', t)}({out}, {a})"
            return out
        if t.is_int:
            if e.right.type != t:
                b = f"(({self.tname(t)}){b})"
            return f"{self.helper('ipow', t)}({a}, {b})"
        if small:
            n = int(e.right.value)
            if n == 0:
                return self.literal(1.0, t)
            return "(" + " * ".join([a] * n) + ")"
        if e.right.type != t:
            b = f"(({self.tname(t)}){b})"
        return f"{self.math_fn('pow', compute_type(t))}({a}, {b})"

    def e_UnaryOp(self, e: ir.UnaryOp) -> str:
        a = self.expr(e.operand)
        t = e.type
        if e.op == "Not":
            return f"(!{a})"
        if e.op == "Invert":
            return f"(({self.tname(t)})(~{a}))"
        if e.op == "USub":
            if t.is_complex:
                return f"{self.chelper('cneg', t)}({a})"
            if t.is_signed:
                return f"{self.helper('wneg', t)}({a})"
            if t == UINT32:
                return f"(0u - {a})"
            if t.is_int and t.bits < 32:
                return f"(({self.tname(t)})(0u - ({self.tname(UINT32)}){a}))"
            if t == UINT64:
                return f"(0u{self.ll} - {a})"
            return f"(-{a})"
        raise self.error(e, f"unknown unary operator {e.op}")

    def e_Compare(self, e: ir.Compare) -> str:
        sym = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">="}[e.op]
        if e.left.type.is_complex:
            eq = f"{self.chelper('ceq', e.left.type)}({self.expr(e.left)}, {self.expr(e.right)})"
            return eq if e.op == "Eq" else f"(!{eq})"
        return f"({self.expr(e.left)} {sym} {self.expr(e.right)})"

    def e_BoolOp(self, e: ir.BoolOp) -> str:
        sym = " && " if e.op == "and" else " || "
        return "(" + sym.join(self.expr(v) for v in e.values) + ")"

    def e_IfExp(self, e: ir.IfExp) -> str:
        return f"({self.expr(e.cond)} ? {self.expr(e.then)} : {self.expr(e.orelse)})"

    def e_Cast(self, e: ir.Cast) -> str:
        src, dst = e.value.type, e.type
        v = self.expr(e.value)
        self.note_type(dst)
        if src == dst:
            return v
        if dst.is_complex:
            return self.complex_cast(v, src, dst)
        if dst == BOOL:
            return f"({v} != {self.literal(0, src)})"
        if src.is_float and dst.is_int:
            return f"{self.helper('cvt', dst, src)}({v})"
        if src == FLOAT16 and dst == FLOAT32:
            return v  # a float16 value is a float32 already
        if src == FLOAT64 and dst == FLOAT16:
            return self.f16_from_f64(v)
        return self.f16_round(f"(({self.tname(dst)}){v})", dst)

    def e_Call(self, e: ir.Call) -> str:
        callee = self.module.function(e.func)
        args: list[str] = []
        for a in e.args:
            if isinstance(a, ir.BufferArg):
                args.append(self.buffer_ptr(a.buffer))
                args += [self.shape_of(a.buffer, d) for d in range(a.buffer.ndim)]
            else:
                args.append(self.expr(a))
        if self.debug and callee.buffers:
            args.append(self.debug_param())
        return f"{e.func}({', '.join(args)})"

    def e_MathCall(self, e: ir.MathCall) -> str:
        t = e.type
        args = [self.expr(a) for a in e.args]
        name = e.name
        argt = e.args[0].type
        self.note_type(argt)
        if name == "bitcast":
            self.note_type(t)
            if not argt.is_float and not t.is_float:  # int <-> uint of one size: a plain cast keeps the bits
                return f"(({self.tname(t)})({args[0]}))"
            return self.bitcast(args[0], argt, t)
        if name in ("real", "imag"):
            return f"({args[0]}).{'x' if name == 'real' else 'y'}"
        if name == "complex":
            self.note_type(t)
            return f"dc_mk_{complex_helpers.suffix(t)}({args[0]}, {args[1]})"
        if argt.is_complex:
            return f"{self.chelper(name, argt)}({args[0]})"
        if name in ("min", "max"):
            return f"{self.helper(name, t)}({args[0]}, {args[1]})"
        if name == "abs":
            if t.is_float:
                return f"{self.math_fn('fabs', compute_type(t))}({args[0]})"
            return f"{self.helper('abs', t)}({args[0]})"
        if name in ("isnan", "isinf", "isfinite"):
            return f"({self.math_fn(name, compute_type(argt))}({args[0]}) != 0)"
        return self.f16_round(f"{self.math_fn(name, compute_type(t))}({', '.join(args)})", t)

    def bitcast(self, value: str, src: ScalarType, dst: ScalarType) -> str:
        """``value`` (of ``src``) with its bits read as ``dst``, one of the two a float of the
        other's size (ir.MATH_FUNCTIONS' ``bitcast``): each target's reinterpreting intrinsic."""
        raise NotImplementedError

    def e_SubgroupOp(self, e: ir.SubgroupOp) -> str:
        from .subgroups import gpu_expr

        return gpu_expr(self, e)

    def e_BuiltinId(self, e: ir.BuiltinId) -> str:
        return self.builtin(e.kind, e.dim)

    def e_Shape(self, e: ir.Shape) -> str:
        return self.shape_of(e.buffer, e.dim)

    def shape_of(self, ref: ir.BufferRef, dim: int) -> str:
        if ref.space == "shared":
            assert ref.shape is not None
            return self.literal(ref.shape[dim], INT64)
        lead = ref.ndim - len(ref.fixed_extents)
        if dim >= lead:  # an element's trailing extent (vectors, matrices): a constant helps vectorising
            return self.literal(ref.fixed_extents[dim - lead], INT64)
        return self.extent(ref.name, dim)

    def buffer_ptr(self, ref: ir.BufferRef) -> str:
        return ref.name

    def flat_index(self, ref: ir.BufferRef, idx: list[str]) -> str:
        flat = idx[0]
        for d in range(1, ref.ndim):
            flat = f"({flat}) * {self.shape_of(ref, d)} + ({idx[d]})"
        return flat

    def is_checked(self, ref: ir.BufferRef) -> bool:
        """Whether debug mode checks accesses to ``ref``: buffers, and dc.shared arrays (which
        carry a debug id from the frontend)."""
        return self.debug and (ref.space == "global" or (ref.space == "shared" and ref.debug_id >= 0))

    def checked_index(self, ref: ir.BufferRef, idx: list[str], node: ir.Node, load: bool = False) -> str:
        """The flat index of an access; in debug mode -1 (after reporting) when out of bounds, or,
        for a load from a dc.shared array (``load``), 0: work-group memory has no load helper per
        address space, and element 0 is always there."""
        if not self.is_checked(ref):
            return self.flat_index(ref, idx)
        name = self.flat_check_helper(ref.ndim, zero=load and ref.space == "shared")
        shape = [self.shape_of(ref, d) for d in range(ref.ndim)]
        pairs = ", ".join(f"{i}, {n}" for i, n in zip(idx, shape, strict=False))
        return f"{name}({self.debug_param()}, {ref.debug_id}, {node.loc.line}, {pairs})"

    def flat_check_helper(self, ndim: int, zero: bool = False) -> str:
        report = self.report_helper()
        i64 = self.tname(INT64)
        u64 = self.helper_style().uint64
        name = f"dc_flat{ndim}" + ("z" if zero else "")
        params = ", ".join(f"{i64} i{d}, {i64} n{d}" for d in range(ndim))
        ok = " && ".join(f"({u64})i{d} < ({u64})n{d}" for d in range(ndim))
        flat = "i0"
        wrapped = f"({u64})i0"
        for d in range(1, ndim):
            flat = f"({flat}) * n{d} + i{d}"
            wrapped = f"({wrapped}) * ({u64})n{d} + ({u64})i{d}"
        dbg = f"{self.global_space} {i64}*".strip()
        self.need(name, f"{self.func_qualifier()} {i64} {name}({dbg} dbg, {i64} id, {i64} line, {params}) {{\n"
                        f"  if ({ok}) return {flat};\n"
                        f"  {report}(dbg, id, ({i64})({wrapped}), line);\n"
                        f"  return {0 if zero else -1};\n}}")
        return name

    def load_helper(self, ref: ir.BufferRef) -> str:
        st = self.storage(ref.dtype)
        key = f"dc_ld_{st.replace(' ', '_')}"
        space = self.global_space
        ptr = f"{space} const {st}*".strip()
        self.need(key, f"{self.func_qualifier()} {st} {key}({ptr} p, {self.tname(INT64)} k) "
                       f"{{ return k < 0 ? ({st})0 : p[k]; }}")
        return key

    def e_BufferLoad(self, e: ir.BufferLoad) -> str:
        if e.member:  # one field of a struct buffer's element
            from . import structs

            return structs.load(self, e)
        self.note_type(e.type)
        ref = e.buffer
        idx = [self.expr(i) for i in e.indices]
        flat = self.checked_index(ref, idx, e, load=True)
        if self.debug and ref.space == "global":
            raw = f"{self.load_helper(ref)}({self.buffer_ptr(ref)}, {flat})"
        else:
            raw = f"{self.buffer_ptr(ref)}[{flat}]"
        return self.from_storage(raw, ref.dtype)

    def from_storage(self, raw: str, t: ScalarType) -> str:
        return raw

    def to_storage(self, value: str, t: ScalarType) -> str:
        return value

    def e_AtomicOp(self, e: ir.AtomicOp) -> str:
        ref = e.buffer
        t = ref.dtype
        if t == BOOL:
            raise self.error(e, "atomics on bool buffers are not supported")
        self.note_type(t)
        idx = [self.expr(i) for i in e.indices]
        flat = self.checked_index(ref, idx, e)
        name = self.atomic_helper(e.op, t, ref.space)
        args = [self.buffer_ptr(ref), flat, self.expr(e.value)]
        if e.op == "cas":
            assert e.compare is not None
            args.append(self.expr(e.compare))
        return f"{name}({', '.join(args)})"

    def e_BufferArg(self, e: ir.BufferArg) -> str:
        raise self.error(e, "a whole buffer can only be passed to a device function")

    # ------------------------------------------------------------------ statements
    def stmts(self, body: list[ir.Stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        self.current = s
        self.mark(s)
        method = getattr(self, "s_" + type(s).__name__, None)
        if method is None:
            raise self.error(s, f"the {self.backend} emitter cannot print {type(s).__name__}")
        method(s)

    def s_Assign(self, s: ir.Assign) -> None:
        self.emit(f"{self.var(s.name)} = {self.expr(s.value)};")

    def s_BufferStore(self, s: ir.BufferStore) -> None:
        if s.member:  # one field of a struct buffer's element
            from . import structs

            structs.store(self, s)
            return
        ref = s.buffer
        idx = [self.expr(i) for i in s.indices]
        value = self.to_storage(self.expr(s.value), ref.dtype)
        if self.is_checked(ref):
            flat = self.checked_index(ref, idx, s)
            self.emit(f"{{ const {self.tname(INT64)} dc_k = {flat}; "
                      f"if (dc_k >= 0) {self.buffer_ptr(ref)}[dc_k] = {value}; }}")
        else:
            self.emit(f"{self.buffer_ptr(ref)}[{self.flat_index(ref, idx)}] = {value};")

    def s_If(self, s: ir.If) -> None:
        self.emit(f"if ({strip_parens(self.expr(s.cond))}) {{")
        self.block(s.then)
        if s.orelse:
            self.emit("} else {")
            self.block(s.orelse)
        self.emit("}")

    def block(self, body: list[ir.Stmt]) -> None:
        self.indent += 1
        self.stmts(body)
        self.indent -= 1

    def for_header(self, s: ir.For) -> str:
        c = self.var(s.counter)
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        t = s.start.type
        if s.step_sign > 0:
            cond = f"{c} < {stop}"
        elif s.step_sign < 0:
            cond = f"{c} > {stop}"
        else:
            zero = self.literal(0, t)
            cond = f"(({step}) > {zero} ? {c} < {stop} : (({step}) < {zero} && {c} > {stop}))"
        if isinstance(s.step, ir.Const) and s.step.value == 1:
            inc = f"++{c}"
        elif t.is_signed:
            # a step past the type's top would be signed overflow: add in the unsigned type
            inc = f"{c} = {self.helper('wadd', t)}({c}, {step})"
        else:
            inc = f"{c} += {step}"
        return f"for ({c} = {start}; {cond}; {inc}) {{"

    def s_For(self, s: ir.For) -> None:
        self.emit(self.for_header(s))
        self.indent += 1
        self.emit(f"{self.var(s.var)} = {self.var(s.counter)};")
        self.loop_depth += 1
        self.stmts(s.body)
        self.loop_depth -= 1
        self.indent -= 1
        self.emit("}")

    def s_While(self, s: ir.While) -> None:
        self.emit(f"while ({strip_parens(self.expr(s.cond))}) {{")
        self.loop_depth += 1
        self.block(s.body)
        self.loop_depth -= 1
        self.emit("}")

    def s_Break(self, s: ir.Break) -> None:
        self.emit("break;")

    def s_Continue(self, s: ir.Continue) -> None:
        self.emit("continue;")

    def s_Return(self, s: ir.Return) -> None:
        if isinstance(self.fn, ir.Kernel):
            self.emit(self.kernel_return())
        elif s.value is None:
            self.emit("return;")
        else:
            self.emit(f"return {strip_parens(self.expr(s.value))};")

    def s_ExprStmt(self, s: ir.ExprStmt) -> None:
        self.emit(f"(void){self.expr(s.value)};")

    def s_Barrier(self, s: ir.Barrier) -> None:
        self.emit(self.grid_barrier(s) if s.grid else self.barrier())

    def grid_barrier(self, s: ir.Barrier) -> str:
        """``dc.grid_barrier()``: only CUDA can wait for every work-group of a launch (a cooperative launch
        keeps them all resident); OpenCL, Metal and the CPU backend have no such launch."""
        raise self.type_error(s, f"dc.grid_barrier() is not available on the {self.backend} backend: only CUDA "
                                 f"can synchronise every work-group of a launch (a cooperative launch keeps "
                                 f"them all resident)", hint="split the kernel into two launches at the barrier")

    # ------------------------------------------------------------------ declarations
    def used_names(self, fn: ir.Function) -> set[str]:
        names: set[str] = set()
        for s in fn.body:
            for n in ir.walk(s):
                if isinstance(n, (ir.Var, ir.Bind, ir.Assign)):
                    names.add(n.name)
                elif isinstance(n, ir.For):
                    names.add(n.var)
                    names.add(n.counter)
                elif isinstance(n, (ir.BufferLoad, ir.BufferStore, ir.AtomicOp, ir.Shape)):
                    names.add(n.buffer.name)
                    if isinstance(n, ir.Shape):
                        names.add(self.extent(n.buffer.name, n.dim))
                    elif n.buffer.space == "global" and (n.buffer.ndim > 1 or self.debug):
                        start = 0 if self.debug else 1
                        names.update(self.extent(n.buffer.name, d) for d in range(start, n.buffer.ndim))
                elif isinstance(n, ir.BufferArg):
                    names.add(n.buffer.name)
                    names.update(self.extent(n.buffer.name, d) for d in range(n.buffer.ndim))
        return names

    def declare_locals(self, fn: ir.Function, used: set[str], skip: set[str] | None = None) -> None:
        for v in fn.locals:
            if v.name in used and (skip is None or v.name not in skip):
                if v.loc.line > 0:
                    self.current = v
                self.note_type(v.type)
                self.emit(f"{self.tname(v.type)} {v.name} = {self.literal(0, v.type)};")

    def param_decl(self, p: ir.Param, kernel: bool) -> list[str]:
        """The C declarations of one parameter in the expanded ABI (device functions too)."""
        if isinstance(p.type, BufferType):
            st = self.storage(p.type.dtype)
            self.note_type(p.type.dtype)
            const = "const " if not p.written else ""
            ptr = f"{self.global_space} {const}{st}* {self.restrict}".replace("  ", " ").strip()
            out = [f"{ptr} {p.name}"]
            out += [f"{self.tname(INT64)} {self.extent(p.name, d)}" for d in range(p.type.ndim)]
            return out
        self.note_type(p.type)
        return [f"{self.tname(p.type)} {p.name}"]

    def function(self, fn: ir.Function) -> None:
        self.fn = fn
        self.loop_depth = 0
        params: list[str] = []
        for p in fn.params:
            params += self.param_decl(p, kernel=False)
        if self.debug and fn.buffers:
            params.append(f"{self.global_space} {self.tname(INT64)}* {self.debug_param()}".strip())
        ret = "void" if isinstance(fn.return_type, VoidType) else self.tname(fn.return_type)
        self.emit(f"{self.device_func_qualifier()} {ret} {fn.name}({', '.join(params) or 'void'}) {{")
        self.indent += 1
        used = self.used_names(fn)
        for decl in params:
            pname = decl.split()[-1]
            if pname not in used and pname != self.debug_param():
                self.emit(f"(void){pname};")
        if self.debug and fn.buffers and not any(
                isinstance(n, (ir.BufferLoad, ir.BufferStore, ir.AtomicOp, ir.Call)) for s in fn.body
                for n in ir.walk(s)):
            self.emit(f"(void){self.debug_param()};")
        self.declare_locals(fn, used)
        self.stmts(fn.body)
        self.indent -= 1
        self.emit("}")
        self.reset_lines()
        self.emit("")
        self.fn = None

    def device_func_qualifier(self) -> str:
        return self.func_qualifier()

    # ------------------------------------------------------------------ whole module
    def expanded_params(self) -> list[ExpandedParam]:
        out: list[ExpandedParam] = []
        for p in self.kernel.params:
            if isinstance(p.type, BufferType):
                out.append(ExpandedParam("buffer", p.name, p.type.dtype, p.py_name, const=not p.written))
                out += [ExpandedParam("extent", self.extent(p.name, d), INT64, p.py_name, d)
                        for d in range(p.type.ndim)]
            else:
                out.append(ExpandedParam("scalar", p.name, p.type, p.py_name))
        if self.debug:
            out.append(ExpandedParam("debug", self.debug_param(), INT64, ""))
        return out

    def error(self, node: ir.Node, message: str) -> KernelSyntaxError:
        return KernelSyntaxError(message, self.filename, node.loc.line or None, node.loc.col or None)

    def type_error(self, node: ir.Node, message: str, hint: str | None = None) -> KernelTypeError:
        import linecache

        # a device function may live in another file than the kernel
        fname = getattr(getattr(self, "fn", None), "filename", None) or self.filename
        line = node.loc.line or None
        text = linecache.getline(fname, line).rstrip("\n") if line else None
        return KernelTypeError(message, fname, line, node.loc.col or None, text or None, hint)

    def static_shared_bytes(self) -> int:
        total = 0
        for s in self.kernel.shared:
            size = s.dtype.itemsize
            total = (total + size - 1) // size * size
            total += size * s.type.size
        return total

    def finish(self, header: list[str], body: list[str]) -> str:
        """Join the pieces; ``#line RESET`` markers become real directives naming this file."""
        lines = [*header, *self.prelude.values(), "", *body]
        text_lines: list[str] = []
        for chunk in lines:
            text_lines += chunk.split("\n")
        fixed: list[str] = []
        for line in text_lines:
            if line == "#line RESET":
                fixed.append(f'#line {len(fixed) + 2} "{self.kernel.name}.{self.ext}"')
            else:
                fixed.append(line)
        return "\n".join(fixed).rstrip() + "\n"


_COMPLEX_OPS = {"Add": "cadd", "Sub": "csub", "Mult": "cmul", "TrueDiv": "cdiv"}


def compute_type(t: ScalarType) -> ScalarType:
    """The type a value of ``t`` is computed in: float16 in float32 (storage stays half)."""
    return FLOAT32 if t == FLOAT16 else t


def strip_parens(text: str) -> str:
    """Drop one pair of redundant outer parentheses (keeps generated conditions readable)."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return text
    return text[1:-1]


__all__ = ["CLikePrinter", "ExpandedParam", "strip_parens", "SUFFIX"]
