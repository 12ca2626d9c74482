"""Language idioms users reach for: stream compaction, quantisation, special functions,
device functions taking buffers, keyword arguments, walrus, operand-returning and/or,
and kernels launched from several threads at once."""

import math
import threading

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def compact_positive(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], count: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0] and x[i] > 0.0:
        out[dc.atomic_add(count, 0, 1)] = x[i]


def test_stream_compaction_with_atomic_counter(accelerator):
    rng = np.random.default_rng(80)
    x = rng.standard_normal(3000).astype(np.float32)
    out = np.zeros_like(x)
    count = np.zeros(1, np.int32)
    dc.launch(compact_positive, x.size, x, out, count, accelerator=accelerator)
    k = int(count[0])
    assert k == int((x > 0).sum())
    np.testing.assert_array_equal(np.sort(out[:k]), np.sort(x[x > 0]))


@dc.kernel
def scatter_increment(slots: dc.Buffer[dc.float32], ctr: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < slots.shape[0]:
        slots[dc.atomic_add(ctr, 0, 1)] += 1.0   # the index is evaluated once


def test_augmented_store_evaluates_index_once(accelerator):
    slots = np.zeros(256, np.float32)
    ctr = np.zeros(1, np.int32)
    dc.launch(scatter_increment, 256, slots, ctr, accelerator=accelerator)
    assert ctr[0] == 256
    assert (slots == 1.0).all()


@dc.kernel
def quantize_int8(x: dc.Buffer[dc.float32], scale: dc.float32, q: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = round(x[i] / scale)          # Python's round: int64, ties to even
        q[i] = min(max(v, -128), 127)


def test_quantize_round_half_even_and_clamp(accelerator):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 1000.0, -1000.0, 3.7], np.float32)
    q = np.zeros(x.size, np.int32)
    dc.launch(quantize_int8, x.size, x, 1.0, q, accelerator=accelerator)
    assert q.tolist() == [0, 2, 2, 0, -2, -2, 0, 127, -128, 4]


@dc.kernel
def saturating_casts(x: dc.Buffer[dc.float64], i32: dc.Buffer[dc.int32], u32: dc.Buffer[dc.uint32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        i32[i] = dc.int32(x[i])
        u32[i] = dc.uint32(x[i])


def test_float_to_int_casts_saturate_and_nan_is_zero(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    x = np.array([1.9, -1.9, 1e10, -1e10, np.nan, np.inf, -np.inf, 4294967295.0, 3e9], np.float64)
    i32 = np.zeros(x.size, np.int32)
    u32 = np.zeros(x.size, np.uint32)
    dc.launch(saturating_casts, x.size, x, i32, u32, accelerator=accelerator)
    imax, imin = 2**31 - 1, -(2**31)
    assert i32.tolist() == [1, -1, imax, imin, 0, imax, imin, imax, imax]
    assert u32.tolist() == [1, 0, 2**32 - 1, 0, 0, 2**32 - 1, 0, 2**32 - 1, 3000000000]


@dc.kernel
def special_functions(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        out[i, 0] = math.lgamma(v)
        out[i, 1] = math.erfc(v)
        out[i, 2] = math.log1p(v) - math.expm1(-v)
        out[i, 3] = dc.cbrt(v) + math.hypot(v, 2.0)
        out[i, 4] = math.atan2(-v, 0.5) + math.copysign(1.5, -v)
        out[i, 5] = math.fmod(-7.5, v) + math.log(v, 2.0)
        out[i, 6] = v ** 3 + v ** 0.5 + 2 ** -1


def test_special_functions_like_python_math(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    x = np.array([0.3, 1.0, 2.5, 7.25, 30.0])
    out = np.zeros((5, 7))
    dc.launch(special_functions, 5, x, out, accelerator=accelerator)
    ref = np.array([[math.lgamma(v), math.erfc(v), math.log1p(v) - math.expm1(-v), np.cbrt(v) + math.hypot(v, 2.0),
                     math.atan2(-v, 0.5) + math.copysign(1.5, -v), math.fmod(-7.5, v) + math.log(v, 2.0),
                     v ** 3 + v ** 0.5 + 0.5] for v in x.tolist()])
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-13)


@dc.kernel
def int_edges(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        out[i, 0] = abs(v)              # abs(INT_MIN) wraps to itself
        out[i, 1] = -v
        out[i, 2] = v << 40             # shift count >= 32: 0
        out[i, 3] = v >> 40             # 0 or -1 by sign
        out[i, 4] = v ** 2              # int32 power wraps
        out[i, 5] = v + 2**40           # the literal does not fit int32: int64 arithmetic


def test_int32_edge_semantics(accelerator):
    x = np.array([-(2**31), -5, 0, 7, 2**31 - 1, 65536], np.int32)
    out = np.zeros((6, 6), np.int64)
    dc.launch(int_edges, x.size, x, out, accelerator=accelerator)

    def wrap32(v):
        return (v + 2**31) % 2**32 - 2**31
    for k, v in enumerate(x.tolist()):
        assert out[k].tolist() == [wrap32(abs(v)), wrap32(-v), 0, -1 if v < 0 else 0, wrap32(v * v), v + 2**40], v


@dc.func
def bump(hist: dc.Buffer[dc.int32], k: dc.int64):
    dc.atomic_add(hist, k, 1)


@dc.func
def bucket(v: dc.float32, lo: dc.float32, width: dc.float32, n: dc.int64) -> dc.int64:
    b = dc.int64((v - lo) / width)
    if b < 0:
        return 0
    if b >= n:
        return n - 1
    return b


@dc.kernel
def histogram_via_funcs(x: dc.Buffer[dc.float32], hist: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        bump(hist, bucket(x[i], width=0.5, lo=-2.0, n=hist.shape[0]))


def test_device_functions_with_buffers_and_keywords(accelerator):
    rng = np.random.default_rng(81)
    x = (rng.standard_normal(2000) * 2).astype(np.float32)
    hist = np.zeros(8, np.int32)
    dc.launch(histogram_via_funcs, x.size, x, hist, accelerator=accelerator)
    b = np.clip(np.trunc((x - np.float32(-2.0)) / np.float32(0.5)).astype(np.int64), 0, 7)
    np.testing.assert_array_equal(hist, np.bincount(b, minlength=8))


@dc.kernel
def walrus_and_or(x: dc.Buffer[dc.int64], out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        if (v := x[i] * 2) > 10:
            out[i, 0] = v
        else:
            out[i, 0] = -v
        out[i, 1] = x[i] or 7          # operand-returning or
        out[i, 2] = x[i] and 3         # operand-returning and
        out[i, 3] = 1 if 0 <= x[i] < 5 else 0


def test_walrus_and_python_and_or(accelerator):
    x = np.array([0, 3, 6, -2, 5], np.int64)
    out = np.zeros((5, 4), np.int64)
    dc.launch(walrus_and_or, 5, x, out, accelerator=accelerator)
    ref = [[v * 2 if v * 2 > 10 else -v * 2, v or 7, v and 3, int(0 <= v < 5)] for v in x.tolist()]
    assert out.tolist() == ref


@dc.kernel(debug=True)
def load_through_func(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = load(a, i + 2)


@dc.func
def load(v: dc.Buffer[dc.float32], k: dc.int64) -> dc.float32:
    return v[k]  # FUNC-OOB


def test_debug_error_inside_device_function(accelerator):
    from realworld_helpers import line_of
    with pytest.raises(dc.KernelIndexError) as ei:
        dc.launch(load_through_func, 4, np.zeros(4, np.float32), np.zeros(4, np.float32), accelerator=accelerator)
    e = ei.value
    assert e.lineno == line_of(__file__, "# FUNC-OOB")
    assert "v" in e.buffer and "load" in e.buffer
    assert e.index in (4, 5)


@dc.kernel
def scaled_add(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], a: dc.float32):
    i = dc.global_id(0)
    if i < y.shape[0]:
        y[i] += a * x[i]


def test_launches_from_several_threads(accelerator):
    n = 2048
    errors = []
    results = {}

    def worker(t):
        try:
            s = accelerator.stream()
            x = accelerator.asarray(np.full(n, t + 1, np.float32))
            y = accelerator.zeros((n,), np.float32)
            for _ in range(15):
                dc.launch(scaled_add, n, x, y, 0.5, stream=s)
            s.synchronize()
            results[t] = y.numpy()
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t in range(4):
        np.testing.assert_allclose(results[t], np.full(n, 7.5 * (t + 1)), rtol=1e-6)


def _make_times(c):
    @dc.kernel
    def times(x: dc.Buffer, y: dc.Buffer):
        i = dc.global_id(0)
        if i < y.shape[0]:
            y[i] = x[i] * c
    return times


def test_first_launches_race_from_threads(accelerator):
    # a thread pool's first calls compile the same fresh generic kernel for three dtypes at once
    k = _make_times(3.0)
    gate = threading.Barrier(6)
    errors, ok = [], {}

    def worker(t):
        try:
            dt = (np.float32, np.float64, np.int32)[t % 3]
            x = np.arange(100).astype(dt)
            y = np.zeros_like(x)
            gate.wait()
            dc.launch(k, 100, x, y, accelerator=accelerator)
            ok[t] = np.array_equal(y, (x * 3).astype(dt))
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert ok == dict.fromkeys(range(6), True)
