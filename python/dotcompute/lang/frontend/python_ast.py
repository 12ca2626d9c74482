"""Python's ``ast.parse`` and ``compile`` of a syntax tree, safe to call from several threads.

CPython 3.11 keeps the recursion counter of its tree conversion (C tree <-> ``ast`` objects) in
state shared by every thread (python/cpython#106905, fixed in later releases). A conversion can
pause for another thread whenever the garbage collector runs Python code (a finalizer), so two
threads building kernels at once -- the first call of ``dc.sum`` from four threads -- could fail
with ``SystemError: AST constructor recursion depth mismatch``. Every conversion the package does
goes through this one lock. It is reentrant: a finalizer run in the middle of a conversion may
build a kernel itself.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType
from typing import Any

_CONVERSION = threading.RLock()


def parse(text: str, filename: str = "<unknown>", mode: str = "exec") -> Any:
    """``ast.parse`` under the package's conversion lock."""
    with _CONVERSION:
        return ast.parse(text, filename=filename, mode=mode)


def compile_tree(tree: ast.AST, filename: str, mode: str, flags: int = 0, dont_inherit: bool = False) -> CodeType:
    """``compile`` of an ``ast`` tree under the package's conversion lock."""
    with _CONVERSION:
        return compile(tree, filename, mode, flags=flags, dont_inherit=dont_inherit)
