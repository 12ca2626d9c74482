"""Laziness and fusion: one kernel per expression, values used twice computed once, nothing twice."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.expr import LazyBuffer
from dotcompute.expr.evaluate import run


def launches() -> int:
    return dc.expr.stats()["launches"]


def test_a_chain_is_one_kernel_and_runs_once(accelerator: dc.Accelerator) -> None:
    rng = np.random.default_rng(0)
    ha, hx, hy = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    a, x, y = (accelerator.asarray(h) for h in (ha, hx, hy))
    before, written = launches(), dc.expr.stats()["values_written"]
    z = a * x + y * y - 3.0
    assert isinstance(z, dc.Buffer) and z.shape == (1000,) and z.dtype == np.float32
    assert launches() == before  # nothing ran yet
    np.testing.assert_allclose(z.numpy(), ha * hx + hy * hy - 3.0, rtol=1e-6, atol=1e-6)  # FMA contraction
    assert launches() == before + 1  # one kernel for the whole chain
    assert dc.expr.stats()["values_written"] == written + 1  # temporaries stay in registers
    z.numpy()
    np.asarray(z)
    assert launches() == before + 1  # nothing evaluated twice


def test_a_held_value_is_computed_once(accelerator: dc.Accelerator) -> None:
    h = np.linspace(-1, 1, 64)
    b = accelerator.asarray(h)
    t = dc.sqrt(b * b + 1.0)  # held by a variable and used by two expressions
    u = t + 1.0
    v = t * 2.0
    before, written = launches(), dc.expr.stats()["values_written"]
    np.testing.assert_allclose(u.numpy(), np.sqrt(h * h + 1) + 1)
    assert launches() == before + 1
    assert dc.expr.stats()["values_written"] == written + 2  # u, and t which the program holds
    assert not t.is_pending  # written out by u's kernel, because the program still holds it
    np.testing.assert_allclose(v.numpy(), np.sqrt(h * h + 1) * 2)
    assert launches() == before + 2  # v's kernel reads t instead of recomputing it


def test_a_shared_subexpression_is_computed_once_inside_the_kernel(accelerator: dc.Accelerator) -> None:
    b = accelerator.asarray(np.arange(5.0))
    s = b * 3.0
    src = dc.explain(s * s + s)
    assert src.count(" * ") == 2  # b * 3 once, then s * s
    del s


def test_pending_expressions_see_the_values_of_when_they_were_written(accelerator: dc.Accelerator) -> None:
    a = accelerator.asarray(np.arange(4.0))
    c = a + 1.0
    a += 10.0  # a write to an input: c is evaluated first
    np.testing.assert_array_equal(c.numpy(), [1, 2, 3, 4])
    d = a * 2.0
    a[0] = -1.0
    np.testing.assert_array_equal(d.numpy(), [20, 22, 24, 26])
    e = a - 1.0
    a.copy_from(np.zeros(4))
    np.testing.assert_array_equal(e.numpy(), [-2, 10, 11, 12])
    f = a + 5.0
    with a.host() as h:
        h[:] = 7
    np.testing.assert_array_equal(f.numpy(), [5, 5, 5, 5])


@dc.kernel
def _scale(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] * 2.0


def test_expressions_as_kernel_arguments_and_launch_hazards(accelerator: dc.Accelerator) -> None:
    a = accelerator.asarray(np.arange(4.0))
    out = accelerator.zeros(4, np.float64)
    pending = out + 1.0
    dc.launch(_scale, 4, a + 1.0, out)  # a lazy argument is evaluated; the kernel writes `out`
    np.testing.assert_array_equal(out.numpy(), [2, 4, 6, 8])
    np.testing.assert_array_equal(pending.numpy(), [1, 1, 1, 1])  # read before the launch wrote out


def test_synchronize_evaluates(accelerator: dc.Accelerator) -> None:
    a = accelerator.asarray(np.arange(3.0))
    z = a * 2.0
    accelerator.synchronize()
    assert not z.is_pending
    w = a * 3.0
    dc.synchronize()
    assert not w.is_pending


def test_explain_shows_one_kernel(accelerator: dc.Accelerator) -> None:
    a = accelerator.asarray(np.ones(8, np.float32))
    text = dc.explain(dc.exp(a) * 2.0 + a, backend=accelerator.backend)
    assert text.count("def dc_expr_") == 1 and "m_exp" in text
    assert "dc_expr_" in text.split("----")[-1]  # the backend source of the same kernel
    assert (a * 2.0).source() == dc.explain(a * 2.0)


def test_zero_size_and_zero_d(accelerator: dc.Accelerator) -> None:
    e = accelerator.asarray(np.zeros((0, 3), np.float32))
    assert (e * 2.0).numpy().shape == (0, 3)
    s = dc.sum(accelerator.asarray(np.arange(4.0)) * 1.0)
    assert isinstance(s, LazyBuffer) and s.shape == ()
    r = s * 2.0 + 1.0  # a 0-d value inside an expression: no host round trip
    assert r.shape == ()
    assert float(r) == 13.0
    assert r.numpy().shape == ()


def test_kernels_are_cached_by_structure(accelerator: dc.Accelerator) -> None:
    a = accelerator.asarray(np.arange(10.0))
    (a * 2.0 - 1.5).numpy()
    made = dc.expr.stats()["kernels_generated"]
    b = accelerator.asarray(np.arange(20.0))
    np.testing.assert_array_equal((b * 7.0 - 0.25).numpy(), np.arange(20.0) * 7 - 0.25)
    assert dc.expr.stats()["kernels_generated"] == made  # new shape and scalars, same kernel


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_math_functions_on_buffers(accelerator: dc.Accelerator, dtype: type) -> None:
    h = np.array([0.5, 1.0, 2.0, 4.0, 9.0], dtype) if dtype == np.float32 else np.arange(1, 6, dtype=dtype)
    b = accelerator.asarray(h)
    rtol = 1e-6 if h.dtype == np.float32 else 1e-12
    names = ("sqrt", "exp", "log", "sin", "cos", "tanh", "floor", "ceil", "log2")
    pending = [getattr(dc, name)(b) for name in names]
    run(pending)  # one kernel for all of them (fewer compilations on a cold cache)
    for name, got in zip(names, pending, strict=True):
        want = getattr(np, name)(h)
        assert got.dtype == want.dtype, name
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, err_msg=name)
    np.testing.assert_allclose(dc.where(b > 2, b, -b).numpy(), np.where(h > 2, h, -h))
    np.testing.assert_allclose(dc.clip(b, 1, 3).numpy(), np.clip(h, 1, 3))
    np.testing.assert_allclose(dc.minimum(b, 2).numpy(), np.minimum(h, 2))
    np.testing.assert_allclose(dc.maximum(b, 2).numpy(), np.maximum(h, 2))
    np.testing.assert_allclose(np.sqrt(b).numpy(), np.sqrt(h), rtol=rtol)  # numpy's ufunc → lazy too
    assert np.allclose(dc.sqrt(h), np.sqrt(h))  # numpy in: the host path, numpy out


def test_minimum_maximum_propagate_nan(accelerator: dc.Accelerator) -> None:
    h = np.array([1.0, np.nan, 3.0])
    g = np.array([np.nan, 2.0, 1.0])
    a, b = accelerator.asarray(h), accelerator.asarray(g)
    np.testing.assert_array_equal(dc.minimum(a, b).numpy(), np.minimum(h, g))
    np.testing.assert_array_equal(dc.maximum(a, b).numpy(), np.maximum(h, g))


def test_math_functions_still_work_inside_kernels(accelerator: dc.Accelerator) -> None:
    @dc.kernel
    def k(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        out[i] = dc.sqrt(x[i]) + dc.minimum(x[i], 1.0)

    x = accelerator.asarray(np.array([4.0, 9.0], np.float32))
    out = accelerator.zeros(2, np.float32)
    dc.launch(k, 2, x, out)
    np.testing.assert_allclose(out.numpy(), [3.0, 4.0])
