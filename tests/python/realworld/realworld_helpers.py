"""Small helpers shared by the real-world kernel suites (not a test module)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dotcompute as dc


def need_fp64(acc: dc.Accelerator) -> None:
    """Skip on devices without double precision (Metal)."""
    info = acc.info or {}
    features = info.get("features", []) if isinstance(info, dict) else []
    if "fp64" not in features:
        pytest.skip(f"{acc.id} has no fp64")


def line_of(path: str, marker: str) -> int:
    """1-based line number of the unique line of ``path`` holding ``marker``."""
    lines = Path(path).read_text().splitlines()
    hits = [n for n, text in enumerate(lines, 1) if marker in text and "line_of(" not in text]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]
