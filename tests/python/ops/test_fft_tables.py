"""The FFT's device tables (twiddles, Bluestein chirps): bounded by bytes, dropped by
``acc.memory.trim()`` for that device only (ops/fft.py)."""

from __future__ import annotations

import importlib

import numpy as np

import dotcompute as dc
from dotcompute.ops import dispatch

fft_mod = importlib.import_module("dotcompute.ops.fft_core")
RNG = np.random.default_rng(13)


def _run(acc, n):
    x = (RNG.standard_normal(n) + 1j * RNG.standard_normal(n)).astype(np.complex64)
    with dispatch.prefer("portable"):
        got = dc.fft.fft(acc.asarray(x)).numpy()
    np.testing.assert_allclose(got, np.fft.fft(x), rtol=1e-3, atol=1e-3 * np.sqrt(n))


def test_tables_are_bounded_by_bytes(monkeypatch):
    acc = dc.accelerator("cpu:0")
    fft_mod.tables.drop()
    monkeypatch.setattr(fft_mod, "TABLE_CACHE_BYTES", 3 * 4096 * 4)  # room for about one 4096-point table pair
    for n in (4096, 2048, 1024, 4096):
        _run(acc, n)
        assert fft_mod.tables.nbytes <= fft_mod.TABLE_CACHE_BYTES
    assert len(fft_mod.tables) >= 1
    fft_mod.tables.drop()
    assert len(fft_mod.tables) == 0 and fft_mod.tables.nbytes == 0


def test_trim_drops_the_devices_tables_only(accelerator):
    fft_mod.tables.drop()
    other = dc.accelerator("cpu:0") if accelerator.id != "cpu:0" else None
    if other is not None:
        _run(other, 1000)
    before = accelerator.memory.stats()["in_use"]
    _run(accelerator, 1000)  # Stockham: a twiddle table
    _run(accelerator, 1009)  # a prime: Bluestein tables (and the twiddles of their power-of-two length)
    assert accelerator.memory.stats()["in_use"] > before
    accelerator.memory.trim()
    assert accelerator.memory.stats()["in_use"] == before  # the tables' memory went back
    assert all(k[0] is not accelerator for k in fft_mod.tables._items)  # noqa: SLF001
    if other is not None:
        assert any(k[0] is other for k in fft_mod.tables._items)  # noqa: SLF001
    _run(accelerator, 1000)  # made again on demand
