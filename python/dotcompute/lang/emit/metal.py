"""Metal Shading Language, in the convention of docs/design.md ("The kernel language ↔ backends").

Expanded parameter ``i`` is ``[[buffer(i)]]``: buffers ``device T*`` (``const
device T*`` when read-only), scalars and extents ``constant T&``; the five
``uint3`` builtins ``dc_gid``/``dc_lid``/``dc_grp``/``dc_gsz``/``dc_lsz`` are
always present; ``dc.shared`` arrays are ``threadgroup T name[N];`` at function
scope. Metal dispatches exactly the global size (non-uniform threadgroups), so
there is no bounds guard and no global-size parameter.

MSL has no ``double`` and no 64-bit atomic read-modify-write on most GPUs:
float64 anywhere and int64 atomics are refused with a KernelTypeError. A few
C math functions MSL lacks are composed from others (cbrt, expm1, log1p,
hypot); erf/erfc/lgamma/tgamma are refused.
"""

from __future__ import annotations

from .. import ir
from ..types import (
    BOOL,
    COMPLEX64,
    COMPLEX128,
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
    BufferType,
    ScalarType,
)
from .gpu import GpuPrinter
from .helpers import SUFFIX, HelperStyle

# float16 is stored as half and computed in float, every result rounded to half (numpy's rounding)
_TYPES = {BOOL: "bool", INT8: "char", INT16: "short", INT32: "int", INT64: "long", UINT8: "uchar", UINT16: "ushort",
          UINT32: "uint", UINT64: "ulong", FLOAT16: "float", FLOAT32: "float", FLOAT64: "double",
          COMPLEX64: "float2", COMPLEX128: "double2"}
_STORAGE = {**_TYPES, FLOAT16: "half"}
_SPACE = {"global": "device", "shared": "threadgroup"}
_AXES = "xyz"
_COMPOSED = {
    "cbrt": "return copysign(pow(fabs(x), 1.0f / 3.0f), x);",
    "expm1": "return fabs(x) < 1e-5f ? x + 0.5f * x * x : exp(x) - 1.0f;",
    "log1p": "return fabs(x) < 1e-4f ? x - 0.5f * x * x : log(1.0f + x);",
}


class MetalPrinter(GpuPrinter):
    backend = "metal"
    ext = "metal"
    global_space = "device"
    shared_space = "threadgroup"
    restrict = ""
    ll = "L"
    takes_global_size = False

    def note_type(self, t: ScalarType) -> None:
        if t == COMPLEX64:
            self.need("dc_ctype_complex64", "static inline float2 dc_mk_c64(float re, float im) "
                                            "{ return float2(re, im); }")
        if t in (FLOAT64, COMPLEX128):
            raise self.type_error(self.current, f"{t} is not available on Metal (MSL has no double); use "
                                               "float32 in kernels meant for Metal",
                                  hint="a float literal alone is float64 (acc = 0.0): annotate the variable "
                                       "(acc: dc.float32 = 0.0) or write dc.float32(...); float parameters "
                                       "and device-function literals likewise; an int32/int64 value (a "
                                       "global id, a shape) with a float32 is float64 as in numpy: "
                                       "write dc.float32(i)")

    def tname(self, t: ScalarType) -> str:
        return _TYPES[t]

    def storage(self, t: ScalarType) -> str:
        return _STORAGE[t]

    def from_storage(self, raw: str, t: ScalarType) -> str:
        return f"((float){raw})" if t == FLOAT16 else raw

    def to_storage(self, value: str, t: ScalarType) -> str:
        return f"((half)({value}))" if t == FLOAT16 else value

    def f16_round_fn(self) -> str:
        self.need("dc_rnd_f16", "static inline float dc_rnd_f16(float x) { return (float)(half)x; }")
        return "dc_rnd_f16"

    def helper_style(self) -> HelperStyle:
        math = {(f, t): f for f in ("fmod", "floor", "copysign") for t in (FLOAT32, FLOAT64)}
        return HelperStyle("static inline", _TYPES, "ulong", math)

    def math_fn(self, name: str, t: ScalarType) -> str:
        self.note_type(t)
        if name in ("erf", "erfc", "lgamma", "tgamma"):
            raise self.type_error(self.current, f"math.{name} is not available on Metal")
        if name in _COMPOSED:
            key = f"dc_{name}_f32"
            self.need(key, f"static inline float {key}(float x) {{ {_COMPOSED[name]} }}")
            return key
        if name == "hypot":
            self.need("dc_hypot_f32", "static inline float dc_hypot_f32(float x, float y) "
                                      "{ return sqrt(x * x + y * y); }")
            return "dc_hypot_f32"
        return "rint" if name == "round" else name

    def bitcast(self, value: str, src: ScalarType, dst: ScalarType) -> str:
        return f"as_type<{_TYPES[dst]}>({value})"  # note_type has refused float64 already

    def inf(self, t: ScalarType) -> str:
        return "INFINITY"

    def nan(self, t: ScalarType) -> str:
        return "NAN"

    def barrier(self) -> str:
        return "threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);"

    def builtin(self, kind: str, dim: int) -> str:
        a = _AXES[dim]
        if kind == "num_groups":
            return f"(((long)dc_gsz.{a} + (long)dc_lsz.{a} - 1) / (long)dc_lsz.{a})"
        src = {"global_id": "dc_gid", "local_id": "dc_lid", "group_id": "dc_grp", "global_size": "dc_gsz",
               "local_size": "dc_lsz"}[kind]
        return f"((long){src}.{a})"

    def report_helper(self) -> str:
        self.need("dc_report", (
            "static inline void dc_report(device long* dbg, long id, long flat, long line) {\n"
            "  int expected = 0;\n"
            "  device atomic_int* flag = (device atomic_int*)dbg;\n"
            "  while (!atomic_compare_exchange_weak_explicit(flag, &expected, 1, memory_order_relaxed,\n"
            "                                                memory_order_relaxed)) {\n"
            "    if (expected != 0) return;\n"
            "  }\n"
            "  dbg[1] = id; dbg[2] = flat; dbg[3] = line;\n}"))
        return "dc_report"

    def atomic_helper(self, op: str, t: ScalarType, space: str) -> str:
        if t in (INT64, UINT64, FLOAT64):
            raise self.type_error(self.current, f"atomic_{op} on {t} is not available on Metal (32-bit "
                                               "atomics only)")
        sp = _SPACE[space]
        T = _TYPES[t]
        name = f"dc_atomic_{op}_{SUFFIX[t]}_{space[0]}"
        extra = f", {T} cmp" if op == "cas" else ""
        head = f"static inline {T} {name}({sp} {T}* p, long k, {T} v{extra}) {{\n  if (k < 0) return 0;\n"
        mo = "memory_order_relaxed"
        if t in (INT32, UINT32):
            at = f"{sp} atomic_{T}"
            q = f"({at}*)(p + k)"
            if op == "cas":
                body = (f"  {T} expected = cmp;\n"
                        f"  while (!atomic_compare_exchange_weak_explicit({q}, &expected, v, {mo}, {mo})) {{\n"
                        f"    if (expected != cmp) break;\n"
                        f"  }}\n  return expected;\n")
            else:
                fn = {"add": "atomic_fetch_add_explicit", "sub": "atomic_fetch_sub_explicit",
                      "min": "atomic_fetch_min_explicit", "max": "atomic_fetch_max_explicit",
                      "exchange": "atomic_exchange_explicit"}[op]
                body = f"  return {fn}({q}, v, {mo});\n"
        else:
            q = f"({sp} atomic_uint*)(p + k)"
            if op == "exchange":
                body = f"  return as_type<float>(atomic_exchange_explicit({q}, as_type<uint>(v), {mo}));\n"
            elif op == "cas":
                body = (f"  uint expected = as_type<uint>(cmp);\n"
                        f"  while (!atomic_compare_exchange_weak_explicit({q}, &expected, as_type<uint>(v), "
                        f"{mo}, {mo})) {{\n"
                        f"    if (expected != as_type<uint>(cmp)) break;\n"
                        f"  }}\n  return as_type<float>(expected);\n")
            else:
                want = {"add": "cur + v", "sub": "cur - v", "min": "(v < cur) ? v : cur",
                        "max": "(v > cur) ? v : cur"}[op]
                body = (f"  {sp} atomic_uint* q = {q};\n"
                        f"  uint old = atomic_load_explicit(q, {mo});\n"
                        f"  for (;;) {{\n"
                        f"    float cur = as_type<float>(old);\n"
                        f"    float want = {want};\n"
                        f"    if (atomic_compare_exchange_weak_explicit(q, &old, as_type<uint>(want), {mo}, {mo}))"
                        f" return cur;\n"
                        f"  }}\n")
        self.need(name, head + body + "}")
        return name

    def header(self) -> list[str]:
        return [f"// Generated by dotcompute from {self.filename}: kernel {self.kernel.name} for Metal.",
                "#include <metal_stdlib>", "using namespace metal;", ""]

    def kernel_signature(self) -> str:
        params: list[str] = []
        i = 0
        for p in self.kernel.params:
            if isinstance(p.type, BufferType):
                self.note_type(p.type.dtype)
                const = "const " if not p.written else ""
                params.append(f"{const}device {_STORAGE[p.type.dtype]}* {p.name} [[buffer({i})]]")
                i += 1
                for d in range(p.type.ndim):
                    params.append(f"constant long& {self.extent(p.name, d)} [[buffer({i})]]")
                    i += 1
            else:
                self.note_type(p.type)
                params.append(f"constant {_STORAGE[p.type]}& {p.name} [[buffer({i})]]")
                i += 1
        if self.debug:
            params.append(f"device long* {self.debug_param()} [[buffer({i})]]")
        params += ["uint3 dc_gid [[thread_position_in_grid]]",
                   "uint3 dc_lid [[thread_position_in_threadgroup]]",
                   "uint3 dc_grp [[threadgroup_position_in_grid]]",
                   "uint3 dc_gsz [[threads_per_grid]]",
                   "uint3 dc_lsz [[threads_per_threadgroup]]"]
        if self.kernel.uses_subgroups:
            from .subgroups import metal_params

            params += metal_params()
        sep = ",\n    "
        return f"kernel void {self.kernel.name}(\n    {sep.join(params)})"

    def shared_decl(self, s: ir.SharedDecl) -> str:
        return f"threadgroup {_STORAGE[s.dtype]} {s.name}[{s.type.size}];"
