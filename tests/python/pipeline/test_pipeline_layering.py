"""The pipeline layer imports only the layers below it, and nothing below imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import dotcompute

PKG = Path(dotcompute.__file__).resolve().parent
BELOW = {"errors", "launch", "runtime", "lang", "ops", "expr", "orchestrate", "profile", "config", "dtypes"}


def _imports(path: Path) -> set[str]:
    """Top-level dotcompute packages a module imports (relative or absolute), function bodies included."""
    out: set[str] = set()
    parts = path.relative_to(PKG).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[: len(parts) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # "from .. import x": x is the package's own submodule
                    out.update(a.name for a in node.names)
                else:
                    out.add(target[0])
            elif node.module and node.module.startswith("dotcompute."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("dotcompute."))
    return out


def test_pipeline_imports_only_lower_layers():
    for path in sorted((PKG / "pipeline").glob("*.py")):
        bad = _imports(path) - BELOW - {"pipeline"}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_lower_layers_do_not_import_the_pipeline():
    for layer in ("runtime", "lang", "ops", "expr", "orchestrate", "profile"):
        for path in sorted((PKG / layer).rglob("*.py")):
            assert "pipeline" not in _imports(path), f"{path.relative_to(PKG)} imports the pipeline layer"
    for name in ("errors.py", "launch.py"):
        assert "pipeline" not in _imports(PKG / name)
