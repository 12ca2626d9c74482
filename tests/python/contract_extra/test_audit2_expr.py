"""Audit 2: DESIGN.md "Array expressions (fusion)" on every accelerator, against numpy — long
chains, complex buffers' indexing, scalar conversions, numpy's division and promotion corners,
writes through views, @dc.fuse signatures and threads."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import dotcompute as dc


# ---------------------------------------------------------------------------------- long chains
def test_hundreds_of_chained_operations(accelerator):
    # a loop of `e = e * a + b` used to build one graph as deep as the loop: generating its kernel
    # recursed once per operation (RecursionError from ~350 operations)
    xn = np.linspace(0, 1, 33, dtype=np.float32)
    x = accelerator.asarray(xn)
    e, want = x, xn.copy()
    for i in range(600):
        e = e * np.float32(1.0) + np.float32(0.001 * (i % 3))
        want = want * np.float32(1.0) + np.float32(0.001 * (i % 3))
    np.testing.assert_allclose(e.numpy(), want, rtol=1e-5)
    e = x
    for _ in range(2000):
        e = e + 1
    assert float(dc.sum(e)) == pytest.approx(float((xn + 2000).sum()), rel=1e-6)
    assert float(dc.max(e)) == pytest.approx(2001.0)


def test_a_long_chain_is_still_computed_once(accelerator):
    x = accelerator.asarray(np.arange(8, dtype=np.float32))
    e = x
    for _ in range(300):
        e = e + 1
    before = dc.expr.stats()["launches"]
    first = e.numpy()
    mid = dc.expr.stats()["launches"]
    second = e.numpy()
    assert dc.expr.stats()["launches"] == mid > before
    np.testing.assert_array_equal(first, np.arange(8) + 300)
    np.testing.assert_array_equal(second, first)


# ------------------------------------------------------------------------------ complex buffers
def test_indexing_and_writing_complex_buffers(accelerator):
    # the generated kernels cannot spell complex values: views, element reads and writes of complex
    # buffers used to raise TypeError (or KeyError for b[i, j] on a device)
    xn = (np.arange(12) + 1j * np.arange(12)).reshape(4, 3).astype(np.complex64)
    x = accelerator.asarray(xn)
    np.testing.assert_array_equal(x[1].numpy(), xn[1])
    assert x[1, 2] == xn[1, 2] and x[-1, -1] == xn[-1, -1]
    np.testing.assert_array_equal(x[1:3].numpy(), xn[1:3])
    np.testing.assert_array_equal(np.asarray(x[::-2]), xn[::-2])
    np.testing.assert_array_equal(x.T.numpy(), xn.T)
    np.testing.assert_array_equal(x.reshape(3, 4).numpy(), xn.reshape(3, 4))
    with pytest.raises(IndexError):
        x[4]
    x[0:2] = 5
    xn[0:2] = 5
    x[3] = np.array([1j, 2j, 3j])
    xn[3] = [1j, 2j, 3j]
    x[2, 1] = -1 + 1j
    xn[2, 1] = -1 + 1j
    np.testing.assert_array_equal(x.numpy(), xn)
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        x[0:2] = np.ones((3, 3))
    # complex arithmetic: numpy on host memory, complex kernels on other devices (docs/array-api.md)
    np.testing.assert_array_equal((x + x).numpy(), xn + xn)


# -------------------------------------------------------------------------- scalar conversions
def test_scalar_conversions_follow_numpy(accelerator):
    b = accelerator.asarray(np.arange(3, dtype=np.float32))
    for convert in (float, int, complex):
        with pytest.raises(TypeError, match=r"\(3,\)"):
            convert(b)
    with pytest.raises(ValueError):
        b.item()
    assert b[-1] == 2.0 and b[0] == 0.0
    with pytest.raises(IndexError, match="size 3"):
        b[3]
    with pytest.raises(IndexError):
        b[-4]
    s = dc.sum(b)
    assert float(s) == 3.0 and int(s) == 3 and s.item() == 3.0


# ------------------------------------------------------------------ numpy's arithmetic corners
def test_division_by_zero_and_integer_wrapping(accelerator):
    xn = np.array([-7, -1, 0, 1, 7, 2**31 - 1], np.int32)
    zn = np.zeros_like(xn)
    x, z = accelerator.asarray(xn), accelerator.asarray(zn)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a / b, lambda a, b: a + (b + 1),
                 lambda a, b: a * a, lambda a, b: a.astype(np.float32) / b.astype(np.float32),
                 lambda a, b: a.astype(np.float64) // b.astype(np.float64),
                 lambda a, b: a.astype(np.float64) % (b.astype(np.float64) - 2.5),
                 lambda a, b: a.astype(np.int8) + a.astype(np.int8), lambda a, b: abs(a), lambda a, b: -a]
        for k, op in enumerate(cases):
            want = op(xn, zn)
            got = op(x, z).numpy()
            assert got.dtype == want.dtype, k
            np.testing.assert_array_equal(got, want, err_msg=f"case {k}")


def test_promotion_nep50(accelerator):
    f32 = accelerator.asarray(np.ones(4, np.float32))
    i32 = accelerator.asarray(np.ones(4, np.int32))
    f64 = accelerator.asarray(np.ones(4, np.float64))
    u64 = accelerator.asarray(np.ones(4, np.uint64))
    i64 = accelerator.asarray(np.ones(4, np.int64))
    assert (f32 + 2.5).dtype == np.float32
    assert (f32 * np.float64(2.5)).dtype == np.float64
    assert (i32 + f64).dtype == np.float64
    assert (i32 + 1.5).dtype == np.float64
    assert (u64 + i64).dtype == np.float64
    assert ((i32 > 0) + (i32 > 0)).dtype == np.bool_
    assert (f32.astype(np.float16) * 2).dtype == np.float16
    with pytest.raises(OverflowError):
        i32 + 2**40
    assert not (accelerator.asarray(np.ones(3, np.uint32)) < -1).numpy().any()
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)|\(4,\).*\(2, 3\)"):
        accelerator.asarray(np.ones((2, 3), np.float32)) + f32


def test_expressions_across_accelerators_are_refused(accelerator):
    others = [d for d in dc.devices() if d.id != accelerator.id]
    if not others:
        pytest.skip("one accelerator")
    a = accelerator.asarray(np.ones(4, np.float32))
    b = others[0].asarray(np.ones(4, np.float32))
    with pytest.raises(ValueError, match=others[0].id):
        (a + b).numpy()
    with pytest.raises(ValueError):
        a[...] = b * 2


# ---------------------------------------------------------------------------- writes and views
def test_writes_through_slices(accelerator):
    wn = np.zeros((5, 3), np.float32)
    w = accelerator.asarray(wn)
    src = accelerator.asarray(np.arange(3, dtype=np.float32))
    w[...] = src * 2
    wn[...] = np.arange(3) * 2
    w[1:3] = 7
    wn[1:3] = 7
    w[-1] = src - 1
    wn[-1] = np.arange(3) - 1
    w[1:] = w[:-1] + 1  # overlapping read and write
    wn[1:] = wn[:-1] + 1
    np.testing.assert_array_equal(w.numpy(), wn)
    with pytest.raises(IndexError):
        w[5] = 1
    v = w[1:4]
    np.testing.assert_array_equal(dc.sum(v, axis=0).numpy(), wn[1:4].sum(axis=0))
    np.testing.assert_array_equal(dc.sort(v[::-1], axis=0).numpy(), np.sort(wn[1:4][::-1], axis=0))


# ---------------------------------------------------------------------------------- @dc.fuse
@dc.fuse
def _axpy_and_diff(x, y):
    return x * 2 + y, x - y


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int16, np.uint8])
def test_fuse_per_dtype_signature(accelerator, dtype):
    xn = np.arange(10, dtype=dtype)
    yn = np.ones(10, dtype)
    for _ in range(2):  # the second call replays the recorded kernel
        s, d = _axpy_and_diff(accelerator.asarray(xn), accelerator.asarray(yn))
        assert isinstance(s, dc.Buffer) and s.dtype == (xn * 2 + yn).dtype
        np.testing.assert_array_equal(s.numpy(), xn * 2 + yn)
        np.testing.assert_array_equal(d.numpy(), xn - yn)
    s, _ = _axpy_and_diff(xn, yn)
    assert isinstance(s, np.ndarray)
    np.testing.assert_array_equal(s, xn * 2 + yn)


# ------------------------------------------------------------------------------------ threads
def test_expressions_from_four_threads(accelerator):
    xn = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    x = accelerator.asarray(xn)
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(10):
                np.testing.assert_allclose(((x * k + i) * 2 - 1).numpy(), (xn * k + i) * 2 - 1, rtol=1e-5,
                                           atol=1e-5)
                w = accelerator.zeros((1000,), np.float32)
                w[...] = x * k
                w[10:20] = k
                ref = xn * k
                ref[10:20] = k
                np.testing.assert_allclose(w.numpy(), ref, rtol=1e-6)
                e = x
                for _ in range(150):
                    e = e + 1
                np.testing.assert_allclose(e.numpy(), xn + 150, rtol=1e-5)
        except BaseException as exc:  # noqa: BLE001 -- reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_host_and_copy_from_on_a_view_write_the_base(accelerator):
    # both used to write into the temporary copy a view hands out, and the write was lost
    # (on OpenCL host() raised a KernelTypeError about mark_host_dirty)
    wn = np.zeros((5, 2), np.float32)
    w = accelerator.asarray(wn)
    with w[1:3].host() as h:
        assert h.shape == (2, 2)
        h[:] = 7
    wn[1:3] = 7
    w[3:5].copy_from(np.full((2, 2), 5, np.float32))
    wn[3:5] = 5
    w.T[1].copy_from(np.arange(5, dtype=np.float32))
    wn.T[1] = np.arange(5)
    np.testing.assert_array_equal(w.numpy(), wn)
    with pytest.raises(ValueError, match=r"\(3, 2\)"):
        w[0:2].copy_from(np.zeros((3, 2), np.float32))


def test_assigning_a_python_number_that_does_not_fit_is_refused(accelerator):
    # numpy 2 refuses these; they used to wrap (-1 → 255) or store an undefined conversion of NaN
    u8 = accelerator.asarray(np.zeros(3, np.uint8))
    i32 = accelerator.asarray(np.zeros(3, np.int32))
    with pytest.raises(OverflowError, match="-1"):
        u8[0] = -1
    with pytest.raises(OverflowError, match="300"):
        u8[1:] = 300
    with pytest.raises(OverflowError):
        i32[...] = 2**40
    with pytest.raises(ValueError, match="NaN"):
        i32[0] = float("nan")
    with pytest.raises(OverflowError):
        i32[0] = float("inf")
    u8[0] = 255
    i32[0] = 7.9  # a float in range is truncated, as numpy does
    i32[1] = -(2**31)
    np.testing.assert_array_equal(u8.numpy(), [255, 0, 0])
    np.testing.assert_array_equal(i32.numpy(), [7, -(2**31), 0])


def test_reading_a_zero_d_buffer_by_index(accelerator):
    # on a device, z[()] generated a kernel reading `b0[]`: a SyntaxError from generated code
    z = accelerator.asarray(np.array(2.5, np.float32))
    assert z[()] == np.float32(2.5)
    assert float(z[...]) == 2.5
    s = dc.sum(accelerator.asarray(np.arange(4, dtype=np.float32)))
    assert s[()] == 6.0
    with pytest.raises(IndexError):
        z[0]


def test_writing_zero_d_buffers(accelerator):
    # the generated store indexed nothing (`o0[] = ...`): a SyntaxError from generated code
    z = accelerator.asarray(np.array(2.5, np.float32))
    z[...] = 3
    assert float(z) == 3.0
    z += 1
    assert float(z) == 4.0
    s = dc.sum(accelerator.asarray(np.arange(4, dtype=np.float32)))
    float(s)  # the 0-d copy exists before the write: it must not be read stale afterwards
    s += 1
    assert float(s) == 7.0
    np.testing.assert_array_equal((s * accelerator.asarray(np.ones(3, np.float32))).numpy(), [7, 7, 7])
    s[()] = -2
    assert s.item() == -2.0 and float(s * 2) == -4.0


@dc.fuse
def _scaled(x, scale=2.0):
    return x * scale


def test_fuse_accepts_keyword_arguments(accelerator):
    # a keyword argument used to be "FusedFunction.__call__() got an unexpected keyword argument"
    xn = np.arange(5, dtype=np.float32)
    x = accelerator.asarray(xn)
    np.testing.assert_array_equal(_axpy_and_diff(x, y=x)[0].numpy(), xn * 3)
    np.testing.assert_array_equal(_scaled(x).numpy(), xn * 2)
    np.testing.assert_array_equal(_scaled(x, scale=3.0).numpy(), xn * 3)
    np.testing.assert_array_equal(_scaled(x=x).numpy(), xn * 2)
    with pytest.raises(TypeError, match="_scaled"):
        _scaled(x, bogus=1)


@dc.kernel
def _add_two(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


def test_one_view_passed_twice_and_from_four_threads(accelerator):
    # the copy a view hands to a launch used to be freed before the kernel ran when the same view
    # was packed again (a second argument, another thread): wrong sums, PoCL assertion failures
    wn = np.arange(4000, dtype=np.float32).reshape(4, 1000)
    w = accelerator.asarray(wn)
    v = w[1]
    out = accelerator.empty((1000,), np.float32)
    accelerator.launch(_add_two, 1000, v, v, out)
    np.testing.assert_array_equal(out.numpy(), wn[1] * 2)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(25):
                o = accelerator.empty((1000,), np.float32)
                accelerator.launch(_add_two, 1000, v, w[2], o)
                np.testing.assert_array_equal(o.numpy(), wn[1] + wn[2])
        except BaseException as exc:  # noqa: BLE001 -- reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64])
def test_shifts_follow_numpy_at_every_count(accelerator, dtype, device_slice):
    device_slice(dtype in (np.int8, np.uint64), "int8 and uint64 (the narrowest signed, the widest unsigned)")
    # << and >> were missing (TypeError: unsupported operand type(s)); counts outside [0, bits)
    # are defined by numpy (everything shifted out) and undefined in C
    bits = np.dtype(dtype).itemsize * 8
    a = np.array([0, 1, -1, 5, -7, 100, -128, 127], np.int64).astype(dtype)
    c = np.array([0, 1, 3, bits - 1, bits, bits + 5, -1, 2], np.int64).astype(dtype)
    xa, xc = accelerator.asarray(a), accelerator.asarray(c)
    for got, want in ((xa << xc, a << c), (xa >> xc, a >> c), (xa << 1, a << 1), (xa >> 2, a >> 2),
                      (np.right_shift(xa, xc), np.right_shift(a, c))):
        got = got.numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    xa <<= 1
    np.testing.assert_array_equal(xa.numpy(), a << 1)
    with pytest.raises(TypeError):
        accelerator.asarray(np.ones(3, np.float32)) << 1


def test_divmod(accelerator):
    xn = np.array([-7, -1, 0, 5, 9], np.int32)
    x = accelerator.asarray(xn)
    q, r = divmod(x, 3)
    np.testing.assert_array_equal(q.numpy(), xn // 3)
    np.testing.assert_array_equal(r.numpy(), xn % 3)
    q, r = divmod(7.5, x.astype(np.float32) + 10)
    wq, wr = divmod(7.5, xn.astype(np.float32) + 10)
    np.testing.assert_array_equal(q.numpy(), wq)
    np.testing.assert_allclose(r.numpy(), wr, rtol=1e-6)


def test_indexing_a_four_dimensional_buffer(accelerator):
    # b[1] of a 4-d buffer made a view that no generated kernel could read (KernelTypeError about
    # a `Buffer[float32, 4]` parameter of generated code); element reads and writes failed the same way
    xn = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    x = accelerator.asarray(xn)
    np.testing.assert_array_equal(x[1].numpy(), xn[1])
    np.testing.assert_array_equal((x[1] * 2 + 1).numpy(), xn[1] * 2 + 1)
    assert x[1, 2, 3, 4] == xn[1, 2, 3, 4]
    np.testing.assert_array_equal(x[:, 1, :, ::2].numpy(), xn[:, 1, :, ::2])
    assert float(dc.sum(x[0])) == float(xn[0].sum())
    assert int(dc.argmax(x[1])) == int(np.argmax(xn[1]))
    np.testing.assert_array_equal(dc.sort(x[1], axis=0).numpy(), np.sort(xn[1], axis=0))
    x[1, 0] = -1
    xn[1, 0] = -1
    x[0] = x[1] * 2
    xn[0] = xn[1] * 2
    np.testing.assert_array_equal(x.numpy(), xn)
    # arithmetic on more than 3 dimensions: numpy on host memory, the strided expression mode on devices
    np.testing.assert_array_equal((x * 2).numpy(), xn * 2)
    np.testing.assert_array_equal((x[:, ::-1] + x[0]).numpy(), xn[:, ::-1] + xn[0])
