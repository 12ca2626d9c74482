"""Building one IR module: the kernel plus every device function specialisation it calls."""

from __future__ import annotations

import ast
from typing import Any

from .. import ir
from ..diagnostics import Reporter
from ..types import BufferType, ScalarType
from .aggregates import AggregateLowerer as FunctionLowerer  # vectors, matrices and structs too
from .names import NameAllocator, short_hash
from .resolve import Capture
from .signature import ParamDecl, param_decls, return_spec
from .source import ParsedFunction
from .subgroups import finish_kernel as finish_subgroups


def type_code(t: ScalarType | BufferType) -> str:
    if isinstance(t, BufferType):
        if t.elem is not None:
            return f"{t.elem.name}[{t.ndim}]"
        return f"{t.dtype.name}[{t.ndim}]"
    return t.name


def signature_text(types: list[ScalarType | BufferType] | tuple[ScalarType | BufferType, ...]) -> str:
    return ",".join(type_code(t) for t in types)


class ModuleBuilder:
    def __init__(self, debug: bool) -> None:
        self.debug = debug
        self.functions: list[ir.Function] = []
        self.captures: list[Capture] = []
        self.debug_names: dict[int, str] = {}
        self.debug_files: dict[int, str] = {}  # which file a debug id's accesses are in
        self._specs: dict[tuple[int, tuple], ir.Function] = {}
        self._in_progress: list[Any] = []
        self._names = NameAllocator()
        self._next_debug_id = 1000
        self._atomics: set[str] = set()

    # ----------------------------------------------------------------------------- device functions

    def param_decls(self, fn: Any, node: ast.AST, rep: Reporter) -> list[ParamDecl]:
        return param_decls(fn.parsed(), self.captures, device=True)

    def function_uses_atomics(self, f: ir.Function) -> bool:
        return f.name in self._atomics

    def function_for(self, fn: Any, types: tuple, call: ast.AST, rep: Reporter) -> ir.Function:
        if any(fn is f for f in self._in_progress):
            chain = " -> ".join(f.__name__ for f in [*self._in_progress, fn])
            raise rep.syntax(call, f"recursion is not supported in kernels ({chain})",
                             hint="rewrite the recursion as a loop")
        key = (id(fn), types)
        f = self._specs.get(key)
        if f is not None:
            return f
        parsed: ParsedFunction = fn.parsed()
        decls = param_decls(parsed, self.captures, device=True)
        rspec = return_spec(parsed, self.captures)
        name = self._names.fresh(f"{parsed.name}_{short_hash(parsed.name + ':' + signature_text(types), 6)}")
        debug_ids = []
        for d, t in zip(decls, types, strict=False):
            if isinstance(t, BufferType):
                did = self._next_debug_id
                self._next_debug_id += 1
                self.debug_names[did] = f"parameter {d.name!r} of device function {parsed.name!r}"
                self.debug_files[did] = parsed.info.filename
                debug_ids.append(did)
            else:
                debug_ids.append(-1)
        self._in_progress.append(fn)
        try:
            lowerer = FunctionLowerer(parsed, self, list(types), is_kernel=False, ir_name=name,
                                      debug_ids=debug_ids, return_spec=rspec)
            f = lowerer.lower()
            if lowerer.narrowable():  # once more, storing acc = 0.0 accumulators as float32
                lowerer = FunctionLowerer(parsed, self, list(types), is_kernel=False, ir_name=name,
                                          debug_ids=debug_ids, return_spec=rspec, retype=lowerer.narrowable())
                f = lowerer.lower()
        finally:
            self._in_progress.pop()
        if lowerer.uses_atomics:
            self._atomics.add(f.name)
        self._specs[key] = f
        self.functions.append(f)
        return f

    # ----------------------------------------------------------------------------- kernel

    def kernel(self, parsed: ParsedFunction, types: list[ScalarType | BufferType], entry: str) -> ir.Module:
        self._names.reserve(entry)
        for i, (a, t) in enumerate(zip(parsed.tree.args.args, types, strict=False)):
            if isinstance(t, BufferType):
                self.debug_names[i] = f"buffer {a.arg!r}"
                self.debug_files[i] = parsed.info.filename
        lowerer = FunctionLowerer(parsed, self, types, is_kernel=True, ir_name=entry)
        k = lowerer.lower()
        if lowerer.narrowable():  # once more, storing acc = 0.0 accumulators as float32
            lowerer = FunctionLowerer(parsed, self, types, is_kernel=True, ir_name=entry, retype=lowerer.narrowable())
            k = lowerer.lower()
        assert isinstance(k, ir.Kernel)
        finish_subgroups(k, parsed.info)
        k.debug = self.debug
        k.signature = signature_text(types)
        k.uses_atomics = k.uses_atomics or lowerer.uses_atomics
        # device functions were lowered (and appended) before their callers finished: callees first
        return ir.Module(kernel=k, functions=list(self.functions), debug_names=dict(self.debug_names), loc=k.loc)


def build_module(parsed: ParsedFunction, types: list[ScalarType | BufferType], entry: str,
                 debug: bool) -> tuple[ir.Module, list[Capture], dict[int, str]]:
    """Lower a kernel for one specialisation; returns the module, the free names it read, and the
    file each debug id's accesses are in."""
    b = ModuleBuilder(debug)
    m = b.kernel(parsed, types, entry)
    return m, b.captures, b.debug_files


__all__ = ["ModuleBuilder", "build_module", "signature_text", "type_code"]
