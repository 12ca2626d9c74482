"""Each orchestration test gets a private device history and fresh circuit breakers."""

from __future__ import annotations

from pathlib import Path

import pytest

import dotcompute as dc


@pytest.fixture(autouse=True)
def private_orchestration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # breaker states are published in the cache folder: keep them out of the user's
    monkeypatch.setenv("DOTCOMPUTE_CACHE_DIR", str(tmp_path / "cache"))
    orch = dc.orchestrate
    orch.history.reset(tmp_path / "history.json")
    orch.breakers.reset()
    orch.launching.forget_warnings()
    threshold, cooldown = orch.breakers.threshold, orch.breakers.cooldown_s
    yield
    orch.history.reset()
    orch.breakers.reset()
    orch.breakers.configure(threshold=threshold, cooldown_s=cooldown)
    for acc in dc.devices():
        acc.memory.limit = None


@pytest.fixture
def gpu_like() -> dc.Accelerator:
    """A non-CPU device that really runs here (PoCL OpenCL in CI), or skip."""
    for acc in dc.devices():
        if acc.backend != "cpu":
            return acc
    pytest.skip("needs a non-CPU device (OpenCL/PoCL, CUDA or Metal)")
