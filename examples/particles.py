"""Particles in a box: vec3 positions and velocities in a struct buffer, gravity, collisions between
particles found through a uniform grid built with atomics, and bounces off the ground and walls.

Each step runs four kernels:

1. ``bin_particles``: each particle finds its grid cell and takes a slot in it with
   ``dc.atomic_add`` on the per-cell counts;
2. ``dc.cumsum`` of the counts gives where each cell's particles end in a sorted order, and
   ``scatter`` writes each particle's index there;
3. ``collide``: each particle visits the 27 cells around it and sums a spring-and-damper push
   from every particle closer than two radii (new velocities go to a separate buffer, so the
   step does not depend on the order work-items run in);
4. ``integrate``: gravity, motion, and the box (a particle leaving it is put back on the wall
   and its velocity reflected, with some energy lost).

The result is checked against the same step in numpy that finds the pairs by brute force
(all pairs: fine for a few thousand particles): the grid must find exactly the same contacts.

    python examples/particles.py [--n 20000] [--steps 100] [--accelerator cpu:0] [--check 2000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import dotcompute as dc

IVEC3 = dc.vector(3, dc.int32)


@dc.struct
class Particle:
    pos: dc.vec3
    vel: dc.vec3


@dc.func
def cell_of_point(p: dc.vec3, cell: dc.float32, dims: IVEC3) -> IVEC3:
    c = IVEC3(p.x / cell, p.y / cell, p.z / cell)  # float -> int truncates; positions are >= 0
    return min(max(c, 0), dims - 1)                # elementwise, like numpy's minimum/maximum


@dc.func
def flat_cell(c: IVEC3, dims: IVEC3) -> dc.int32:
    return (c.z * dims.y + c.y) * dims.x + c.x


@dc.kernel
def bin_particles(ps: dc.Buffer[Particle], cell: dc.float32, dims: IVEC3, counts: dc.Buffer[dc.int32],
                  cell_id: dc.Buffer[dc.int32], slot: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < ps.shape[0]:
        c = flat_cell(cell_of_point(ps[i].pos, cell, dims), dims)
        cell_id[i] = c
        slot[i] = dc.atomic_add(counts, c, 1)


@dc.kernel
def scatter(cell_id: dc.Buffer[dc.int32], slot: dc.Buffer[dc.int32], ends: dc.Buffer[dc.int64],
            counts: dc.Buffer[dc.int32], order: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < cell_id.shape[0]:
        c = cell_id[i]
        order[ends[c] - counts[c] + slot[i]] = i


@dc.kernel
def collide(ps: dc.Buffer[Particle], order: dc.Buffer[dc.int32], ends: dc.Buffer[dc.int64],
            counts: dc.Buffer[dc.int32], cell: dc.float32, dims: IVEC3, radius: dc.float32,
            stiffness: dc.float32, damping: dc.float32, dt: dc.float32, vel_out: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    if i < ps.shape[0]:
        p = ps[i]
        home = cell_of_point(p.pos, cell, dims)
        dv = dc.vec3(0.0)
        for dz in range(-1, 2):
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    q = home + IVEC3(dx, dy, dz)
                    if q.x >= 0 and q.y >= 0 and q.z >= 0 and q.x < dims.x and q.y < dims.y and q.z < dims.z:
                        c = flat_cell(q, dims)
                        for k in range(ends[c] - counts[c], ends[c]):
                            j = order[k]
                            if j != i:
                                d = p.pos - ps[j].pos
                                dist = dc.length(d)
                                if dist < 2.0 * radius and dist > 1e-7:
                                    n = d / dist
                                    closing = dc.dot(p.vel - ps[j].vel, n)
                                    push = stiffness * (2.0 * radius - dist) - damping * min(closing, 0.0)
                                    dv += push * dt * n
        vel_out[i] = p.vel + dv


@dc.kernel
def integrate(ps: dc.Buffer[Particle], vel: dc.Buffer[dc.vec3], gravity: dc.vec3, dt: dc.float32,
              radius: dc.float32, box: dc.vec3, restitution: dc.float32):
    i = dc.global_id(0)
    if i < ps.shape[0]:
        p = ps[i]
        p.vel = vel[i] + gravity * dt
        p.pos += p.vel * dt
        for a in range(3):                     # the ground (a == 1) and the walls
            if p.pos[a] < radius:
                p.pos[a] = radius
                p.vel[a] = -p.vel[a] * restitution
            elif p.pos[a] > box[a] - radius:
                p.pos[a] = box[a] - radius
                p.vel[a] = -p.vel[a] * restitution
        ps[i] = p


class Simulation:
    """Particles of one radius in a box of side 1, initially a jittered block above the ground."""

    def __init__(self, n: int, acc: dc.Accelerator, seed: int = 0, spacing: float = 2.5) -> None:
        self.acc = acc
        self.n = n
        self.radius = np.float32(0.2 / math.ceil(n ** (1 / 3)))
        self.box = np.array([1.0, 1.0, 1.0], np.float32)
        self.cell = np.float32(2 * self.radius)          # a contact is never more than one cell away
        self.dims = np.ceil(self.box / self.cell).astype(np.int32)
        self.gravity = np.array([0.0, -9.8, 0.0], np.float32)
        self.dt = np.float32(1e-3)
        self.stiffness = np.float32(2e4)
        self.damping = np.float32(20.0)
        self.restitution = np.float32(0.6)
        self.host = initial_particles(n, self.radius, seed, spacing)
        ncells = int(np.prod(self.dims))
        self.ps = acc.asarray(self.host.view(np.uint8).reshape(n, Particle.dtype.itemsize))  # the struct's bytes
        self.vel = acc.empty((n, 3), np.float32)
        self.cell_id = acc.empty((n,), np.int32)
        self.slot = acc.empty((n,), np.int32)
        self.order = acc.empty((n,), np.int32)
        self.ncells = ncells

    def step(self) -> None:
        acc, n = self.acc, self.n
        counts = acc.zeros((self.ncells,), np.int32)
        acc.launch(bin_particles, n, self.ps, self.cell, self.dims, counts, self.cell_id, self.slot)
        ends = dc.cumsum(counts)                           # int64, where each cell's run ends
        acc.launch(scatter, n, self.cell_id, self.slot, ends, counts, self.order)
        acc.launch(collide, n, self.ps, self.order, ends, counts, self.cell, self.dims, self.radius,
                   self.stiffness, self.damping, self.dt, self.vel)
        acc.launch(integrate, n, self.ps, self.vel, self.gravity, self.dt, self.radius, self.box,
                   self.restitution)

    def particles(self) -> np.ndarray:
        return self.ps.numpy().view(Particle.dtype).reshape(self.n)


def initial_particles(n: int, radius: float, seed: int = 0, spacing: float = 2.5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    side = math.ceil(n ** (1 / 3))
    k = np.arange(n)
    lattice = np.stack([k % side, (k // side) % side, k // (side * side)], 1).astype(np.float32)
    ps = np.zeros(n, Particle.dtype)
    # ``spacing`` radii apart, jittered, starting a little above the ground and off the walls
    ps["pos"] = 0.1 + lattice * np.float32(spacing * radius) + rng.uniform(-0.2, 0.2, (n, 3)) * radius
    ps["pos"][:, 1] += 0.2
    ps["vel"] = rng.uniform(-0.5, 0.5, (n, 3))
    return ps


def step_numpy(ps: np.ndarray, sim: Simulation) -> np.ndarray:
    """One step in numpy with brute-force contacts (every pair), float32 like the kernels."""
    pos, vel = ps["pos"].copy(), ps["vel"].copy()
    r, dt = sim.radius, sim.dt
    dv = np.zeros_like(vel)
    for lo in range(0, len(ps), 512):                  # blocks of rows keep the pair arrays small
        d = pos[lo:lo + 512, None, :] - pos[None, :, :]
        dist = np.sqrt((d * d).sum(-1))
        touch = (dist < 2 * r) & (dist > np.float32(1e-7))
        n = np.where(touch[..., None], d / np.where(touch, dist, 1)[..., None], 0).astype(np.float32)
        closing = ((vel[lo:lo + 512, None, :] - vel[None, :, :]) * n).sum(-1)
        push = sim.stiffness * (2 * r - dist) - sim.damping * np.minimum(closing, 0)
        dv[lo:lo + 512] = (np.where(touch, push * dt, 0)[..., None] * n).sum(1)
    vel = vel + dv + sim.gravity * dt
    pos = pos + vel * dt
    for a in range(3):
        low, high = pos[:, a] < r, pos[:, a] > sim.box[a] - r
        pos[low, a], pos[high, a] = r, sim.box[a] - r
        vel[low | high, a] *= -sim.restitution
    out = ps.copy()
    out["pos"], out["vel"] = pos, vel
    return out


def check(n: int = 300, steps: int = 3, device: str = "auto", seed: int = 1) -> tuple[float, int]:
    """Run ``steps`` steps on ``device`` and in numpy from a packing where neighbours overlap;
    return the largest position difference (the pushes are summed in another order, so it is small,
    not zero) and the number of contacts at the start."""
    sim = Simulation(n, dc.accelerator(device), seed, spacing=1.95)
    ref = sim.host.copy()
    touching = contacts(ref, sim.radius)
    for _ in range(steps):
        sim.step()
        ref = step_numpy(ref, sim)
    got = sim.particles()
    return float(np.abs(got["pos"] - ref["pos"]).max()), touching


def contacts(ps: np.ndarray, radius: float) -> int:
    pos = ps["pos"]
    d = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(-1))
    return int(((d < 2 * radius).sum() - len(ps)) // 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="number of particles (default 20000)")
    parser.add_argument("--steps", type=int, default=100, help="time steps of 1 ms (default 100)")
    parser.add_argument("--accelerator", "--device", default="auto", help="device id, e.g. cpu:0 (default auto)")
    parser.add_argument("--check", type=int, default=1000, metavar="N",
                        help="also compare 3 steps of N particles with numpy (0: skip; default 1000)")
    args = parser.parse_args(argv)
    acc = dc.accelerator(args.accelerator)
    sim = Simulation(args.n, acc)
    sim.step()                                          # compiles the kernels
    acc.synchronize()
    t = time.perf_counter()
    for _ in range(args.steps - 1):
        sim.step()
    acc.synchronize()
    elapsed = time.perf_counter() - t
    ps = sim.particles()
    inside = bool(((ps["pos"] >= sim.radius * 0.999) & (ps["pos"] <= sim.box - sim.radius * 0.999)).all())
    per_step = elapsed / max(1, args.steps - 1)
    print(f"{args.n} particles, {args.steps} steps on {acc.id}: {per_step * 1e3:.2f} ms per step; "
          f"mean height {ps['pos'][:, 1].mean():.3f}, all inside the box: {inside}")
    ok = inside and bool(np.isfinite(ps["pos"]).all())
    if args.check:
        err, touching = check(args.check, 3, acc.id)
        print(f"max position difference vs numpy (brute-force contacts), {args.check} particles with {touching} "
              f"contacts, 3 steps: {err:.2e}")
        ok = ok and err < 1e-4
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
