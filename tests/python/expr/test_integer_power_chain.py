"""Float ``x ** n`` for a constant integer 2 < |n| <= 8 (and -2): a product chain rounded once instead
of ``pow`` (expr/powers.py). Checked on every device against the exact power (Python's Fraction,
rounded correctly) and numpy: at most 1 ulp from the exact value, NaN, infinities (overflow), zeros
(underflow) and signs exactly numpy's; inputs across the whole exponent range, edge values, odd and
empty sizes."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.expr import build
from dotcompute.expr.operands import has_float64

EXPONENTS = (3, 4, 5, 7, 8, -2, -3, -8)


def _inputs(dtype: np.dtype, n: int, seed: int = 0) -> np.ndarray:
    info = np.finfo(dtype)
    edge = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 3.0, -7.25, info.tiny, -info.tiny,
                     info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max, info.eps], dtype)
    rng = np.random.default_rng(seed)
    # magnitudes spread over every binade: powers that overflow, underflow to subnormals or to zero
    mag = np.exp2(rng.uniform(np.log2(float(info.smallest_subnormal)), np.log2(float(info.max)), n))
    spread = (mag * rng.choice([-1.0, 1.0], n)).astype(dtype)
    body = rng.standard_normal(n).astype(dtype)
    return np.concatenate([edge, spread, body]) if n >= edge.size else edge[:n]


def _ordered(a: np.ndarray) -> np.ndarray:
    """Integers in the order of the float values (adjacent floats differ by 1; -0 and 0 are 0)."""
    bits = a.view(np.int64 if a.dtype == np.float64 else np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & ((1 << (8 * a.itemsize - 1)) - 1)), bits)


def _exact(x: np.ndarray, n: int) -> np.ndarray:
    """x ** n rounded correctly to x's dtype (finite nonzero x), from the exact rational power."""
    out = np.empty_like(x)
    info = np.finfo(x.dtype)
    big = Fraction(float(info.max)) + Fraction(2.0 ** (info.maxexp - info.nmant - 2))
    for i, v in enumerate(x.tolist()):
        f = Fraction(v) ** n
        if abs(f) >= big:  # at or past max + half an ulp: rounds to infinity
            out[i] = np.inf if f > 0 else -np.inf
            continue
        d = float(f)  # correctly rounded to float64
        if x.dtype == np.float32:  # of float32(d) and its neighbours, the nearest to f (ties to even)
            c = np.float32(d)
            near = [k for k in (c, np.nextafter(c, np.float32(np.inf)), np.nextafter(c, np.float32(-np.inf)))
                    if np.isfinite(k)]
            d = min(near, key=lambda k: (abs(Fraction(float(k)) - f), int(np.float32(k).view(np.int32)) & 1))
        out[i] = d
    return out


def _numpy(x: np.ndarray, n: int) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return x ** x.dtype.type(n)


def _check(x: np.ndarray, got: np.ndarray, n: int) -> None:
    want = _numpy(x, n)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"NaNs of x ** {n}")
    g, w = got[~nan], want[~nan]
    # overflow, underflow to zero and signs as numpy's
    np.testing.assert_array_equal(np.isinf(g), np.isinf(w), err_msg=f"infinities of x ** {n}")
    np.testing.assert_array_equal(g == 0, w == 0, err_msg=f"zeros of x ** {n}")
    np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=f"signs of x ** {n}")
    # at most 1 ulp from the exact power (a sample: the reference is slow), and so within numpy's own
    # accuracy; numpy's pow is not always correctly rounded either, so against it the bound is 2
    xs = x[~nan]
    pick = np.flatnonzero(np.isfinite(xs) & (xs != 0))[::max(1, xs.size // 400)]
    exact = _exact(xs[pick], n)
    ulps = np.abs(_ordered(g[pick]) - _ordered(exact))
    assert ulps.max(initial=0) <= 1, (n, xs[pick][ulps > 1][:4], g[pick][ulps > 1][:4], exact[ulps > 1][:4])
    assert np.abs(_ordered(g) - _ordered(w)).max(initial=0) <= 2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [0, 7, 1001])
def test_integer_powers_within_an_ulp(accelerator, dtype, size):
    if dtype == "float64" and not has_float64(accelerator):
        pytest.skip(f"{accelerator.id} has no float64")
    x = _inputs(np.dtype(dtype), size, seed=size)
    buf = accelerator.asarray(x)
    for n in EXPONENTS if size else (3, -3):
        _check(x, (buf ** n).numpy(), n)
    if size:  # the same chain through dc.pow, a float exponent, and a fused expression
        _check(x, dc.pow(buf, 5).numpy(), 5)
        _check(x, (buf ** 3.0).numpy(), 3)
        with np.errstate(all="ignore"):  # fused with an add: the power's value, then numpy's addition
            want = (buf ** 3).numpy() + x
        np.testing.assert_array_equal((buf ** 3 + buf).numpy(), want)


def test_double_word_chain_for_float32_without_float64(accelerator, monkeypatch):
    """Where a device has no float64 (Metal) float32 powers take the double-word chain in float32."""
    monkeypatch.setattr(build, "has_float64", lambda acc: False)
    x = _inputs(np.dtype(np.float32), 601, seed=5)
    buf = accelerator.asarray(x)
    for n in (3, 8, -2, -5):
        assert "float64" not in dc.explain(buf ** n)
        _check(x, (buf ** n).numpy(), n)


def test_same_bits_as_cpu(accelerator, cpu):
    """Only + - * / and a select: every backend computes the same bits (float32 where it multiplies
    in float64 as cpu:0 does: without float64, Metal takes the other method)."""
    if not has_float64(accelerator):
        pytest.skip(f"{accelerator.id} has no float64")
    for dtype in ("float32", "float64"):
        x = _inputs(np.dtype(dtype), 301, seed=9)
        for n in (3, 6, -4):
            got, ref = (accelerator.asarray(x) ** n).numpy(), (cpu.asarray(x) ** n).numpy()
            ok = ~np.isnan(ref)
            np.testing.assert_array_equal(np.isnan(got), ~ok)
            assert got[ok].tobytes() == ref[ok].tobytes()


def test_which_exponents_take_the_chain(cpu):
    x = cpu.asarray(np.linspace(0.5, 2, 8))
    for expr in (x ** 3, x ** 8, x ** -2, x ** -8, x ** 4.0, dc.pow(x, 7)):
        assert "pow" not in dc.explain(expr) and "**" not in dc.explain(expr)
    for expr in (x ** 9, x ** -9, x ** 2.5, x ** 3.5, x.astype(np.float16) ** 3):
        text = dc.explain(expr)
        assert "pow" in text or "**" in text
