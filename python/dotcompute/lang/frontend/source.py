"""Getting a kernel's Python source and AST, with positions mapped back to the user's file."""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import sys
from dataclasses import dataclass
from typing import Any

from ...errors import KernelSyntaxError
from ..diagnostics import Reporter, SourceInfo
from . import python_ast
from .source_text import missing_source_error


@dataclass
class ParsedFunction:
    """One Python function's AST and the namespace its free names resolve in."""

    pyfunc: Any
    name: str
    tree: ast.FunctionDef
    info: SourceInfo
    reporter: Reporter
    globals: dict[str, Any]
    closure: dict[str, Any]


def _leading_ws(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _refresh_if_edited(filename: str) -> None:
    """Drop linecache's copy of ``filename`` when the file on disk has changed since it was read.

    linecache keeps a file's text from its first read: after the file is edited and its module
    reloaded (importlib.reload, IPython's autoreload) the cached text is the old one, and the kernel
    would silently compile the old body. Unlike linecache.checkcache this keeps the copy when the
    file is gone (a script a process worker rebuilt a pickled kernel from, then deleted) and never
    touches entries without an mtime (dc.kernel(source=...) texts, notebook cells)."""
    entry = linecache.cache.get(filename)
    if entry is None or len(entry) != 4 or entry[1] is None:
        return
    size, mtime, _, fullname = entry
    try:
        st = os.stat(fullname)
    except (OSError, ValueError):
        return
    if (st.st_size, st.st_mtime) != (size, mtime):
        linecache.checkcache(filename)


def _function_lines(code: Any, name: str) -> tuple[list[str], int] | None:
    """The function's lines straight from linecache, or None when unsure.

    inspect.getsourcelines tokenizes the file, which costs milliseconds on the first call in a
    process (compiling tokenize's regular expressions); the first launch of a cached kernel should
    cost less than that. The block is the ``def`` header plus every following line indented deeper
    (or blank, a comment, or a closing bracket); a block that does not parse back to a function of
    that name is left to inspect.
    """
    _refresh_if_edited(code.co_filename)
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno  # the first decorator's line
    if not lines or start > len(lines):
        return None
    base = _leading_ws(lines[start - 1])
    i = start - 1
    while i < len(lines) and not lines[i].lstrip().startswith(("def ", "async def ")):
        i += 1
    end = i + 1
    while end < len(lines):
        stripped = lines[end].strip()
        if stripped and _leading_ws(lines[end]) <= base and not stripped.startswith(("#", ")", "]", "}")):
            break
        end += 1
    block = lines[start - 1:end]
    try:
        tree = python_ast.parse("".join(ln[base:] if ln.strip() else "\n" for ln in block))
    except SyntaxError:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != name:
        return None
    return block, start


def parse_function(pyfunc: Any) -> ParsedFunction:
    """Parse ``pyfunc``'s source. Raises KernelSyntaxError when there is no usable source."""
    name = getattr(pyfunc, "__name__", repr(pyfunc))
    code = getattr(pyfunc, "__code__", None)
    filename = code.co_filename if code is not None else "<unknown>"
    if code is None:
        raise KernelSyntaxError(f"{name!r} is not a Python function; kernels are written as `def` functions",
                                filename=filename)
    if name == "<lambda>":
        raise KernelSyntaxError("a lambda cannot be a kernel or device function", filename=filename,
                                lineno=code.co_firstlineno, hint="write it as a `def` function")
    try:
        lines, start = _function_lines(code, name) or inspect.getsourcelines(pyfunc)
    except (OSError, TypeError) as e:
        raise missing_source_error(name, filename, code.co_firstlineno, str(e)) from None
    file_lines = tuple(linecache.getlines(filename)) or tuple(lines)
    indent = min((_leading_ws(ln) for ln in lines if ln.strip()), default=0)
    text = "".join(ln[indent:] if ln.strip() else "\n" for ln in lines)
    info = SourceInfo(filename=filename, line_offset=start - 1, col_offset=indent, file_lines=file_lines)
    reporter = Reporter(info)
    try:
        module = python_ast.parse(text)
    except SyntaxError as e:
        raise reporter.syntax(None, f"cannot parse the source of {name!r}: {e.msg}") from None
    tree = next((n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if tree is None:
        raise reporter.syntax(None, f"no function definition found in the source of {name!r}")
    if isinstance(tree, ast.AsyncFunctionDef):
        raise reporter.syntax(tree, "async functions cannot be kernels", hint="remove `async`")
    return ParsedFunction(pyfunc=pyfunc, name=name, tree=tree, info=info, reporter=reporter,
                          globals=getattr(pyfunc, "__globals__", {}), closure=closure_of(pyfunc))


def parse_tree(tree: ast.FunctionDef, filename: str, file_lines: tuple[str, ...], namespace: dict[str, Any],
               pyfunc: Any = None) -> ParsedFunction:
    """A ParsedFunction for a def found in a whole file's AST (``dotcompute check``)."""
    info = SourceInfo(filename=filename, line_offset=0, col_offset=0, file_lines=file_lines)
    return ParsedFunction(pyfunc=pyfunc, name=tree.name, tree=tree, info=info, reporter=Reporter(info),
                          globals=namespace, closure={} if pyfunc is None else closure_of(pyfunc))


def closure_of(pyfunc: Any) -> dict[str, Any]:
    """The closure variables of ``pyfunc`` that are bound (empty cells are left out)."""
    code = getattr(pyfunc, "__code__", None)
    cells = getattr(pyfunc, "__closure__", None) or ()
    out: dict[str, Any] = {}
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, cells, strict=False):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            continue
    return out


#: attribute on a decorated function: the def-time values of names its string annotations use
ANNOTATION_SCOPE_ATTR = "__dc_annotation_scope__"


def remember_annotation_scope(pyfunc: Any) -> None:
    """Keep the values that the names in ``pyfunc``'s string annotations had when the ``def`` ran.

    Under ``from __future__ import annotations`` the annotations are strings. In a factory (``def
    make(dt): @dc.kernel def k(a: "dc.Buffer[dt]")``) ``dt`` is a local of the factory that the
    kernel's body never uses, so it is neither a global nor a closure variable of the kernel and is
    gone by the time the kernel compiles. The decorator runs while that ``def``'s frame is alive (the
    frame whose code holds the function's code object), where the names can still be read (the
    localns typing.get_type_hints asks for). Only names the annotations mention are kept, and only
    from function scopes.
    """
    annotations = getattr(pyfunc, "__annotations__", None)
    if not isinstance(annotations, dict):
        return
    names: set[str] = set()
    for value in annotations.values():
        if isinstance(value, str):
            try:
                names.update(n.id for n in ast.walk(python_ast.parse(value, mode="eval")) if isinstance(n, ast.Name))
            except SyntaxError:
                continue  # reported with the annotation's line when the kernel compiles
    if not names:
        return
    # the frame whose code contains the function's code object is the one whose `def` made it
    code = getattr(pyfunc, "__code__", None)
    frame = sys._getframe(1)
    while frame is not None and not any(c is code for c in frame.f_code.co_consts):
        frame = frame.f_back
    if frame is None or frame.f_locals is frame.f_globals:
        return  # module level (or not found): the globals are the scope, looked up as usual
    local = frame.f_locals
    scope = {n: local[n] for n in names if n in local}
    if scope:
        try:
            setattr(pyfunc, ANNOTATION_SCOPE_ATTR, scope)
        except (AttributeError, TypeError):
            pass  # a callable that takes no attributes: the names resolve as before


__all__ = ["ParsedFunction", "parse_function", "parse_tree", "closure_of", "remember_annotation_scope",
           "ANNOTATION_SCOPE_ATTR"]
