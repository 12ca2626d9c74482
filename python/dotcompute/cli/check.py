"""``dotcompute check FILE...``: report every kernel's problems without running anything.

The file's AST is searched for functions decorated ``@dc.kernel`` / ``@dc.func`` (however the
module is imported: ``dc.kernel``, ``kernel``, ``dotcompute.kernel``, with or without
arguments). By default the file's top-level code does not run: names resolve against a
namespace built from the file's import statements, its constant assignments (numbers,
arithmetic on them, tuples of them, attribute chains such as ``math.pi``, calls of the language's
type constructors and numpy's scalar types), its field-only ``@dc.struct`` classes and its
top-level ``@dc.func``s. ``--import`` imports the module instead (under a private name, so
``if __name__ == "__main__":`` blocks do not run) so that every module-level value resolves as
at run time; decorating is lazy, so a broken kernel does not stop the import, and when the
import itself fails the static namespace is used. ``--no-import`` is the default and is still
accepted. Each function is checked on its own, so one broken kernel never hides another.
Exit status: 0 when clean, 1 when there are problems, 2 when a file cannot be read or parsed.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import io
import os
import sys
import tokenize
import traceback
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from typing import Any

from ..errors import KernelSyntaxError, KernelTypeError
from ..lang.frontend import python_ast


@dataclass
class Found:
    node: ast.FunctionDef
    kind: str  # "kernel" | "func"
    top_level: bool
    options: dict[str, Any] = field(default_factory=dict)


_PLACEHOLDERS = {"int": 1, "float": 1.0, "bool": True}


def enclosing_closure(tree: ast.Module, node: ast.FunctionDef) -> tuple[dict[str, Any], set[str]]:
    """For a def nested in functions: placeholder values for the enclosing functions' variables
    whose annotation says int/float/bool, and the names whose value is only known at run time."""
    parents: dict[int, ast.AST] = {}
    for p in ast.walk(tree):
        for c in ast.iter_child_nodes(p):
            parents[id(c)] = p
    known: dict[str, Any] = {}
    unknown: set[str] = set()
    cur = parents.get(id(node))
    while cur is not None:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = cur.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                ann = a.annotation
                name = ann.id if isinstance(ann, ast.Name) else None
                if name in _PLACEHOLDERS and a.arg not in known:
                    known[a.arg] = _PLACEHOLDERS[name]
                elif a.arg not in known:
                    unknown.add(a.arg)
            for n in ast.walk(cur):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in known:
                    unknown.add(n.id)
        cur = parents.get(id(cur))
    unknown -= set(known)
    return known, unknown


def free_names(node: ast.FunctionDef) -> set[str]:
    bound = {a.arg for a in [*node.args.posonlyargs, *node.args.args]}
    bound |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


@dataclass
class FileReport:
    path: str
    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unreadable: bool = False


def decorator_kind(dec: ast.expr) -> tuple[str | None, dict[str, Any]]:
    """("kernel" | "func" | None, literal keyword options) of one decorator expression."""
    options: dict[str, Any] = {}
    target = dec
    if isinstance(dec, ast.Call):
        target = dec.func
        for kw in dec.keywords:
            if kw.arg and isinstance(kw.value, ast.Constant):
                options[kw.arg] = kw.value.value
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else None
    if name in ("kernel", "func"):
        return name, options
    return None, options


def find_functions(tree: ast.Module) -> list[Found]:
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                kind, options = decorator_kind(dec)
                if kind is not None:
                    out.append(Found(node, kind, id(node) in top, options))  # type: ignore[arg-type]
                    break
    out.sort(key=lambda f: f.node.lineno)
    return out


def import_file(path: str) -> tuple[Any | None, str | None]:
    """Import the file as a fresh module; (module, None) or (None, why it failed)."""
    digest = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:10]
    name = f"_dotcompute_check_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None, "cannot be imported"
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        with redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    except BaseException as e:  # noqa: BLE001 -- any failure of the user's module top level
        sys.modules.pop(name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, f"{type(e).__name__}: {e}"
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    return module, None


_CONSTANT_NODES = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Name, ast.Attribute, ast.Tuple, ast.Load,
                   ast.unaryop, ast.operator)


def static_namespace(tree: ast.Module, filename: str) -> tuple[dict[str, Any], set[str]]:
    """The file's imports and constant assignments, evaluated alone (nothing else runs), and the
    names the file binds at top level by other code (their values are unknown without importing).

    Imports run only for modules already loaded or found outside the user's folders: the checked
    file's folder is never searched, nor is the current folder ('' on ``sys.path`` under
    ``python -m``), and a module found inside the file's folder by another path entry is not
    imported either. Importing a module beside the file would run the user's code, which the
    default check promises not to do. Names such an import would bind are left unknown (a kernel
    that uses one gets the hint to pass ``--import``)."""
    ns: dict[str, Any] = {"__name__": "_dotcompute_check_static", "__file__": filename}
    skipped: set[str] = set()
    folder = os.path.realpath(os.path.dirname(os.path.abspath(filename)))
    not_searched = {folder, os.path.realpath(os.getcwd())}
    saved_path = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") not in not_searched]
    try:
        _evaluate_statically(tree, filename, ns, skipped, {folder})
    finally:
        sys.path[:] = saved_path
    return ns, skipped - set(ns)


def _inside(path: str | None, folders: set[str]) -> bool:
    if not path:
        return False
    real = os.path.realpath(path)
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def _imports_only_installed_modules(node: ast.Import | ast.ImportFrom, user_folders: set[str]) -> bool:
    """Whether every module ``node`` imports is already loaded (importing it again runs nothing) or
    is found outside ``user_folders`` (found, not imported: ``find_spec`` of a top-level name runs
    none of its code)."""
    if isinstance(node, ast.ImportFrom):
        if node.level or not node.module:
            return False  # relative: a module of the user's own package
        tops = {node.module.split(".")[0]}
    else:
        tops = {alias.name.split(".")[0] for alias in node.names}
    for top in tops:
        if top in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return False
        if spec is None:
            return False
        if any(_inside(loc, user_folders) for loc in [spec.origin, *list(spec.submodule_search_locations or [])]):
            return False
    return True


def _pure_callee(func: ast.expr, ns: dict[str, Any]) -> bool:
    """Whether a call of ``func`` (resolved in the static namespace) only builds a value: the kernel
    language's type constructors and math (``dc.vector(3, dc.int32)``, ``dc.sqrt(2.0)``) and numpy's
    scalar types and dtypes (``np.float32(0.5)``). Anything else might do work, so it is not run."""
    if not all(isinstance(n, (ast.Name, ast.Attribute, ast.Load)) for n in ast.walk(func)):
        return False
    try:
        code = python_ast.compile_tree(ast.Expression(body=func), "<check>", "eval")
        callee = eval(code, ns)  # noqa: S307 -- a name chain
    except Exception:  # noqa: BLE001 -- unresolved: not pure as far as we know
        return False
    import numpy as np

    from ..lang import builtins as dcb

    if isinstance(callee, dcb.MathFunction) or callee is np.dtype:
        return True
    if isinstance(callee, type) and issubclass(callee, np.generic):
        return True
    module = getattr(callee, "__module__", "") or ""
    return module == "dotcompute.lang.vectypes" and callable(callee)


def _static_value(value: ast.expr, ns: dict[str, Any]) -> bool:
    """Numbers, names, arithmetic on them, tuples and subscripts of those, and pure calls."""
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            if not _pure_callee(n.func, ns):
                return False
        elif not isinstance(n, (*_CONSTANT_NODES, ast.Subscript, ast.Slice, ast.keyword)):
            return False
    return True


def _struct_class(node: ast.stmt) -> bool:
    """A ``@dc.struct`` class whose body only declares fields (so defining it runs nothing else)."""
    if not isinstance(node, ast.ClassDef) or node.bases or node.keywords:
        return False
    named = [d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else None
             for d in node.decorator_list]
    if named != ["struct"]:
        return False
    for s in node.body:
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is None:
            continue
        if isinstance(s, (ast.Pass, ast.Expr)) and (not isinstance(s, ast.Expr) or isinstance(s.value, ast.Constant)):
            continue
        return False
    return True


def _evaluate_statically(tree: ast.Module, filename: str, ns: dict[str, Any], skipped: set[str],
                         user_folders: set[str]) -> None:
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep = _imports_only_installed_modules(node, user_folders)
            if not keep:
                skipped |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
                continue
        else:
            keep = _struct_class(node)
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if value is not None:
            # constant tables such as weights, and vector/matrix types (IVEC3 = dc.vector(3, dc.int32))
            keep = _static_value(value, ns)
        if not keep:
            skipped |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                skipped.add(node.name)
            continue
        try:
            code = python_ast.compile_tree(ast.Module(body=[node], type_ignores=[]), filename, "exec")
            exec(code, ns)  # noqa: S102 -- imports and constants of the file being checked
        except Exception:  # noqa: BLE001 -- a missing import just leaves the name undefined
            continue


def check_file(path: str, allow_import: bool = False) -> FileReport:
    from ..lang.frontend import parse_tree
    from ..lang.kernel import DeviceFunction, Kernel

    report = FileReport(path)
    try:
        # tokenize.open: the encoding Python itself would use (a PEP 263 coding line, else UTF-8)
        with tokenize.open(path) as f:
            text = f.read()
    except OSError as e:
        report.unreadable = True
        report.problems.append(f"{path}: cannot read: {e.strerror or e}")
        return report
    except (UnicodeDecodeError, SyntaxError) as e:  # a binary file, or a bad coding line: not Python source
        report.unreadable = True
        reason = e.msg if isinstance(e, SyntaxError) else f"not text in its declared encoding ({e.reason})"
        report.problems.append(f"{path}: cannot read as Python source: {reason}")
        return report
    try:
        tree = python_ast.parse(text, filename=path)
    except SyntaxError as e:
        report.unreadable = True
        report.problems.append(str(KernelSyntaxError(f"invalid Python: {e.msg}", filename=path, lineno=e.lineno,
                                                     offset=e.offset, text=e.text)))
        return report
    found = find_functions(tree)
    if not found:
        return report
    lines = tuple(text.splitlines(keepends=True))
    module, failure = import_file(path) if allow_import else (None, None)
    unevaluated: set[str] = set()
    if module is not None:
        namespace = vars(module)
    else:
        if failure is not None:
            report.notes.append(f"{path}: note: the module could not be imported ({failure}); "
                                "checking with its imports and constants only")
        namespace, unevaluated = static_namespace(tree, path)
        for f in found:
            if f.top_level and f.kind == "func":
                namespace[f.node.name] = DeviceFunction.from_parsed(
                    parse_tree(f.node, path, lines, namespace))
    for f in found:
        label = f"{f.kind} {f.node.name} (line {f.node.lineno})"
        report.checked.append(label)
        try:
            obj = namespace.get(f.node.name) if f.top_level else None
            if not _is_object_for(obj, f.node):
                parsed = parse_tree(f.node, path, lines, namespace)
                if not f.top_level:
                    known, unknown = enclosing_closure(tree, f.node)
                    missing = sorted(free_names(f.node) & unknown)
                    if missing:
                        report.notes.append(f"{path}:{f.node.lineno}: note: {f.node.name!r} not checked: the closure "
                                            f"variable(s) {', '.join(missing)} are only known at run time")
                        report.checked.pop()
                        continue
                    parsed.closure = known
                obj = Kernel.from_parsed(parsed, name=_option_name(f)) if f.kind == "kernel" \
                    else DeviceFunction.from_parsed(parsed)
            obj.check()
        except (KernelSyntaxError, KernelTypeError) as e:
            name = _undefined_name(e)
            if name in unevaluated and not e.hint:
                # the name exists at run time, but is computed by top-level code the static check does not run
                e.hint = (f"{name!r} is assigned at the top of {os.path.basename(path)} by code that "
                          "`dotcompute check` does not run; pass --import to import the file")
            report.problems.append(str(e))
        except Exception as e:  # noqa: BLE001 -- report the checker's own failure, keep checking the rest
            tb = traceback.extract_tb(e.__traceback__)[-1]
            report.problems.append(f"{path}:{f.node.lineno}: internal error while checking {f.node.name!r}: "
                                   f"{type(e).__name__}: {e} (at {os.path.basename(tb.filename)}:{tb.lineno})")
    return report


def _undefined_name(e: KernelSyntaxError | KernelTypeError) -> str | None:
    msg = e.msg_only
    prefix, suffix = "name '", "' is not defined"
    if msg.startswith(prefix) and msg.endswith(suffix):
        return msg[len(prefix):-len(suffix)]
    return None


def _option_name(f: Found) -> str | None:
    name = f.options.get("name")
    return name if isinstance(name, str) and name.isidentifier() else None


def _is_object_for(obj: Any, node: ast.FunctionDef) -> bool:
    from ..lang.kernel import DeviceFunction, Kernel

    if not isinstance(obj, (Kernel, DeviceFunction)):
        return False
    code = getattr(obj.pyfunc, "__code__", None)
    if code is None:
        return False
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first <= code.co_firstlineno <= node.lineno


def run(args: argparse.Namespace) -> int:
    status = 0
    total_checked = 0
    total_problems = 0
    for path in args.files:
        report = check_file(path, allow_import=getattr(args, "import_module", False))
        for note in report.notes:
            print(note, file=sys.stderr)
        for problem in report.problems:
            print(problem)
            print()
        total_checked += len(report.checked)
        total_problems += len(report.problems)
        if report.unreadable:
            status = 2
        elif report.problems and status == 0:
            status = 1
        if getattr(args, "verbose", False):
            for label in report.checked:
                print(f"{path}: checked {label}", file=sys.stderr)
    summary = f"{total_problems} problem(s) in {total_checked} kernel(s) and device function(s)"
    print(summary if total_problems else f"ok: {summary}", file=sys.stderr)
    return status


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("check", help="check the kernels in Python files without running them",
                              description="Find every @dc.kernel and @dc.func in the files, check each, "
                                          "print every problem; exit 1 if there are any.")
    p.add_argument("files", nargs="+", metavar="FILE", help="Python files to check")
    p.add_argument("-v", "--verbose", action="store_true", help="list every function checked")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--import", dest="import_module", action="store_true",
                      help="import each file (its top-level code runs, except `if __name__ == \"__main__\":` "
                           "blocks) so that every module-level value resolves as at run time")
    mode.add_argument("--no-import", dest="import_module", action="store_false",
                      help="the default: run none of the file's top-level code; resolve names from its import "
                           "statements, constant assignments and @dc.func definitions")
    p.set_defaults(func=run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dotcompute")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["check", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["register", "run", "check_file", "find_functions", "main"]
