"""OpenCL C 1.2.

Extensions are enabled only when used: ``cl_khr_fp64`` for float64,
``cl_khr_int64_base_atomics`` for 64-bit atomics (``cl_khr_int64_extended_atomics``
for their min/max); ``EmittedSource.features`` names them so the backend can
refuse a device without them before launching. OpenCL C forbids ``bool`` in
kernel arguments and in global memory, so bool buffers and scalars travel as
``uchar`` (one byte, as numpy stores them) and are converted on access.
Float atomics other than exchange are compare-and-swap loops on the bits.

float16 without ``cl_khr_fp16`` (PoCL on a CPU): a ``half`` may only be
pointed at, so buffers are ``__global half*`` read and written with
``vload_half``/``vstore_half``, values are ``float`` (every result rounded to
half, as numpy rounds), a float16 scalar argument travels as its ``ushort``
bits and ``dc.shared`` arrays of float16 hold floats.
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

_TYPES = {BOOL: "bool", INT8: "char", INT16: "short", INT32: "int", INT64: "long", UINT8: "uchar", UINT16: "ushort",
          UINT32: "uint", UINT64: "ulong", FLOAT16: "float", FLOAT32: "float", FLOAT64: "double",
          COMPLEX64: "float2", COMPLEX128: "double2"}
_SPACE = {"global": "__global", "shared": "__local"}


class OpenCLPrinter(GpuPrinter):
    backend = "opencl"
    ext = "cl"
    global_space = "__global"
    shared_space = "__local"
    restrict = "restrict"
    ll = "L"

    def tname(self, t: ScalarType) -> str:
        return _TYPES[t]

    def storage(self, t: ScalarType) -> str:
        return {BOOL: "uchar", FLOAT16: "half"}.get(t, _TYPES[t])

    def complex_decl(self, t: ScalarType) -> str:
        s, r = ("c64", "float") if t == COMPLEX64 else ("c128", "double")
        return f"static inline {r}2 dc_mk_{s}({r} re, {r} im) {{ return ({r}2)(re, im); }}"

    def f16_round_fn(self) -> str:
        self.need("dc_rnd_f16", "static inline float dc_rnd_f16(float x) {\n"
                                "  ushort b; vstore_half(x, 0, (half*)&b); return vload_half(0, (const half*)&b);\n}")
        return "dc_rnd_f16"

    def f16_from_f64(self, v: str) -> str:
        # vstore_half's double overload rounds directly (cl_khr_fp64 is on: the value is a double)
        self.need("dc_rnd_f16_d", "static inline float dc_rnd_f16_d(double x) {\n"
                                  "  ushort b; vstore_half(x, 0, (half*)&b); return vload_half(0, (const half*)&b);\n}")
        return f"dc_rnd_f16_d({v})"

    def e_BufferLoad(self, e: ir.BufferLoad) -> str:
        ref = e.buffer
        if ref.dtype != FLOAT16 or ref.space != "global":
            return super().e_BufferLoad(e)
        flat = self.checked_index(ref, [self.expr(i) for i in e.indices], e)
        if self.debug:
            self.need("dc_ld_half", "static inline float dc_ld_half(__global const half* p, long k) "
                                    "{ return k < 0 ? 0.0f : vload_half(k, p); }")
            return f"dc_ld_half({self.buffer_ptr(ref)}, {flat})"
        return f"vload_half({flat}, {self.buffer_ptr(ref)})"

    def s_BufferStore(self, s: ir.BufferStore) -> None:
        ref = s.buffer
        if ref.dtype != FLOAT16 or ref.space != "global":
            return super().s_BufferStore(s)
        idx = [self.expr(i) for i in s.indices]
        value = self.expr(s.value)
        if self.debug:
            flat = self.checked_index(ref, idx, s)
            self.emit(f"{{ const long dc_k = {flat}; if (dc_k >= 0) vstore_half({value}, dc_k, {ref.name}); }}")
        else:
            self.emit(f"vstore_half({value}, {self.flat_index(ref, idx)}, {ref.name});")
        return None

    def from_storage(self, raw: str, t: ScalarType) -> str:
        return f"({raw} != 0)" if t == BOOL else raw

    def to_storage(self, value: str, t: ScalarType) -> str:
        return f"(uchar)({value})" if t == BOOL else value

    def helper_style(self) -> HelperStyle:
        math = {(f, t): f for f in ("fmod", "floor", "copysign") for t in (FLOAT32, FLOAT64)}
        return HelperStyle("static inline", _TYPES, "ulong", math)

    def math_fn(self, name: str, t: ScalarType) -> str:
        self.note_type(t)
        return "rint" if name == "round" else name

    def bitcast(self, value: str, src: ScalarType, dst: ScalarType) -> str:
        return f"as_{_TYPES[dst]}({value})"  # OpenCL C's as_uint, as_float, as_long, as_double, ...

    def inf(self, t: ScalarType) -> str:
        return "INFINITY" if t == FLOAT32 else "((double)INFINITY)"

    def nan(self, t: ScalarType) -> str:
        return "NAN" if t == FLOAT32 else "((double)NAN)"

    def barrier(self) -> str:
        return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"

    def builtin(self, kind: str, dim: int) -> str:
        if kind == "global_id":
            return self.global_id_name(dim)
        if kind == "global_size":
            return f"dc_global_size{dim}"
        fn = {"local_id": "get_local_id", "group_id": "get_group_id", "local_size": "get_local_size",
              "num_groups": "get_num_groups"}[kind]
        return f"((long){fn}({self.hw[dim]}))"

    def id_decls(self) -> list[str]:
        return [f"const long dc_gid{d} = (long)get_global_id({self.hw[d]});" for d in range(3)
                if f"gid{d}" in self.used_ids]

    def report_helper(self) -> str:
        self.need("dc_report", (
            "static inline void dc_report(__global long* dbg, long id, long flat, long line) {\n"
            "  // the flag's low word: 32-bit atomics are core OpenCL 1.2, 64-bit ones an extension\n"
            "  if (atomic_cmpxchg((volatile __global int*)dbg, 0, 1) == 0) {\n"
            "    dbg[1] = id; dbg[2] = flat; dbg[3] = line;\n"
            "  }\n}"))
        return "dc_report"

    def atomic_helper(self, op: str, t: ScalarType, space: str) -> str:
        sp = _SPACE[space]
        T = _TYPES[t]
        name = f"dc_atomic_{op}_{SUFFIX[t]}_{space[0]}"
        extra = f", {T} cmp" if op == "cas" else ""
        head = f"static inline {T} {name}({sp} {T}* p, long k, {T} v{extra}) {{\n  if (k < 0) return 0;\n"
        if t in (INT32, UINT32) or (t == FLOAT32 and op == "exchange"):
            fn = {"add": "atomic_add", "sub": "atomic_sub", "min": "atomic_min", "max": "atomic_max",
                  "exchange": "atomic_xchg", "cas": "atomic_cmpxchg"}[op]
            args = "cmp, v" if op == "cas" else "v"
            body = f"  return {fn}((volatile {sp} {T}*)(p + k), {args});\n"
        elif t in (INT64, UINT64):
            # cl_khr_int64_base/extended_atomics define atom_* for both long and ulong
            self.features.add("int64_atomics")
            if op in ("min", "max"):
                self.features.add("int64_extended_atomics")
            fn = {"add": "atom_add", "sub": "atom_sub", "min": "atom_min", "max": "atom_max",
                  "exchange": "atom_xchg", "cas": "atom_cmpxchg"}[op]
            args = "cmp, v" if op == "cas" else "v"
            lt = "long" if t == INT64 else "ulong"
            body = f"  return {fn}((volatile {sp} {lt}*)(p + k), {args});\n"
        else:
            if t == FLOAT32:
                bits, as_bits, as_t, cas = "uint", "as_uint", "as_float", "atomic_cmpxchg"
            else:
                bits, as_bits, as_t, cas = "ulong", "as_ulong", "as_double", "atom_cmpxchg"
                self.features.add("int64_atomics")
            q = f"(volatile {sp} {bits}*)(p + k)"
            if op == "exchange":
                body = f"  return {as_t}(atom_xchg({q}, {as_bits}(v)));\n"
            elif op == "cas":
                body = f"  return {as_t}({cas}({q}, {as_bits}(cmp), {as_bits}(v)));\n"
            else:
                want = {"add": "cur + v", "sub": "cur - v", "min": "(v < cur) ? v : cur",
                        "max": "(v > cur) ? v : cur"}[op]
                body = (f"  volatile {sp} {bits}* q = {q};\n"
                        f"  {bits} old = *q;\n"
                        f"  for (;;) {{\n"
                        f"    {T} cur = {as_t}(old);\n"
                        f"    {T} want = {want};\n"
                        f"    {bits} prev = {cas}(q, old, {as_bits}(want));\n"
                        f"    if (prev == old) return cur;\n"
                        f"    old = prev;\n"
                        f"  }}\n")
        self.need(name, head + body + "}")
        return name

    def header(self) -> list[str]:
        out = [f"// Generated by dotcompute from {self.filename}: kernel {self.kernel.name} for OpenCL C 1.2."]
        # OpenCL C allows a*b+c to become one fma by default; numpy rounds the product first
        # (the kernel's contract=True / fastmath=True allow it: lang/compile_options.py)
        out.append(f"#pragma OPENCL FP_CONTRACT {'ON' if self.kernel.contract else 'OFF'}")
        if "fp64" in self.features:
            out.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        if "int64_atomics" in self.features:
            out.append("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable")
        if "int64_extended_atomics" in self.features:
            out.append("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable")
        return [*out, ""]

    def kernel_signature(self) -> str:
        params: list[str] = []
        for p in self.kernel.params:
            if not isinstance(p.type, BufferType) and p.type == BOOL:
                params.append(f"uchar dc_raw_{p.name}")
            elif not isinstance(p.type, BufferType) and p.type == FLOAT16:
                params.append(f"ushort dc_raw_{p.name}")
            else:
                params += self.param_decl(p, kernel=True)
        if self.debug:
            params.append(f"__global long* {self.debug_param()}")
        params += [f"long dc_global_size{d}" for d in range(3)]
        return f"__kernel void {self.kernel.name}({', '.join(params)})"

    def kernel_prologue(self) -> list[str]:
        out = []
        for p in self.kernel.params:
            if not isinstance(p.type, BufferType) and p.type == BOOL:
                out.append(f"const bool {p.name} = dc_raw_{p.name} != 0;")
            elif not isinstance(p.type, BufferType) and p.type == FLOAT16:
                out.append(f"const float {p.name} = vload_half(0, (const half*)&dc_raw_{p.name});")
        return out

    def shared_decl(self, s: ir.SharedDecl) -> str:
        st = "float" if s.dtype == FLOAT16 else self.storage(s.dtype)  # no half variables without fp16
        return f"__local {st} {s.name}[{s.type.size}];"
