"""Helpers for the idiom suites (not a test module)."""

import pytest

import dotcompute as dc


def need_fp64(acc: dc.Accelerator) -> None:
    """Skip on devices without double precision (Metal)."""
    info = acc.info or {}
    features = info.get("features", []) if isinstance(info, dict) else []
    if "fp64" not in features:
        pytest.skip(f"{acc.id} has no fp64")
