"""The runtime sits below the kernel language and everything else: it imports none of them, not
even inside a function (an import cycle in disguise). Upper layers lend it functions instead
(runtime/layer_hooks.py, runtime/array_hooks.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import dotcompute

PACKAGE = Path(dotcompute.__file__).parent
ABOVE_RUNTIME = ("lang", "launch", "ops", "expr", "orchestrate", "profile", "pipeline", "dask", "cli")


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the file, at any nesting level."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ((node.module,) if node.module else ()))
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" for a in node.names] if not node.module else [mod]
            out += [(node.lineno, m) for m in names]
    return out


def test_runtime_imports_nothing_above_it():
    bad = []
    for path in sorted((PACKAGE / "runtime").glob("*.py")):
        for line, mod in _imports(path):
            for upper in ABOVE_RUNTIME:
                if mod == f"dotcompute.{upper}" or mod.startswith(f"dotcompute.{upper}."):
                    bad.append(f"{path.name}:{line} imports {mod}")
    assert bad == []


def test_the_lent_functions_work():
    import numpy as np

    import dotcompute as dc

    assert repr(dc.Buffer[dc.float32, 2]) == "dc.Buffer[float32, 2]"
    acc = dc.accelerator("cpu")

    @dc.kernel
    def ones(o: dc.Buffer[dc.float32]):
        o[dc.global_id(0)] = 1.0

    b = acc.zeros((8,), np.float32)
    acc.launch(ones, 8, b)  # the plain path
    acc.launch(ones, 8, b, retries=1)  # through dc.launch
    np.testing.assert_array_equal(b.numpy(), np.ones(8, np.float32))
