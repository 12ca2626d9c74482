"""Compile-time resolution of free names: closure cells, module globals, Python builtins.

Whatever a free name refers to is fixed when the kernel is specialised. Numbers are
folded in as constants; the names and values read are recorded as *captures* so that the
kernel object can notice a changed module constant and build a new specialisation.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from dataclasses import dataclass
from typing import Any

from ...errors import KernelSyntaxError, KernelTypeError
from ..types import BufferAnnotation, ScalarType, scalar_type
from . import python_ast
from .source import ParsedFunction

MISSING = object()


@dataclass(frozen=True)
class Capture:
    """A free name read at compile time: where from (``"global"``/``"closure"``) and its value."""

    where: str
    name: str
    value: Any
    namespace: Any  # the globals dict (for "global") or the function (for "closure")


def lookup(parsed: ParsedFunction, name: str) -> tuple[Any, Capture | None]:
    """The object a free name refers to, and the capture to record (None for builtins)."""
    if name in parsed.closure:
        value = parsed.closure[name]
        return value, Capture("closure", name, value, parsed.pyfunc)
    if name in parsed.globals:
        value = parsed.globals[name]
        return value, Capture("global", name, value, parsed.globals)
    value = getattr(builtins, name, MISSING)
    return value, None


def capture_still_valid(c: Capture) -> bool:
    """Whether the name still refers to the same value (same object, or an equal number)."""
    if c.where == "global":
        now = c.namespace.get(c.name, MISSING)
    else:
        from .source import closure_of
        now = closure_of(c.namespace).get(c.name, MISSING)
    if now is c.value:
        return True
    if isinstance(now, (int, float, bool)) and isinstance(c.value, (int, float, bool)):
        return type(now) is type(c.value) and now == c.value
    return False


def is_buffer_class(obj: Any) -> bool:
    """The runtime's ``dc.Buffer`` class itself (a bare, fully generic annotation)."""
    return (isinstance(obj, type) and obj.__name__ == "Buffer"
            and getattr(obj, "__module__", "").startswith("dotcompute"))


def classify_annotation(obj: Any) -> ScalarType | BufferAnnotation | None | str:
    """A parameter annotation object as the language sees it; a str means "not understood"."""
    if obj is None or obj is inspect.Parameter.empty:
        return None
    if isinstance(obj, BufferAnnotation):
        return obj
    if is_buffer_class(obj):
        return BufferAnnotation(None, None)
    from ..vectypes import aggregate_type

    agg = aggregate_type(obj)
    if agg is not None:
        return agg  # type: ignore[return-value]
    t = scalar_type(obj)
    if t is not None:
        return t
    return f"{obj!r} is not a kernel type"


def static_eval(parsed: ParsedFunction, node: ast.expr, captures: list[Capture] | None = None) -> Any:
    """Evaluate an annotation-like expression (names, attributes, subscripts, constants, tuples)
    without running the kernel. Raises KernelTypeError when it cannot."""
    rep = parsed.reporter
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            try:
                inner = python_ast.parse(node.value, mode="eval").body
            except SyntaxError:
                raise rep.type(node, f"cannot parse the annotation {node.value!r}") from None
            ast.copy_location(inner, node)
            for sub in ast.walk(inner):
                sub.lineno, sub.col_offset = node.lineno, node.col_offset  # type: ignore[attr-defined]
            return static_eval(parsed, inner, captures)
        return node.value
    if isinstance(node, ast.Name):
        value, cap = lookup(parsed, node.id)
        if value is MISSING:
            raise rep.type(node, f"name {node.id!r} is not defined")
        if cap is not None and captures is not None:
            captures.append(cap)
        return value
    if isinstance(node, ast.Attribute):
        base = static_eval(parsed, node.value, captures)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise rep.type(node, f"{ast.unparse(node.value)} has no attribute {node.attr!r}") from None
    if isinstance(node, ast.Tuple):
        return tuple(static_eval(parsed, e, captures) for e in node.elts)
    if isinstance(node, ast.Subscript):
        base = static_eval(parsed, node.value, captures)
        index = static_eval(parsed, node.slice, captures)
        try:
            return base[index]
        except (KernelSyntaxError, KernelTypeError):
            raise
        except Exception as e:
            raise rep.type(node, f"invalid annotation {ast.unparse(node)}: {e}") from None
    if isinstance(node, ast.Call) and not node.keywords:
        from .. import vectypes

        fn = static_eval(parsed, node.func, captures)
        if fn is vectypes.vector or fn is vectypes.matrix:  # dc.vector(3, dc.int32) in an annotation
            try:
                return fn(*[static_eval(parsed, a, captures) for a in node.args])
            except (ValueError, TypeError) as e:
                raise rep.type(node, str(e)) from None
    raise rep.type(node, f"cannot evaluate {ast.unparse(node)} at compile time")


__all__ = ["MISSING", "Capture", "lookup", "capture_still_valid", "is_buffer_class", "classify_annotation",
           "static_eval"]
