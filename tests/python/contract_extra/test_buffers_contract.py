"""acc.empty/zeros/asarray and the Buffer surface with the arguments numpy users pass."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@pytest.mark.parametrize(("shape", "expected"), [
    (5, (5,)), ((5,), (5,)), ([2, 3], (2, 3)), ((2, 3, 4), (2, 3, 4)), (np.int64(4), (4,)),
    ((np.int32(2), 3), (2, 3)), (0, (0,)), ((2, 0), (2, 0)), ((), ()),
])
def test_shapes(accelerator, shape, expected):
    for make in (accelerator.empty, accelerator.zeros):
        b = make(shape, np.float32)
        assert b.shape == expected and b.ndim == len(expected)
        assert b.size == int(np.prod(expected)) and b.nbytes == 4 * b.size
        assert b.accelerator is accelerator
        if expected:
            assert len(b) == expected[0]
        assert b.numpy().shape == expected
    assert (accelerator.zeros(shape, np.float32).numpy() == 0).all()


@pytest.mark.parametrize("shape", [-1, (2, -3), 2.5, "3", (2, None)])
def test_bad_shapes(accelerator, shape):
    with pytest.raises((ValueError, TypeError)):
        accelerator.empty(shape, np.float32)


def test_len_of_0d_is_a_type_error(accelerator):
    with pytest.raises(TypeError):
        len(accelerator.zeros((), np.float32))


@pytest.mark.parametrize("dtype", [np.float32, dc.float32, "float32", np.dtype("f4"), "f4"])
def test_float32_spellings(accelerator, dtype):
    assert accelerator.zeros(3, dtype).dtype == np.float32


@pytest.mark.parametrize(("dtype", "expected"), [
    (np.float64, "float64"), (np.float16, "float16"), (np.int8, "int8"), (np.uint16, "uint16"),
    (dc.int32, "int32"), (np.int64, "int64"), (np.uint64, "uint64"), (bool, "bool"), (np.bool_, "bool"),
    (int, "int64"), (float, "float64"), (">f4", "float32"),
])
def test_dtypes(accelerator, dtype, expected):
    b = accelerator.zeros((2, 2), dtype)
    assert b.dtype == np.dtype(expected) and b.numpy().dtype == np.dtype(expected)
    assert b.nbytes == 4 * np.dtype(expected).itemsize


def test_default_dtype_is_float32(accelerator):
    assert accelerator.empty(3).dtype == np.float32 and accelerator.zeros(3).dtype == np.float32


@pytest.mark.parametrize("dtype", ["V8", object, "U3", "nonsense"])  # complex is storage now (the FFTs)
def test_unsupported_dtypes_are_type_errors(accelerator, dtype):
    with pytest.raises(TypeError):
        accelerator.zeros(3, dtype)


@pytest.mark.parametrize("array", [
    np.arange(20, dtype=np.float32).reshape(4, 5)[:, ::2],  # strided
    np.arange(20, dtype=np.float32).reshape(4, 5).T,  # Fortran order
    np.arange(6, dtype=">f4"),  # big-endian: stored in native order
    np.arange(6, dtype=">i8").reshape(2, 3),
    np.arange(6, dtype=np.int64), np.array([True, False, True]), np.arange(5, dtype=np.float16),
    np.arange(5, dtype=np.uint8), np.zeros((0, 3), np.float32), np.array(3.5, np.float32),
])
def test_asarray_roundtrip(accelerator, array):
    b = accelerator.asarray(array)
    assert b.shape == array.shape
    assert b.dtype == array.dtype.newbyteorder("=")
    assert b.dtype.isnative
    np.testing.assert_array_equal(b.numpy(), array)
    np.testing.assert_array_equal(np.asarray(b), array)


def test_asarray_of_python_data(accelerator):
    assert accelerator.asarray([1.0, 2.0]).dtype == np.float64
    assert accelerator.asarray([[1, 2], [3, 4]]).shape == (2, 2)
    b = accelerator.asarray([1, 2, 3], dtype=np.float32)
    assert b.dtype == np.float32 and b.numpy().tolist() == [1.0, 2.0, 3.0]
    assert accelerator.asarray(7).shape == ()


def test_asarray_of_a_buffer(accelerator):
    b = accelerator.asarray(np.arange(4, dtype=np.float32))
    assert accelerator.asarray(b) is b
    c = accelerator.asarray(b, dtype=np.float64)
    assert c.dtype == np.float64 and c.numpy().tolist() == [0, 1, 2, 3]
    cpu_copy = dc.accelerator("cpu").asarray(b)
    assert cpu_copy.accelerator is dc.accelerator("cpu") and cpu_copy.numpy().tolist() == [0, 1, 2, 3]


def test_numpy_is_a_copy(accelerator):
    b = accelerator.asarray(np.arange(6, dtype=np.float32))
    h = b.numpy()
    h[:] = -1
    assert b.numpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert np.asarray(b, dtype=np.float64).dtype == np.float64


def test_host_writes_are_seen(accelerator):
    b = accelerator.zeros((3, 4), np.int32)
    with b.host() as h:
        assert h.shape == (3, 4) and h.dtype == np.int32
        h[:] = np.arange(12).reshape(3, 4)
        h[0, 0] = 100
    expected = np.arange(12).reshape(3, 4)
    expected[0, 0] = 100
    np.testing.assert_array_equal(b.numpy(), expected)
    out = np.empty((3, 4), np.int32)
    b.copy_to(out)
    np.testing.assert_array_equal(out, expected)


def test_host_reads_current_contents(accelerator):
    b = accelerator.asarray(np.arange(4, dtype=np.float64))
    with b.host() as h:
        assert h.tolist() == [0, 1, 2, 3]
    b.copy_from(np.full(4, 9.0))
    with b.host() as h:
        assert h.tolist() == [9, 9, 9, 9]


def test_copy_from_and_copy_to(accelerator):
    b = accelerator.empty((2, 3), np.float32)
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    b.copy_from(src)
    out = np.zeros((2, 3), np.float32)
    assert b.copy_to(out) is out
    np.testing.assert_array_equal(out, src)
    b.copy_from(np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2])  # strided source
    np.testing.assert_array_equal(b.numpy(), np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2])
    b.copy_from([[1, 2, 3], [4, 5, 6]])  # a list takes the buffer's dtype
    assert b.numpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    b.copy_from(src.astype(">f4"))
    np.testing.assert_array_equal(b.numpy(), src)
    other = accelerator.zeros((2, 3), np.float32)
    b.copy_from(other)
    assert (b.numpy() == 0).all()


def test_copy_errors_name_the_problem(accelerator):
    b = accelerator.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"\(3,\).*\(2, 3\)"):
        b.copy_from(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="float64.*float32"):
        b.copy_from(np.zeros((2, 3), np.float64))
    with pytest.raises(ValueError, match="shape"):
        b.copy_to(np.zeros((3, 2), np.float32))
    with pytest.raises(TypeError, match="int32"):
        b.copy_to(np.zeros((2, 3), np.int32))
    with pytest.raises(TypeError, match="numpy array"):
        b.copy_to([0] * 6)
    readonly = np.zeros((2, 3), np.float32)
    readonly.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        b.copy_to(readonly)
    with pytest.raises(ValueError, match="contiguous"):
        b.copy_to(np.zeros((2, 6), np.float32)[:, ::2])


def test_repr(accelerator):
    b = accelerator.zeros((2, 3), np.float32)
    text = repr(b)
    assert "(2, 3)" in text and "float32" in text and accelerator.id in text
    assert str(b)


def test_zero_size_buffers_roundtrip(accelerator):
    b = accelerator.asarray(np.zeros((0,), np.float32))
    b.copy_from(np.zeros((0,), np.float32))
    out = np.zeros((0,), np.float32)
    b.copy_to(out)
    with b.host() as h:
        assert h.size == 0
    assert b.numpy().shape == (0,)
