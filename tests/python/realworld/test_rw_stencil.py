"""Explicit heat-equation steps in 1-D, 2-D and 3-D, and Jacobi iteration with ping-pong buffers."""

import numpy as np

import dotcompute as dc


@dc.kernel
def heat1d(u: dc.Buffer[dc.float32], un: dc.Buffer[dc.float32], alpha: dc.float32):
    i = dc.global_id(0)
    n = u.shape[0]
    if i == 0 or i == n - 1:
        un[i] = u[i]
    elif i < n:
        un[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])


def test_heat1d_many_steps(accelerator):
    n = 200
    u0 = np.zeros(n, np.float32)
    u0[n // 2 - 5:n // 2 + 5] = 1.0
    a = accelerator.asarray(u0)
    b = accelerator.empty((n,), np.float32)
    for _ in range(40):
        accelerator.launch(heat1d, n, a, b, 0.25)
        a, b = b, a
    accelerator.synchronize()
    ref = u0.astype(np.float64)
    for _ in range(40):
        nxt = ref.copy()
        nxt[1:-1] = ref[1:-1] + 0.25 * (ref[:-2] - 2 * ref[1:-1] + ref[2:])
        ref = nxt
    np.testing.assert_allclose(a.numpy(), ref, rtol=1e-4, atol=1e-6)


@dc.kernel
def heat2d(u: dc.Buffer[dc.float64, 2], un: dc.Buffer[dc.float64, 2], k: dc.float64):
    i = dc.global_id(0)
    j = dc.global_id(1)
    ny = u.shape[0]
    nx = u.shape[1]
    if i >= ny or j >= nx:
        return
    if 0 < i < ny - 1 and 0 < j < nx - 1:
        lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
        un[i, j] = u[i, j] + k * lap
    else:
        un[i, j] = u[i, j]


def test_heat2d_step_numpy_args(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    rng = np.random.default_rng(5)
    u = rng.random((33, 47))
    un = np.zeros_like(u)
    dc.launch(heat2d, u.shape, u, un, 0.2, accelerator=accelerator)
    ref = u.copy()
    ref[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                            - 4.0 * u[1:-1, 1:-1])
    np.testing.assert_allclose(un, ref, rtol=1e-12, atol=1e-12)


@dc.kernel
def heat3d(u: dc.Buffer[dc.float32, 3], un: dc.Buffer[dc.float32, 3], k: dc.float32):
    z = dc.global_id(0)
    y = dc.global_id(1)
    x = dc.global_id(2)
    d0 = u.shape[0]
    d1 = u.shape[1]
    d2 = u.shape[2]
    if z >= d0 or y >= d1 or x >= d2:
        return
    c = u[z, y, x]
    interior = z > 0 and y > 0 and x > 0 and z < d0 - 1 and y < d1 - 1 and x < d2 - 1
    if interior:
        s = u[z - 1, y, x] + u[z + 1, y, x] + u[z, y - 1, x] + u[z, y + 1, x] + u[z, y, x - 1] + u[z, y, x + 1]
        un[z, y, x] = c + k * (s - 6.0 * c)
    else:
        un[z, y, x] = c


def test_heat3d_step(accelerator):
    rng = np.random.default_rng(6)
    u = rng.random((9, 11, 13), dtype=np.float32)
    un = np.zeros_like(u)
    dc.launch(heat3d, u.shape, u, un, 0.1, accelerator=accelerator)
    f = u.astype(np.float64)
    ref = f.copy()
    c = f[1:-1, 1:-1, 1:-1]
    s = (f[:-2, 1:-1, 1:-1] + f[2:, 1:-1, 1:-1] + f[1:-1, :-2, 1:-1] + f[1:-1, 2:, 1:-1]
         + f[1:-1, 1:-1, :-2] + f[1:-1, 1:-1, 2:])
    ref[1:-1, 1:-1, 1:-1] = c + 0.1 * (s - 6 * c)
    np.testing.assert_allclose(un, ref, rtol=1e-5, atol=1e-6)


@dc.kernel
def jacobi_step(u: dc.Buffer[dc.float32, 2], un: dc.Buffer[dc.float32, 2], f: dc.Buffer[dc.float32, 2],
                h2: dc.float32):
    i = dc.global_id(0)
    j = dc.global_id(1)
    n = u.shape[0]
    m = u.shape[1]
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            un[i, j] = u[i, j]
        else:
            un[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - h2 * f[i, j])


def test_jacobi_ping_pong_converges_like_numpy(accelerator):
    n = 24
    u0 = np.zeros((n, n), np.float32)
    u0[0, :] = 1.0  # hot top edge
    f = np.full((n, n), 0.5, np.float32)
    h2 = np.float32(1.0 / (n - 1) ** 2)
    a, b = accelerator.asarray(u0), accelerator.asarray(u0)
    fb = accelerator.asarray(f)
    iters = 60
    for _ in range(iters):
        accelerator.launch(jacobi_step, (n, n), a, b, fb, h2)
        a, b = b, a
    accelerator.synchronize()
    ref = u0.astype(np.float64)
    for _ in range(iters):
        nxt = ref.copy()
        nxt[1:-1, 1:-1] = 0.25 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2] + ref[1:-1, 2:]
                                  - float(h2) * f[1:-1, 1:-1])
        ref = nxt
    np.testing.assert_allclose(a.numpy(), ref, rtol=1e-4, atol=1e-5)
