"""Simulation kernels: n-body, particle integration, SPH neighbours, Monte Carlo, fractals."""

import math

import numpy as np

import dotcompute as dc


@dc.kernel
def nbody_accel(pos: dc.Buffer[dc.float32, 2], mass: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32, 2],
                eps2: dc.float32):
    i = dc.global_id(0)
    n = pos.shape[0]
    if i >= n:
        return
    px = pos[i, 0]
    py = pos[i, 1]
    pz = pos[i, 2]
    ax: dc.float32 = 0.0
    ay: dc.float32 = 0.0
    az: dc.float32 = 0.0
    for j in range(n):
        dx = pos[j, 0] - px
        dy = pos[j, 1] - py
        dz = pos[j, 2] - pz
        r2 = dx * dx + dy * dy + dz * dz + eps2
        inv = 1.0 / math.sqrt(r2)
        s = mass[j] * inv * inv * inv
        ax += dx * s
        ay += dy * s
        az += dz * s
    out[i, 0] = ax
    out[i, 1] = ay
    out[i, 2] = az


def test_nbody_forces(accelerator):
    rng = np.random.default_rng(30)
    n = 150
    pos = rng.standard_normal((n, 3)).astype(np.float32)
    mass = rng.random(n, dtype=np.float32) + 0.5
    out = np.zeros_like(pos)
    dc.launch(nbody_accel, n, pos, mass, out, 0.01, accelerator=accelerator)
    p = pos.astype(np.float64)
    d = p[None, :, :] - p[:, None, :]
    r2 = (d * d).sum(-1) + np.float64(np.float32(0.01))
    ref = (d * (mass[None, :] / r2 ** 1.5)[..., None]).sum(1)
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)


@dc.kernel
def integrate(p: dc.Buffer[dc.float32, 2], v: dc.Buffer[dc.float32, 2], dt: dc.float32, g: dc.float32,
              restitution: dc.float32):
    i = dc.global_id(0)
    if i < p.shape[0]:
        v[i, 1] -= g * dt
        for d in range(2):
            p[i, d] += v[i, d] * dt
        if p[i, 1] < 0.0:
            p[i, 1] = -p[i, 1]
            v[i, 1] = -v[i, 1] * restitution


def test_particles_bounce_over_many_steps(accelerator):
    rng = np.random.default_rng(31)
    n = 300
    p0 = (rng.random((n, 2)) * [10, 5]).astype(np.float32)
    v0 = rng.standard_normal((n, 2)).astype(np.float32)
    pb, vb = accelerator.asarray(p0), accelerator.asarray(v0)
    dt, g, e = np.float32(0.01), np.float32(9.81), np.float32(0.8)
    steps = 100
    for _ in range(steps):
        accelerator.launch(integrate, n, pb, vb, dt, g, e)
    accelerator.synchronize()
    p, v = p0.copy(), v0.copy()
    for _ in range(steps):
        v[:, 1] -= g * dt
        p += v * dt
        hit = p[:, 1] < 0
        p[hit, 1] = -p[hit, 1]
        v[hit, 1] = -v[hit, 1] * e
    assert (pb.numpy()[:, 1] >= 0).all()
    np.testing.assert_allclose(pb.numpy(), p, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(vb.numpy(), v, rtol=1e-3, atol=1e-3)


@dc.kernel
def sph_density(x: dc.Buffer[dc.float64], h: dc.float64, rho: dc.Buffer[dc.float64]):
    # x is sorted: walk outwards from i in both directions and stop at the smoothing radius
    i = dc.global_id(0)
    n = x.shape[0]
    if i >= n:
        return
    acc = 1.0  # self contribution, w(0) = 1
    j = i + 1
    while True:
        if j >= n:
            break
        r = x[j] - x[i]
        if r >= h:
            break
        q = r / h
        acc += (1.0 - q * q) ** 3
        j += 1
    j = i - 1
    while j >= 0:
        r = x[i] - x[j]
        if r >= h:
            break
        q = r / h
        acc += (1.0 - q * q) ** 3
        j -= 1
    rho[i] = acc


def test_sph_density_neighbour_walk(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    rng = np.random.default_rng(32)
    x = np.sort(rng.random(400) * 20.0)
    rho = np.zeros_like(x)
    h = 0.3
    dc.launch(sph_density, x.size, x, h, rho, accelerator=accelerator)
    r = np.abs(x[:, None] - x[None, :])
    q = r / h
    ref = np.where(r < h, (1 - q * q) ** 3, 0.0).sum(1)
    np.testing.assert_allclose(rho, ref, rtol=1e-12)


@dc.func
def pcg_hash(v: dc.uint32) -> dc.uint32:
    state = v * 747796405 + 2891336453
    word = ((state >> ((state >> 28) + 4)) ^ state) * 277803737
    return (word >> 22) ^ word


def _pcg_np(v):
    v = v.astype(np.uint32)
    with np.errstate(over="ignore"):
        state = v * np.uint32(747796405) + np.uint32(2891336453)
        word = ((state >> ((state >> np.uint32(28)) + np.uint32(4))) ^ state) * np.uint32(277803737)
    return (word >> np.uint32(22)) ^ word


@dc.kernel
def mc_pi(hits: dc.Buffer[dc.int64], samples: dc.int32, seed: dc.uint32):
    i = dc.global_id(0)
    count = 0
    for s in range(samples):
        h = pcg_hash(dc.uint32(i * samples + s) ^ seed)
        xi = dc.int64(h & 0xFFFF)
        yi = dc.int64(h >> 16)
        if xi * xi + yi * yi < 65536 * 65536:
            count += 1
    dc.atomic_add(hits, 0, count)


def test_monte_carlo_pi_pcg_hash(accelerator):
    items, samples, seed = 512, 64, 12345
    hits = np.zeros(1, np.int64)
    dc.launch(mc_pi, items, hits, samples, seed, accelerator=accelerator)
    h = _pcg_np(np.arange(items * samples, dtype=np.uint64).astype(np.uint32) ^ np.uint32(seed))
    xi = (h & np.uint32(0xFFFF)).astype(np.int64)
    yi = (h >> np.uint32(16)).astype(np.int64)
    ref = int((xi * xi + yi * yi < 65536 * 65536).sum())
    assert int(hits[0]) == ref
    assert abs(4.0 * ref / (items * samples) - math.pi) < 0.05


@dc.kernel
def xorshift_stream(state: dc.Buffer[dc.uint32], out: dc.Buffer[dc.uint32, 2]):
    i = dc.global_id(0)
    if i >= state.shape[0]:
        return
    x = state[i]
    for k in range(out.shape[1]):
        x ^= x << 13
        x ^= x >> 17
        x ^= x << 5
        out[i, k] = x
    state[i] = x


def test_xorshift32_streams(accelerator):
    seeds = (np.arange(1, 65, dtype=np.uint32) * np.uint32(2654435761)).astype(np.uint32)
    state = seeds.copy()
    out = np.zeros((64, 10), np.uint32)
    dc.launch(xorshift_stream, 64, state, out, accelerator=accelerator)
    x = seeds.copy()
    ref = np.zeros_like(out)
    for k in range(10):
        x ^= x << np.uint32(13)
        x ^= x >> np.uint32(17)
        x ^= x << np.uint32(5)
        ref[:, k] = x
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(state, x)


@dc.kernel
def mandelbrot(counts: dc.Buffer[dc.int32, 2], x0: dc.float64, y0: dc.float64, step: dc.float64,
               max_iter: dc.int32):
    r = dc.global_id(0)
    c = dc.global_id(1)
    if r >= counts.shape[0] or c >= counts.shape[1]:
        return
    cr = x0 + c * step
    ci = y0 + r * step
    zr = 0.0
    zi = 0.0
    n = 0
    while n < max_iter:
        zr2 = zr * zr
        zi2 = zi * zi
        if zr2 + zi2 > 4.0:
            break
        zi = 2.0 * zr * zi + ci
        zr = zr2 - zi2 + cr
        n += 1
    counts[r, c] = n


def _escape_counts(zr, zi, cr, ci, max_iter):
    n = np.zeros(zr.shape, np.int32)
    alive = np.ones(zr.shape, bool)
    for _ in range(max_iter):
        zr2, zi2 = zr * zr, zi * zi
        alive &= (zr2 + zi2) <= 4.0
        zi = np.where(alive, 2.0 * zr * zi + ci, zi)
        zr = np.where(alive, zr2 - zi2 + cr, zr)
        n += alive
    return n


def test_mandelbrot_escape_counts(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    h, w, it = 48, 64, 80
    counts = np.zeros((h, w), np.int32)
    dc.launch(mandelbrot, (h, w), counts, -2.0, -1.125, 3.0 / w, it, accelerator=accelerator)
    ci, cr = np.meshgrid(-1.125 + np.arange(h) * (3.0 / w), -2.0 + np.arange(w) * (3.0 / w), indexing="ij")
    ref = _escape_counts(np.zeros_like(cr), np.zeros_like(ci), cr, ci, it)
    # fused multiply-adds may move a few boundary points by an iteration
    assert (counts == ref).mean() > 0.98
    assert counts.max() == it and counts.min() >= 1


@dc.kernel
def julia(img: dc.Buffer[dc.float32, 2], cr: dc.float32, ci: dc.float32, max_iter: dc.int32):
    r = dc.global_id(0)
    c = dc.global_id(1)
    h = img.shape[0]
    w = img.shape[1]
    if r < h and c < w:
        zr = -1.5 + 3.0 * dc.float32(c) / dc.float32(w)
        zi = -1.5 + 3.0 * dc.float32(r) / dc.float32(h)
        k = 0
        while k < max_iter and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            k += 1
        img[r, c] = k / max_iter


def test_julia_smooth_image(accelerator):
    h, w, it = 40, 40, 50
    img = np.full((h, w), -1.0, np.float32)
    dc.launch(julia, (h, w), img, -0.8, 0.156, it, accelerator=accelerator)
    zr = (np.float32(-1.5) + np.float32(3.0) * np.arange(w, dtype=np.float32) / np.float32(w))[None, :].repeat(h, 0)
    zi = (np.float32(-1.5) + np.float32(3.0) * np.arange(h, dtype=np.float32) / np.float32(h))[:, None].repeat(w, 1)
    n = _escape_counts(zr, zi, np.float32(-0.8), np.float32(0.156), it)
    ref = n / it
    assert img.dtype == np.float32 and ((img >= 0) & (img <= 1)).all()
    assert (np.abs(img - ref) < 1e-6).mean() > 0.95
