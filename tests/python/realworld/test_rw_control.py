"""Control flow and promotion details that ported C/CUDA code depends on, written the Python way."""

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def loop_var_after_loop(n: dc.Buffer[dc.int64], out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i >= n.shape[0]:
        return
    m = n[i]
    k = -1
    for k in range(m):  # noqa: B007 - the loop variable is read after the loop
        pass
    out[i, 0] = k                        # last value, or unchanged when the loop did not run
    cnt = 0
    for _ in range(m):
        m -= 1                           # range() was evaluated once
        cnt += 1
    out[i, 1] = cnt
    out[i, 2] = m
    found = -1
    for a in range(5):
        for b in range(5):
            if a * b == n[i]:
                found = a * 10 + b
                break                    # leaves the inner loop only
        if found >= 0:
            break
    out[i, 3] = found


def test_python_loop_semantics(accelerator):
    n = np.array([0, 1, 5, 12, 7], np.int64)
    out = np.zeros((5, 4), np.int64)
    dc.launch(loop_var_after_loop, 5, n, out, accelerator=accelerator)

    def ref(m):
        k = -1
        for k in range(m):  # noqa: B007
            pass
        found = -1
        for a in range(5):
            for b in range(5):
                if a * b == m:
                    found = a * 10 + b
                    break
            if found >= 0:
                break
        return [k, m, 0, found]
    assert out.tolist() == [ref(int(v)) for v in n]


@dc.kernel
def mixed_sign_compare(u: dc.Buffer[dc.uint32], s: dc.int32, out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i < u.shape[0]:
        out[i, 0] = 1 if u[i] > s else 0          # uint32 vs int32 compares as int64, not as C's unsigned
        out[i, 1] = 1 if u[i] > -1 else 0         # -1 does not fit uint32: int64 comparison
        out[i, 2] = min(u[i], s)                   # int64
        out[i, 3] = u[i] + s                       # int64: no wrap


def test_unsigned_signed_mixing_follows_the_promotion_table(accelerator):
    u = np.array([0, 1, 2**31, 2**32 - 1], np.uint32)
    out = np.zeros((4, 4), np.int64)
    dc.launch(mixed_sign_compare, 4, u, -1, out, accelerator=accelerator)
    uu = u.astype(np.int64)
    ref = np.stack([uu > -1, uu > -1, np.minimum(uu, -1), uu - 1], 1).astype(np.int64)
    np.testing.assert_array_equal(out, ref)


@dc.kernel
def bool_math(a: dc.Buffer[dc.bool_], b: dc.Buffer[dc.bool_], out: dc.Buffer[dc.int64, 2],
              flags: dc.Buffer[dc.bool_]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] + b[i]
        out[i, 1] = ~a[i]
        out[i, 2] = (a[i] ^ b[i]) + 0
        flags[i] = a[i] != b[i] and not a[i]


def test_bool_buffers_and_bool_arithmetic(accelerator):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    out = np.zeros((4, 3), np.int64)
    flags = np.ones(4, bool)
    dc.launch(bool_math, 4, a, b, out, flags, accelerator=accelerator)
    ref = [[int(x) + int(y), ~int(x), int(x ^ y)] for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert out.tolist() == ref
    assert flags.tolist() == [False, False, True, False]


@dc.kernel
def uniform_early_exit(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], active_groups: dc.int64):
    t = dc.shared((32,), dc.float32)
    if dc.group_id(0) >= active_groups:   # whole groups leave before the barrier: uniform
        return
    l = dc.local_id(0)
    t[l] = x[dc.global_id(0)]
    dc.barrier()
    out[dc.global_id(0)] = t[(l + 1) % 32]


def test_whole_group_early_return_before_barrier(accelerator):
    x = np.arange(128, dtype=np.float32)
    out = np.full(128, -1.0, np.float32)
    dc.launch(uniform_early_exit, 128, x, out, 2, local_size=32, accelerator=accelerator)
    ref = np.full(128, -1.0, np.float32)
    ref[:64] = np.roll(x[:64].reshape(2, 32), -1, axis=1).ravel()
    np.testing.assert_array_equal(out, ref)


@dc.func
def weight(d: dc.float32) -> dc.float32:
    return 1.0 / (1.0 + d * d)


@dc.kernel
def smooth_then_share(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    t = dc.shared((64,), dc.float32)
    u = dc.shared((64,), dc.int32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    w = weight(x[g])                 # lives across two barriers
    idx = dc.int32(63 - l)
    t[l] = x[g] * w
    u[l] = idx
    dc.barrier()
    acc: dc.float32 = 0.0
    for k in range(4):
        acc += t[(l + k) % 64]
    dc.barrier()
    t[l] = acc
    dc.barrier()
    out[g] = t[u[l]] + w


def test_values_live_across_several_barriers(accelerator):
    rng = np.random.default_rng(90)
    x = rng.standard_normal(192).astype(np.float32)
    out = np.zeros_like(x)
    dc.launch(smooth_then_share, 192, x, out, local_size=64, accelerator=accelerator)
    xg = x.reshape(3, 64).astype(np.float64)
    w = 1 / (1 + xg * xg)
    t = xg * w
    acc = sum(np.roll(t, -k, axis=1) for k in range(4))
    ref = acc[:, ::-1] + w
    np.testing.assert_allclose(out.reshape(3, 64), ref, rtol=1e-5, atol=1e-6)


@dc.kernel
def many_params(a0: dc.Buffer[dc.float32], a1: dc.Buffer[dc.float64], a2: dc.Buffer[dc.int32],
                a3: dc.Buffer[dc.int64], a4: dc.Buffer[dc.uint32], a5: dc.Buffer[dc.bool_],
                s0: dc.float32, s1: dc.float64, s2: dc.int32, s3: dc.int64, s4: dc.uint32, s5: dc.bool_,
                out: dc.Buffer[dc.float64, 2]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i, 0] = a0[i] + s0
        out[i, 1] = a1[i] + s1
        out[i, 2] = a2[i] + s2
        out[i, 3] = a3[i] + s3
        out[i, 4] = a4[i] + s4
        out[i, 5] = a5[i] and s5


def test_every_scalar_and_buffer_type_in_one_signature(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    n = 6
    a0 = np.arange(n, dtype=np.float32) + 0.5
    a1 = np.arange(n, dtype=np.float64) + 0.25
    a2 = -np.arange(n, dtype=np.int32)
    a3 = np.arange(n, dtype=np.int64) * 2**33
    a4 = np.arange(n, dtype=np.uint32) + 2**31
    a5 = np.arange(n) % 2 == 0
    out = np.zeros((n, 6))
    dc.launch(many_params, n, a0, a1, a2, a3, a4, a5, 1.5, 2.25, -3, 2**40, 3_000_000_000, True, out,
              accelerator=accelerator)
    ref = np.stack([a0 + 1.5, a1 + 2.25, a2 - 3, a3 + 2**40,
                    (a4.astype(np.int64) + 3_000_000_000) % 2**32, a5], 1).astype(np.float64)
    np.testing.assert_array_equal(out, ref)


@dc.kernel
def nan_min_max(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        y[i, 0] = max(x[i], 0.0)      # Python's order: NaN first stays NaN
        y[i, 1] = max(0.0, x[i])      # NaN second is dropped
        y[i, 2] = min(x[i], 0.0)
        y[i, 3] = dc.fmax(x[i], 0.0)  # C's fmax ignores NaN


def test_min_max_with_nan_follow_python(accelerator):
    x = np.array([np.nan, -1.0, 2.0], np.float32)
    y = np.zeros((3, 4), np.float32)
    dc.launch(nan_min_max, 3, x, y, accelerator=accelerator)
    ref = [[max(v, 0.0), max(0.0, v), min(v, 0.0), 0.0 if np.isnan(v) else max(v, 0.0)] for v in x.tolist()]
    np.testing.assert_array_equal(y, np.array(ref, np.float32))


def test_empty_launch_is_refused_clearly(accelerator):
    from test_rw_runtime import axpby
    x = np.zeros(0, np.float32)
    with pytest.raises((ValueError, dc.DotComputeError)) as ei:
        dc.launch(axpby, x.size, 1.0, x, 1.0, x.copy(), accelerator=accelerator)
    assert "global_size" in str(ei.value) or "positive" in str(ei.value)
