"""examples/numpy_port.py: a numpy program run with ``import dotcompute as np`` matches numpy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import dotcompute as dc

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "numpy_port.py"


def _example():
    spec = importlib.util.spec_from_file_location("numpy_port_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _device_params():
    return [pytest.param(acc.id, id=acc.id) for acc in dc.devices()]


@pytest.mark.parametrize("device", _device_params())
def test_program_matches_numpy(device):
    example = _example()
    with dc.default_device(device):
        ours = example.run_program("dotcompute")
    reference = example.run_program("numpy")
    assert example.compare(ours, reference) == []


def test_a_changed_result_is_reported():
    example = _example()
    reference = example.run_program("numpy")
    broken = dict(reference, inertia=reference["inertia"] * 1.01)
    assert [line.split(":")[0] for line in example.compare(broken, reference)] == ["inertia"]
