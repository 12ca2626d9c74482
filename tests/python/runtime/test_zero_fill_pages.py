"""Zero fills on cpu:0 (``acc.zeros``, ``dc.zeros``): from 256 KiB on, a fill inside one of the CPU
plugin's own blocks (1 MiB and more, anonymous mappings) hands the whole pages back to the kernel
instead of writing them, and writes only the partial pages at either end
(cpp/backends/cpu/src/launch.cpp, zero_fill). What must hold: the memory reads as zero even when the
pool hands back a block a previous buffer dirtied, what lies outside the filled range is untouched,
the pages work as before afterwards, and the pool's accounting does not change."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def add_one(x: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        x[i] += 1.0


# below the page-dropping size, around it, a block of exactly 1 MiB plus a tail, 2 MiB-aligned blocks, 64 MiB
SIZES = [1000, (1 << 16) + 3, (1 << 18) + 5, (1 << 20) // 4 + 7, (3 << 20) // 4, 1 << 24]


@pytest.mark.parametrize("n", SIZES)
def test_zeros_reads_zero_in_a_reused_dirty_block(cpu, n):
    mem = cpu.memory
    dirty = cpu.asarray(np.full(n, 7.5, np.float32))
    del dirty  # back to the pool's cache, every byte non-zero
    hits = mem.stats()["hits"]
    z = cpu.zeros((n,), np.float32)
    assert mem.stats()["hits"] == hits + 1  # the dirty block itself came back (else this tests nothing)
    assert not z.numpy().any()
    dc.launch(add_one, n, z, accelerator=cpu)  # the dropped pages come back on write, zero-filled
    np.testing.assert_array_equal(z.numpy(), np.ones(n, np.float32))


def test_namespace_zeros_on_cpu(cpu):
    n = 1 << 22
    junk = cpu.asarray(np.arange(n, dtype=np.float32) + 1)
    del junk
    z = dc.zeros(n, dtype=np.float32, device=cpu)
    assert z.dtype == np.float32 and z.shape == (n,)
    assert not z.numpy().any()


@pytest.mark.parametrize("lo, hi", [(1001, -999), (1024, -1024), (0, -1), (5, (1 << 16) + 5)])
def test_a_zero_fill_of_a_view_leaves_its_neighbours(cpu, lo, hi):
    n = 3 << 20
    b = cpu.asarray(np.full(n, 7.5, np.float32))
    hi = n + hi if hi < 0 else hi
    b[lo:hi]._native.fill_bytes(0)  # what acc.zeros does, on a part of a block (unaligned ends included)
    got = b.numpy()
    want = np.full(n, 7.5, np.float32)
    want[lo:hi] = 0
    np.testing.assert_array_equal(got, want)


def test_accounting_is_unchanged_by_dropped_pages(cpu):
    mem = cpu.memory
    before = mem.stats()
    z = cpu.zeros((1 << 22,), np.float32)
    during = mem.stats()
    assert during["in_use"] >= before["in_use"] + (1 << 24)
    del z
    after = mem.stats()
    assert after["in_use"] == before["in_use"]
    mem.trim()
    trimmed = mem.stats()
    assert trimmed["reserved"] == trimmed["in_use"]  # the mapping was given back like any block
