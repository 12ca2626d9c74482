"""DOTCOMPUTE_CHECK leaves dotcompute's own kernels (array operations, the kernels array expressions
generate) alone unless it names ``library``: then they are checked as user kernels are, with no finding
(they are correct)."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang.check import parse_check


@dc.kernel
def twice(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = 2.0 * x[i]


def _checked_kernels(monkeypatch, value: str, cpu) -> list[str]:
    monkeypatch.setenv("DOTCOMPUTE_CHECK", value)
    x = cpu.asarray(np.arange(100, dtype=np.float32))
    with dc.profile() as p:
        got = (x * 3 + 1).numpy()  # an expression: a generated kernel
    np.testing.assert_array_equal(got, np.arange(100, dtype=np.float32) * 3 + 1)
    return [n.attrs["kernel"] for n in p.notes if n.kind == "kernel_check"]


def test_library_kernels_are_left_alone_by_default(cpu, monkeypatch):
    assert _checked_kernels(monkeypatch, "all", cpu) == []


def test_library_kernels_are_checked_when_named(cpu, monkeypatch):
    names = _checked_kernels(monkeypatch, "all,library", cpu)
    assert names and all(n.startswith("dc_expr") for n in names)  # checked, with no finding (else it raised)


def test_user_kernels_are_checked_either_way(cpu, monkeypatch):
    for value in ("all", "all,library"):
        monkeypatch.setenv("DOTCOMPUTE_CHECK", value)
        with dc.profile() as p:
            dc.launch(twice, 8, np.ones(8, np.float32), np.zeros(8, np.float32), accelerator=cpu)
        assert [n.attrs["kernel"] for n in p.notes if n.kind == "kernel_check"] == ["twice"]


def test_library_is_a_word_of_dotcompute_check_only(cpu):
    with pytest.raises(ValueError, match="unknown check 'library'"):
        dc.launch(twice, 8, np.ones(8, np.float32), np.zeros(8, np.float32), accelerator=cpu,
                  check="all,library")
    with pytest.raises(ValueError, match="names no check"):
        parse_check("library", "DOTCOMPUTE_CHECK")
    assert parse_check("memcheck,library:warn", "DOTCOMPUTE_CHECK").text() == "memcheck,library:warn"
