"""dotcompute.config: every DOTCOMPUTE_* variable, parsed in one place."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

import dotcompute as dc
from dotcompute import config


def test_cache_dir_default_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv("DOTCOMPUTE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and not config.sys.platform == "darwin":
        assert config.cache_dir() == tmp_path / "xdg" / "dotcompute"
    monkeypatch.setenv("DOTCOMPUTE_CACHE_DIR", str(tmp_path / "mine"))
    assert config.cache_dir() == tmp_path / "mine"


def test_plugin_path_is_split_on_pathsep(monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_PLUGIN_PATH", os.pathsep.join(["/a", "", "/b/c"]))
    assert config.plugin_path() == [Path("/a"), Path("/b/c")]
    monkeypatch.delenv("DOTCOMPUTE_PLUGIN_PATH")
    assert config.plugin_path() == []


def test_backends_list(monkeypatch):
    monkeypatch.delenv("DOTCOMPUTE_BACKENDS", raising=False)
    assert config.backends() is None
    monkeypatch.setenv("DOTCOMPUTE_BACKENDS", " CPU, opencl ,,")
    assert config.backends() == ["cpu", "opencl"]


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("true", True), ("ON", True), ("0", False),
                                                 ("", False), ("no", False)])
def test_debug_flag(monkeypatch, value, expected):
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", value)
    assert config.debug() is expected


def test_bad_values_name_the_variable(monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "maybe")
    with pytest.raises(ValueError, match="DOTCOMPUTE_DEBUG"):
        config.debug()
    # a bad thread count or log level has a fallback: one warning naming the variable, not an error
    monkeypatch.setenv("DOTCOMPUTE_CPU_THREADS", "-3")
    with pytest.warns(dc.DotComputeWarning, match="DOTCOMPUTE_CPU_THREADS='-3'"):
        assert config.cpu_threads() is None
    monkeypatch.setenv("DOTCOMPUTE_CPU_SPIN_US", "soon")
    with pytest.raises(ValueError, match="DOTCOMPUTE_CPU_SPIN_US"):
        config.cpu_spin_us()
    monkeypatch.setenv("DOTCOMPUTE_LOG", "chatty")
    with pytest.warns(dc.DotComputeWarning, match="DOTCOMPUTE_LOG='chatty'"):
        assert config.log_level() is None


def test_log_level_and_logger(monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_LOG", "debug")
    assert config.log_level() == logging.DEBUG
    logger = logging.getLogger("dotcompute")
    old_level, old_handlers = logger.level, list(logger.handlers)
    try:
        config.configure_logging()
        config.configure_logging()  # idempotent: one handler
        assert logger.level == logging.DEBUG
        assert sum(getattr(h, "_dotcompute", False) for h in logger.handlers) == 1
    finally:
        logger.setLevel(old_level)
        logger.handlers[:] = old_handlers


def test_in_effect_and_unknown(monkeypatch):
    for k in list(os.environ):
        if k.startswith("DOTCOMPUTE_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("DOTCOMPUTE_CXX", "clang++")
    monkeypatch.setenv("DOTCOMPUTE_CAHCE_DIR", "/typo")
    assert config.in_effect() == {"DOTCOMPUTE_CAHCE_DIR": "/typo", "DOTCOMPUTE_CXX": "clang++"}
    assert config.unknown() == ["DOTCOMPUTE_CAHCE_DIR"]
    snap = config.snapshot()
    assert snap.cxx == "clang++" and snap.debug is False


def test_every_known_variable_is_documented():
    assert all(name.startswith("DOTCOMPUTE_") and text for name, text in config.VARIABLES.items())
