"""``@dc.fuse(contract=True)`` / ``@dc.fuse(fastmath=True)`` (issue 22): expressions compute numpy's bits by
default (no ``a*b+c`` fused into one rounding); a fused function may ask for ``@dc.kernel``'s options of
those names, and then its kernels are separate builds: the default stays numpy's."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import dotcompute as dc


def _host_has_fma() -> bool:
    if platform.machine() in ("aarch64", "arm64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            return " fma " in f.read()
    except OSError:
        return False


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(22)
    a = rng.random(4096, dtype=np.float32) + np.float32(0.5)
    b = rng.random(4096, dtype=np.float32) + np.float32(0.5)
    m = a * b  # numpy's rounded product: m - a*b is 0 unless the product is not rounded first
    fused = (m.astype(np.float64) - a.astype(np.float64) * b.astype(np.float64)).astype(np.float32)
    return m, a, b, fused


def _residual(m, a, b):
    return m - a * b


@pytest.mark.parametrize("mode", [{}, {"contract": True}, {"fastmath": True}], ids=["ieee", "contract", "fastmath"])
def test_fused_functions_follow_their_math_mode(accelerator, mode) -> None:
    m, a, b, fused = _inputs()
    got = dc.fuse(_residual, accelerator=accelerator, **mode)(m, a, b)
    if not mode:
        np.testing.assert_array_equal(got, m - a * b)  # numpy's bits: all zeros
    elif accelerator.id == "cpu:0" and _host_has_fma():
        np.testing.assert_array_equal(got, fused)  # the host compiler contracts when allowed to
    else:
        # allowed, not required: either rounding of the product
        assert np.all((got == fused) | (got == 0)), got[(got != fused) & (got != 0)][:4]
    # the default build of the same structure is another kernel: still numpy's bits
    np.testing.assert_array_equal(dc.fuse(_residual, accelerator=accelerator)(m, a, b), m - a * b)


def test_the_options_are_checked() -> None:
    with pytest.raises(TypeError, match="fastmath"):
        dc.fuse(_residual, fastmath="yes")
    with pytest.raises(TypeError, match="contract"):
        dc.fuse(contract=1)(_residual)
