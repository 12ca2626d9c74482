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


class DotComputeRunner:
    def __init__(self, acc: dc.Accelerator) -> None:
        self.acc = acc
        self.name = f"dotcompute {acc.backend}:{acc.index}"

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

    def matmul(self, n: int):
        rng = np.random.default_rng(0)
        a = self.acc.asarray(rng.random((n, n), dtype=np.float32))
        b = self.acc.asarray(rng.random((n, n), dtype=np.float32))
        c = self.acc.empty((n, n), np.float32)
        return (lambda: self.acc.launch(matmul, (n, n), a, b, c, local_size=(16, 16))), self.acc.synchronize
