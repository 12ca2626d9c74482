"""The same workloads written for numpy and each peer framework, each importable on its own.

Every peer exposes ``vadd(n)``, ``fused(n)``, ``nbody(n)`` and ``launch()``: each returns a
zero-argument callable that runs one iteration, plus a ``sync`` callable (or None).

``nbody(n)``: one all-pairs gravitational acceleration step over ``n`` bodies (softened, float32:
n work-items of n interactions each; ~20 flops per interaction), the work the heavy-item launch
rule of the CPU backend is for.
A peer that is not installed raises ImportError from ``load``.
"""

from collections.abc import Callable

import numpy as np

Runner = tuple[Callable[[], object], Callable[[], object] | None]


SOFTENING = np.float32(1e-3)


def bodies(n: int) -> np.ndarray:
    """``n`` positions as a (3, n) float32 array (x, y, z rows), the same for every peer."""
    return np.random.default_rng(1).random((3, n), dtype=np.float32)


def nbody_reference(pos: np.ndarray) -> np.ndarray:
    """Accelerations (3, n) in float64, to check every peer's result."""
    p = pos.astype(np.float64)
    d = p[:, None, :] - p[:, :, None]  # d[:, i, j] = p_j - p_i
    r2 = (d * d).sum(axis=0) + float(SOFTENING)
    return (d / (r2 * np.sqrt(r2))).sum(axis=2)


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32), np.empty(n, np.float32))


class NumpyPeer:
    name = "numpy"

    def vadd(self, n: int) -> Runner:
        a, b, out = _inputs(n)
        return (lambda: np.add(a, b, out=out)), None

    def fused(self, n: int) -> Runner:
        x, y, out = _inputs(n)
        tmp = np.empty_like(out)
        a = np.float32(2.5)

        def run() -> None:
            np.multiply(x, a, out=out)
            np.multiply(y, y, out=tmp)
            np.add(out, tmp, out=out)
            np.subtract(out, np.float32(3), out=out)
        return run, None

    def launch(self) -> Runner:
        a = np.zeros(1, np.float32)
        return (lambda: np.add(a, a, out=a)), None

    def nbody(self, n: int) -> Runner:
        pos = bodies(n)
        out = self.last_out = np.empty_like(pos)

        def run() -> None:  # broadcasting in blocks of rows, so memory stays ~n*256 floats
            for lo in range(0, n, 256):
                d = pos[:, None, :] - pos[:, lo:lo + 256, None]
                r2 = (d * d).sum(axis=0) + SOFTENING
                out[:, lo:lo + 256] = (d / (r2 * np.sqrt(r2))).sum(axis=2)
        return run, None


class NumbaPeer:
    name = "numba (parallel)"

    def __init__(self) -> None:
        import numba

        @numba.njit(parallel=True, fastmath=False, cache=False)
        def vadd(a, b, out):
            for i in numba.prange(out.shape[0]):
                out[i] = a[i] + b[i]

        @numba.njit(parallel=True, cache=False)
        def fused(a, x, y, out):
            for i in numba.prange(out.shape[0]):
                out[i] = a * x[i] + y[i] * y[i] - np.float32(3)

        @numba.njit(parallel=True, cache=False)
        def trivial(out):
            for i in numba.prange(out.shape[0]):
                out[i] = 1.0

        # fastmath: numba vectorises the inner loop's sums only when it may reorder them
        @numba.njit(parallel=True, fastmath=True, cache=False)
        def nbody(pos, out, eps):
            n = pos.shape[1]
            for i in numba.prange(n):
                ax = np.float32(0.0)
                ay = np.float32(0.0)
                az = np.float32(0.0)
                for j in range(n):
                    dx = pos[0, j] - pos[0, i]
                    dy = pos[1, j] - pos[1, i]
                    dz = pos[2, j] - pos[2, i]
                    r2 = dx * dx + dy * dy + dz * dz + eps
                    inv = np.float32(1.0) / (r2 * np.sqrt(r2))
                    ax += dx * inv
                    ay += dy * inv
                    az += dz * inv
                out[0, i] = ax
                out[1, i] = ay
                out[2, i] = az

        self._vadd, self._fused, self._trivial, self._nbody = vadd, fused, trivial, nbody

    def vadd(self, n: int) -> Runner:
        a, b, out = _inputs(n)
        return (lambda: self._vadd(a, b, out)), None

    def nbody(self, n: int) -> Runner:
        pos = bodies(n)
        out = self.last_out = np.empty_like(pos)
        return (lambda: self._nbody(pos, out, SOFTENING)), None

    def fused(self, n: int) -> Runner:
        x, y, out = _inputs(n)
        a = np.float32(2.5)
        return (lambda: self._fused(a, x, y, out)), None

    def launch(self) -> Runner:
        out = np.zeros(1, np.float32)
        return (lambda: self._trivial(out)), None


class WarpPeer:
    name = "warp (cpu)"

    def __init__(self) -> None:
        import warp as wp

        wp.config.quiet = True
        wp.init()
        self.wp = wp

        @wp.kernel
        def vadd(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
            i = wp.tid()
            out[i] = a[i] + b[i]

        @wp.kernel
        def fused(a: wp.float32, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
                  out: wp.array(dtype=wp.float32)):
            i = wp.tid()
            out[i] = a * x[i] + y[i] * y[i] - 3.0

        @wp.kernel
        def trivial(out: wp.array(dtype=wp.float32)):
            i = wp.tid()
            out[i] = 1.0

        @wp.kernel
        def nbody(pos: wp.array2d(dtype=wp.float32), out: wp.array2d(dtype=wp.float32), eps: wp.float32):
            i = wp.tid()
            n = pos.shape[1]
            # float(0.0), not 0.0: Warp's spelling of a variable a loop may change
            ax = float(0.0)  # noqa: UP018
            ay = float(0.0)  # noqa: UP018
            az = float(0.0)  # noqa: UP018
            for j in range(n):
                dx = pos[0, j] - pos[0, i]
                dy = pos[1, j] - pos[1, i]
                dz = pos[2, j] - pos[2, i]
                r2 = dx * dx + dy * dy + dz * dz + eps
                inv = 1.0 / (r2 * wp.sqrt(r2))
                ax += dx * inv
                ay += dy * inv
                az += dz * inv
            out[0, i] = ax
            out[1, i] = ay
            out[2, i] = az

        self._vadd, self._fused, self._trivial, self._nbody = vadd, fused, trivial, nbody

    def nbody(self, n: int) -> Runner:
        wp = self.wp
        pos = wp.array(bodies(n), dtype=wp.float32, device="cpu")
        out = wp.zeros((3, n), dtype=wp.float32, device="cpu")
        self.last_out = out
        return (lambda: wp.launch(self._nbody, dim=n, inputs=[pos, out, float(SOFTENING)], device="cpu")), None

    def _arrays(self, n: int):
        a, b, out = _inputs(n)
        wp = self.wp
        return (wp.array(a, device="cpu"), wp.array(b, device="cpu"), wp.array(out, device="cpu"))

    def vadd(self, n: int) -> Runner:
        a, b, out = self._arrays(n)
        return (lambda: self.wp.launch(self._vadd, dim=n, inputs=[a, b, out], device="cpu")), None

    def fused(self, n: int) -> Runner:
        x, y, out = self._arrays(n)
        return (lambda: self.wp.launch(self._fused, dim=n, inputs=[2.5, x, y, out], device="cpu")), None

    def launch(self) -> Runner:
        out = self.wp.zeros(1, dtype=self.wp.float32, device="cpu")
        return (lambda: self.wp.launch(self._trivial, dim=1, inputs=[out], device="cpu")), None


class TaichiPeer:
    name = "taichi (cpu)"

    def __init__(self) -> None:
        import taichi as ti

        ti.init(arch=ti.cpu, log_level=ti.ERROR)
        self.ti = ti

        @ti.kernel
        def vadd(a: ti.types.ndarray(), b: ti.types.ndarray(), out: ti.types.ndarray()):
            for i in range(out.shape[0]):
                out[i] = a[i] + b[i]

        @ti.kernel
        def fused(a: ti.f32, x: ti.types.ndarray(), y: ti.types.ndarray(), out: ti.types.ndarray()):
            for i in range(out.shape[0]):
                out[i] = a * x[i] + y[i] * y[i] - 3.0

        @ti.kernel
        def trivial(out: ti.types.ndarray()):
            for i in range(out.shape[0]):
                out[i] = 1.0

        @ti.kernel
        def nbody(pos: ti.types.ndarray(), out: ti.types.ndarray(), eps: ti.f32):
            n = pos.shape[1]
            for i in range(n):
                ax = 0.0
                ay = 0.0
                az = 0.0
                for j in range(n):
                    dx = pos[0, j] - pos[0, i]
                    dy = pos[1, j] - pos[1, i]
                    dz = pos[2, j] - pos[2, i]
                    r2 = dx * dx + dy * dy + dz * dz + eps
                    inv = 1.0 / (r2 * ti.sqrt(r2))
                    ax += dx * inv
                    ay += dy * inv
                    az += dz * inv
                out[0, i] = ax
                out[1, i] = ay
                out[2, i] = az

        self._vadd, self._fused, self._trivial, self._nbody = vadd, fused, trivial, nbody

    def nbody(self, n: int) -> Runner:
        pos = bodies(n)
        out = self.last_out = np.empty_like(pos)
        return (lambda: self._nbody(pos, out, float(SOFTENING))), self.ti.sync

    def vadd(self, n: int) -> Runner:
        a, b, out = _inputs(n)
        return (lambda: self._vadd(a, b, out)), self.ti.sync

    def fused(self, n: int) -> Runner:
        x, y, out = _inputs(n)
        return (lambda: self._fused(2.5, x, y, out)), self.ti.sync

    def launch(self) -> Runner:
        out = np.zeros(1, np.float32)
        return (lambda: self._trivial(out)), self.ti.sync


PEERS = {"numpy": NumpyPeer, "numba": NumbaPeer, "warp": WarpPeer, "taichi": TaichiPeer}


def load(name: str):
    """Instantiate a peer; raises ImportError (or the peer's own error) when it cannot run here."""
    return PEERS[name]()
