"""DLPack both ways (namespace/dlpack.py, Buffer.__dlpack__): dc.from_dlpack from real producers (numpy,
array_api_strict when installed; PyTorch/JAX/CuPy when installed) with the 2024.12 device=/copy=
keywords, and Buffers exported to numpy (CPU shares memory; an OpenCL buffer's cl_mem goes only to
consumers naming kDLOpenCL)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dotcompute as dc

DEVICES = [d.id for d in dc.devices() if d.backend in ("cpu", "opencl")]
DATA = np.arange(12, dtype=np.float32).reshape(3, 4) / 4


def _producers() -> list[Any]:
    made = [pytest.param(lambda: DATA.copy(), id="numpy"),
            pytest.param(lambda: DATA.copy()[:, ::2], id="numpy-strided")]
    for name, make in (("array_api_strict", lambda m: m.asarray(DATA)),
                       ("torch", lambda m: m.from_numpy(DATA.copy())),
                       ("jax.numpy", lambda m: m.asarray(DATA))):
        try:
            module = __import__(name, fromlist=["_"])
        except ImportError:
            continue
        made.append(pytest.param((lambda mod, mk: lambda: mk(mod))(module, make), id=name))
    return made


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", _producers())
def test_from_dlpack_copies_a_producer_onto_the_device(device: str, make: Any) -> None:
    x = make()
    expected = np.from_dlpack(x).copy()
    b = dc.from_dlpack(x, device=device)
    assert isinstance(b, dc.Buffer) and b.device.id == device
    np.testing.assert_array_equal(b.numpy(), expected)
    assert dc.from_dlpack(x, device=device, copy=True).numpy().tolist() == expected.tolist()
    if device == "cpu:0" and np.from_dlpack(x).flags.c_contiguous:
        shared = dc.from_dlpack(x, device=device, copy=False)  # kDLCPU on cpu:0: the producer's memory
        np.testing.assert_array_equal(shared.numpy(), expected)
    else:  # another device, or strides: only a copy can give the data
        with pytest.raises(BufferError, match="copy=False"):
            dc.from_dlpack(x, device=device, copy=False)


def test_from_dlpack_default_device_and_errors() -> None:
    with dc.default_device("cpu:0"):
        assert dc.from_dlpack(DATA).device.id == "cpu:0"
    with pytest.raises(TypeError, match="no __dlpack__"):
        dc.from_dlpack([1.0, 2.0])
    with pytest.raises(TypeError, match="copy must be"):
        dc.from_dlpack(DATA, copy="yes")


@pytest.mark.parametrize("device", DEVICES)
def test_from_dlpack_of_a_buffer(device: str) -> None:
    b = dc.asarray(DATA, device=device)
    assert dc.from_dlpack(b) is b  # same device, no copy asked
    c = dc.from_dlpack(b, copy=True)
    assert c is not b and c.numpy().tolist() == DATA.tolist()
    other = "opencl:0" if device == "cpu:0" else "cpu:0"
    if other in DEVICES:
        moved = dc.from_dlpack(b, device=other)
        assert moved.device.id == other and moved.numpy().tolist() == DATA.tolist()
        with pytest.raises(BufferError, match="copy=False"):
            dc.from_dlpack(b, device=other, copy=False)


def test_cpu_buffers_export_their_memory() -> None:
    b = dc.asarray(DATA, device="cpu:0")
    assert b.__dlpack_device__() == (1, 0)
    view = np.from_dlpack(b)
    np.testing.assert_array_equal(view, DATA)
    with b.host() as h:
        h[0, 0] = 42.0
    assert view[0, 0] == 42.0  # shared, not copied
    copied = np.from_dlpack(b, copy=True)
    with b.host() as h:
        h[0, 0] = 7.0
    assert copied[0, 0] == 42.0


@pytest.mark.skipif("opencl:0" not in DEVICES, reason="needs an OpenCL device")
def test_opencl_exports_to_host_consumers_only_a_host_copy_on_request() -> None:
    b = dc.asarray(DATA, device="opencl:0")
    assert b.__dlpack_device__() == (4, 0)  # kDLOpenCL (tests/python/namespace/test_dlpack_zero_copy.py)
    with pytest.raises(BufferError, match="opencl:0.*to_device"):
        np.from_dlpack(b)  # numpy asks for the buffer's own memory: a cl_mem it cannot read
    host = np.from_dlpack(b, device="cpu")  # the consumer asks for the CPU: a copy, as the standard allows
    np.testing.assert_array_equal(host, DATA)
    with pytest.raises(BufferError, match="copy=False"):
        np.from_dlpack(b, device="cpu", copy=False)


def test_round_trip_with_jax() -> None:
    jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed")
    b = dc.asarray(DATA, device="cpu:0")
    j = jnp.from_dlpack(b)  # JAX reads the CPU buffer through __dlpack__/__dlpack_device__
    np.testing.assert_array_equal(np.asarray(j), DATA)
    back = dc.from_dlpack(j * 2, device="cpu:0")
    np.testing.assert_array_equal(back.numpy(), DATA * 2)


class _Producer:
    """Another library's array as DLPack sees it: only __dlpack__ and __dlpack_device__ (here a
    Buffer's own export, the one CUDA producer this machine has: the simulator's)."""

    def __init__(self, buf: dc.Buffer) -> None:
        self._buf = buf

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._buf.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._buf.__dlpack_device__()


@pytest.mark.skipif(not any(d.backend == "cuda" for d in dc.devices()),
                    reason="no CUDA device (DOTCOMPUTE_CUDA_SIM=1 gives the simulated one)")
def test_cuda_producer_imports_and_exports() -> None:
    b = dc.asarray(DATA, device="cuda:0")
    assert b.__dlpack_device__() == (2, 0)
    for target in ("cuda:0", "cpu:0"):
        c = dc.from_dlpack(_Producer(b), device=target)  # a kDLCUDA producer: read through a CPU export
        assert c.device.id == target
        np.testing.assert_array_equal(c.numpy(), DATA)
    np.testing.assert_array_equal(np.from_dlpack(b, device="cpu"), DATA)
