"""Complex values in array expressions: generated kernels on devices, numpy on host memory; both
compared with numpy (finite inputs; special values follow the identities of expr/complex_math.py)."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

_NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
                "atanh": "arctanh"}
_FAST = ("log", "sin", "tanh", "asinh", "expm1", "log1p")
_ALL = ("sqrt", "exp", "log", "log1p", "log2", "log10", "expm1", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
        "acos", "atan", "asinh", "acosh", "atanh", "conj", "round")


def _values(dtype: type, n: int = 9) -> np.ndarray:
    rng = np.random.default_rng(7)
    z = rng.normal(size=n) * 2 + 1j * rng.normal(size=n) * 2
    z[:3] = [1e-5 + 2e-6j, -3.5 + 0j, 40 - 1j]  # near zero (log1p/expm1), the negative axis, large Re (tanh)
    return z.astype(dtype)


def _close(got: dc.Buffer, want: np.ndarray) -> None:
    g = np.asarray(got)
    assert g.dtype == want.dtype
    tol = 2e-5 if want.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol)


def _check_functions(accelerator: dc.Accelerator, dtype: type, names: tuple[str, ...]) -> None:
    a = _values(dtype)
    x = accelerator.asarray(a)
    for name in names:
        want = getattr(np, _NUMPY_NAMES.get(name, name))(a)
        _close(getattr(dc, name)(x), want)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_arithmetic_matches_numpy(accelerator: dc.Accelerator, dtype: type) -> None:
    if dtype is np.complex128 and "float64" not in str(dc.__array_namespace_info__().dtypes(device=accelerator)):
        pytest.skip(f"{accelerator.id} has no complex128")
    a, b = _values(dtype), _values(dtype)[::-1].copy()
    x, y = accelerator.asarray(a), accelerator.asarray(b)
    _close(x * y + x / y - (1.5 - 2j), a * b + a / b - (1.5 - 2j))
    _close(x ** y, a ** b)
    _close(abs(x), np.abs(a))
    _close(dc.sign(x), np.sign(a))
    _close(dc.real(x), a.real)
    _close(dc.imag(x), a.imag)
    np.testing.assert_array_equal(np.asarray(x == y), a == b)
    np.testing.assert_array_equal(np.asarray(dc.isfinite(x)), np.isfinite(a))
    _close(dc.astype(accelerator.asarray(np.arange(3, dtype=np.float32)), dtype), np.arange(3).astype(dtype))


def test_complex_functions_match_numpy(accelerator: dc.Accelerator) -> None:
    _check_functions(accelerator, np.complex64, _FAST)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_every_complex_function_matches_numpy(accelerator: dc.Accelerator, dtype: type) -> None:
    if dtype is np.complex128 and "float64" not in str(dc.__array_namespace_info__().dtypes(device=accelerator)):
        pytest.skip(f"{accelerator.id} has no complex128")
    _check_functions(accelerator, dtype, _ALL)


def test_complex_writes_and_results_stay_on_the_device(accelerator: dc.Accelerator) -> None:
    x = dc.zeros((3, 4), dtype=dc.complex64, device=accelerator)
    x[1, :] = accelerator.asarray(_values(np.complex64, 4))
    x[2] = 1 + 1j
    want = np.zeros((3, 4), np.complex64)
    want[1], want[2] = _values(np.complex64, 4), 1 + 1j
    np.testing.assert_array_equal(x.numpy(), want)
    assert (x * 2j).device is accelerator
    r = accelerator.asarray(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="complex"):
        r[0] = 1 + 2j  # numpy would drop the imaginary part
    if not accelerator.host_visible_memory:
        with pytest.raises(TypeError, match="complex"):
            _ = x < x  # numpy's lexicographic order is not the standard's: kernels refuse it
