"""A ``with dc.default_device(...)`` block reaches every function that makes arrays without device=:
the namespace's creation functions and the rooms below it (dc.fft's frequency grids, dc.random)."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


def _other_than_auto() -> list[dc.Accelerator]:
    auto = dc.accelerator("auto")
    return [acc for acc in dc.devices() if acc is not auto]


@pytest.mark.parametrize("make", [
    pytest.param(lambda: dc.zeros(3), id="zeros"),
    pytest.param(lambda: dc.fft.fftfreq(8, d=0.5, dtype=dc.float32), id="fftfreq"),
    pytest.param(lambda: dc.fft.rfftfreq(8, dtype=dc.float32), id="rfftfreq"),
    pytest.param(lambda: dc.random.default_rng(7).random(5, dtype=dc.float32), id="random"),
])
def test_block_sets_the_device_of_every_maker(make):
    others = _other_than_auto()
    if not others:
        pytest.skip("only one device here: a block cannot be told apart from the default")
    target = others[0]
    with dc.default_device(target):
        inside = make()
    outside = make()
    assert inside.device is target
    assert outside.device is dc.accelerator("auto")
    np.testing.assert_array_equal(np.asarray(inside), np.asarray(outside))


def test_blocks_nest_and_unwind():
    accs = dc.devices()
    with dc.default_device(accs[0]):
        with dc.default_device(accs[-1]):
            assert dc.fft.fftfreq(4, dtype=dc.float32).device is accs[-1]
        assert dc.fft.fftfreq(4, dtype=dc.float32).device is accs[0]
