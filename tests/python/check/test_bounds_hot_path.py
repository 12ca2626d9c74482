"""An unguarded kernel's launch entry is plain once its bounds proof holds (lang/launching.py's hot
path asks Prover.holds): relaunches on the same Buffers and size prove nothing again, anything new is
proved before it runs (issue 24's launch overhead)."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang import bounds


@dc.kernel
def bump(x: dc.Buffer[dc.float32], a: dc.float32):
    i = dc.global_id(0)
    x[i] = x[i] + a  # unguarded: a bounds fact


@dc.kernel
def pair(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = x[i]  # two buffers indexed unguarded


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = bounds.prove

    def prove(*args: object, **kw: object) -> None:
        calls.append(1)
        real(*args, **kw)

    monkeypatch.setattr(bounds, "prove", prove)
    return calls


def test_relaunch_on_the_same_buffers_proves_once(monkeypatch):
    calls = _counting(monkeypatch)
    acc = dc.accelerator("cpu:0")
    x = acc.zeros(5, np.float32)
    for _ in range(4):
        dc.launch(bump, 5, x, np.float32(1.0), accelerator=acc)
    assert len(calls) == 1
    assert x.numpy().tolist() == [4.0] * 5
    entry = next(e for (a, _, _), e in bump._launches.items() if a is acc)
    assert entry.proved is not None and not entry.plain


def test_a_new_buffer_or_size_is_proved_before_it_runs(monkeypatch):
    calls = _counting(monkeypatch)
    acc = dc.accelerator("cpu:0")
    x, out = acc.asarray(np.arange(6, dtype=np.float32)), acc.zeros(6, np.float32)
    dc.launch(pair, 6, x, out, accelerator=acc)
    dc.launch(pair, 6, x, out, accelerator=acc)
    assert len(calls) == 1
    with pytest.raises(dc.LaunchError, match="'out' has shape \\(3,\\)"):
        dc.launch(pair, 6, x, acc.zeros(3, np.float32), accelerator=acc)  # the second buffer is new
    with pytest.raises(dc.LaunchError):
        dc.launch(pair, 7, x, out, accelerator=acc)  # a larger size
    # smaller: proved again, and fine -- by the launch fast path's native check of the same facts
    # (runtime/fast_launch.py), so Python's prove is not called for it
    dc.launch(pair, 4, x, out, accelerator=acc)
    assert len(calls) == 3
    small = acc.zeros(2, np.float32)
    with pytest.raises(dc.LaunchError):
        dc.launch(bump, 5, small, np.float32(1.0), accelerator=acc)
    assert small.numpy().tolist() == [0.0, 0.0]  # nothing ran
