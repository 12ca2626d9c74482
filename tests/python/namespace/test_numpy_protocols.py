"""numpy's __array_ufunc__ / __array_function__ protocols on Buffers (namespace/protocols.py): each numpy
call below runs on Buffers and is compared with the same call on numpy arrays; array results must be
Buffers on the input's device (cpu:0 and opencl:0, the devices of this machine)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.namespace.numpy_functions import FUNCTIONS
from dotcompute.namespace.protocols import mapped_ufuncs

DEVICES = [d.id for d in dc.devices() if d.backend in ("cpu", "opencl")]

rng = np.random.default_rng(7)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)
V = rng.standard_normal(5).astype(np.float32)
P = (np.abs(A) + 0.5).astype(np.float32)  # positive, for logs and roots
I = np.array([[3, 1, 2], [1, 3, 0]], dtype=np.int32)  # noqa: E741
M = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
S = (M @ M.T).astype(np.float32)  # symmetric positive definite

# (id, inputs, call): call(np, *inputs) is made once with numpy arrays and once with Buffers
CASES: list[tuple[str, tuple[np.ndarray, ...], Any]] = [
    # ufuncs
    ("sin", (A,), lambda np, a: np.sin(a)),
    ("add", (A, B), lambda np, a, b: np.add(a, b)),
    ("multiply_scalar", (A,), lambda np, a: np.multiply(a, 2.5)),
    ("absolute", (A,), lambda np, a: np.absolute(a)),
    ("arccosh", (P + 1,), lambda np, a: np.arccosh(a)),
    ("power", (P, B), lambda np, a, b: np.power(a, b)),
    ("true_divide", (A, P), lambda np, a, b: np.true_divide(a, b)),
    ("mod", (A, P), lambda np, a, b: np.mod(a, b)),
    ("invert", (I,), lambda np, a: np.invert(a)),
    ("left_shift", (I,), lambda np, a: np.left_shift(a, 2)),
    ("greater", (A, B), lambda np, a, b: np.greater(a, b)),
    ("logical_and", (A, B), lambda np, a, b: np.logical_and(a > 0, b > 0)),
    ("maximum", (A, B), lambda np, a, b: np.maximum(a, b)),
    ("log1p", (P,), lambda np, a: np.log1p(a)),
    ("degrees", (A,), lambda np, a: np.degrees(a)),
    ("deg2rad", (A,), lambda np, a: np.deg2rad(a)),
    ("divmod", (A, P), lambda np, a, b: np.divmod(a, b)),
    ("add_dtype", (A, B), lambda np, a, b: np.add(a, b, dtype=np.float64)),
    ("greater_dtype", (A, B), lambda np, a, b: np.greater(a, b, dtype=bool)),
    ("add_reduce", (A,), lambda np, a: np.add.reduce(a)),
    ("maximum_reduce_axis1", (A,), lambda np, a: np.maximum.reduce(a, axis=1, keepdims=True)),
    ("multiply_accumulate", (P,), lambda np, a: np.multiply.accumulate(a, axis=1)),
    ("subtract_outer", (V, V), lambda np, a, b: np.subtract.outer(a, b)),
    ("matmul", (A, B), lambda np, a, b: np.matmul(a, b.T)),
    ("matmul_op", (A, B), lambda np, a, b: a @ np.transpose(b)),
    # reductions and statistics
    ("sum", (A,), lambda np, a: np.sum(a)),
    ("sum_axis0", (A,), lambda np, a: np.sum(a, axis=0)),
    ("sum_keepdims", (A,), lambda np, a: np.sum(a, axis=1, keepdims=True)),
    ("prod", (P,), lambda np, a: np.prod(a, axis=0)),
    ("mean", (A,), lambda np, a: np.mean(a, axis=1)),
    ("std", (A,), lambda np, a: np.std(a, axis=0, ddof=1)),
    ("var", (A,), lambda np, a: np.var(a)),
    ("min", (A,), lambda np, a: np.min(a, axis=1)),
    ("amax", (A,), lambda np, a: np.amax(a)),
    ("argmin", (A,), lambda np, a: np.argmin(a, axis=0)),
    ("argmax", (A,), lambda np, a: np.argmax(a)),
    ("cumsum", (A,), lambda np, a: np.cumsum(a)),
    ("cumsum_axis", (A,), lambda np, a: np.cumsum(a, axis=1)),
    ("cumprod", (P,), lambda np, a: np.cumprod(a, axis=0)),
    ("all", (A,), lambda np, a: np.all(a > -10, axis=0)),
    ("any", (A,), lambda np, a: np.any(a > 1)),
    ("count_nonzero", (A,), lambda np, a: np.count_nonzero(a > 0, axis=1)),
    ("ptp", (A,), lambda np, a: np.ptp(a, axis=0)),
    ("average", (A, P), lambda np, a, w: np.average(a, axis=1, weights=w)),
    # manipulation
    ("concatenate", (A, B), lambda np, a, b: np.concatenate([a, b])),
    ("concatenate_axis1", (A, B), lambda np, a, b: np.concatenate((a, b), axis=1)),
    ("stack", (A, B), lambda np, a, b: np.stack([a, b], axis=1)),
    ("vstack", (V, V), lambda np, a, b: np.vstack([a, b])),
    ("hstack", (A, B), lambda np, a, b: np.hstack([a, b])),
    ("column_stack", (V, V), lambda np, a, b: np.column_stack([a, b])),
    ("atleast_2d", (V,), lambda np, a: np.atleast_2d(a)),
    ("reshape", (A,), lambda np, a: np.reshape(a, (4, 3))),
    ("ravel", (A,), lambda np, a: np.ravel(a)),
    ("transpose", (A,), lambda np, a: np.transpose(a)),
    ("swapaxes", (A,), lambda np, a: np.swapaxes(a, 0, 1)),
    ("moveaxis", (A,), lambda np, a: np.moveaxis(a, 0, -1)),
    ("squeeze", (V,), lambda np, a: np.squeeze(np.reshape(a, (1, 5)))),
    ("expand_dims", (V,), lambda np, a: np.expand_dims(a, axis=(0, 2))),
    ("flip", (A,), lambda np, a: np.flip(a, axis=1)),
    ("fliplr", (A,), lambda np, a: np.fliplr(a)),
    ("flipud", (A,), lambda np, a: np.flipud(a)),
    ("roll", (A,), lambda np, a: np.roll(a, 2, axis=1)),
    ("repeat", (V,), lambda np, a: np.repeat(a, 2)),
    ("tile", (V,), lambda np, a: np.tile(a, 2)),
    ("broadcast_to", (V,), lambda np, a: np.broadcast_to(a, (2, 5))),
    ("broadcast_arrays", (A, V), lambda np, a, v: np.broadcast_arrays(a[:, :1], v)),
    ("split", (A,), lambda np, a: np.split(a, 2, axis=1)),
    ("array_split", (V,), lambda np, a: np.array_split(a, 3)),
    ("copy", (A,), lambda np, a: np.copy(a)),
    ("zeros_like", (A,), lambda np, a: np.zeros_like(a)),
    ("ones_like", (I,), lambda np, a: np.ones_like(a, dtype=np.float32)),
    ("full_like", (A,), lambda np, a: np.full_like(a, 7.0)),
    ("zeros_like_positional", (A,), lambda np, a: np.zeros_like(a, np.int32)),
    ("full_like_shape", (A,), lambda np, a: np.full_like(a, 2, np.int16, shape=(2, 2))),
    ("tril", (A,), lambda np, a: np.tril(a)),
    ("triu", (A,), lambda np, a: np.triu(a, 1)),
    ("diff", (A,), lambda np, a: np.diff(a, axis=1)),
    ("real", (A,), lambda np, a: np.real(a)),
    # searching, sorting, sets
    ("where", (A, B), lambda np, a, b: np.where(a > 0, a, b)),
    ("where_scalar", (A,), lambda np, a: np.where(a > 0, a, 0.0)),
    ("nonzero", (A,), lambda np, a: np.nonzero(a > 0)),
    ("argwhere", (A,), lambda np, a: np.argwhere(a > 0)),
    ("flatnonzero", (A,), lambda np, a: np.flatnonzero(a > 0)),
    ("take", (V,), lambda np, a: np.take(a, [4, 0, 2])),
    ("take_along_axis", (A,), lambda np, a: np.take_along_axis(a, np.argsort(a, axis=1), axis=1)),
    ("searchsorted", (V,), lambda np, a: np.searchsorted(np.sort(a), a)),
    ("sort", (A,), lambda np, a: np.sort(a, axis=0)),
    ("sort_none", (A,), lambda np, a: np.sort(a, axis=None)),
    ("argsort", (V,), lambda np, a: np.argsort(a)),
    ("unique", (I,), lambda np, a: np.unique(a)),
    ("unique_counts", (I,), lambda np, a: np.unique(a, return_counts=True)),
    ("unique_inverse", (I,), lambda np, a: np.unique(a, return_index=True, return_inverse=True)),
    ("clip", (A,), lambda np, a: np.clip(a, -0.5, 0.5)),
    ("round", (A,), lambda np, a: np.round(a, 2)),
    ("around", (A,), lambda np, a: np.around(a)),
    ("isclose", (A, B), lambda np, a, b: np.isclose(a, a + b * 1e-9)),
    ("allclose", (A, B), lambda np, a, b: np.allclose(a, b)),
    ("array_equal", (A,), lambda np, a: np.array_equal(a, a)),
    ("array_equiv", (A, V), lambda np, a, v: np.array_equiv(a, a[:1])),
    # products and linalg
    ("dot_1d", (V, V), lambda np, a, b: np.dot(a, b)),
    ("dot_2d", (A, B), lambda np, a, b: np.dot(a, b.T)),
    ("vdot", (A, B), lambda np, a, b: np.vdot(a, b)),
    ("inner", (A, B), lambda np, a, b: np.inner(a, b)),
    ("outer", (V, V), lambda np, a, b: np.outer(a, b)),
    ("tensordot", (A, B), lambda np, a, b: np.tensordot(a, b, axes=([1], [1]))),
    ("trace", (M,), lambda np, m: np.trace(m)),
    ("diagonal", (M,), lambda np, m: np.diagonal(m, 1)),
    ("norm", (A,), lambda np, a: np.linalg.norm(a)),
    ("norm_axis", (A,), lambda np, a: np.linalg.norm(a, axis=1)),
    ("solve", (M, V), lambda np, m, v: np.linalg.solve(m, v[:3])),
    ("inv", (M,), lambda np, m: np.linalg.inv(m)),
    ("det", (M,), lambda np, m: np.linalg.det(m)),
    ("cholesky", (S,), lambda np, s: np.linalg.cholesky(s)),
    ("eigvalsh", (S,), lambda np, s: np.linalg.eigvalsh(s)),
    ("svd_values", (A,), lambda np, a: np.linalg.svd(a, compute_uv=False)),
    # fft
    ("fft", (V,), lambda np, a: np.fft.fft(a)),
    ("rfft", (A,), lambda np, a: np.fft.rfft(a, axis=1)),
    ("fftshift", (V,), lambda np, a: np.fft.fftshift(a)),
    # shape helpers answer with Python values
    ("shape", (A,), lambda np, a: np.shape(a)),
    ("ndim", (A,), lambda np, a: np.ndim(a)),
    ("result_type", (A, I), lambda np, a, i: np.result_type(a, i)),
]

# dc.linalg has no OpenCL kernels for these yet (docs/operations.md): NoDevicePath naming the device
_NO_DEVICE_PATH = {"eigvalsh", "svd_values"}
# on opencl:0 every case compiles its kernels with PoCL (over a minute for the table, cold): these run
# by default, the rest with --full (bash tests/run.sh --full)
_FAST_ON_DEVICES = {"sin", "add", "power", "add_reduce", "matmul", "sum_axis0", "std", "cumsum", "concatenate",
                    "stack", "transpose", "where", "take", "sort", "unique_inverse", "allclose", "dot_1d", "fft",
                    "shape"}


def _params() -> list[Any]:
    params = []
    for device in DEVICES:
        for name, inputs, call in CASES:
            slow = device != "cpu:0" and name not in _FAST_ON_DEVICES
            params.append(pytest.param(device, name, inputs, call, id=f"{name}-{device}",
                                       marks=[pytest.mark.slow] if slow else []))
    return params


def _check(got: Any, want: Any, acc: dc.Accelerator) -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, type(want)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            _check(g, w, acc)
        return
    if isinstance(want, np.ndarray) or isinstance(want, np.generic):
        assert isinstance(got, dc.Buffer), f"expected a Buffer, got {type(got).__name__}"
        assert got.device is acc
        host = got.numpy()
        assert host.shape == np.shape(want)
        assert host.dtype == np.asarray(want).dtype, (host.dtype, np.asarray(want).dtype)
        np.testing.assert_allclose(host, want, rtol=2e-5, atol=2e-5)
        return
    assert got == want


@pytest.mark.parametrize(("device", "name", "inputs", "call"), _params())
def test_numpy_call_on_buffers(device: str, name: str, inputs: tuple[np.ndarray, ...], call: Any) -> None:
    acc = dc.accelerator(device)
    want = call(np, *inputs)
    buffers = [dc.asarray(x, device=acc) for x in inputs]
    if name in _NO_DEVICE_PATH and not acc.host_visible_memory:
        with pytest.raises(NotImplementedError, match=acc.id):
            call(np, *buffers)
        return
    _check(call(np, *buffers), want, acc)


@pytest.mark.parametrize("device", DEVICES)
def test_out_writes_the_buffer_in_place(device: str) -> None:
    a = dc.asarray(A, device=device)
    b = dc.asarray(B, device=device)
    c = dc.zeros(A.shape, dtype=dc.float32, device=device)
    assert np.add(a, b, out=c) is c
    np.testing.assert_allclose(c.numpy(), A + B, rtol=1e-6)
    assert np.sum(a, axis=0, out=c[0]) is not None
    np.testing.assert_allclose(c.numpy()[0], A.sum(axis=0), rtol=1e-5)
    np.multiply(a, 2.0, out=a)  # in place on an input
    np.testing.assert_allclose(a.numpy(), A * 2, rtol=1e-6)
    ints = dc.zeros(A.shape, dtype=dc.int32, device=device)
    with pytest.raises(TypeError, match="same_kind"):
        np.add(a, b, out=ints)


def test_unmapped_host_memory_falls_back_to_numpy_on_the_memory() -> None:
    a = dc.asarray(A, device="cpu:0")
    got = np.median(a, axis=0)  # no median in the namespace: numpy runs on the buffer's memory
    assert isinstance(got, dc.Buffer) and got.device.id == "cpu:0"
    np.testing.assert_allclose(got.numpy(), np.median(A, axis=0))
    g = np.gcd(dc.asarray(I, device="cpu:0"), 2)  # an unmapped ufunc
    np.testing.assert_array_equal(g.numpy(), np.gcd(I, 2))
    out = dc.zeros((4,), dtype=dc.float64, device="cpu:0")
    assert np.percentile(a, 50, axis=0, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.percentile(A, 50, axis=0))


@pytest.mark.skipif("opencl:0" not in DEVICES, reason="needs a device without host memory")
def test_unmapped_on_a_device_is_a_clear_type_error_not_a_host_copy() -> None:
    a = dc.asarray(A, device="opencl:0")
    with pytest.raises(TypeError, match=r"np\.median.*opencl:0.*np\.asarray"):
        np.median(a)
    with pytest.raises(TypeError, match=r"np\.gcd.*opencl:0"):
        np.gcd(dc.asarray(I, device="opencl:0"), 2)
    with pytest.raises(TypeError, match=r"np\.add.*where"):
        np.add(a, a, where=np.ones(A.shape, bool))
    host = np.asarray(a)  # the explicit copy still works
    assert isinstance(host, np.ndarray) and np.array_equal(host, A)


def test_another_librarys_array_gets_its_turn() -> None:
    class Other:
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> str:
            return "other"

        def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> str:
            return "other"

    a = dc.asarray(A, device="cpu:0")
    assert np.add(a, Other()) == "other"
    assert np.concatenate([a, Other()]) == "other"


def test_coverage_of_the_tables() -> None:
    # every numpy ufunc the namespace has a function for is mapped, and 60+ numpy functions are
    ufuncs = mapped_ufuncs()
    assert {"sin", "add", "arccosh", "power", "matmul", "logaddexp", "nextafter"} <= set(ufuncs)
    assert len(ufuncs) >= 80
    assert len(FUNCTIONS) >= 100
    assert np.asarray(dc.asarray(A, device="cpu:0")).base is not None  # __array__ is still a view on cpu:0


@pytest.mark.skipif("opencl:0" not in DEVICES, reason="needs a device without host memory")
def test_mapped_calls_do_not_copy_to_the_host() -> None:
    # dc.profile() records every host<->device copy: these numpy calls on opencl:0 buffers make none
    a = dc.asarray(A, device="opencl:0")
    b = dc.asarray(B, device="opencl:0")
    calls = [lambda: np.sum(np.sin(a) * 2 + b, axis=0), lambda: np.concatenate([a, b]),
             lambda: np.where(a > b, a, b), lambda: np.mean(a, axis=1), lambda: np.maximum.reduce(a, axis=0)]
    for call in calls:
        call()._native  # noqa: B018 -- compiles and runs once outside the profile
    with dc.profile() as prof:
        results = [call() for call in calls]
        np.add(a, b, out=a)
        for r in results:
            r._native  # noqa: B018 -- evaluates the pending expressions
        dc.synchronize()
    assert [t for t in prof.transfers if t.direction == "d2h"] == []


def _ufunc_inputs(ufunc: np.ufunc) -> tuple[np.ndarray, ...]:
    """Operands inside the ufunc's domain, of a dtype its loops take."""
    name = ufunc.__name__
    if name in ("invert", "bitwise_not", "bitwise_invert", "bitwise_and", "bitwise_or", "bitwise_xor",
                "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"):
        return tuple(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32) for _ in range(ufunc.nin))
    if name.startswith("logical_"):
        return tuple(np.array([[True, False, True], [False, False, True]]) for _ in range(ufunc.nin))
    if name in ("arccosh", "acosh"):
        return (np.array([[1.5, 2.0, 3.0], [1.25, 4.0, 9.0]], dtype=np.float32),)
    base = np.array([[0.25, 0.5, 0.75], [0.3, 0.6, 0.9]], dtype=np.float32)
    if name in ("matmul", "vecdot"):
        return base, base.T.copy() if name == "matmul" else base
    return (base, base[::-1].copy())[: ufunc.nin]


@pytest.mark.slow  # 94 ufuncs, each a kernel to compile per device (about 25 s on cpu:0, 55 s on PoCL, cold);
# the table above runs a sample of them by default
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", mapped_ufuncs())
def test_every_mapped_ufunc_matches_numpy(device: str, name: str) -> None:
    ufunc = getattr(np, name)
    inputs = _ufunc_inputs(ufunc)
    want = ufunc(*inputs)
    got = ufunc(*(dc.asarray(x, device=device) for x in inputs))
    _check(got, want, dc.accelerator(device))
