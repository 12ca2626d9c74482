"""dotcompute.dask is the top layer: it imports only the layers below it, and nothing imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import dotcompute

PKG = Path(dotcompute.__file__).resolve().parent
BELOW = {"errors", "launch", "runtime", "lang", "ops", "expr", "orchestrate", "profile", "pipeline", "config",
         "dtypes"}


def _imports(path: Path) -> set[str]:
    """Top-level dotcompute packages a module imports (function bodies included)."""
    out: set[str] = set()
    parts = path.relative_to(PKG).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                target = list(parts[: len(parts) - (node.level - 1)]) + (node.module.split(".") if node.module else [])
                out.update([target[0]] if target else [a.name for a in node.names])
            elif node.module and node.module.startswith("dotcompute."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("dotcompute."))
    return out


def test_dask_imports_only_lower_layers():
    for path in sorted((PKG / "dask").glob("*.py")):
        bad = _imports(path) - BELOW - {"dask"}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_nothing_below_imports_dask():
    for path in sorted(PKG.rglob("*.py")):
        if path.relative_to(PKG).parts[0] in ("dask", "cli"):
            continue
        assert "dask" not in _imports(path), f"{path.relative_to(PKG)} imports the dask layer"
