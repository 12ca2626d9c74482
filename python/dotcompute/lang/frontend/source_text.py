"""Kernels and device functions given as source text (``dc.kernel(source=...)``), and the message
for functions whose source Python did not keep.

The frontend reads a function's source through ``linecache`` (see ``source.py``). A function
typed at a prompt that keeps no source (``python -c``, code piped on stdin, the REPL before 3.13,
``exec`` of a string nobody registered) has nothing there. ``dc.kernel(source=text)`` closes that
gap: the text is registered in ``linecache`` under a file name of its own -- the way IPython
registers its cells -- and its ``def`` is compiled from that name, so everything downstream (error
positions, ``#line`` directives, pickling by value) sees an ordinary file.
"""

from __future__ import annotations
import __future__

import ast
import hashlib
import linecache
import textwrap
from typing import Any

from ...errors import KernelSyntaxError
from . import python_ast

# Annotations stay unevaluated: the frontend reads them from the AST, and evaluating them when the
# def runs could fail on names that only the annotations use.
_ANNOTATIONS_FLAG = __future__.annotations.compiler_flag


def register_source(text: str, name: str) -> str:
    """Put ``text`` into linecache under a file name derived from its content; return the name."""
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    filename = f"<source of {name} {digest}>"
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    # mtime None: linecache.checkcache keeps the entry (it cannot be re-read from disk)
    linecache.cache[filename] = (len(text), None, lines, filename)
    return filename


def function_from_source(text: str, namespace: dict[str, Any], what: str) -> Any:
    """The Python function defined by ``text`` (one ``def``, decorators ignored), its free names
    resolving in ``namespace`` (a module's globals: later rebinding there is seen, as for a
    function defined in that module). ``what`` is "dc.kernel" or "dc.func", for messages."""
    if not isinstance(text, str):
        raise TypeError(f"{what}(source=...) takes the function's source as a str, not {type(text).__name__}")
    text = textwrap.dedent(text).lstrip("\n")
    provisional = register_source(text, "a function")
    try:
        module = python_ast.parse(text, filename=provisional)
    except SyntaxError as e:
        raise KernelSyntaxError(f"invalid Python in {what}(source=...): {e.msg}", filename=provisional,
                                lineno=e.lineno, offset=e.offset, text=e.text) from None
    defs = [n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    others = [n for n in module.body if n not in defs
              and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]  # a docstring or `...`
    lines = tuple(linecache.getlines(provisional))
    if len(defs) != 1 or others:
        where = others[0] if others else (defs[1] if len(defs) > 1 else None)
        found = ", ".join(d.name for d in defs) or "none"
        raise KernelSyntaxError(
            f"{what}(source=...) takes the text of exactly one function definition (functions found: {found})",
            filename=provisional, lineno=getattr(where, "lineno", 1), offset=getattr(where, "col_offset", 0) + 1,
            text=lines[where.lineno - 1] if where is not None and where.lineno <= len(lines) else None,
            hint="define each device function with its own dc.func(source=...), and put imports and constants "
                 "in the namespace the kernel is defined in")
    fdef = defs[0]
    # the final name carries the function's name, so error messages say which function they are about
    filename = register_source(text, fdef.name)
    del linecache.cache[provisional]
    fdef.decorator_list = []  # `@dc.kernel` copied along with the text is ignored: the caller wraps it
    code = python_ast.compile_tree(ast.Module(body=[fdef], type_ignores=[]), filename, "exec",
                                   flags=_ANNOTATIONS_FLAG, dont_inherit=True)
    defined: dict[str, Any] = {}
    exec(code, namespace, defined)  # noqa: S102 -- the def statement only, decorators removed
    fn = defined[fdef.name]
    module_name = namespace.get("__name__")
    if isinstance(module_name, str):
        fn.__module__ = module_name
    return fn


def missing_source_error(name: str, filename: str, lineno: int, reason: str) -> KernelSyntaxError:
    """Why the source of ``name`` (defined at ``filename``) cannot be read, and what to do."""
    if filename == "<string>":
        origin = "in a string passed to `python -c` or exec()/compile(), which keeps no source"
    elif filename == "<stdin>":
        origin = ("at an interactive prompt or in code piped on stdin, which keeps no source "
                  "(the REPL of Python 3.13 and later, IPython and Jupyter do keep it)")
    elif filename.startswith("<") and filename.endswith(">"):
        origin = (f"in code compiled under the name {filename} without registering its text in linecache "
                  f"(if you exec it yourself: linecache.cache[{filename!r}] = (len(text), None, "
                  f"text.splitlines(True), {filename!r}) before exec)")
    else:
        origin = f"in {filename}, which cannot be read ({reason})"
    # the fix is part of the message: an uncaught SyntaxError's traceback shows the message, not the hint
    return KernelSyntaxError(
        f"the source of {name!r} is not available: it was defined {origin}; pass its text to "
        "dc.kernel(source=...) (dc.func(source=...) for a device function) or write the function in a file "
        "and import it", filename=filename, lineno=lineno,
        hint=f"{name} = dc.kernel(source='''def {name}(...): ...''')")


__all__ = ["function_from_source", "register_source", "missing_source_error"]
