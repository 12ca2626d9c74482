"""The expression layer imports only the layers below it (ops, lang, runtime), and none of those imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import dotcompute

PKG = Path(dotcompute.__file__).resolve().parent
BELOW = {"errors", "runtime", "lang", "ops", "config", "dtypes"}


def _imports(path: Path) -> set[str]:
    """Top-level dotcompute packages a module imports, function bodies included."""
    out: set[str] = set()
    parts = path.relative_to(PKG).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[: len(parts) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
                out.update(a.name for a in node.names) if not target else out.add(target[0])
            elif node.module and node.module.startswith("dotcompute."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("dotcompute."))
    return out


def test_expr_imports_only_lower_layers() -> None:
    for path in sorted((PKG / "expr").glob("*.py")):
        bad = _imports(path) - BELOW - {"expr"}
        assert not bad, f"expr/{path.name} imports {sorted(bad)}"


def test_lower_layers_do_not_import_expr() -> None:
    for layer in ("runtime", "lang", "ops"):
        for path in sorted((PKG / layer).rglob("*.py")):
            assert "expr" not in _imports(path), f"{path.relative_to(PKG)} imports the expression layer"
    for name in ("errors.py", "launch.py", "dtypes.py", "config.py"):
        assert "expr" not in _imports(PKG / name), name
