"""The particles step of examples/particles.py written with NVIDIA Warp (same algorithm: a uniform grid
counted with atomics, a scan, a scatter, 27-cell contacts, a box), for bench/particles_bench.py."""

from __future__ import annotations

import numpy as np
import warp as wp

wp.config.quiet = True


@wp.func
def w_cell_of(p: wp.vec3, cell: float, dims: wp.vec3i) -> wp.vec3i:
    return wp.vec3i(wp.clamp(int(p[0] / cell), 0, dims[0] - 1), wp.clamp(int(p[1] / cell), 0, dims[1] - 1),
                    wp.clamp(int(p[2] / cell), 0, dims[2] - 1))


@wp.func
def w_flat(c: wp.vec3i, dims: wp.vec3i) -> int:
    return (c[2] * dims[1] + c[1]) * dims[0] + c[0]


@wp.kernel
def w_bin(pos: wp.array(dtype=wp.vec3), cell: float, dims: wp.vec3i, counts: wp.array(dtype=wp.int32),
          cid: wp.array(dtype=wp.int32), slot: wp.array(dtype=wp.int32)):
    i = wp.tid()
    c = w_flat(w_cell_of(pos[i], cell, dims), dims)
    cid[i] = c
    slot[i] = wp.atomic_add(counts, c, 1)


@wp.kernel
def w_scatter(cid: wp.array(dtype=wp.int32), slot: wp.array(dtype=wp.int32), ends: wp.array(dtype=wp.int32),
              counts: wp.array(dtype=wp.int32), order: wp.array(dtype=wp.int32)):
    i = wp.tid()
    c = cid[i]
    order[ends[c] - counts[c] + slot[i]] = i


@wp.kernel
def w_collide(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), order: wp.array(dtype=wp.int32),
              ends: wp.array(dtype=wp.int32), counts: wp.array(dtype=wp.int32), cell: float, dims: wp.vec3i,
              radius: float, stiffness: float, damping: float, dt: float, vel_out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = pos[i]
    v = vel[i]
    home = w_cell_of(p, cell, dims)
    dv = wp.vec3(0.0)
    for dz in range(-1, 2):
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                q = home + wp.vec3i(dx, dy, dz)
                if q[0] >= 0 and q[1] >= 0 and q[2] >= 0 and q[0] < dims[0] and q[1] < dims[1] and q[2] < dims[2]:
                    c = w_flat(q, dims)
                    for k in range(ends[c] - counts[c], ends[c]):
                        j = order[k]
                        if j != i:
                            d = p - pos[j]
                            dist = wp.length(d)
                            if dist < 2.0 * radius and dist > 1.0e-7:
                                n = d / dist
                                closing = wp.dot(v - vel[j], n)
                                push = stiffness * (2.0 * radius - dist) - damping * wp.min(closing, 0.0)
                                dv = dv + push * dt * n
    vel_out[i] = v + dv


@wp.kernel
def w_integrate(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), vel_new: wp.array(dtype=wp.vec3),
                gravity: wp.vec3, dt: float, radius: float, box: wp.vec3, restitution: float):
    i = wp.tid()
    v = vel_new[i] + gravity * dt
    x = pos[i] + v * dt
    for a in range(3):
        if x[a] < radius:
            x[a] = radius
            v[a] = -v[a] * restitution
        elif x[a] > box[a] - radius:
            x[a] = box[a] - radius
            v[a] = -v[a] * restitution
    pos[i] = x
    vel[i] = v


class WarpSimulation:
    """The example's Simulation (constants copied from ``sim``) on a Warp device; positions and
    velocities as two vec3 arrays (Warp's usual layout)."""

    def __init__(self, sim, device: str = "cpu") -> None:
        self.sim = sim
        self.device = device
        n = sim.n
        self.pos = wp.array(np.ascontiguousarray(sim.host["pos"]), dtype=wp.vec3, device=device)
        self.vel = wp.array(np.ascontiguousarray(sim.host["vel"]), dtype=wp.vec3, device=device)
        self.vel_new = wp.zeros(n, dtype=wp.vec3, device=device)
        self.counts = wp.zeros(sim.ncells, dtype=wp.int32, device=device)
        self.ends = wp.zeros(sim.ncells, dtype=wp.int32, device=device)
        self.cid, self.slot, self.order = (wp.zeros(n, dtype=wp.int32, device=device) for _ in range(3))
        self.dims = wp.vec3i(*[int(d) for d in sim.dims])

    def step(self) -> None:
        s, n, dev = self.sim, self.sim.n, self.device
        self.counts.zero_()
        wp.launch(w_bin, dim=n, inputs=[self.pos, float(s.cell), self.dims, self.counts, self.cid, self.slot],
                  device=dev)
        wp.utils.array_scan(self.counts, self.ends, inclusive=True)
        wp.launch(w_scatter, dim=n, inputs=[self.cid, self.slot, self.ends, self.counts, self.order], device=dev)
        wp.launch(w_collide, dim=n, inputs=[self.pos, self.vel, self.order, self.ends, self.counts, float(s.cell),
                                            self.dims, float(s.radius), float(s.stiffness), float(s.damping),
                                            float(s.dt), self.vel_new], device=dev)
        wp.launch(w_integrate, dim=n, inputs=[self.pos, self.vel, self.vel_new, wp.vec3(*s.gravity), float(s.dt),
                                              float(s.radius), wp.vec3(*s.box), float(s.restitution)], device=dev)

    def synchronize(self) -> None:
        wp.synchronize_device(self.device)

    def positions(self) -> np.ndarray:
        return self.pos.numpy()
