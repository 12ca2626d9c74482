"""Python-semantics helper functions, written once for every C-like target.

Each helper is a template over one scalar type. A dialect supplies the spelling
of the types, the function qualifier and the names of a few math functions;
the printer asks for a helper by (operation, type) and only the helpers a
kernel actually uses (plus what they call) are printed in its prelude, so a
float32-only OpenCL kernel never mentions ``double``.

The rules (docs/kernel-language.md has the user-facing version):

* ``//`` and ``%`` floor toward negative infinity; ``%`` takes the sign of the
  divisor. Integer division or modulo by zero gives 0 (Python raises; a
  kernel cannot, and a hardware trap would kill the process on the CPU); float
  ``x // 0.0`` is ``x / 0.0`` and ``x % 0.0`` is NaN, as in numpy;
  ``INT_MIN // -1`` wraps to ``INT_MIN``. Float division by zero follows IEEE.
* signed ``+ - *`` and unary ``-`` wrap in two's complement (computed in the
  unsigned type, so there is no undefined behaviour for an optimiser to use).
* ``abs(INT_MIN)`` wraps to ``INT_MIN``.
* ``a ** b`` on integers is exponentiation by squaring, wrapping; a negative
  exponent gives 0 unless the base is 1 or -1 (the integer part of Python's
  float result).
* ``a << n`` with ``n`` outside ``[0, bits)`` gives 0; ``a >> n`` with
  ``n >= bits`` gives the sign (0 or -1), with ``n < 0`` gives 0.
* float -> int conversion truncates toward zero and saturates; NaN gives 0.
* ``min(a, b)`` is ``b if b < a else a`` and ``max(a, b)`` is
  ``b if b > a else a``, which is Python's order of evaluation (NaN included).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..types import (
    BOOL,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    ScalarType,
)

SUFFIX = {BOOL: "b", INT8: "i8", INT16: "i16", INT32: "i32", INT64: "i64", UINT8: "u8", UINT16: "u16",
          UINT32: "u32", UINT64: "u64", FLOAT16: "f16", FLOAT32: "f32", FLOAT64: "f64"}


@dataclass(frozen=True)
class HelperStyle:
    """How one target spells what the helper templates need."""

    qualifier: str                      # "static inline", "__device__ __forceinline__ static", ...
    type_names: dict[ScalarType, str]   # ScalarType -> C spelling
    uint64: str                         # the unsigned 64-bit type
    math: dict[tuple[str, ScalarType], str]  # ("fmod"|"floor"|"copysign", float type) -> function name
    #: the target is compiled with signed overflow defined to wrap (the CPU backend's -fwrapv, see
    #: lang/compile_options.py): wrapping + - * and negation are then the plain signed operators
    wrapv: bool = False


def _utype(style: HelperStyle, t: ScalarType) -> str:
    """The unsigned type wrapping arithmetic on ``t`` is done in: 8- and 16-bit values are widened
    to 32 bits first (uint16 * uint16 in C promotes to a signed int, whose overflow is undefined)."""
    if t.bits == 64:
        return style.uint64
    if t.is_int:
        return style.type_names[UINT32]
    raise ValueError(f"no unsigned counterpart of {t}")


_FLOAT_LIMITS = {
    # (target int type) -> (lowest value, first value past the top), both exact in float32 and float64
    INT32: ("-2147483648.0", "2147483648.0", "(-2147483647 - 1)", "2147483647"),
    INT64: ("-9223372036854775808.0", "9223372036854775808.0",
            "(-9223372036854775807LL - 1)", "9223372036854775807LL"),
    UINT32: ("0.0", "4294967296.0", "0u", "4294967295u"),
    INT8: ("-128.0", "128.0", "(-128)", "127"),
    INT16: ("-32768.0", "32768.0", "(-32768)", "32767"),
    UINT8: ("0.0", "256.0", "0u", "255u"),
    UINT16: ("0.0", "65536.0", "0u", "65535u"),
    UINT64: ("0.0", "18446744073709551616.0", "0ull", "18446744073709551615ull"),
}


def _int_literal_suffix(style: HelperStyle, text: str) -> str:
    # OpenCL C and MSL spell 64-bit literals with L, not LL; `long` is 64-bit there.
    if style.type_names[INT64] == "long":
        return text.replace("LL", "L").replace("ull", "ul")
    return text


def render(style: HelperStyle, op: str, t: ScalarType, t2: ScalarType | None = None) -> str:
    """The C text of helper ``op`` for type ``t`` (``t2``: the source type of a conversion)."""
    q = style.qualifier
    T = style.type_names[t]
    S = SUFFIX[t]
    name = f"dc_{op}_{S}" if t2 is None else f"dc_{op}_{S}_{SUFFIX[t2]}"
    if op in ("wadd", "wsub", "wmul"):
        sym = {"wadd": "+", "wsub": "-", "wmul": "*"}[op]
        if style.wrapv:
            # Not through the unsigned type: GCC 12's -O3 loop vectoriser miscompiles two int64
            # accumulators of sign-extended int8/int16 values added through uint64 casts (a sum of
            # 4,096 ones gave 128); the plain signed operators are right, and wrap under -fwrapv.
            # 8- and 16-bit operands are promoted to int, which cannot overflow here.
            return f"{q} {T} {name}({T} a, {T} b) {{ return ({T})(a {sym} b); }}"
        U = _utype(style, t)
        return f"{q} {T} {name}({T} a, {T} b) {{ return ({T})(({U})a {sym} ({U})b); }}"
    if op == "wneg":
        if style.wrapv:
            return f"{q} {T} {name}({T} a) {{ return ({T})(-a); }}"
        U = _utype(style, t)
        return f"{q} {T} {name}({T} a) {{ return ({T})(({U})0 - ({U})a); }}"
    if op == "abs":
        if t.is_float:
            raise ValueError("float abs is a math call, not a helper")
        if not t.is_signed:
            return f"{q} {T} {name}({T} a) {{ return a; }}"
        U = _utype(style, t)
        return f"{q} {T} {name}({T} a) {{ return a < 0 ? ({T})(({U})0 - ({U})a) : a; }}"
    if op == "min":
        return f"{q} {T} {name}({T} a, {T} b) {{ return (b < a) ? b : a; }}"
    if op == "max":
        return f"{q} {T} {name}({T} a, {T} b) {{ return (b > a) ? b : a; }}"
    if op == "floordiv":
        if t.is_float:
            fmod, floor, cps = (style.math[(f, t)] for f in ("fmod", "floor", "copysign"))
            return (
                f"{q} {T} {name}({T} a, {T} b) {{\n"
                f"  if (b == 0) return a / b;\n"  # numpy: x // 0.0 is x / 0.0 (inf, or nan for 0.0)
                f"  {T} m = {fmod}(a, b);\n"
                f"  {T} d = (a - m) / b;\n"
                f"  if (m != 0 && ((b < 0) != (m < 0))) d -= 1;\n"
                f"  if (d != 0) {{ {T} f = {floor}(d); if (d - f > ({T})0.5) f += 1; return f; }}\n"
                f"  return {cps}(({T})0, a / b);\n"
                f"}}")
        if not t.is_signed:
            return f"{q} {T} {name}({T} a, {T} b) {{ return b == 0u ? 0u : a / b; }}"
        U = _utype(style, t)
        return (
            f"{q} {T} {name}({T} a, {T} b) {{\n"
            f"  if (b == 0) return 0;\n"
            f"  if (b == -1) return ({T})(({U})0 - ({U})a);\n"
            f"  {T} r = a % b;\n"
            f"  {T} d = a / b;\n"
            f"  return (r != 0 && ((r < 0) != (b < 0))) ? d - 1 : d;\n"
            f"}}")
    if op == "mod":
        if t.is_float:
            fmod, cps = style.math[("fmod", t)], style.math[("copysign", t)]
            return (
                f"{q} {T} {name}({T} a, {T} b) {{\n"
                f"  {T} m = {fmod}(a, b);\n"
                f"  if (m != 0) {{ if ((b < 0) != (m < 0)) m += b; }}\n"
                f"  else {{ m = {cps}(({T})0, b); }}\n"
                f"  return m;\n"
                f"}}")
        if not t.is_signed:
            return f"{q} {T} {name}({T} a, {T} b) {{ return b == 0u ? 0u : a % b; }}"
        return (
            f"{q} {T} {name}({T} a, {T} b) {{\n"
            f"  if (b == 0 || b == -1) return 0;\n"
            f"  {T} r = a % b;\n"
            f"  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
            f"}}")
    if op == "ipow":
        U = _utype(style, t)
        neg = ""
        if t.is_signed:
            neg = (f"  if (e < 0) return b == 1 ? ({T})1 : (b == -1 ? ((e & 1) ? ({T})-1 : ({T})1) : ({T})0);\n")
        return (
            f"{q} {T} {name}({T} b, {T} e) {{\n"
            f"{neg}"
            f"  {U} r = 1u, x = ({U})b;\n"
            f"  while (e > 0) {{ if (e & 1) r *= x; x *= x; e >>= 1; }}\n"
            f"  return ({T})r;\n"
            f"}}")
    if op == "shl":
        U = _utype(style, t)
        I64 = style.type_names[INT64]
        return (f"{q} {T} {name}({T} a, {I64} n) {{ "
                f"return (n < 0 || n >= {t.bits}) ? ({T})0 : ({T})(({U})a << n); }}")
    if op == "shr":
        I64 = style.type_names[INT64]
        if t.is_signed:
            return (f"{q} {T} {name}({T} a, {I64} n) {{ "
                    f"return n < 0 ? ({T})0 : (n >= {t.bits} ? (a < 0 ? ({T})-1 : ({T})0) : ({T})(a >> n)); }}")
        return f"{q} {T} {name}({T} a, {I64} n) {{ return (n < 0 || n >= {t.bits}) ? ({T})0 : ({T})(a >> n); }}"
    if op == "cvt":
        assert t2 is not None and t2.is_float and t.is_int
        F = style.type_names[t2]
        lo, hi, lo_i, hi_i = _FLOAT_LIMITS[t]
        lo_i, hi_i = _int_literal_suffix(style, lo_i), _int_literal_suffix(style, hi_i)
        cmp_lo = f"x <= ({F}){lo}" if t.is_signed else f"x <= ({F})0"
        return (f"{q} {T} {name}({F} x) {{ "
                f"return !(x == x) ? ({T})0 : ({cmp_lo} ? ({T}){lo_i} : "
                f"(x >= ({F}){hi} ? ({T}){hi_i} : ({T})x)); }}")
    raise ValueError(f"unknown helper {op!r}")


def helper_name(op: str, t: ScalarType, t2: ScalarType | None = None) -> str:
    return f"dc_{op}_{SUFFIX[t]}" if t2 is None else f"dc_{op}_{SUFFIX[t]}_{SUFFIX[t2]}"


def helper_needs_fp64(t: ScalarType, t2: ScalarType | None = None) -> bool:
    return t is FLOAT64 or t2 is FLOAT64



def f16_bits_helpers(q: str, u32: str, u16: str, as_uint: str, as_float: str) -> str:
    """``dc_h2f``/``dc_f2h``: float16 bits <-> float, in integer arithmetic only, for targets with no
    half type reachable without a header (CUDA under NVRTC). ``dc_f2h`` rounds to nearest, ties to
    even, overflowing to infinity and keeping NaNs quiet, exactly as numpy's float→float16."""
    return (
        f"{q} float dc_h2f({u16} h) {{\n"
        f"  {u32} s = ({u32})(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
        f"  if (e == 0u) {{ float v = (float)m * 5.9604644775390625e-08f; return s ? -v : v; }}\n"
        f"  return {as_float}(s | (e == 31u ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13)));\n"
        f"}}\n"
        f"{q} {u16} dc_f2h(float f) {{\n"
        f"  {u32} u = {as_uint}(f), s = (u >> 16) & 0x8000u;\n"
        f"  u &= 0x7fffffffu;\n"
        f"  if (u > 0x7f800000u) return ({u16})(s | 0x7e00u);\n"
        f"  if (u >= 0x47800000u) return ({u16})(s | 0x7c00u);\n"
        f"  if (u >= 0x38800000u) {{\n"
        f"    {u32} h = (u - 0x38000000u) >> 13, r = u & 0x1fffu;\n"
        f"    h += (r > 0x1000u || (r == 0x1000u && (h & 1u))) ? 1u : 0u;\n"
        f"    return ({u16})(s | h);\n"
        f"  }}\n"
        f"  {u32} e = u >> 23;\n"
        f"  if (e < 102u) return ({u16})s;\n"
        f"  {u32} m = (u & 0x7fffffu) | 0x800000u, sh = 126u - e, h = m >> sh, r = m & ((1u << sh) - 1u);\n"
        f"  {u32} half_ = 1u << (sh - 1u);\n"
        f"  h += (r > half_ || (r == half_ && (h & 1u))) ? 1u : 0u;\n"
        f"  return ({u16})(s | h);\n"
        f"}}\n"
        f"{q} float dc_rnd_f16(float x) {{ return dc_h2f(dc_f2h(x)); }}")


def f64_to_f16_helper(q: str, u64: str, u16: str, as_bits: str) -> str:
    """``dc_d2h``: a double rounded straight to float16 bits (ties to even), as numpy converts; going
    through float would round twice. Needs ``dc_h2f`` (``f16_bits_helpers``) for ``dc_rnd_f16_d``."""
    return (
        f"{q} {u16} dc_d2h(double f) {{\n"
        f"  {u64} u = ({u64}){as_bits}(f), s = (u >> 48) & 0x8000ull;\n"
        f"  u &= 0x7fffffffffffffffull;\n"
        f"  if (u > 0x7ff0000000000000ull) return ({u16})(s | 0x7e00u);\n"
        f"  if (u >= 0x40f0000000000000ull) return ({u16})(s | 0x7c00u);\n"
        f"  if (u >= 0x3f10000000000000ull) {{\n"
        f"    {u64} h = (u - 0x3f00000000000000ull) >> 42, r = u & 0x3ffffffffffull;\n"
        f"    h += (r > 0x20000000000ull || (r == 0x20000000000ull && (h & 1ull))) ? 1ull : 0ull;\n"
        f"    return ({u16})(s | h);\n"
        f"  }}\n"
        f"  {u64} e = u >> 52;\n"
        f"  if (e < 998ull) return ({u16})s;\n"
        f"  {u64} m = (u & 0xfffffffffffffull) | 0x10000000000000ull, sh = 1051ull - e, h = m >> sh;\n"
        f"  {u64} r = m & ((1ull << sh) - 1ull), half_ = 1ull << (sh - 1ull);\n"
        f"  h += (r > half_ || (r == half_ && (h & 1ull))) ? 1ull : 0ull;\n"
        f"  return ({u16})(s | h);\n"
        f"}}\n"
        f"{q} float dc_rnd_f16_d(double x) {{ return dc_h2f(dc_d2h(x)); }}")
