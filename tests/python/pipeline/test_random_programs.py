"""Random programs over a few shared buffers: whatever runs concurrently, a pipeline must give the
results of running its stages one after another in the order they were added (the inferred RAW,
WAR and WAW edges are exactly what makes that true)."""

from __future__ import annotations

import numpy as np
import pytest
from pipeline_kernels import add, add_into, fill, scale

import dotcompute as dc

N = 20000  # above the CPU backend's inline-launch size: launches are really asynchronous there
BUFFERS = 4


def _program(rng: np.random.Generator, length: int) -> list[tuple]:
    ops = []
    for _ in range(length):
        kind = rng.choice(["scale", "add", "add_into", "fill", "host"])
        a, b, c = (int(v) for v in rng.integers(0, BUFFERS, 3))
        value = float(rng.integers(-3, 4))
        ops.append((kind, a, b, c, value))
    return ops


def _reference(ops: list[tuple], start: list[np.ndarray]) -> list[np.ndarray]:
    bufs = [s.copy() for s in start]
    for kind, a, b, c, value in ops:
        if kind == "scale":
            bufs[b] = np.float32(value) * bufs[a]
        elif kind == "add":
            bufs[c] = bufs[a] + bufs[b]
        elif kind == "add_into":
            bufs[b] = bufs[b] + bufs[a]
        elif kind == "fill":
            bufs[a] = np.full(N, value, np.float32)
        else:
            bufs[a] = bufs[a] * np.float32(0.5) + np.float32(value)
    return bufs


def _host_step(value: float):
    def step(buf):
        with buf.host() as h:
            h *= np.float32(0.5)
            h += np.float32(value)
    return step


@pytest.mark.parametrize("seed", range(6))
def test_random_program_matches_serial_execution(accelerator, seed):
    rng = np.random.default_rng(seed)
    ops = _program(rng, 10)
    start = [np.round(rng.standard_normal(N)).astype(np.float32) for _ in range(BUFFERS)]
    bufs = [accelerator.asarray(s) for s in start]
    p = dc.Pipeline(accelerator=accelerator)
    for kind, a, b, c, value in ops:
        if kind == "scale":
            if a == b:
                continue  # scale(x, out) with x is out: fine on devices, but keep the reference simple
            p.add(scale, N, value, bufs[a], bufs[b])
        elif kind == "add":
            p.add(add, N, bufs[a], bufs[b], bufs[c])
        elif kind == "add_into":
            p.add(add_into, N, bufs[a], bufs[b])
        elif kind == "fill":
            p.add(fill, N, value, bufs[a])
        else:
            p.add_host(_host_step(value), bufs[a])
    kept = [op for op in ops if not (op[0] == "scale" and op[1] == op[2])]
    expected = _reference(kept, start)
    for _ in range(2):  # and again, from where the first run left the buffers
        assert p.run().ok
        for i in range(BUFFERS):
            np.testing.assert_allclose(bufs[i].numpy(), expected[i], rtol=1e-6, err_msg=f"buffer {i}")
        expected = _reference(kept, expected)
