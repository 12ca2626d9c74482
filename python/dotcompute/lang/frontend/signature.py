"""A kernel's or device function's parameters as the language sees them (from annotations)."""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import ir
from ..diagnostics import Reporter
from ..types import BufferAnnotation, BufferType, ScalarType
from .resolve import Capture, classify_annotation, static_eval
from .source import ANNOTATION_SCOPE_ATTR, ParsedFunction
from .typing_rules import strengthen


@dataclass
class ParamDecl:
    """One parameter: ``spec`` is a ScalarType, a BufferAnnotation (maybe generic) or None
    (unannotated: a scalar or a buffer, fixed by the argument)."""

    name: str
    spec: ScalarType | BufferAnnotation | None
    node: ast.arg
    #: a device function's default value for the parameter (a number), when has_default
    default: Any = None
    has_default: bool = False

    @property
    def generic(self) -> bool:
        return self.spec is None or (isinstance(self.spec, BufferAnnotation) and self.spec.generic)

    def buffer_type_for(self, ref: ir.BufferRef, rep: Reporter, node: ast.AST) -> BufferType:
        spec = self.spec
        if isinstance(spec, ScalarType):
            raise rep.type(node, f"parameter {self.name!r} is a {spec} number, but an array was passed")
        if isinstance(spec, BufferAnnotation):
            if spec.dtype is not None and spec.dtype != ref.dtype:
                raise rep.type(node, f"parameter {self.name!r} expects a buffer of {spec.dtype}, "
                                     f"got one of {ref.dtype}")
            if spec.ndim is not None and spec.ndim != ref.ndim:
                raise rep.type(node, f"parameter {self.name!r} expects a {spec.ndim}-d buffer, got a {ref.ndim}-d one")
        return BufferType(ref.dtype, ref.ndim)

    def scalar_type_for(self, e: ir.Expr, rep: Reporter, node: ast.AST) -> ScalarType:
        if isinstance(self.spec, BufferAnnotation):
            raise rep.type(node, f"parameter {self.name!r} expects a buffer, but a number was passed")
        if isinstance(self.spec, ScalarType):
            return self.spec
        return strengthen(e).type


def _annotation_object(parsed: ParsedFunction, key: str, node: ast.expr,
                       captures: list[Capture] | None) -> Any:
    """What an annotation means. Python evaluated it when the ``def`` ran, in the scope around the
    function; that object is the truth: a factory's local (``def make(dt): @dc.kernel def k(a:
    dc.Buffer[dt])``) is no free variable of the kernel, and a module-level loop variable has moved
    on by the time the kernel compiles. Only string annotations (``from __future__ import
    annotations``) are evaluated here, from the kernel's own namespace."""
    evaluated = getattr(parsed.pyfunc, "__annotations__", None)
    if isinstance(evaluated, dict) and key in evaluated and not isinstance(evaluated[key], str):
        return evaluated[key]
    scope = getattr(parsed.pyfunc, ANNOTATION_SCOPE_ATTR, None)
    if isinstance(scope, dict) and scope:
        # the enclosing function's locals at def time shadow the globals, as Python's scoping does;
        # those values are fixed, so nothing is recorded for re-checking at launch
        return static_eval(dataclasses.replace(parsed, closure={**parsed.closure, **scope}), node, None)
    return static_eval(parsed, node, captures)


def param_decls(parsed: ParsedFunction, captures: list[Capture] | None = None,
                device: bool = False) -> list[ParamDecl]:
    """The parameters of a kernel, or of a device function (``device``: trailing parameters may
    have default values, numbers, which a call may leave out as in Python)."""
    rep = parsed.reporter
    args = parsed.tree.args
    if args.vararg is not None:
        raise rep.syntax(args.vararg, "*args parameters are not supported in kernels")
    if args.kwarg is not None:
        raise rep.syntax(args.kwarg, "**kwargs parameters are not supported in kernels")
    if args.kwonlyargs:
        raise rep.syntax(args.kwonlyargs[0], "keyword-only parameters are not supported in kernels")
    defaults: tuple = ()
    if args.defaults:
        if not device:
            raise rep.syntax(args.defaults[0], "default parameter values are not supported in kernels",
                             hint="kernels take every argument at launch; device functions (@dc.func) may "
                                  "have defaults")
        # the values Python computed when the def ran (a name such as EPS is already looked up)
        defaults = tuple(getattr(parsed.pyfunc, "__defaults__", None) or ())
        if len(defaults) != len(args.defaults):  # no function object (dotcompute check): the literals
            defaults = tuple(d.value if isinstance(d, ast.Constant) else None for d in args.defaults)
        for value, node in zip(defaults, args.defaults, strict=True):
            if isinstance(value, str) or not isinstance(value, (bool, int, float, complex, np.generic)):
                raise rep.type(node, "default values of device function parameters must be numbers",
                               hint="pass other values as arguments")
    out = []
    seen = set()
    for a in [*args.posonlyargs, *args.args]:
        if a.arg in seen:
            raise rep.syntax(a, f"duplicate parameter {a.arg!r}")
        seen.add(a.arg)
        spec: Any = None
        if a.annotation is not None:
            obj = _annotation_object(parsed, a.arg, a.annotation, captures)
            spec = classify_annotation(obj)
            if isinstance(spec, str):
                raise rep.type(a.annotation, f"parameter {a.arg!r}: {spec}",
                               hint="annotate with dc.Buffer[dtype, ndim] or a scalar dtype such as dc.float32")
        out.append(ParamDecl(a.arg, spec, a))
    for decl, value in zip(out[len(out) - len(defaults):], defaults, strict=True):
        decl.default, decl.has_default = value, True
    return out


def return_spec(parsed: ParsedFunction, captures: list[Capture] | None = None) -> ScalarType | str | None:
    """The annotated return type, "void" for ``-> None``, None when unannotated."""
    node = parsed.tree.returns
    if node is None:
        return None
    if isinstance(node, ast.Constant) and node.value is None:
        return "void"
    obj = _annotation_object(parsed, "return", node, captures)
    if obj is None:
        return "void"
    spec = classify_annotation(obj)
    if not isinstance(spec, ScalarType):
        raise parsed.reporter.type(node, f"{parsed.name}() must return a scalar type, not {ast.unparse(node)}",
                                   hint="device functions return numbers; write arrays through buffer parameters")
    return spec


def return_spec_any(parsed: ParsedFunction, captures: list[Capture] | None = None) -> Any:
    """Like :func:`return_spec`, but a vector/matrix/struct annotation is returned as that type."""
    node = parsed.tree.returns
    if node is not None and not (isinstance(node, ast.Constant) and node.value is None):
        from ..vectypes import aggregate_type

        agg = aggregate_type(_annotation_object(parsed, "return", node, captures))
        if agg is not None:
            return agg
    return return_spec(parsed, captures)



@dataclass(frozen=True)
class LiteralArg:
    """A Python number passed for an unannotated device-function parameter (``smoothstep(-1.0, 1.0, v)``).

    In Python the parameter then holds a Python number, weak in promotion; so here the function is
    specialised for the value, which the parameter's name stands for as a literal inside the body
    (``x - e0`` stays float32 for a float32 ``x``, and no float64 parameter reaches Metal)."""

    key: str
    value: bool | int | float | complex = field(compare=False, hash=False)

    @staticmethod
    def of(value: bool | int | float | complex) -> LiteralArg:
        return LiteralArg(f"{type(value).__name__}:{value!r}", value)

    @property
    def name(self) -> str:  # the signature text's spelling (module.type_code)
        return f"literal({self.value!r})"


@dataclass(frozen=True)
class WeakScalar:
    """A Python number only known at run time (an id, a ``range()`` variable, ``len(a)``) passed for an
    unannotated device-function parameter: the parameter has ``type`` and is weak in promotion inside
    the function, as the Python int or float is (``f(x[i], i)`` with ``return v * k`` stays float32)."""

    type: ScalarType

    @property
    def name(self) -> str:  # the signature text's spelling (module.type_code)
        return f"weak {self.type.name}"

__all__ = ["LiteralArg", "WeakScalar", "ParamDecl", "param_decls", "return_spec", "return_spec_any"]
