"""dc.devices(), dc.backends(), dc.accelerator(spec) and the Accelerator's fields, as a reviewer reads the contract."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def test_devices_fields():
    devs = dc.devices()
    ids = [d.id for d in devs]
    assert "cpu:0" in ids and len(set(ids)) == len(ids)
    for d in devs:
        assert d.backend in {"cpu", "cuda", "opencl", "metal"}
        assert isinstance(d.index, int) and d.index >= 0
        assert d.id == f"{d.backend}:{d.index}"
        assert isinstance(d.name, str) and d.name
        assert d.type is not None
        assert dc.accelerator(d.id) is d  # one object per device


def test_backends_fields():
    infos = dc.backends()
    names = [b.name for b in infos]
    assert "cpu" in names
    available = {d.backend for d in dc.devices()}
    for b in infos:
        assert isinstance(b.version, str)
        if b.available:
            assert b.name in available
        else:
            assert isinstance(b.reason, str) and b.reason
        assert b.name in repr(b)


@pytest.mark.parametrize("spec", ["auto", "cpu", "cpu:0", "CPU", " cpu "])
def test_specs_that_always_work(spec):
    acc = dc.accelerator(spec)
    assert acc.backend in {"cpu", "cuda", "opencl", "metal"}
    if spec.strip().lower().startswith("cpu"):
        assert acc is dc.accelerator("cpu:0")


def test_default_is_auto():
    assert dc.accelerator() is dc.accelerator("auto")


@pytest.mark.parametrize("spec", ["opencl", "opencl:0", "cuda", "cuda:0", "cuda:1", "metal", "metal:0"])
def test_backend_specs_work_or_say_why(spec):
    backend = spec.partition(":")[0]
    present = {d.id for d in dc.devices()}
    wanted = spec if ":" in spec else f"{spec}:0"
    if wanted in present:
        acc = dc.accelerator(spec)
        assert acc.id == wanted and acc.backend == backend
    else:
        with pytest.raises(dc.BackendUnavailableError) as info:
            dc.accelerator(spec)
        message = str(info.value)
        assert spec in message and "cpu:0" in message  # names the spec and what is available
        assert info.value.reason


# "gpu" and "best" are specs (DESIGN.md, Configuration): tests/python/orchestrate/test_best.py covers them
@pytest.mark.parametrize("spec", ["", " ", "nvidia", "cpu:x", "cpu:-1", "cpu:", "cpu:0:1", "auto:0", "gpu:0"])
def test_malformed_specs_are_value_errors_and_backend_errors(spec):
    with pytest.raises(ValueError) as info:
        dc.accelerator(spec)
    assert isinstance(info.value, dc.BackendUnavailableError)
    assert repr(spec) in str(info.value) and "cpu:0" in str(info.value)


def test_device_index_out_of_range():
    with pytest.raises(dc.BackendUnavailableError, match="cpu:7") as info:
        dc.accelerator("cpu:7")
    assert "cpu:0" in str(info.value)


@pytest.mark.parametrize("spec", [None, 3, 0.5, ["cpu"]])
def test_non_string_specs_are_type_errors(spec):
    with pytest.raises(TypeError, match=type(spec).__name__):
        dc.accelerator(spec)


def test_accelerator_passes_through():
    acc = dc.accelerator("cpu")
    assert dc.accelerator(acc) is acc


def test_accelerator_fields(accelerator):
    acc = accelerator
    assert isinstance(acc.name, str) and acc.name
    assert acc.backend == acc.id.split(":")[0] and acc.index == int(acc.id.split(":")[1])
    assert isinstance(acc.type, str)
    info = acc.info
    assert info["name"] == acc.name
    for key in ("memory", "compute_units", "capabilities"):
        assert key in info, f"acc.info lacks {key!r}: {sorted(info)}"
    assert isinstance(info["memory"], int) and info["memory"] > 0
    assert isinstance(info["compute_units"], int) and info["compute_units"] > 0
    assert isinstance(info["capabilities"], list) and info["capabilities"] == info["features"]
    info["memory"] = -1  # a copy: the accelerator's own is unchanged
    assert acc.info["memory"] > 0
    assert acc.id in repr(acc) and acc.id in str(acc)
    assert acc == dc.accelerator(acc.id) and hash(acc) == hash(dc.accelerator(acc.id))


def test_version():
    assert isinstance(dc.__version__, str) and dc.__version__[0].isdigit()
    assert np.__version__  # numpy is the documented companion
