"""Turn generated Python source into a real function the frontend can read (it uses ``inspect``)."""

from __future__ import annotations

import hashlib
import importlib.util
import linecache
import tempfile
from pathlib import Path
from typing import Any

_DIR = Path(tempfile.mkdtemp(prefix="dotcompute-gen-"))


def load_function(source: str, name: str) -> Any:
    """Write ``source`` to a file, import it, and return its function ``name``.

    A real file (not just ``exec``) so that ``inspect.getsource`` and error messages that show
    the offending line both work, as they do for a user's module."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = _DIR / f"gen_{digest}.py"
    if not path.exists():
        path.write_text(source)
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(f"gen_{digest}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
