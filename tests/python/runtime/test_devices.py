"""dc.devices(), dc.backends(), dc.accelerator(spec) and what an Accelerator tells."""

from __future__ import annotations

import pytest

import dotcompute as dc


def test_cpu_is_always_a_device():
    devs = dc.devices()
    assert "cpu:0" in [d.id for d in devs]
    assert all(isinstance(d, dc.Accelerator) for d in devs)


def test_backends_report_availability_and_reasons():
    infos = dc.backends()
    cpu = [b for b in infos if b.name == "cpu"]
    assert cpu and cpu[0].available and cpu[0].reason == ""
    assert cpu[0].library.endswith((".so", ".dylib", ".dll"))
    assert cpu[0].version
    for b in infos:
        assert isinstance(b.available, bool)
        assert b.available or b.reason, f"{b.name} is unavailable without a reason"
        assert b.name in repr(b)


def test_devices_belong_to_available_backends():
    available = {b.name for b in dc.backends() if b.available}
    for d in dc.devices():
        assert d.backend in available


@pytest.mark.parametrize("spec", ["cpu", "cpu:0", "CPU", " cpu:0 "])
def test_cpu_specs_give_the_same_object(spec):
    acc = dc.accelerator(spec)
    assert acc is dc.accelerator("cpu:0")
    assert acc.backend == "cpu" and acc.index == 0 and acc.id == "cpu:0"


def test_auto_prefers_a_gpu_else_cpu():
    auto = dc.accelerator("auto")
    gpus = [d for d in dc.devices() if d.type == "gpu" and d.backend in ("cuda", "metal", "opencl")]
    if gpus:
        assert auto.type == "gpu"
    else:
        assert auto.id == "cpu:0"
    assert dc.accelerator() is auto


def test_accelerator_passes_through_an_accelerator():
    acc = dc.accelerator("cpu")
    assert dc.accelerator(acc) is acc


def test_unknown_backend_lists_what_is_available():
    with pytest.raises(dc.BackendUnavailableError) as info:
        dc.accelerator("tpu")
    message = str(info.value)
    assert "tpu" in message and "cpu:0" in message
    assert info.value.reason


def test_missing_device_index_says_so():
    with pytest.raises(dc.BackendUnavailableError) as info:
        dc.accelerator("cpu:7")
    assert "cpu:0" in str(info.value)


def test_unavailable_backend_gives_the_plugin_reason():
    states = {b.name: b for b in dc.backends()}
    for name in ("cuda", "metal", "opencl"):
        b = states.get(name)
        if b is not None and not b.available:
            with pytest.raises(dc.BackendUnavailableError) as info:
                dc.accelerator(name)
            assert b.reason in str(info.value) or b.reason in info.value.reason
            assert "cpu:0" in str(info.value)
            return
    pytest.skip("every backend found here is available")


def test_malformed_specs():
    with pytest.raises(ValueError, match="index"):
        dc.accelerator("cpu:x")
    with pytest.raises(TypeError):
        dc.accelerator(0)  # type: ignore[arg-type]


def test_identity_and_info(accelerator):
    acc = accelerator
    assert acc.type in ("cpu", "gpu", "accelerator")
    assert isinstance(acc.name, str) and acc.name
    info = acc.info
    for key in ("memory", "compute_units", "max_work_group_size", "simd_width", "features", "local_memory",
                "max_work_item_sizes", "vendor", "arch"):
        assert key in info, key
    assert info["memory"] > 0 and info["compute_units"] > 0 and info["max_work_group_size"] > 0
    assert isinstance(info["features"], list)
    assert ("unified_memory" in info["features"]) == acc.unified_memory
    info["memory"] = -1  # a copy: the accelerator's own stays intact
    assert acc.info["memory"] > 0
    assert acc.id in repr(acc)


def test_cpu_has_unified_memory():
    assert dc.accelerator("cpu").unified_memory


def test_backends_filter_keeps_the_cpu(run_python):
    # DESIGN.md: cpu:0 is always present; DOTCOMPUTE_BACKENDS narrows the other backends.
    done = run_python("import dotcompute as dc\n"
                      "print(sorted(d.backend for d in dc.devices()))\n",
                      env={"DOTCOMPUTE_BACKENDS": "opencl"})
    assert done.returncode == 0, done.stderr
    assert "'cpu'" in done.stdout
