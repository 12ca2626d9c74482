"""The benchmark workloads written with dotcompute, for any accelerator."""

from __future__ import annotations

import numpy as np

import dotcompute as dc


@dc.kernel
def vadd(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


@dc.kernel
def fused(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i] * y[i] - 3.0


@dc.kernel
def trivial(out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = 1.0


@dc.kernel
def matmul(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2], c: dc.Buffer[dc.float32, 2]):
    row = dc.global_id(1)
    col = dc.global_id(0)
    if row < c.shape[0] and col < c.shape[1]:
        acc = dc.float32(0.0)
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


@dc.kernel
def nbody(pos: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2], eps: dc.float32):
    i = dc.global_id(0)
    n = pos.shape[1]
    if i < n:
        ax = dc.float32(0.0)
        ay = dc.float32(0.0)
        az = dc.float32(0.0)
        for j in range(n):
            dx = pos[0, j] - pos[0, i]
            dy = pos[1, j] - pos[1, i]
            dz = pos[2, j] - pos[2, i]
            r2 = dx * dx + dy * dy + dz * dz + eps
            inv = 1.0 / (r2 * dc.sqrt(r2))
            ax += dx * inv
            ay += dy * inv
            az += dz * inv
        out[0, i] = ax
        out[1, i] = ay
        out[2, i] = az


# the same kernel with the backend compiler free to reorder and approximate (as numba's fastmath=True)
nbody_fastmath = dc.kernel(fastmath=True)(nbody.pyfunc)
# only a*b+c fused into FMAs (the default, IEEE and numpy's bits, fuses nothing)
nbody_contract = dc.kernel(contract=True)(nbody.pyfunc)


class DotComputeRunner:
    def __init__(self, acc: dc.Accelerator, fastmath: bool = False, contract: bool = False) -> None:
        self.acc = acc
        self.fastmath = fastmath
        self.contract = contract and not fastmath
        mode = " fastmath" if fastmath else (" contract" if self.contract else "")
        self.name = f"dotcompute {acc.backend}:{acc.index}" + mode

    def _inputs(self, n: int):
        rng = np.random.default_rng(0)
        return (self.acc.asarray(rng.random(n, dtype=np.float32)),
                self.acc.asarray(rng.random(n, dtype=np.float32)),
                self.acc.empty((n,), np.float32))

    def vadd(self, n: int):
        a, b, out = self._inputs(n)
        return (lambda: self.acc.launch(vadd, n, a, b, out)), self.acc.synchronize

    def fused(self, n: int):
        x, y, out = self._inputs(n)
        return (lambda: self.acc.launch(fused, n, 2.5, x, y, out)), self.acc.synchronize

    def launch(self):
        out = self.acc.zeros((1,), np.float32)
        return (lambda: self.acc.launch(trivial, 1, out)), self.acc.synchronize

    def nbody(self, n: int):
        from peers import SOFTENING, bodies

        pos = self.acc.asarray(bodies(n))
        out = self.last_out = self.acc.empty((3, n), np.float32)
        k = nbody_fastmath if self.fastmath else (nbody_contract if self.contract else nbody)
        return (lambda: self.acc.launch(k, n, pos, out, SOFTENING)), self.acc.synchronize

    def matmul(self, n: int):
        rng = np.random.default_rng(0)
        a = self.acc.asarray(rng.random((n, n), dtype=np.float32))
        b = self.acc.asarray(rng.random((n, n), dtype=np.float32))
        c = self.acc.empty((n, n), np.float32)
        return (lambda: self.acc.launch(matmul, (n, n), a, b, c, local_size=(16, 16))), self.acc.synchronize
