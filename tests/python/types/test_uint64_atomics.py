"""Atomics on uint64 buffers (counters and bit sets past 2^63), on every device that has 64-bit
atomics: add/sub wrap modulo 2^64 as numpy's uint64, min/max compare unsigned, exchange and cas."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

BIG = np.uint64(2**63 + 5)


@dc.kernel
def u64_atomics(h: dc.Buffer[dc.uint64], v: dc.Buffer[dc.uint64], old: dc.Buffer[dc.uint64]):
    i = dc.global_id(0)
    if i < v.shape[0]:
        dc.atomic_add(h, 0, v[i])
        dc.atomic_sub(h, 1, v[i])
        dc.atomic_max(h, 2, v[i])
        dc.atomic_min(h, 3, v[i])
        if i == 0:
            old[0] = dc.atomic_exchange(h, 4, v[i])
            old[1] = dc.atomic_cas(h, 5, dc.uint64(7), v[i])


def _needs_int64_atomics(acc: dc.Accelerator) -> None:
    if "int64_atomics" not in acc.info.get("features", ()):
        pytest.skip(f"{acc.id} has no 64-bit atomics")


def test_uint64_atomics_follow_numpy(accelerator):
    _needs_int64_atomics(accelerator)
    v = np.array([BIG, 3, 2**64 - 1, 9, 2**40], np.uint64)
    h = np.array([0, 1, 0, 2**64 - 1, 11, 7], np.uint64)
    old = np.zeros(2, np.uint64)
    dc.launch(u64_atomics, v.size, h, v, old, accelerator=accelerator)
    with np.errstate(over="ignore"):
        want_add = np.add.reduce(v, dtype=np.uint64)  # wraps modulo 2^64
        want_sub = np.uint64(1) - want_add
    assert h[0] == want_add and h[1] == want_sub
    assert h[2] == np.uint64(2**64 - 1) and h[3] == np.uint64(3)  # unsigned order: 2^64-1 is the largest
    assert old[0] == 11 and h[4] == BIG  # exchange: returns the old value
    assert old[1] == 7 and h[5] == BIG  # cas matched 7
