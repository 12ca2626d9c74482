"""The Array API's creation, data-type, device and inspection functions, the array object's
surface and the named elementwise functions, checked against numpy on every device."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def test_creation_matches_numpy_on_the_device(accelerator: dc.Accelerator) -> None:
    f = np.float32
    cases = [
        (dc.zeros((2, 3), dtype=f, device=accelerator), np.zeros((2, 3), f)),
        (dc.ones(4, dtype=np.int16, device=accelerator), np.ones(4, np.int16)),
        (dc.full((3,), 2.5, dtype=f, device=accelerator), np.full(3, 2.5, f)),
        (dc.full((2, 2), True, device=accelerator), np.full((2, 2), True)),
        (dc.arange(1, 10, 3, device=accelerator), np.arange(1, 10, 3)),
        (dc.linspace(0, 1, 5, dtype=f, device=accelerator), np.linspace(0, 1, 5, dtype=f)),
        (dc.eye(3, 4, k=1, dtype=f, device=accelerator), np.eye(3, 4, k=1, dtype=f)),
        (dc.asarray([[1, 2], [3, 4]], device=accelerator), np.array([[1, 2], [3, 4]])),
        (dc.asarray(3, dtype=np.uint8, device=accelerator), np.asarray(3, np.uint8)),
    ]
    for got, want in cases:
        assert isinstance(got, dc.Buffer) and got.device is accelerator
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    x = dc.asarray(np.arange(12, dtype=f).reshape(3, 4), device=accelerator)
    np.testing.assert_array_equal(dc.tril(x, k=-1).numpy(), np.tril(x.numpy(), -1))
    np.testing.assert_array_equal(dc.triu(x).numpy(), np.triu(x.numpy()))
    like = dc.full_like(x, 7)
    assert like.device is accelerator and like.dtype == f and float(like[1, 1]) == 7.0


def test_asarray_copy_and_device_rules() -> None:
    cpu = dc.accelerator("cpu:0")
    x = dc.asarray([1.0, 2.0], device=cpu)
    assert dc.asarray(x) is x
    y = dc.asarray(x, copy=True)
    assert y is not x and y.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="copy=False"):
        dc.asarray(x, dtype=dc.float32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        dc.asarray([1, 2], copy=False)
    assert dc.asarray(x, dtype=dc.int32).dtype == np.int32
    with pytest.raises(OverflowError):
        dc.asarray(300, dtype=dc.uint8)


def test_default_device_context_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = dc.accelerator("cpu:0")
    with dc.default_device("cpu:0"):
        assert dc.zeros(2).device is cpu
        assert dc.__array_namespace_info__().default_device() is cpu
    monkeypatch.setenv("DOTCOMPUTE_DEFAULT_DEVICE", "cpu:0")
    assert dc.ones(1).device is cpu
    monkeypatch.setenv("DOTCOMPUTE_DEFAULT_DEVICE", "no-such-backend:7")
    with pytest.raises(Exception, match="no-such-backend"):
        dc.ones(1)
    with dc.default_device(cpu):  # the context manager wins over the variable
        assert dc.ones(1).device is cpu


def test_inspection_reports_dtypes_per_device() -> None:
    info = dc.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] is True
    assert dc.accelerator("cpu:0") in info.devices()
    assert set(info.dtypes(device="cpu:0", kind="integral")) == {
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    assert info.default_dtypes(device="cpu:0")["real floating"] == np.float64
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="strings")
    for acc in info.devices():
        if acc.backend == "metal":  # Metal has no float64, and says so
            assert "float64" not in info.dtypes(device=acc)
            assert info.default_dtypes(device=acc)["real floating"] == np.float32


def test_data_type_functions_follow_numpy() -> None:
    assert dc.result_type(dc.int8, dc.uint8) == np.int16
    assert dc.result_type(dc.float32, 1.0) == np.float32  # Python scalars are weak (NEP 50)
    assert dc.can_cast(dc.int8, dc.int16) and not dc.can_cast(dc.float64, dc.float32)
    assert dc.isdtype(dc.float32, "real floating") and not dc.isdtype(dc.int8, ("bool", "real floating"))
    assert dc.finfo(dc.float32).eps == np.finfo(np.float32).eps and dc.iinfo(dc.int16).max == 32767
    with pytest.raises(TypeError, match="floating"):
        dc.finfo(dc.int32)
    x = dc.asarray([1.7, -2.2], device="cpu:0")
    assert dc.astype(x, dc.int32).numpy().tolist() == [1, -2]
    assert dc.astype(x, dc.float64, copy=False) is x


def test_array_object_surface(accelerator: dc.Accelerator) -> None:
    h = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = dc.asarray(h, device=accelerator)
    assert x.__array_namespace__() is dc and x.device is accelerator
    assert x.to_device(accelerator) is x
    assert x.to_device("cpu:0").device is dc.accelerator("cpu:0")
    np.testing.assert_array_equal(x.mT.numpy(), np.swapaxes(h, -1, -2))
    np.testing.assert_array_equal(x[None, 1, 2].numpy(), h[None, 1, 2])
    np.testing.assert_array_equal(x[1, ..., None, :].numpy(), h[1, ..., None, :])
    if accelerator.host_visible_memory:  # more than 3 dimensions: numpy's copy on host memory
        np.testing.assert_array_equal(x[None, 1, ..., None].numpy(), h[None, 1, ..., None])
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="1999.01")


def test_one_element_buffers_are_masks_not_ints() -> None:
    x = dc.zeros(1, device="cpu:0")
    x[dc.asarray([False], device="cpu:0")] = 1.0  # used to write x[0] through __index__
    assert x.numpy().tolist() == [0.0]
    y = dc.asarray([10.0, 20.0], device="cpu:0")
    assert y[dc.asarray([True, False], device="cpu:0")].numpy().tolist() == [10.0]
    with pytest.raises(TypeError, match="0-d integer"):
        [1, 2, 3][dc.asarray([1], device="cpu:0")]
    assert [1, 2, 3][dc.asarray(1, device="cpu:0")] == 2


def test_masks_and_integer_arrays_on_host_memory() -> None:
    h = np.arange(12.0).reshape(3, 4)
    x = dc.asarray(h, device="cpu:0")
    np.testing.assert_array_equal(x[x > 5].numpy(), h[h > 5])
    np.testing.assert_array_equal(x[dc.asarray([2, 0], device="cpu:0")].numpy(), h[[2, 0]])
    v = x[1:]  # a view: the masked write lands in the parent
    v[v > 6] = -1.0
    h[1:][h[1:] > 6] = -1.0
    np.testing.assert_array_equal(x.numpy(), h)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "logaddexp", "equal",
                                  "less", "copysign", "hypot", "atan2"])
def test_named_binary_functions_match_numpy(name: str) -> None:
    a = np.array([-2.5, -0.0, 0.5, 3.0, np.inf], np.float32)
    b = np.array([1.5, 2.0, -0.5, 3.0, np.inf], np.float32)
    fn = getattr(dc, name)
    want = getattr(np, {"atan2": "arctan2", "copysign": "copysign"}.get(name, name))(a, b)
    got = fn(dc.asarray(a, device="cpu:0"), dc.asarray(b, device="cpu:0"))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_named_unary_functions_keep_numpy_dtypes(accelerator: dc.Accelerator) -> None:
    f = dc.asarray(np.array([-1.5, -0.0, 2.0, np.nan], np.float32), device=accelerator)
    i = dc.asarray(np.array([3, 250, 7], np.uint8), device=accelerator)
    np.testing.assert_array_equal(dc.sign(f).numpy(), np.sign(f.numpy()))
    np.testing.assert_array_equal(dc.signbit(f).numpy(), np.signbit(f.numpy()))
    np.testing.assert_array_equal(dc.square(i).numpy(), np.square(i.numpy()))
    np.testing.assert_array_equal(dc.logical_not(i).numpy(), np.logical_not(i.numpy()))
    assert dc.round(i).dtype == np.uint8 and dc.round(i).numpy().tolist() == [3, 250, 7]
    np.testing.assert_array_equal(dc.clip(i, min=5, max=200).numpy(), np.clip(i.numpy(), 5, 200))


def test_complex_elementwise_on_host_memory() -> None:
    z = np.array([1 + 2j, -0.5 - 1j], np.complex64)
    x = dc.asarray(z, device="cpu:0")
    for got, want in ((x * x + 1, z * z + 1), (dc.exp(x), np.exp(z)), (dc.conj(x), np.conj(z)),
                      (dc.real(x), z.real), (dc.imag(x), z.imag), (abs(x), np.abs(z))):
        assert got.dtype == want.dtype and got.device is x.device
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
