"""Audit: the Python API contract of DESIGN.md as an outsider reads it, on every accelerator.

Bad input (wrong dtype / ndim / count, unknown specs, negative and impossible sizes, read-only and
non-contiguous arrays), buffers from another accelerator, threads sharing one kernel, work after
synchronize, and the exception hierarchy.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def saxpy(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@dc.kernel
def bump(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0


N = 257


def _xy():
    x = np.arange(N, dtype=np.float32)
    return x, np.ones(N, np.float32), np.zeros(N, np.float32)


@pytest.mark.parametrize(("case", "param"), [("dtype", "x"), ("ndim", "x"), ("scalar-for-buffer", "y"),
                                             ("buffer-for-scalar", "a"), ("string", "a")])
def test_wrong_argument_is_a_kernel_type_error_naming_the_parameter(accelerator, case, param):
    x, y, out = _xy()
    args = {"dtype": (2.0, x.astype(np.float64), y, out), "ndim": (2.0, np.zeros((N, 2), np.float32), y, out),
            "scalar-for-buffer": (2.0, x, 1.0, out), "buffer-for-scalar": (x, x, y, out),
            "string": ("2", x, y, out)}[case]
    with pytest.raises(dc.KernelTypeError, match=repr(param)) as info:
        dc.launch(saxpy, N, *args, accelerator=accelerator)
    assert isinstance(info.value, TypeError) and isinstance(info.value, dc.DotComputeError)
    assert info.value.transient is False
    assert (out == 0).all()  # checked before anything ran


@pytest.mark.parametrize("count", [2, 3, 5])
def test_wrong_argument_count(accelerator, count):
    x, y, out = _xy()
    args = (2.0, x, y, out, out)[:count]
    with pytest.raises(dc.KernelTypeError, match="4"):
        accelerator.launch(saxpy, N, *args)


@pytest.mark.parametrize("spec", ["nope", "cuda:99", "opencl:42", "cpu:3", "metal:7", ""])
def test_unknown_accelerator_spec(spec):
    with pytest.raises(dc.DotComputeError) as info:
        dc.accelerator(spec)
    assert isinstance(info.value, (dc.BackendUnavailableError, ValueError))


def test_non_string_accelerator_spec():
    with pytest.raises(TypeError):
        dc.accelerator(3)


def test_cpu_is_always_present_and_specs_resolve():
    ids = [d.id for d in dc.devices()]
    assert "cpu:0" in ids
    assert dc.accelerator("cpu").id == "cpu:0"
    assert dc.accelerator("auto").id in ids
    names = {b.name for b in dc.backends()}
    assert "cpu" in names
    for b in dc.backends():
        assert b.available or b.reason


@pytest.mark.parametrize("shape", [-1, (3, -2), (-5,)])
def test_negative_shapes(accelerator, shape):
    with pytest.raises(ValueError):
        accelerator.empty(shape, np.float32)
    with pytest.raises(ValueError):
        accelerator.zeros(shape, np.float32)


@pytest.mark.parametrize("gsize", [-1, (4, -1), (0,), 0, 2**63, 2**64, (2**40, 2**40, 2**40)])
def test_non_positive_global_sizes_are_clean_errors(accelerator, gsize):
    # DESIGN.md says nothing about zero-size launches; dotcompute refuses them as a ValueError /
    # LaunchError before anything runs (CUDA and OpenCL 1.2 refuse an empty grid too).
    x, y, out = _xy()
    with pytest.raises(ValueError) as info:
        dc.launch(saxpy, gsize, 2.0, x, y, out, accelerator=accelerator)
    assert isinstance(info.value, dc.LaunchError)
    assert (out == 0).all()


def test_impossible_allocation_is_out_of_memory_not_a_crash(accelerator):
    # sizes a device could not hold, and sizes whose extents or byte count pass 64 bits
    for shape in [1 << 50, (1 << 25, 1 << 25), 1 << 62, 1 << 63, 1 << 64, (1 << 40, 1 << 40), (1 << 32, 1 << 32)]:
        with pytest.raises(dc.OutOfMemoryError) as info:
            accelerator.empty(shape, np.float64)
        assert isinstance(info.value, MemoryError) and isinstance(info.value, dc.DotComputeError)
        assert isinstance(info.value.transient, bool)
    # and the accelerator still works afterwards
    b = accelerator.asarray(np.zeros(N, np.float32))
    accelerator.launch(bump, N, b)
    assert (b.numpy() == 1).all()


def test_non_contiguous_numpy_arguments(accelerator):
    base = np.arange(2 * N, dtype=np.float32)
    x = base[::2]
    y = np.ones((N, 2), np.float32)[:, 0]
    out_base = np.zeros(3 * N, np.float32)
    out = out_base[::3]
    dc.launch(saxpy, N, 3.0, x, y, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, 3 * x + 1)
    assert (out_base[1::3] == 0).all() and (out_base[2::3] == 0).all()  # only the view's elements written
    np.testing.assert_array_equal(base, np.arange(2 * N, dtype=np.float32))  # inputs untouched


def test_read_only_arrays(accelerator):
    x, y, out = _xy()
    x.flags.writeable = False
    y.flags.writeable = False
    dc.launch(saxpy, N, 2.0, x, y, out, accelerator=accelerator)  # read-only inputs are fine
    np.testing.assert_array_equal(out, 2 * x + 1)
    ro_out = np.zeros(N, np.float32)
    ro_out.flags.writeable = False
    with pytest.raises(dc.KernelTypeError, match="out"):
        dc.launch(saxpy, N, 2.0, x, y, ro_out, accelerator=accelerator)
    assert (ro_out == 0).all()


def test_buffer_of_another_accelerator_is_refused(accelerator):
    others = [d for d in dc.devices() if d.id != accelerator.id]
    if not others:
        pytest.skip("one accelerator only")
    foreign = others[0].zeros(N, np.float32)
    with pytest.raises(dc.DotComputeError) as info:
        accelerator.launch(bump, N, foreign)
    assert others[0].id in str(info.value) and accelerator.id in str(info.value)
    assert (foreign.numpy() == 0).all()
    # a stream of another accelerator too
    with pytest.raises(dc.LaunchError):
        dc.launch(bump, N, accelerator.zeros(N, np.float32), accelerator=accelerator, stream=others[0].stream())


def test_buffer_attributes_and_host_view(accelerator):
    b = accelerator.zeros((4, 3), np.float32)
    assert b.shape == (4, 3) and b.dtype == np.float32 and b.size == 12 and b.nbytes == 48
    assert b.accelerator.id == accelerator.id
    with b.host() as h:
        h[:] = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = np.asarray(b)
    expect = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(b.numpy(), expect)
    out = np.empty((4, 3), np.float32)
    b.copy_to(out)
    np.testing.assert_array_equal(out, expect)
    b.copy_from(np.full((4, 3), 7, np.float32))
    assert (b.numpy() == 7).all()
    with pytest.raises(ValueError):
        b.copy_from(np.zeros(5, np.float32))
    with pytest.raises((TypeError, ValueError)):
        b.copy_from(np.zeros((4, 3), np.float64))
    ro = np.zeros((4, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        b.copy_to(ro)


def test_empty_buffers(accelerator):
    b = accelerator.empty(0, np.float32)
    assert b.size == 0 and b.numpy().shape == (0,)
    assert accelerator.zeros((0, 3), np.int32).numpy().shape == (0, 3)


def test_threads_share_one_kernel(accelerator):
    bufs = [accelerator.zeros(N, np.float32) for _ in range(6)]
    errors: list[BaseException] = []

    def work(b):
        try:
            for _ in range(15):
                dc.launch(bump, N, b, accelerator=accelerator)
            host = np.zeros(N, np.float32)
            dc.launch(bump, N, host, accelerator=accelerator)  # numpy path from several threads too
            assert (host == 1).all()
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(b,)) for b in bufs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    accelerator.synchronize()
    assert not errors, errors
    for b in bufs:
        assert (b.numpy() == 15).all()


def test_work_after_synchronize_and_events(accelerator):
    b = accelerator.asarray(np.zeros(N, np.float32))
    for _ in range(3):
        accelerator.launch(bump, N, b)
    accelerator.synchronize()
    accelerator.synchronize()  # twice is fine
    s = accelerator.stream()
    e1 = s.record()
    accelerator.launch(bump, N, b, stream=s)
    e2 = s.record()
    accelerator.synchronize()
    assert e1.elapsed(e2) >= 0
    accelerator.launch(bump, N, b)
    accelerator.synchronize()
    assert (b.numpy() == 5).all()
    stats = accelerator.memory.stats()
    assert stats["in_use"] >= b.nbytes
    accelerator.memory.trim()


def test_exception_hierarchy():
    assert issubclass(dc.DotComputeWarning, Warning)
    for name in ["KernelSyntaxError", "KernelTypeError", "CompilationError", "BackendUnavailableError",
                 "OutOfMemoryError", "LaunchError", "KernelIndexError", "KernelCheckError", "PluginError",
                 "PipelineError"]:
        cls = getattr(dc, name)
        assert issubclass(cls, dc.DotComputeError), name
        assert isinstance(cls.transient, bool), name
    assert issubclass(dc.OutOfMemoryError, MemoryError)
    assert issubclass(dc.KernelTypeError, TypeError)
    assert isinstance(dc.__version__, str) and dc.__version__


def test_kernel_source_for_every_backend():
    for backend in ("cpu", "cuda", "opencl", "metal"):
        text = saxpy.source(backend)
        assert isinstance(text, str) and "saxpy" in text


@dc.kernel
def fill_u64(a: dc.Buffer[dc.uint64], v: dc.uint64):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = v


def test_uint64_scalars(accelerator):
    a = np.zeros(2, np.uint64)
    dc.launch(fill_u64, 2, a, 2**63 - 1, accelerator=accelerator)
    assert (a == 2**63 - 1).all()
    with pytest.raises(dc.KernelTypeError, match="'v'"):
        dc.launch(fill_u64, 2, a, -1, accelerator=accelerator)


def test_uint64_scalars_above_int64(accelerator):
    # the whole uint64 range (an FNV-1a offset basis, an all-ones mask); used to be a ValueError
    # "does not fit in 64 bits" from the bindings, which held every integer as int64
    a = np.zeros(2, np.uint64)
    for value in (14695981039346656037, 2**64 - 1, np.uint64(2**64 - 1), 2**63):
        dc.launch(fill_u64, 2, a, value, accelerator=accelerator)
        assert (a == np.uint64(value)).all()
    for bad in (2**64, -1, np.int64(-1), -(2**63)):
        with pytest.raises(dc.KernelTypeError, match="'v'"):
            dc.launch(fill_u64, 2, a, bad, accelerator=accelerator)
    with pytest.raises(dc.KernelTypeError, match="'v'"):
        dc.launch(fill_u64, 2, a, 2**70, accelerator=accelerator)


@dc.kernel
def copy_any(src, dst):
    i = dc.global_id(0)
    if i < dst.shape[0]:
        dst[i] = src[i]


@dc.kernel
def axpy_any(a, x, y):
    i = dc.global_id(0)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]


NUMERIC = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float16,
           np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_every_numeric_type_in_buffers(accelerator, dtype):
    src = (np.arange(10) % 3).astype(dtype)
    dst = np.zeros_like(src)
    dc.launch(copy_any, 10, src, dst, accelerator=accelerator)
    np.testing.assert_array_equal(dst, src)
    np.testing.assert_array_equal(accelerator.asarray(src).numpy(), src)


@pytest.mark.parametrize("dtype", [d for d in NUMERIC if d is not np.bool_], ids=lambda d: np.dtype(d).name)
def test_every_numeric_type_as_a_scalar_argument(accelerator, dtype):
    x = (np.arange(10) % 3).astype(dtype)
    y = np.ones(10, dtype)
    dc.launch(axpy_any, 10, dtype(2), x, y, accelerator=accelerator)
    np.testing.assert_allclose(y.astype(np.complex128), (2 * x + 1).astype(dtype).astype(np.complex128))
