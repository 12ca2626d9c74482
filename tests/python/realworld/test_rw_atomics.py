"""Every atomic on every element type, on global buffers and on dc.shared arrays, with the
values that break naive implementations (unsigned above 2**31, negative floats, int64 beyond 32 bits)."""

import numpy as np
import pytest

import dotcompute as dc

DTYPES = [np.int32, np.uint32, np.int64, np.float32, np.float64]


@dc.kernel
def global_atomics(x: dc.Buffer, acc: dc.Buffer):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        dc.atomic_add(acc, 0, v)
        dc.atomic_sub(acc, 1, v)
        dc.atomic_min(acc, 2, v)
        dc.atomic_max(acc, 3, v)


LG = 32


def make_shared_atomics(elem):
    # the shared array's dtype must be a constant: a factory closes over it, one kernel per type
    @dc.kernel
    def shared_atomics(x: dc.Buffer, acc: dc.Buffer):
        t = dc.shared((4,), elem)
        l = dc.local_id(0)
        if l == 0:
            t[0] = 0
            t[1] = 0
            t[2] = x[dc.global_id(0)]
            t[3] = x[dc.global_id(0)]
        dc.barrier()
        v = x[dc.global_id(0)]
        dc.atomic_add(t, 0, v)
        dc.atomic_sub(t, 1, v)
        dc.atomic_min(t, 2, v)
        dc.atomic_max(t, 3, v)
        dc.barrier()
        if l == 0:
            dc.atomic_add(acc, 0, t[0])
            dc.atomic_add(acc, 1, t[1])
            dc.atomic_min(acc, 2, t[2])
            dc.atomic_max(acc, 3, t[3])
    return shared_atomics


SHARED_ATOMICS = {
    np.int32: make_shared_atomics(dc.int32),
    np.uint32: make_shared_atomics(dc.uint32),
    np.int64: make_shared_atomics(dc.int64),
    np.float32: make_shared_atomics(dc.float32),
    np.float64: make_shared_atomics(dc.float64),
}


def _data(dt, n, rng):
    if dt is np.uint32:
        return rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    if dt is np.int32:
        return rng.integers(-(2**31), 2**31, size=n).astype(np.int32)
    if dt is np.int64:
        return rng.integers(-(2**50), 2**50, size=n).astype(np.int64)
    return (rng.standard_normal(n) * 1000).round().astype(dt)  # integral floats: sums are exact


def _expected(x):
    if np.issubdtype(x.dtype, np.integer):
        bits = x.dtype.itemsize * 8
        mod = 2**bits
        s = sum(int(v) for v in x.tolist()) % mod
        d = (-sum(int(v) for v in x.tolist())) % mod
        if np.issubdtype(x.dtype, np.signedinteger):
            s = s - mod if s >= mod // 2 else s
            d = d - mod if d >= mod // 2 else d
        return [s, d, int(x.min()), int(x.max())]
    return [float(x.sum(dtype=np.float64)), float(-x.sum(dtype=np.float64)), float(x.min()), float(x.max())]


def _init(dt):
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return np.array([0, 0, info.max, info.min], dt)
    return np.array([0, 0, np.inf, -np.inf], dt)


@pytest.mark.parametrize("dt", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
def test_global_atomics_every_type(accelerator, dt):
    if dt is np.float64:
        from realworld_helpers import need_fp64
        need_fp64(accelerator)
    rng = np.random.default_rng(100)
    x = _data(dt, 777, rng)
    acc = _init(dt)
    dc.launch(global_atomics, x.size, x, acc, accelerator=accelerator)
    assert acc.tolist() == _expected(x)


@pytest.mark.parametrize("dt", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
def test_shared_atomics_every_type(accelerator, dt):
    if dt is np.float64:
        from realworld_helpers import need_fp64
        need_fp64(accelerator)
    rng = np.random.default_rng(101)
    x = _data(dt, LG * 5, rng)
    acc = _init(dt)
    dc.launch(SHARED_ATOMICS[dt], x.size, x, acc, local_size=LG, accelerator=accelerator)
    assert acc.tolist() == _expected(x)


@dc.kernel
def cas_and_exchange(slots: dc.Buffer[dc.int64], winners: dc.Buffer[dc.int64], last: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < winners.shape[0]:
        s = i % slots.shape[0]
        old = dc.atomic_cas(slots, s, -1, i)         # the first claimant of a slot wins
        winners[i] = 1 if old == -1 else 0
        dc.atomic_exchange(last, 0, dc.float32(i))


def test_cas_claims_each_slot_once(accelerator):
    slots = np.full(10, -1, np.int64)
    winners = np.zeros(200, np.int64)
    last = np.full(1, -1.0, np.float32)
    dc.launch(cas_and_exchange, 200, slots, winners, last, accelerator=accelerator)
    assert winners.sum() == 10
    won = np.flatnonzero(winners)
    assert sorted((won % 10).tolist()) == list(range(10))
    assert sorted(slots.tolist()) == sorted(won.tolist())
    assert 0 <= last[0] < 200 and last[0] == int(last[0])
