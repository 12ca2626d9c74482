"""No import cycle in the package, not even one hidden behind a function-level import: an import
inside a function that could not be hoisted to the top of its module without creating a cycle of
module-level imports is an upward arrow in disguise. (Imports inside functions that only defer a
cost, such as the CLI's, are fine; ``if TYPE_CHECKING:`` imports never run.)"""

from __future__ import annotations

import ast
from pathlib import Path

import dotcompute

PACKAGE = Path(dotcompute.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    # `from .pkg import mod` imports the submodule; `from .mod import name` the module
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]


def _import_graph() -> tuple[dict[str, set[str]], list[tuple[str, str, int]]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(files)
    top: dict[str, set[str]] = {m: set() for m in files}
    inner: list[tuple[str, str, int]] = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(), str(path))

        def visit(node: ast.AST, in_function: bool, module: str = module, path: Path = path) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for t in _targets(module, path.name == "__init__.py", child, known):
                        if t in known and t != module:
                            (inner.append((module, t, child.lineno)) if in_function else top[module].add(t))
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

        visit(tree, False)
    return top, inner


def _reaches(top: dict[str, set[str]], start: str, goal: str) -> bool:
    seen: set[str] = set()
    todo = [start]
    while todo:
        m = todo.pop()
        if m == goal:
            return True
        if m not in seen:
            seen.add(m)
            todo.extend(top.get(m, ()))
    return False


def test_no_module_level_import_cycles():
    top, _ = _import_graph()
    cycles = sorted((a, b) for a, deps in top.items() for b in deps
                    if not a.startswith(b + ".") and _reaches(top, b, a) and not b.startswith(a + "."))
    assert not cycles, cycles


def test_no_cycle_hidden_behind_a_function_level_import():
    top, inner = _import_graph()
    hidden = sorted({(m, t, line) for m, t, line in inner
                     if not m.startswith(t + ".") and _reaches(top, t, m)})
    assert not hidden, "\n".join(f"{m}:{line} imports {t}, which imports {m} at module level" for m, t, line in hidden)
