"""Fixtures shared by every Python test suite.

``accelerator``: one test body run on every available device (ids like ``cpu:0``).
``tmp_cache``: a private kernel-cache folder in DOTCOMPUTE_CACHE_DIR. The
in-process runtime reads the variable once, when it starts, so the folder
isolates the subprocesses a test starts (and a test run whose first runtime
use comes after it is set); in-process kernels share the session's cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dotcompute as dc

# Tests marked @pytest.mark.slow run only in the full run: `bash tests/run.sh --full` (the scheduled CI
# workflow) sets DOTCOMPUTE_TESTS_FULL=1; `pytest --full` or `-m slow` asks for them directly. What they
# check is also exercised, on every backend, by a faster test of the default run.
FULL_ENV = "DOTCOMPUTE_TESTS_FULL"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--full", action="store_true", default=False,
                     help=f"also run the tests marked slow (tests/run.sh --full sets {FULL_ENV}=1)")


def full_run(config: pytest.Config) -> bool:
    """Whether this session runs the slow tests too."""
    return bool(config.getoption("--full")) or os.environ.get(FULL_ENV, "") not in ("", "0")


@pytest.fixture(scope="session")
def tests_full(request: pytest.FixtureRequest) -> bool:
    """Whether this session runs the slow tests too (for parameters that are slow on one device only)."""
    return full_run(request.config)


@pytest.fixture
def device_slice(request: pytest.FixtureRequest, tests_full: bool):
    """``device_slice(keep, what)`` for a parameter of a dtype or operator matrix, whose parameters run
    one emitter's code again on more types: on the CPU backend every parameter runs; on other devices
    (OpenCL, the CUDA simulator, the Metal double: a program build of 0.3-3 s each) only the
    representative slice (``keep`` true) runs by default, the rest with --full. ``what`` names the
    slice in the skip's reason."""
    acc = request.getfixturevalue("accelerator")

    def check(keep: bool, what: str) -> None:
        if not keep and not tests_full and acc.backend != "cpu":
            pytest.skip(f"slow: on devices other than cpu:0 {what} run by default; every parameter with --full")
    return check


#: Suites that run the kernel language's features again through other kernels (ported real-world
#: code, idioms): whole on the CPU backend; on other devices, where each kernel is a program build of
#: 0.3-3 s, with --full -- as the CUDA-simulator and Metal-double passes of tests/run.sh run them.
SAME_FEATURES_AGAIN = ("realworld", "idioms")


def _device_param(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("accelerator") if callspec is not None else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if full_run(config) or "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow: runs with --full (bash tests/run.sh --full, or pytest --full)")
    again = pytest.mark.skip(reason="slow: realworld and idioms run on cpu:0 by default (the same features "
                             "through other kernels); on other devices with --full")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
            continue
        device = _device_param(item)
        if device is not None and not device.startswith("cpu:") and \
                Path(str(item.fspath)).parent.name in SAME_FEATURES_AGAIN:
            item.add_marker(again)


def _device_ids() -> list[str]:
    try:
        return [d.id for d in dc.devices()]
    except ImportError:  # the native module is not built: only the pure-Python suites can run
        return []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "accelerator" in metafunc.fixturenames:
        ids = _device_ids()
        metafunc.parametrize("accelerator", ids, ids=ids, indirect=True)


@pytest.fixture
def accelerator(request: pytest.FixtureRequest) -> dc.Accelerator:
    """Every available device in turn (parametrized in pytest_generate_tests)."""
    return dc.accelerator(request.param)


@pytest.fixture
def cpu() -> dc.Accelerator:
    return dc.accelerator("cpu")


@pytest.fixture
def tmp_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh kernel-cache folder, set as DOTCOMPUTE_CACHE_DIR for the test."""
    path = tmp_path / "kernel-cache"
    path.mkdir()
    monkeypatch.setenv("DOTCOMPUTE_CACHE_DIR", str(path))
    return path


def _run_python(code: str, env: dict[str, str] | None = None, timeout: float = 120,
                cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                          timeout=timeout, cwd=cwd)


@pytest.fixture
def run_python():
    """``run_python(code, env=None, timeout=120, cwd=None)``: runs ``code`` in a fresh interpreter
    (so a fresh runtime), with ``env`` added to this environment; returns the CompletedProcess."""
    return _run_python
