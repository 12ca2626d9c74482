"""CUDA C++ for NVRTC: only built-in types and intrinsics, no ``#include`` -- except
``<cooperative_groups.h>`` in a kernel that calls ``dc.grid_barrier()`` (launched cooperatively).

Indexing is 64-bit throughout: global ids are computed as
``(long long)blockIdx.x * blockDim.x + threadIdx.x``, so a grid over more than
2^31 items and buffers of more than 2^31 elements index correctly; local ids
and sizes come from 32-bit registers and are widened once.

float16 is stored as its ``unsigned short`` bits (``__half`` needs
cuda_fp16.h) and computed in float, every result rounded to half as numpy
rounds (``dc_f2h``/``dc_h2f`` in helpers.py, integer code that also runs on
the simulator); a float16 scalar argument travels as its bits.
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
from .helpers import SUFFIX, HelperStyle, f16_bits_helpers, f64_to_f16_helper

_TYPES = {BOOL: "bool", INT8: "signed char", INT16: "short", INT32: "int", INT64: "long long",
          UINT8: "unsigned char", UINT16: "unsigned short", UINT32: "unsigned int", UINT64: "unsigned long long",
          FLOAT16: "float", FLOAT32: "float", FLOAT64: "double", COMPLEX64: "dc_c64", COMPLEX128: "dc_c128"}
_Q = "static __device__ __forceinline__"
_AXES = "xyz"


class CudaPrinter(GpuPrinter):
    backend = "cuda"
    ext = "cu"

    def tname(self, t: ScalarType) -> str:
        return _TYPES[t]

    def storage(self, t: ScalarType) -> str:
        return "unsigned short" if t == FLOAT16 else _TYPES[t]

    def complex_decl(self, t: ScalarType) -> str:
        from .cpu import _complex_struct  # the same struct: cuComplex's layout
        return _complex_struct(t, _Q)

    def f16_round_fn(self) -> str:
        self.need("dc_f16", f16_bits_helpers(_Q, "unsigned int", "unsigned short", "__float_as_uint",
                                             "__uint_as_float"))
        return "dc_rnd_f16"

    def f16_from_f64(self, v: str) -> str:
        self.f16_round_fn()
        self.need("dc_d2h", f64_to_f16_helper(_Q, "unsigned long long", "unsigned short", "__double_as_longlong"))
        return f"dc_rnd_f16_d({v})"

    def from_storage(self, raw: str, t: ScalarType) -> str:
        if t == FLOAT16:
            self.f16_round_fn()
            return f"dc_h2f({raw})"
        return raw

    def to_storage(self, value: str, t: ScalarType) -> str:
        if t == FLOAT16:
            self.f16_round_fn()
            return f"dc_f2h({value})"
        return value

    def kernel_prologue(self) -> list[str]:
        return [f"const float {p.name} = dc_h2f(dc_raw_{p.name});" for p in self.kernel.params
                if not isinstance(p.type, BufferType) and p.type == FLOAT16]

    def func_qualifier(self) -> str:
        return _Q

    def device_func_qualifier(self) -> str:
        return "static __device__"

    def helper_style(self) -> HelperStyle:
        math = {}
        for f in ("fmod", "floor", "copysign"):
            math[(f, FLOAT32)] = f + "f"
            math[(f, FLOAT64)] = f
        return HelperStyle(_Q, _TYPES, "unsigned long long", math)

    def math_fn(self, name: str, t: ScalarType) -> str:
        self.note_type(t)
        T = _TYPES[t]
        s = SUFFIX[t]
        f = "f" if t == FLOAT32 else ""
        if name in ("isnan", "isinf", "isfinite"):
            key = f"dc_{name}_{s}"
            test = {"isnan": "x != x", "isinf": f"fabs{f}(x) == {self.inf(t)}",
                    "isfinite": f"fabs{f}(x) < {self.inf(t)}"}[name]
            self.need(key, f"{_Q} bool {key}({T} x) {{ return {test}; }}")
            return key
        if name == "round":
            name = "rint"
        return name + f

    def bitcast(self, value: str, src: ScalarType, dst: ScalarType) -> str:
        # CUDA's reinterpreting intrinsics name the signed integer; an unsigned one is a plain cast of it
        if src.is_float:
            fn = {FLOAT32: "__float_as_int", FLOAT64: "__double_as_longlong"}[src]
            return f"(({_TYPES[dst]}){fn}({value}))"
        fn = {FLOAT32: "__int_as_float", FLOAT64: "__longlong_as_double"}[dst]
        signed = "int" if dst == FLOAT32 else "long long"
        return f"{fn}(({signed})({value}))"

    def inf(self, t: ScalarType) -> str:
        return "__int_as_float(0x7f800000)" if t == FLOAT32 else "__longlong_as_double(0x7ff0000000000000LL)"

    def nan(self, t: ScalarType) -> str:
        return "__int_as_float(0x7fc00000)" if t == FLOAT32 else "__longlong_as_double(0x7ff8000000000000LL)"

    def barrier(self) -> str:
        return "__syncthreads();"

    def grid_barrier(self, s: ir.Barrier) -> str:
        # cooperative_groups' grid sync: valid because kernels with it are launched with
        # cuLaunchCooperativeKernel (lang/launching.py), which keeps every block resident
        self.features.add("grid_barrier")
        self.need("dc_cg", "#include <cooperative_groups.h>\n")
        return "cooperative_groups::this_grid().sync();"

    def builtin(self, kind: str, dim: int) -> str:
        a = _AXES[self.hw[dim]]
        if kind == "global_id":
            return self.global_id_name(dim)
        if kind == "global_size":
            return f"dc_global_size{dim}"
        src = {"local_id": "threadIdx", "group_id": "blockIdx", "local_size": "blockDim",
               "num_groups": "gridDim"}[kind]
        return f"((long long){src}.{a})"

    def id_decls(self) -> list[str]:
        ax = [_AXES[h] for h in self.hw]
        return [f"const long long dc_gid{d} = (long long)blockIdx.{ax[d]} * blockDim.{ax[d]} + "
                f"threadIdx.{ax[d]};" for d in range(3) if f"gid{d}" in self.used_ids]

    def report_helper(self) -> str:
        self.need("dc_report", (
            "static __device__ void dc_report(long long* dbg, long long id, long long flat, long long line) {\n"
            "  if (atomicCAS((unsigned long long*)dbg, 0ull, 1ull) == 0ull) {\n"
            "    dbg[1] = id; dbg[2] = flat; dbg[3] = line;\n"
            "  }\n}"))
        return "dc_report"

    def atomic_helper(self, op: str, t: ScalarType, space: str) -> str:
        T = _TYPES[t]
        name = f"dc_atomic_{op}_{SUFFIX[t]}"
        extra = f", {T} cmp" if op == "cas" else ""
        head = f"{_Q} {T} {name}({T}* p, long long k, {T} v{extra}) {{\n  if (k < 0) return 0;\n"
        q = "p + k"
        ull = "unsigned long long"
        if t == UINT64 and op == "sub":
            # CUDA has atomicSub only for 32-bit ints: add the two's complement (wraps as uint64 does)
            body = f"  return atomicAdd({q}, 0ull - v);\n"
        elif t in (INT32, UINT32, UINT64) or (t.is_float and op in ("add", "exchange")) or (t == INT64 and op in (
                "min", "max")):
            fn = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax",
                  "exchange": "atomicExch", "cas": "atomicCAS"}[op]
            if t == FLOAT64 and op == "exchange":
                body = f"  return __longlong_as_double((long long)atomicExch(({ull}*)({q}), " \
                       f"({ull})__double_as_longlong(v)));\n"
            elif op == "cas":
                body = f"  return {fn}({q}, cmp, v);\n"
            else:
                body = f"  return {fn}({q}, v);\n"
        elif t.is_float and op == "sub":
            body = f"  return atomicAdd({q}, -v);\n"
        elif t == INT64:
            fn = {"add": "atomicAdd", "sub": "atomicAdd", "exchange": "atomicExch", "cas": "atomicCAS"}[op]
            v = f"0ull - ({ull})v" if op == "sub" else f"({ull})v"
            if op == "cas":
                body = f"  return (long long)atomicCAS(({ull}*)({q}), ({ull})cmp, ({ull})v);\n"
            else:
                body = f"  return (long long){fn}(({ull}*)({q}), {v});\n"
        else:
            # float min/max and cas: compare-and-swap on the bit pattern
            if t == FLOAT32:
                bits = "int"

                def to_bits(x: str) -> str:
                    return f"__float_as_int({x})"

                def from_bits(x: str) -> str:
                    return f"__int_as_float({x})"
            else:
                bits = ull

                def to_bits(x: str) -> str:
                    return f"({ull})__double_as_longlong({x})"

                def from_bits(x: str) -> str:
                    return f"__longlong_as_double((long long)({x}))"
            if op == "cas":
                swapped = f"atomicCAS(({bits}*)({q}), {to_bits('cmp')}, {to_bits('v')})"
                body = f"  return {from_bits(swapped)};\n"
            else:
                want = "(v < cur) ? v : cur" if op == "min" else "(v > cur) ? v : cur"
                body = (f"  {bits}* q = ({bits}*)({q});\n"
                        f"  {bits} old = *(volatile {bits}*)q;\n"
                        f"  for (;;) {{\n"
                        f"    {T} cur = {from_bits('old')};\n"
                        f"    {T} want = {want};\n"
                        f"    if ({to_bits('want')} == old) return cur;\n"
                        f"    {bits} prev = atomicCAS(q, old, {to_bits('want')});\n"
                        f"    if (prev == old) return cur;\n"
                        f"    old = prev;\n"
                        f"  }}\n")
        self.need(name, head + body + "}")
        return name

    def header(self) -> list[str]:
        return [f"// Generated by dotcompute from {self.filename}: kernel {self.kernel.name} for CUDA (NVRTC).",
                ""]

    def param_decl(self, p: ir.Param, kernel: bool) -> list[str]:
        return super().param_decl(p, kernel)

    def kernel_signature(self) -> str:
        params: list[str] = []
        for p in self.kernel.params:
            if not isinstance(p.type, BufferType) and p.type == FLOAT16:
                self.f16_round_fn()
                params.append(f"unsigned short dc_raw_{p.name}")
            else:
                params += self.param_decl(p, kernel=True)
        if self.debug:
            params.append(f"long long* {self.debug_param()}")
        params += [f"long long dc_global_size{d}" for d in range(3)]
        return f'extern "C" __global__ void {self.kernel.name}({", ".join(params)})'

    def shared_decl(self, s: ir.SharedDecl) -> str:
        return f"__shared__ {self.storage(s.dtype)} {s.name}[{s.type.size}];"
