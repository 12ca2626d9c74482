"""The per-accelerator memory pool as Python sees it: stats, trim, limit, out-of-memory."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dotcompute as dc

MiB = 1 << 20


def test_stats_keys(accelerator):
    stats = accelerator.memory.stats()
    for key in ("in_use", "reserved", "peak", "hits", "misses"):
        assert isinstance(stats[key], int) and stats[key] >= 0
    assert stats["reserved"] >= stats["in_use"]


def test_allocation_reuse_and_trim(accelerator):
    mem = accelerator.memory
    accelerator.synchronize()
    before = mem.stats()
    b = accelerator.empty((MiB,), np.uint8)
    during = mem.stats()
    assert during["in_use"] >= before["in_use"] + MiB
    assert during["peak"] >= during["in_use"]
    del b
    gc.collect()
    accelerator.synchronize()
    freed = mem.stats()
    assert freed["in_use"] <= during["in_use"] - MiB
    c = accelerator.empty((MiB,), np.uint8)  # the same size class comes back from the cache
    assert mem.stats()["hits"] >= freed["hits"] + 1
    del c
    gc.collect()
    accelerator.synchronize()
    mem.trim()
    after = mem.stats()
    assert after["reserved"] == after["in_use"]


def test_limit_and_out_of_memory(accelerator):
    mem = accelerator.memory
    accelerator.synchronize()
    mem.trim()
    old = mem.limit
    try:
        mem.limit = mem.stats()["in_use"] + 4 * MiB
        assert mem.limit == mem.stats()["in_use"] + 4 * MiB
        ok = accelerator.empty((MiB,), np.uint8)
        with pytest.raises(dc.OutOfMemoryError) as info:
            accelerator.empty((64 * MiB,), np.uint8)
        assert isinstance(info.value, MemoryError)
        assert str(64 * MiB) in str(info.value) or "64" in str(info.value)
        assert info.value.requested >= 64 * MiB
        del ok
    finally:
        mem.limit = old
    assert mem.limit == old
    accelerator.empty((64 * MiB,), np.uint8)  # fine again without the limit


def test_limit_validation(cpu):
    with pytest.raises(ValueError):
        cpu.memory.limit = -1
    assert "in_use" in repr(cpu.memory)
