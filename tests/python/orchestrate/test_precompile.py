"""kernel.precompile: the first launch afterwards finds its binary in the kernel cache."""

from __future__ import annotations

import numpy as np
import pytest
from orchestrate_kernels import bump, scale

import dotcompute as dc


def test_precompile_then_launch_compiles_nothing(accelerator):
    done = bump.precompile(accelerators=[accelerator])
    assert [acc for acc, _ in done] == [accelerator.id]
    x = np.zeros(16, np.float32)
    with dc.profile() as prof:
        dc.launch(bump, 16, x, accelerator=accelerator)
    assert [c.cache for c in prof.compiles] in ([], ["memory"])
    assert (x == 1).all()


def test_precompile_signatures_in_the_background(accelerator):
    sigs = [[dc.Buffer[dc.float32], dc.Buffer[dc.float32], dc.float32],
            [dc.Buffer[dc.float64], dc.Buffer[dc.float64], dc.float32]]
    future = scale.precompile(accelerators=accelerator.id, signatures=sigs, wait=False)
    entries = future.result(timeout=300)
    assert len(entries) == 2 and len({e for _, e in entries}) == 2
    x = np.ones(8, np.float64)
    y = np.zeros(8, np.float64)
    with dc.profile() as prof:
        dc.launch(scale, 8, x, y, np.float32(2.0), accelerator=accelerator)
    assert all(c.cache == "memory" for c in prof.compiles)
    assert (y == 2).all()


def test_precompile_rejects_non_kernels():
    with pytest.raises(TypeError, match="precompile"):
        dc.orchestrate.precompile(lambda: None)
