"""Complex scalar kernel arguments: launched as their two parts, put together at kernel entry, on
every accelerator (against numpy), compiled by NVRTC, and refused with the parameter's name when the
value is not a number."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.cuda import nvrtc_library_path


@dc.kernel
def rotate64(z: dc.complex64, x: dc.Buffer[dc.complex64], out: dc.Buffer[dc.complex64]):
    i = dc.global_id(0)
    out[i] = z * x[i] + dc.conj(z)


@dc.kernel
def rotate128(z: dc.complex128, x: dc.Buffer[dc.complex128], out: dc.Buffer[dc.complex128]):
    i = dc.global_id(0)
    w = z                       # the parameter is an ordinary complex local
    w = w * 2.0
    out[i] = w * x[i] + z.imag


@dc.kernel
def parts(z: dc.complex64, re: dc.Buffer[dc.float32], im: dc.Buffer[dc.float32]):
    re[0] = z.real
    im[0] = z.imag


def _x(dtype) -> np.ndarray:
    return (np.linspace(-3, 3, 37) + 1j * np.linspace(2, -1, 37)).astype(dtype)


@pytest.mark.parametrize("z", [2 - 1j, np.complex64(0.5 + 3j), np.complex128(1e-3 - 4j), 3, 1.5, np.float32(-2.0)],
                         ids=["python complex", "np.complex64", "np.complex128", "int", "float", "np.float32"])
def test_complex64_argument(accelerator, z):
    x = _x(np.complex64)
    out = np.zeros_like(x)
    dc.launch(rotate64, x.size, z, x, out, accelerator=accelerator)
    zz = np.complex64(complex(z))
    np.testing.assert_allclose(out, zz * x + np.conj(zz), rtol=1e-6, atol=1e-6)


def test_complex128_argument(accelerator):
    if "fp64" not in accelerator.info.get("features", []):
        pytest.skip(f"{accelerator.id} has no float64")
    x = _x(np.complex128)
    out = np.zeros_like(x)
    z = 0.1 + 1e-300j  # a part that float32 would flush: the parts keep their precision
    dc.launch(rotate128, x.size, z, x, out, accelerator=accelerator)
    np.testing.assert_allclose(out, (2 * z) * x + z.imag, rtol=1e-15)


def test_parts_are_put_together_exactly(accelerator):
    # inf and nan parts survive (no re + im * 1j arithmetic, where 0 * inf would make a nan)
    re, im = np.zeros(1, np.float32), np.zeros(1, np.float32)
    for z in (complex(np.inf, 1.0), complex(2.0, -np.inf), complex(np.nan, 0.0), complex(-0.0, -0.0)):
        dc.launch(parts, 1, z, re, im, accelerator=accelerator)
        np.testing.assert_array_equal(re[0], np.float32(z.real))
        np.testing.assert_array_equal(im[0], np.float32(z.imag))
        assert np.signbit(re[0]) == np.signbit(z.real) and np.signbit(im[0]) == np.signbit(z.imag)


def test_a_generic_parameter_takes_a_complex_value(accelerator):
    @dc.kernel
    def shift(z, x: dc.Buffer[dc.complex64], out: dc.Buffer[dc.complex64]):
        i = dc.global_id(0)
        out[i] = dc.complex64(x[i] + z)

    x = _x(np.complex64)
    out = np.zeros_like(x)
    dc.launch(shift, x.size, np.complex64(1 - 2j), x, out, accelerator=accelerator)
    np.testing.assert_allclose(out, x + np.complex64(1 - 2j), rtol=1e-6)


@pytest.mark.parametrize("bad", ["1+2j", None, True, [1, 2]], ids=["str", "None", "bool", "list"])
def test_a_value_that_is_not_a_number_names_the_parameter(bad):
    x = _x(np.complex64)
    with pytest.raises(dc.KernelTypeError, match=r"rotate64\(\):.* 'z'"):
        dc.launch(rotate64, x.size, bad, x, np.zeros_like(x), accelerator="cpu")


def test_a_complex_value_for_a_real_parameter_is_refused():
    @dc.kernel
    def scale(a: dc.float32, x: dc.Buffer[dc.float32]):
        x[dc.global_id(0)] *= a

    with pytest.raises(dc.KernelTypeError, match=r"scale\(\): parameter 'a' expects float32, got a complex"):
        dc.launch(scale, 4, 1 + 2j, np.ones(4, np.float32), accelerator="cpu")


def test_the_cuda_source_compiles_with_nvrtc():
    if nvrtc_library_path() is None:
        pytest.skip("NVRTC is not installed (pip install 'dotcompute[cuda]')")
    for k in (rotate64, rotate128, parts):
        assert "dc_mk_c" in k.source("cuda")
        assert dc.cuda.compile(k, arch="sm_80")
