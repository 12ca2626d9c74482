"""examples/particles.py (a struct buffer of vec3 positions/velocities, a uniform grid built with
atomics, collisions, a box) at a small size on every accelerator, its kernels through NVRTC and one
step on the Metal shim, against the brute-force numpy step."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[3] / "examples" / "particles.py"


def _example():
    spec = importlib.util.spec_from_file_location("dc_example_particles", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_particles_match_numpy(accelerator):
    err, touching = _example().check(240, 3, accelerator.id)
    assert touching > 100  # the comparison is about collisions, not free fall
    assert err < 1e-5, err


def test_particles_command_line(accelerator, capsys):
    ex = _example()
    assert ex.main(["--n", "500", "--steps", "5", "--accelerator", accelerator.id, "--check", "150"]) == 0
    out = capsys.readouterr().out
    assert f"500 particles, 5 steps on {accelerator.id}" in out and "all inside the box: True" in out


def test_particle_kernels_compile_with_nvrtc():
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is None:
        pytest.skip("NVRTC (nvidia-cuda-nvrtc-cu12) is not installed")
    ex = _example()
    for k in (ex.bin_particles, ex.scatter, ex.collide, ex.integrate):
        ok, log = harness.nvrtc_compile(k.source("cuda"), k.name)
        assert ok, log


def test_one_step_on_the_metal_shim():
    run_msl = pytest.importorskip("runner").run_msl
    ex = _example()

    class Host:  # the simulation's constants, without an accelerator
        pass

    sim = Host()
    n = 200
    sim.radius = np.float32(0.2 / np.ceil(n ** (1 / 3)))
    sim.box = np.ones(3, np.float32)
    sim.cell = np.float32(2 * sim.radius)
    sim.dims = np.ceil(sim.box / sim.cell).astype(np.int32)
    sim.gravity = np.array([0, -9.8, 0], np.float32)
    sim.dt, sim.stiffness, sim.damping, sim.restitution = (np.float32(1e-3), np.float32(2e4), np.float32(20),
                                                           np.float32(0.6))
    ps = ex.initial_particles(n, sim.radius, 3, 1.95)
    want = ex.step_numpy(ps, sim)
    raw = ps.view(np.uint8).reshape(n, ex.Particle.dtype.itemsize)    # a struct buffer is its bytes
    counts = np.zeros(int(np.prod(sim.dims)), np.int32)
    cell_id, slot, order = (np.zeros(n, np.int32) for _ in range(3))
    vel = np.zeros((n, 3), np.float32)
    g = dict(global_size=n, local_size=8)
    run_msl(ex.bin_particles.source("metal"), [raw, sim.cell, *sim.dims, counts, cell_id, slot], **g)
    ends = np.cumsum(counts)
    run_msl(ex.scatter.source("metal"), [cell_id, slot, ends, counts, order], **g)
    assert sorted(order) == list(range(n))
    run_msl(ex.collide.source("metal"), [raw, order, ends, counts, sim.cell, *sim.dims, sim.radius, sim.stiffness,
                                         sim.damping, sim.dt, vel], **g)
    run_msl(ex.integrate.source("metal"), [raw, vel, *sim.gravity, sim.dt, sim.radius, *sim.box, sim.restitution],
            **g)
    np.testing.assert_allclose(ps["pos"], want["pos"], atol=1e-6)
    np.testing.assert_allclose(ps["vel"], want["vel"], atol=1e-4)
