"""Audit 2: DESIGN.md "Array operations" on every accelerator, against numpy — the corners the
first audit and tests/python/ops/ leave out (complex views, 0-d and empty shapes, vector
products, dtype tables, NaN placement, threads)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dotcompute as dc

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    AxisError = np.AxisError  # type: ignore[attr-defined,misc]

ALL_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
              np.float16, np.float32, np.float64, np.complex64, np.complex128]
REDUCTIONS = ["sum", "prod", "min", "max", "mean", "argmin", "argmax"]


def _np(name: str):
    return getattr(np, name)


# ------------------------------------------------------------------------------------ dtype tables
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda t: np.dtype(t).name)
def test_every_dtype_result_type_and_value(accelerator, dtype):
    xn = (np.arange(35) % 5).reshape(5, 7).astype(dtype)
    x = accelerator.asarray(xn)
    for name in REDUCTIONS + ["cumsum"]:
        for axis in (None, 0, -1):
            if name == "cumsum" and axis is None:
                continue
            want = _np(name)(xn, axis=axis)
            got = getattr(dc, name)(x, axis=axis)
            assert isinstance(got, dc.Buffer)
            got = got.numpy()
            assert got.dtype == want.dtype, (name, axis)
            assert got.shape == want.shape, (name, axis)
            np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=1e-3,
                                       err_msg=f"{name} axis={axis}")
    for name in ("sort", "argsort"):
        want = np.sort(xn, axis=-1) if name == "sort" else np.argsort(xn, axis=-1, kind="stable")
        got = getattr(dc, name)(x, axis=-1).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------- 0-d and empty shapes
def test_zero_d_numpy_input_keeps_its_shape(accelerator):
    # numpy input used to go through np.ascontiguousarray, which makes a 0-d array 1-d
    z = np.array(3.5, np.float32)
    with pytest.raises(AxisError):
        np.sort(z)
    with pytest.raises(AxisError):
        dc.sort(z, accelerator=accelerator)
    with pytest.raises(AxisError):
        dc.sort(accelerator.asarray(z))
    got = dc.sum(z, accelerator=accelerator, keepdims=True)
    assert got.shape == np.sum(z, keepdims=True).shape == ()
    with pytest.raises(ValueError, match=r"\(\)"):
        dc.matmul(np.float32(2), np.ones((3, 3), np.float32), accelerator=accelerator)


def test_arg_reduction_over_a_nonempty_axis_of_an_empty_array(accelerator):
    xn = np.zeros((3, 0), np.float32)
    x = accelerator.asarray(xn)
    for name in ("argmin", "argmax"):
        want = _np(name)(xn, axis=0)
        got = getattr(dc, name)(x, axis=0)
        assert isinstance(got, dc.Buffer)
        assert got.shape == want.shape == (0,) and got.dtype == np.int64
        assert getattr(dc, name)(xn, axis=0, keepdims=True, accelerator=accelerator).shape == (1, 0)
        with pytest.raises(ValueError):
            getattr(dc, name)(x, axis=1)
        with pytest.raises(ValueError):
            getattr(dc, name)(x)
    for name in ("min", "max"):
        assert getattr(dc, name)(x, axis=0).shape == (0,)
        with pytest.raises(ValueError):
            getattr(dc, name)(x, axis=1)
    assert float(dc.sum(accelerator.asarray(np.zeros(0, np.float32)))) == 0.0


# -------------------------------------------------------------------------------------- matmul
def test_vector_products_follow_numpy(accelerator):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    v = rng.standard_normal(7).astype(np.float32)
    for x, y in ((v, v), (a, v), (v, a.T.copy())):
        want = np.matmul(x, y)
        got_np = dc.matmul(x, y, accelerator=accelerator)
        assert isinstance(got_np, np.ndarray) and got_np.shape == want.shape, (x.shape, y.shape)
        np.testing.assert_allclose(got_np, want, rtol=1e-4, atol=1e-4)
        got = dc.matmul(accelerator.asarray(x), accelerator.asarray(y))
        assert isinstance(got, dc.Buffer) and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    with dc.ops.prefer("portable"):
        got = dc.matmul(accelerator.asarray(v), accelerator.asarray(v))
        assert got.shape == ()
        assert float(got) == pytest.approx(float(v @ v), rel=1e-4)


def test_matmul_errors_name_the_shapes_and_devices(accelerator):
    a = accelerator.asarray(np.ones((5, 7), np.float32))
    with pytest.raises(ValueError, match=r"\(5, 7\).*\(5, 7\)"):
        dc.matmul(a, a)
    out = accelerator.empty((7, 5), np.float32)
    with pytest.raises(ValueError, match=r"\(7, 5\)"):
        dc.matmul(a, a.T, out=out)
    with pytest.raises(TypeError, match="float64"):
        dc.matmul(a, a.T, out=accelerator.empty((5, 5), np.float64))
    other = [d for d in dc.devices() if d.id != accelerator.id]
    if other:
        b = other[0].asarray(np.ones((7, 2), np.float32))
        with pytest.raises(ValueError, match=f"{other[0].id}"):
            dc.matmul(a, b)


def test_matmul_promotes_and_broadcasts_batches(accelerator):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 5, 7)).astype(np.float32)
    b = rng.standard_normal((1, 7, 3))
    got = dc.matmul(accelerator.asarray(a), accelerator.asarray(b))
    assert got.dtype == np.float64 and got.shape == (4, 5, 3)
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-5)
    ai = (a * 10).astype(np.int32)
    got = dc.matmul(ai[0], ai[1].T.copy(), accelerator=accelerator)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ai[0] @ ai[1].T)


# ------------------------------------------------------------------------------- complex views
def test_operations_on_views_of_complex_buffers(accelerator):
    # a view of a complex Buffer passed to an operation used to fail: the copy of its elements was
    # made by a generated expression kernel, which cannot spell complex values
    rng = np.random.default_rng(5)
    xn = (rng.standard_normal((6, 8)) + 1j * rng.standard_normal((6, 8))).astype(np.complex64)
    x = accelerator.asarray(xn)
    v = x[1:4]
    np.testing.assert_allclose(dc.fft.fft(v).numpy(), np.fft.fft(xn[1:4]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dc.sum(v).numpy(), xn[1:4].sum(), rtol=1e-4)
    np.testing.assert_allclose(dc.sum(v, axis=0).numpy(), xn[1:4].sum(axis=0), rtol=1e-4)
    np.testing.assert_allclose(dc.matmul(v, x.T).numpy(), xn[1:4] @ xn.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(dc.cumsum(x[::2], axis=0).numpy(), np.cumsum(xn[::2], axis=0))


# ------------------------------------------------------------------------------ NaN and sorting
@pytest.mark.parametrize("n", [5, 257, 4099])
def test_nan_inf_and_signed_zero(accelerator, n):
    rng = np.random.default_rng(n)
    xn = rng.standard_normal(n).astype(np.float32)
    first_nan = max(4, n // 3)
    xn[first_nan] = np.nan
    xn[n - 1] = np.nan
    xn[0] = np.inf
    xn[1] = -np.inf
    xn[2] = -0.0
    xn[3] = 0.0
    x = accelerator.asarray(xn)
    assert np.isnan(float(dc.min(x))) and np.isnan(float(dc.max(x)))
    assert int(dc.argmin(x)) == int(dc.argmax(x)) == first_nan
    np.testing.assert_array_equal(dc.sort(x).numpy(), np.sort(xn))
    np.testing.assert_array_equal(dc.argsort(x).numpy(), np.argsort(xn, kind="stable"))
    ys = dc.sort(accelerator.asarray(np.array([0.0, -0.0, 0.0, -0.0], np.float32)))
    np.testing.assert_array_equal(np.signbit(ys.numpy()), [False, True, False, True])


def test_argsort_is_stable_with_many_equal_keys(accelerator):
    keys = (np.arange(5000) * 7919 % 3).astype(np.int32)
    np.testing.assert_array_equal(dc.argsort(accelerator.asarray(keys)).numpy(), np.argsort(keys, kind="stable"))
    vals = np.arange(5000, dtype=np.float32)
    k, v = dc.sort_by_key(accelerator.asarray(keys), accelerator.asarray(vals))
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(k.numpy(), keys[order])
    np.testing.assert_array_equal(v.numpy(), vals[order])


def test_sort_by_key_bad_shapes_name_both(accelerator):
    with pytest.raises(ValueError, match=r"\(5,\).*\(4,\)"):
        dc.sort_by_key(accelerator.asarray(np.zeros(5, np.int32)), accelerator.asarray(np.zeros(4, np.int32)))
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        dc.sort_by_key(accelerator.asarray(np.zeros((2, 3), np.int32)), accelerator.asarray(np.zeros((2, 3))))


# ------------------------------------------------------------------------------ user operators
@dc.func
def _add3(a, b, c):
    return a + b + c


@dc.func
def _maxf(a, b):
    return a if a > b else b


def test_reduce_and_scan_with_user_operators(accelerator):
    xn = np.arange(1, 11, dtype=np.float32)
    x = accelerator.asarray(xn)
    assert float(dc.reduce(_maxf, x)) == 10.0
    assert float(dc.reduce(_maxf, accelerator.asarray(np.zeros(0, np.float32)), initial=-1.0)) == -1.0
    with pytest.raises(ValueError):
        dc.reduce(_maxf, accelerator.asarray(np.zeros(0, np.float32)))
    np.testing.assert_array_equal(dc.scan(_maxf, x[::-1]).numpy(), np.maximum.accumulate(xn[::-1]))
    ex = dc.scan(_maxf, x, exclusive=True, initial=0.0).numpy()
    np.testing.assert_array_equal(ex, np.concatenate([[0.0], xn[:-1]]))
    with pytest.raises(ValueError):
        dc.scan(_maxf, x, exclusive=True)
    with pytest.raises(dc.KernelTypeError):
        dc.reduce(_add3, x)
    with pytest.raises(dc.KernelTypeError):
        dc.scan(_add3, x)
    with pytest.raises(dc.KernelTypeError):
        dc.reduce(lambda a, b: a + b, x)


# ---------------------------------------------------------------------------------------- fft
def test_fft_sizes_axes_and_precision(accelerator):
    rng = np.random.default_rng(6)
    xn = rng.standard_normal((3, 12))
    x = accelerator.asarray(xn)
    for kw in ({"n": 5}, {"n": 20}, {"axis": 0}, {"axis": 0, "n": 7}):
        np.testing.assert_allclose(dc.fft.fft(x, **kw).numpy(), np.fft.fft(xn, **kw), rtol=1e-9, atol=1e-9)
    for n in (7, 8, 11):
        np.testing.assert_allclose(dc.fft.irfft(x, n=n).numpy(), np.fft.irfft(xn, n=n), rtol=1e-9, atol=1e-9)
    assert dc.fft.fft(x).dtype == np.complex128
    assert dc.fft.fft(accelerator.asarray(xn.astype(np.float32))).dtype == np.complex64
    y = rng.standard_normal((2, 6, 10))
    np.testing.assert_allclose(dc.fft.fft2(accelerator.asarray(y)).numpy(), np.fft.fft2(y), rtol=1e-9, atol=1e-9)
    z = (rng.standard_normal(1009) + 1j * rng.standard_normal(1009)).astype(np.complex64)  # a prime length
    zb = accelerator.asarray(z)
    np.testing.assert_allclose(dc.fft.fft(zb).numpy(), np.fft.fft(z), rtol=1e-3, atol=2e-3)
    np.testing.assert_allclose(dc.fft.ifft(dc.fft.fft(zb)).numpy(), z, rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError):
        dc.fft.fft(x, n=0)


# ------------------------------------------------------------------------------------- threads
def test_same_operations_from_four_threads(accelerator):
    if accelerator.backend == "metal":
        pytest.skip("Metal has no float64, which one of these operations computes with (left for the owner)")
    rng = np.random.default_rng(7)
    xn = rng.standard_normal((64, 129)).astype(np.float32)
    x = accelerator.asarray(xn)
    want_sum = xn.sum(axis=1)
    want_sort = np.sort(xn, axis=1)
    want_mm = xn @ xn.T
    f64 = accelerator.backend != "metal"  # Metal has no float64: the FFT runs in float32 there
    zn = rng.standard_normal((4, 1009)).astype(np.float64 if f64 else np.float32)
    z = accelerator.asarray(zn)
    want_fft = np.fft.fft(zn)
    fft_tol = 1e-9 if f64 else 2e-3
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(3):
                np.testing.assert_allclose(dc.sum(x, axis=1).numpy(), want_sum, rtol=1e-4, atol=1e-4)
                np.testing.assert_array_equal(dc.sort(x, axis=1).numpy(), want_sort)
                np.testing.assert_allclose(dc.matmul(x, x.T).numpy(), want_mm, rtol=1e-3, atol=1e-3)
                assert int(dc.argmax(x)) == int(np.argmax(xn))
                np.testing.assert_allclose(dc.fft.fft(z).numpy(), want_fft, rtol=fft_tol, atol=fft_tol)
        except BaseException as exc:  # noqa: BLE001 -- reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@dc.func
def _add(a, b):
    return a + b


@dc.func
def _add_int32(a: dc.int32, b: dc.int32) -> dc.int32:
    return a + b


def test_reduce_initial_keeps_every_bit_of_int64(accelerator):
    # the initial value used to travel as a float64 kernel parameter: 2**60 + 1 lost its last bit
    xn = np.array([1, 2, 3], np.int64)
    big = 2**60 + 1
    assert int(dc.reduce(_add, accelerator.asarray(xn), initial=big)) == big + 6
    got = dc.reduce(_add, accelerator.asarray(np.ones((2, 3), np.int64)), axis=1, initial=big)
    np.testing.assert_array_equal(got.numpy(), [big + 3, big + 3])
    np.testing.assert_array_equal(dc.scan(_add, accelerator.asarray(xn), initial=big).numpy(),
                                  big + np.cumsum(xn))


def test_operator_type_errors_name_the_users_operator(accelerator):
    x = accelerator.asarray(np.arange(4, dtype=np.float32))
    for fn in (dc.reduce, dc.scan):
        with pytest.raises(dc.KernelTypeError, match=r"_add_int32.*test_audit2_ops\.py.*float32") as info:
            fn(_add_int32, x)
        assert str(info.value).startswith(f"dc.{fn.__name__}:")


def test_operands_on_two_devices_name_both(accelerator):
    others = [d for d in dc.devices() if d.id != accelerator.id]
    if not others:
        pytest.skip("one accelerator")
    a = accelerator.asarray(np.ones(4, np.float32))
    b = others[0].asarray(np.ones(4, np.float32))
    with pytest.raises(ValueError, match=f"{others[0].id}.*runs on {accelerator.id}"):
        dc.sort_by_key(a, b)
    with pytest.raises(ValueError, match=f"{others[0].id}.*{accelerator.id}|{accelerator.id}.*{others[0].id}"):
        dc.matmul(a, b)


@pytest.mark.parametrize("path", ["auto", "portable", "vendor"])
def test_matmul_into_a_view_writes_the_base(accelerator, path):
    # out=w[1:4] used to be written into the view's temporary copy: the product was lost
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.ones((4, 2), np.float32)
    w = accelerator.zeros((5, 2), np.float32)
    if path == "auto":
        r = dc.matmul(accelerator.asarray(a), accelerator.asarray(b), out=w[1:4])
    else:
        with dc.ops.prefer(path):
            r = dc.matmul(accelerator.asarray(a), accelerator.asarray(b), out=w[1:4])
    want = np.zeros((5, 2), np.float32)
    want[1:4] = a @ b
    np.testing.assert_array_equal(w.numpy(), want)
    np.testing.assert_array_equal(r.numpy(), a @ b)


_COLD_SCAN_THREADS = """
import threading
import numpy as np
import dotcompute as dc

@dc.func
def maxf(a, b):
    return a if a > b else b

acc = dc.accelerator("cpu")
xn = np.random.default_rng(7).standard_normal((64, 129)).astype(np.float32)
x = acc.asarray(xn)
want = np.maximum.accumulate(xn, axis=0)
z = acc.asarray(np.random.default_rng(8).standard_normal((4, 1009)))
bad = []

def work():
    for _ in range(3):
        dc.sum(x, axis=1).numpy()
        dc.sort(x, axis=1).numpy()
        dc.matmul(x, x.T).numpy()
        int(dc.argmax(x))
        dc.fft.fft(z).numpy()
        if not np.array_equal(dc.scan(maxf, x, axis=0).numpy(), want):
            bad.append(1)

threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("wrong" if bad else "ok")
"""


def test_scan_from_four_threads_with_a_cold_kernel_cache(run_python, tmp_path):
    # (it crashed: a queued launch did not keep its module loaded while another thread's compile
    # replaced the kernel; CpuStreams.UnloadingAModuleWaitsForItsQueuedLaunches is the C++ test)
    # in a subprocess with its own empty cache: the crash takes the process down, not the test run
    for i in range(4):
        proc = run_python(_COLD_SCAN_THREADS, env={"DOTCOMPUTE_CACHE_DIR": str(tmp_path / f"cache{i}")},
                          timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.strip() == "ok"


def test_a_builtin_math_function_as_operator_is_refused_with_a_hint(accelerator):
    x = accelerator.asarray(np.arange(4, dtype=np.float32))
    for fn in (dc.reduce, dc.scan):
        with pytest.raises(dc.KernelTypeError, match=r"dc\.max\(x, axis=\.\.\.\)"):
            fn(dc.max, x)


def test_numpy_first_operand_runs_where_the_buffer_is(accelerator):
    # dc.matmul(numpy, Buffer) used to run on "auto" (cpu:0) and refuse a Buffer on another device
    # (or give numpy back): a Buffer among the operands decides the device, and a Buffer comes out
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    xb = accelerator.asarray(x)
    got = dc.matmul(x, xb.T)
    assert isinstance(got, dc.Buffer) and got.accelerator.id == accelerator.id
    np.testing.assert_array_equal(got.numpy(), x @ x.T)
    keys, vals = dc.sort_by_key(np.array([3, 1, 2], np.int32), accelerator.asarray(np.array([30, 10, 20], np.int64)))
    np.testing.assert_array_equal(np.asarray(keys), [1, 2, 3])
    assert isinstance(vals, dc.Buffer) and vals.accelerator.id == accelerator.id
    np.testing.assert_array_equal(vals.numpy(), [10, 20, 30])
