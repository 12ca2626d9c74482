"""Pickling ``@dc.kernel`` / ``@dc.func`` objects by value.

A kernel defined in a script's ``__main__``, a notebook or a test module cannot be pickled by
reference: the process that unpickles it (a Dask worker) cannot import that module. So a kernel
travels as what the compiler needs to build it again: its source lines (with their original file
name and line numbers, so errors on the worker still point at the user's line), the values of the
free names it reads (module-level and closure constants, device functions it calls -- themselves by
value -- and modules by name), and its decorator options.

Unpickling in a process that has already rebuilt the same payload returns the same object, so its
specialisations, compiled kernels and launch plans are reused: a worker compiles a kernel once per
process, however many tasks carry it.

This module does not import the kernel classes (``kernel.py`` imports it): the class to rebuild is
passed in by the object's ``__reduce__`` and pickled by reference.
"""

from __future__ import annotations
import __future__

import ast
import hashlib
import importlib
import linecache
import pickle
import textwrap
import threading
import types
from dataclasses import dataclass
from typing import Any

from .frontend import python_ast
from .frontend.source import ANNOTATION_SCOPE_ATTR

# Annotations stay unevaluated when the function is rebuilt: the frontend reads them from the AST,
# and evaluating them eagerly could fail on names only the annotations use.
_ANNOTATIONS_FLAG = __future__.annotations.compiler_flag

_lock = threading.RLock()  # re-entered: a payload holds the payloads of the device functions it calls
_rebuilt: dict[bytes, Any] = {}  # payload digest -> the object rebuilt from it in this process
_MAX_REBUILT = 1024


@dataclass(frozen=True)
class ModuleRef:
    """A free name bound to a module: pickled as the module's name, imported again on load."""

    name: str


@dataclass(frozen=True)
class SelfRef:
    """A free name bound to the object being pickled itself."""


def reduce_by_value(obj: Any, options: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
    """``__reduce__`` for a kernel or device function ``obj``: rebuilt by ``cls(pyfunc, **options)``."""
    parsed = obj.parsed()
    tree = parsed.tree
    info = parsed.info
    first = info.line_offset + tree.lineno  # absolute line of `def` (decorators are left out)
    last = info.line_offset + (tree.end_lineno or tree.lineno)
    file_lines = list(info.file_lines)
    if len(file_lines) >= last:
        lines = file_lines[first - 1:last]
    else:  # file_lines are the function's own lines (the file itself was not in linecache)
        lines = file_lines[tree.lineno - 1:tree.end_lineno]
    namespace = {}
    for name in free_names(tree):
        if name in parsed.closure:
            value = parsed.closure[name]
        elif name in parsed.globals:
            value = parsed.globals[name]
        else:
            continue  # a Python builtin (or undefined: the compiler reports it where it is used)
        namespace[name] = encode_value(obj, name, value)
    state = {
        "name": tree.name,
        "qualname": getattr(obj, "__qualname__", tree.name),
        "module": getattr(obj, "__module__", None),
        "filename": info.filename,
        "first_line": first,
        "lines": lines,
        "namespace": namespace,
        "options": options,
    }
    # What the annotations meant where the def ran (a factory's local dtype, used only in an
    # annotation, is no free name the namespace above can carry): the evaluated objects, and for
    # string annotations the def-time values of their names (frontend/source.py).
    pyfunc = getattr(obj, "pyfunc", None)
    evaluated = getattr(pyfunc, "__annotations__", None)
    if isinstance(evaluated, dict):
        objects = {k: v for k, v in evaluated.items() if not isinstance(v, str)}
        if objects:
            state["annotations"] = objects
    scope = getattr(pyfunc, ANNOTATION_SCOPE_ATTR, None)
    if scope:
        state["annotation_scope"] = dict(scope)
    return rebuild, (type(obj), dumps(obj, state))


def free_names(tree: ast.FunctionDef) -> list[str]:
    """Names the function reads that it neither takes as parameters nor assigns (decorators excluded)."""
    bound = {a.arg for a in tree.args.args + tree.args.kwonlyargs + tree.args.posonlyargs}
    loads: list[str] = []
    nodes: list[ast.AST] = [tree.args, *tree.body]
    if tree.returns is not None:
        nodes.append(tree.returns)
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    bound.add(node.id)
                elif node.id not in loads:
                    loads.append(node.id)
    return [n for n in loads if n not in bound]


def encode_value(obj: Any, name: str, value: Any) -> Any:
    if value is obj:
        return SelfRef()
    if isinstance(value, types.ModuleType):
        if value.__name__ == "__main__":
            raise pickle.PicklingError(f"cannot pickle {obj!r}: the free name {name!r} is the __main__ module, "
                                       f"which another process cannot import; use the names it defines directly")
        return ModuleRef(value.__name__)
    return value


def dumps(obj: Any, state: dict[str, Any]) -> bytes:
    """``state`` as bytes; a value plain pickle refuses is tried with cloudpickle (a Dask dependency,
    which pickles classes and functions from ``__main__`` by value), then named in the error."""
    try:
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as plain_error:  # noqa: BLE001 -- any failure: retry, then report which name
        try:
            import cloudpickle
        except ImportError:
            cloudpickle = None
        if cloudpickle is not None:
            try:
                return cloudpickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001
                pass
        for name, value in state["namespace"].items():
            try:
                pickle.dumps(value)
            except Exception as e:  # noqa: BLE001
                raise pickle.PicklingError(f"cannot pickle {obj!r} by value: its free name {name!r} refers to "
                                           f"a {type(value).__name__} that cannot be pickled ({e})") from None
        raise pickle.PicklingError(f"cannot pickle {obj!r} by value: {plain_error}") from None


def rebuild(cls: type, payload: bytes) -> Any:
    """The object for ``payload``: the one already rebuilt in this process, or a new one."""
    digest = hashlib.sha256(f"{cls.__module__}.{cls.__qualname__}\0".encode() + payload).digest()
    hit = _rebuilt.get(digest)
    if hit is not None:
        return hit
    with _lock:
        hit = _rebuilt.get(digest)
        if hit is not None:
            return hit
        state = pickle.loads(payload)
        namespace: dict[str, Any] = {"__name__": state["module"] or "__dotcompute_pickled__"}
        self_names = []
        for name, value in state["namespace"].items():
            if isinstance(value, ModuleRef):
                value = importlib.import_module(value.name)
            elif isinstance(value, SelfRef):
                self_names.append(name)
                continue
            namespace[name] = value
        pyfunc = make_function(state, namespace, digest.hex()[:10])
        obj = cls(pyfunc, **state["options"])
        for name in self_names:
            namespace[name] = obj
        if len(_rebuilt) >= _MAX_REBUILT:
            _rebuilt.pop(next(iter(_rebuilt)))  # the oldest: a long-lived worker stays bounded
        _rebuilt[digest] = obj
        return obj


def make_function(state: dict[str, Any], namespace: dict[str, Any], tag: str) -> Any:
    """Compile the pickled source into a function whose globals are ``namespace``.

    The code keeps the original line numbers. Its file name is the original one when this process
    sees the same lines there (the same machine), otherwise a distinct name whose lines are put into
    ``linecache`` -- the frontend reads a function's source through linecache.
    """
    lines: list[str] = state["lines"]
    first: int = state["first_line"]
    filename: str = state["filename"]
    if linecache.getlines(filename)[first - 1:first - 1 + len(lines)] != lines:
        filename = f"{filename} (pickled {tag})"
        padded = ["\n"] * (first - 1) + lines
        linecache.cache[filename] = (sum(map(len, padded)), None, padded, filename)
    module = python_ast.parse(textwrap.dedent("".join(lines)))
    fdef = module.body[0]
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != state["name"]:
        raise pickle.UnpicklingError(f"pickled source of {state['name']!r} is not its function definition")
    fdef.decorator_list = []  # the object is rebuilt from the class directly
    ast.increment_lineno(module, first - 1)
    code = python_ast.compile_tree(module, filename, "exec", flags=_ANNOTATIONS_FLAG, dont_inherit=True)
    defined: dict[str, Any] = {}
    exec(code, namespace, defined)  # noqa: S102 -- the def statement only; decorators were removed
    fn = defined[state["name"]]
    if state.get("annotations"):
        fn.__annotations__.update(state["annotations"])
    if state.get("annotation_scope"):
        setattr(fn, ANNOTATION_SCOPE_ATTR, state["annotation_scope"])
    fn.__qualname__ = state["qualname"]
    if state["module"]:
        fn.__module__ = state["module"]
    return fn


__all__ = ["reduce_by_value", "rebuild", "ModuleRef", "SelfRef", "free_names"]
