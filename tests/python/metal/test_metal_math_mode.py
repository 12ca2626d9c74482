"""``fastmath=`` and ``contract=`` on Metal (issue 22): the plugin used to ignore the compile options, so
every kernel compiled in one fixed mode. Now IEEE (``fastMathEnabled = NO``) is the default and
``fastmath=True`` passes ``-ffast-math``, which the plugin turns into ``fastMathEnabled = YES``. The test
double shows the difference the way a GPU does: a fast-math library may fuse ``a*b+c`` into one FMA
(the double compiles it for the host's FMA), a safe one rounds the product first, as numpy does.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest

import dotcompute as dc


def _residual(**options):
    @dc.kernel(**options)
    def residual(m: dc.Buffer[dc.float32], a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32],
                 out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = m[i] - a[i] * b[i]

    return residual


def _host_has_fma() -> bool:
    if platform.machine() in ("aarch64", "arm64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            return " fma " in f.read()
    except OSError:
        return False


def _inputs(n: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(22)
    a = rng.random(n, dtype=np.float32) + np.float32(0.5)
    b = rng.random(n, dtype=np.float32) + np.float32(0.5)
    m = a * b  # numpy's rounded product: m - a*b is exactly 0 without contraction
    return m, a, b


def _run(metal: dc.Accelerator, kernel, m, a, b) -> np.ndarray:
    out = np.full(m.shape, np.nan, np.float32)
    dc.launch(kernel, m.size, m, a, b, out, accelerator=metal)
    return out


def test_default_and_contract_are_numpys_arithmetic(metal):
    m, a, b = _inputs()
    want = m - a * b  # all zeros
    for options in ({}, {"contract": True}):  # Metal has no contraction-only mode: contract compiles safe
        got = _run(metal, _residual(**options), m, a, b)
        np.testing.assert_array_equal(got, want, err_msg=f"options {options}")


@pytest.mark.skipif(not _host_has_fma(), reason="the double's fast math needs a host with FMA to fuse a*b+c")
def test_fastmath_turns_fast_math_on(metal):
    m, a, b = _inputs()
    got = _run(metal, _residual(fastmath=True), m, a, b)
    # one rounding: the product is exact in float64, so is its difference with m; one cast rounds it
    fused = (m.astype(np.float64) - a.astype(np.float64) * b.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, fused)
    assert np.count_nonzero(fused) > m.size // 2  # so the IEEE result (all zeros) cannot pass for it
    # the IEEE build of the same source is a different cache entry: still numpy's result
    np.testing.assert_array_equal(_run(metal, _residual(), m, a, b), np.zeros_like(m))


def test_unknown_options_are_refused_by_name(metal):
    src = """
#include <metal_stdlib>
using namespace metal;
kernel void fill(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = 1.0f; }
"""
    x = np.zeros(4, np.float32)
    with pytest.raises(dc.CompilationError, match="-O3"):
        dc.launch(dc.RawKernel(src, "fill", backend="metal", options="-O3"), 4, x, accelerator=metal)
    dc.launch(dc.RawKernel(src, "fill", backend="metal", options="-ffast-math"), 4, x, accelerator=metal)
    assert (x == 1.0).all()
