"""The operations layer imports only the layers below it (lang, runtime, dtypes, errors), and the
runtime reaches it only through the OPS_HOOKS table it fills in."""

from __future__ import annotations

import ast
from pathlib import Path

import dotcompute

PKG = Path(dotcompute.__file__).resolve().parent
BELOW = {"lang", "runtime", "dtypes", "errors", "config", "ops"}  # config: read by every layer, imports none


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    parts = path.relative_to(PKG).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[: len(parts) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
                out.update(a.name for a in node.names) if not target else out.add(target[0])
            elif node.module and (node.module == "dotcompute" or node.module.startswith("dotcompute.")):
                out.add(node.module.split(".")[1] if "." in node.module else "dotcompute")
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] if "." in a.name else a.name for a in node.names
                       if a.name.split(".")[0] == "dotcompute")
    return out


def test_ops_imports_only_lower_layers():
    for path in sorted((PKG / "ops").glob("*.py")):
        bad = _imports(path) - BELOW
        assert not bad, f"ops/{path.name} imports {sorted(bad)}"


def test_lower_layers_do_not_import_ops():
    for layer in ("lang", "runtime"):
        for path in sorted((PKG / layer).rglob("*.py")):
            assert "ops" not in _imports(path), f"{layer}/{path.name} imports ops"
