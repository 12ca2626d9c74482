"""dc.from_dlpack shares the producer's memory where the device matches (namespace/dlpack.py,
python/src/dlpack.cpp): writes go both ways, the producer lives as long as the last Buffer or view
over its memory, and read-only or strided memory is copied (copy=None) or refused (copy=False).
OpenCL and Metal buffers export their cl_mem / MTLBuffer (kDLOpenCL, kDLMetal) to consumers that name
the device."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import dotcompute as dc

DATA = np.arange(24, dtype=np.float32).reshape(4, 6)


class _Producer:
    """Another library's array as DLPack sees it: only __dlpack__ and __dlpack_device__ (here a
    Buffer's own export: the OpenCL and simulated CUDA producers this machine has)."""

    def __init__(self, buf: dc.Buffer) -> None:
        self._buf = buf

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._buf.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._buf.__dlpack_device__()


def _same_device_producer(acc: dc.Accelerator) -> tuple[Any, Any]:
    """(a producer on acc's DLPack device, a function reading the producer's current data)."""
    if acc.backend == "cpu":
        x = DATA.copy()
        return x, lambda: x
    b = dc.asarray(DATA, device=acc)
    return _Producer(b), b.numpy


def test_import_on_the_same_device_shares_memory(accelerator: dc.Accelerator) -> None:
    producer, read = _same_device_producer(accelerator)
    b = dc.from_dlpack(producer, device=accelerator, copy=False)
    assert b.device is accelerator and b.shape == DATA.shape
    np.testing.assert_array_equal(b.numpy(), DATA)
    b[1, 2] = -1.0  # a generated store kernel writes the producer's memory
    assert read()[1, 2] == -1.0
    b *= 2  # in place, through an expression
    np.testing.assert_array_equal(read()[0], DATA[0] * 2)
    c = dc.from_dlpack(producer, device=accelerator, copy=True)
    c[0, 0] = 1234.0
    assert read()[0, 0] == 0.0  # copy=True: a copy
    np.testing.assert_array_equal(dc.from_dlpack(producer, device=accelerator).numpy(), read())


_OPAQUE = {"opencl": (4, "cl_mem"), "metal": (8, "MTLBuffer")}  # DLPack device types with handle pointers


def test_opaque_handles_go_only_to_consumers_naming_the_device(accelerator: dc.Accelerator) -> None:
    if accelerator.backend not in _OPAQUE:
        pytest.skip("the buffer's DLPack data pointer is an address")
    kind, handle = _OPAQUE[accelerator.backend]
    b = dc.asarray(DATA, device=accelerator)
    assert b.__dlpack_device__() == (kind, accelerator.index)
    with pytest.raises(BufferError, match=rf"{accelerator.id}.*{handle}.*np\.asarray\(x\).*to_device\('cpu:0'\)"):
        np.from_dlpack(b)  # numpy passes dl_device=None: it could not read the handle
    np.testing.assert_array_equal(np.from_dlpack(b, device="cpu"), DATA)  # a host copy, asked for


def test_producer_writes_are_seen_by_the_buffer() -> None:
    x = DATA.copy()
    b = dc.from_dlpack(x, device="cpu:0")
    x[3, 5] = 99.0
    assert b.numpy()[3, 5] == 99.0
    assert float(dc.sum(b)) == float(x.sum())
    assert np.shares_memory(np.asarray(b), x)  # the host view is the producer's memory, not a mirror


def test_the_producer_lives_until_the_last_buffer_or_view() -> None:
    x = DATA.copy()
    alive = weakref.ref(x)
    b = dc.from_dlpack(x, device="cpu:0")
    v = b[2:]
    del x, b
    gc.collect()
    assert alive() is not None  # the view still holds the import
    np.testing.assert_array_equal(v.numpy(), DATA[2:])
    del v
    gc.collect()
    assert alive() is None  # the deleter ran: numpy dropped its reference


def test_a_dlpack_buffer_producer_is_released_once() -> None:
    # our own export as the producer: its deleter frees the export record; a second call would be a
    # double free, a missing one would keep the Buffer alive
    src = dc.asarray(DATA, device="cpu:0")
    alive = weakref.ref(src)
    b = dc.from_dlpack(_Producer(src), device="cpu:0", copy=False)
    b2 = b.reshape(-1)
    del src
    gc.collect()
    assert alive() is not None
    del b, b2
    gc.collect()
    assert alive() is None


def test_refused_imports_release_the_producer() -> None:
    x = DATA.copy()[:, ::2]
    alive = weakref.ref(x.base)
    with pytest.raises(BufferError, match="strides"):
        dc.from_dlpack(x, device="cpu:0", copy=False)
    copied = dc.from_dlpack(x, device="cpu:0")  # copy=None: strided memory is copied
    np.testing.assert_array_equal(copied.numpy(), DATA[:, ::2])
    del x
    gc.collect()
    assert alive() is None


def test_read_only_producers_are_copied_never_written() -> None:
    x = DATA.copy()
    x.flags.writeable = False  # exported with DLPack 1.0's read-only flag
    with pytest.raises(ValueError, match="read-only"):
        dc.from_dlpack(x, device="cpu:0", copy=False)
    with pytest.raises(BufferError, match="read-only"):  # the same error: a BufferError too
        dc.from_dlpack(x, device="cpu:0", copy=False)
    b = dc.from_dlpack(x, device="cpu:0")
    b[0, 0] = 5.0
    assert x[0, 0] == 0.0 and b.numpy()[0, 0] == 5.0


def test_producers_of_other_libraries_share_on_cpu() -> None:
    xp = pytest.importorskip("array_api_strict")
    a = xp.asarray(DATA)
    b = dc.from_dlpack(a, device="cpu:0", copy=False)
    b[0, 1] = 42.0
    assert np.from_dlpack(a)[0, 1] == 42.0


def test_jax_cpu_arrays_import_without_a_copy() -> None:
    jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed")
    j = jnp.asarray(DATA) * 3
    b = dc.from_dlpack(j, device="cpu:0", copy=False)
    np.testing.assert_array_equal(b.numpy(), DATA * 3)
    assert np.shares_memory(np.asarray(b), np.from_dlpack(j))


def test_torch_cpu_tensors_share_memory() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    b = dc.from_dlpack(t, device="cpu:0", copy=False)
    b[2, 3] = -7.0
    assert float(t[2, 3]) == -7.0


@pytest.mark.skipif("opencl:0" not in [d.id for d in dc.devices()], reason="needs an OpenCL device")
def test_opencl_exports_its_cl_mem_to_consumers_naming_it() -> None:
    src = dc.asarray(DATA, device="opencl:0")
    assert src.__dlpack_device__() == (4, 0)
    with pytest.raises(BufferError, match=r"opencl:0.*np\.asarray\(x\).*to_device\('cpu:0'\)"):
        np.from_dlpack(src)
    with pytest.raises(BufferError, match="not"):
        src.__dlpack__(dl_device=(2, 0))  # another device: refused, never a wrong handle
    np.testing.assert_array_equal(np.from_dlpack(src, device="cpu"), DATA)  # a host copy, asked for
    # a view inside the allocation: the cl_mem of the whole and DLPack's byte_offset
    align = int(src.accelerator.info.get("mem_base_addr_align_bytes", 0) or 128)
    start = align // 4
    values = np.arange(start + 64, dtype=np.float32)
    whole = dc.asarray(values, device="opencl:0")
    view = dc.Buffer._wrap(whole._native.view(align, (6,)), whole.accelerator)
    shared = dc.from_dlpack(_Producer(view), device="opencl:0", copy=False)
    np.testing.assert_array_equal(shared.numpy(), values[start:start + 6])
    shared[0] = -3.0
    assert whole.numpy()[start] == -3.0 and whole.numpy()[start - 1] == start - 1


def test_copy_false_across_devices_is_refused() -> None:
    devices = [d.id for d in dc.devices()]
    if "opencl:0" not in devices:
        pytest.skip("needs an OpenCL device")
    with pytest.raises(ValueError, match="only a copy"):
        dc.from_dlpack(DATA.copy(), device="opencl:0", copy=False)
    src = dc.asarray(DATA, device="opencl:0")
    moved = dc.from_dlpack(_Producer(src), device="cpu:0")  # the producer makes a host copy
    np.testing.assert_array_equal(moved.numpy(), DATA)
