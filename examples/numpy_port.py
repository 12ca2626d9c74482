"""A numpy program that runs on dotcompute by changing its import line.

Three small numerical jobs written the way a numpy user writes them — explicit heat diffusion on a
grid, k-means clustering, and a low-pass FFT filter — using only names that numpy 2 and the Array API
share. The body below starts with ``import dotcompute as np``; ``python examples/numpy_port.py``
runs it on the default device (``DOTCOMPUTE_DEFAULT_DEVICE`` or ``--device`` picks another) and
then runs the very same text with ``import numpy as np`` and compares the two.

    python examples/numpy_port.py                    # the default device
    python examples/numpy_port.py --device opencl:0  # or cpu:0, cuda:0, metal:0
"""

from __future__ import annotations

import argparse
import math
import sys
import types

import numpy

PROGRAM = '''
import dotcompute as np


def heat_diffusion(n=64, steps=200, alpha=0.2):
    """Explicit 5-point stencil; the border is held at zero, a hot square starts in the middle."""
    u = np.zeros((n, n), dtype=np.float32)
    lo, hi = n // 2 - n // 8, n // 2 + n // 8
    u[lo:hi, lo:hi] = 100.0
    for _ in range(steps):
        centre = u[1:-1, 1:-1]
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * centre
        u[1:-1, 1:-1] = centre + alpha * lap
    total = np.sum(u)
    peak = np.max(u)
    return u, total, peak


def make_points(per_cluster=500):
    """Three rings of points around known centres (deterministic: no random numbers)."""
    t = np.linspace(0.0, 2.0 * np.pi, per_cluster, dtype=np.float32)
    r = 0.5 + 0.25 * np.sin(7.0 * t)
    centres = [(0.0, 0.0), (4.0, 1.0), (1.5, 5.0)]
    blocks = []
    for cx, cy in centres:
        xs = cx + r * np.cos(t)
        ys = cy + r * np.sin(t)
        blocks.append(np.stack([xs, ys], axis=1))
    return np.concat(blocks, axis=0)


def kmeans(points, k=3, iterations=10):
    """Lloyd's algorithm: assign each point to its nearest centroid, move centroids to the means."""
    centroids = points[::points.shape[0] // k][:k]
    for _ in range(iterations):
        diff = points[:, None, :] - centroids[None, :, :]
        dist2 = np.sum(diff * diff, axis=-1)
        labels = np.argmin(dist2, axis=1)
        moved = []
        for j in range(k):
            member = np.astype(labels == j, points.dtype)
            count = np.sum(member)
            weighted = np.sum(points * member[:, None], axis=0)
            moved.append(weighted / np.maximum(count, 1.0))
        centroids = np.stack(moved, axis=0)
    inertia = np.sum(np.min(dist2, axis=1))
    return centroids, labels, inertia


def lowpass(n=4096, rate=1024.0, cutoff=20.0):
    """A 5 Hz tone with 40 Hz and 200 Hz noise; the filter keeps what is below the cutoff."""
    t = np.arange(n, dtype=np.float32) / rate
    signal = (np.sin(2.0 * np.pi * 5.0 * t) + 0.5 * np.sin(2.0 * np.pi * 40.0 * t)
              + 0.25 * np.cos(2.0 * np.pi * 200.0 * t))
    spectrum = np.fft.rfft(signal)
    freqs = np.fft.rfftfreq(n, d=1.0 / rate)
    keep = np.astype(freqs < cutoff, np.float32)
    filtered = np.fft.irfft(spectrum * keep, n=n)
    clean = np.sin(2.0 * np.pi * 5.0 * t)
    error = np.max(np.abs(filtered - clean))
    energy = np.sum(np.abs(spectrum) ** 2) / n
    return filtered, error, energy


def statistics(u, points):
    """A few reductions a report would print."""
    row_means = np.mean(u, axis=1)
    spread = np.std(points, axis=0)
    hottest = np.argmax(row_means)
    above = np.count_nonzero(u > 1.0)
    cumulative = np.cumulative_sum(row_means)
    return row_means, spread, hottest, above, cumulative


def main():
    u, total, peak = heat_diffusion()
    points = make_points()
    centroids, labels, inertia = kmeans(points)
    order = np.argsort(centroids[:, 0])
    centroids = np.take(centroids, order, axis=0)
    filtered, error, energy = lowpass()
    row_means, spread, hottest, above, cumulative = statistics(u, points)
    return {
        "heat": u, "heat_total": total, "heat_peak": peak,
        "centroids": centroids, "inertia": inertia, "cluster_sizes": np.stack(
            [np.sum(np.astype(labels == j, np.int32)) for j in range(3)]),
        "filtered": filtered, "filter_error": error, "energy": energy,
        "row_means": row_means, "spread": spread, "hottest_row": hottest, "cells_above_1": above,
        "cumulative": cumulative,
    }
'''


def run_program(module_name: str) -> dict[str, numpy.ndarray]:
    """Runs PROGRAM with its import line naming ``module_name``; results as numpy arrays."""
    text = PROGRAM.replace("import dotcompute as np", f"import {module_name} as np", 1)
    module = types.ModuleType(f"numpy_port_{module_name}")
    exec(compile(text, f"<numpy_port program ({module_name})>", "exec"), module.__dict__)
    return {name: numpy.asarray(value) for name, value in module.main().items()}


def compare(ours: dict[str, numpy.ndarray], reference: dict[str, numpy.ndarray]) -> list[str]:
    """The names whose values differ from numpy's beyond float32 rounding (empty when all agree)."""
    bad = []
    for name, want in reference.items():
        got = ours[name]
        if got.shape != want.shape:
            bad.append(f"{name}: shape {got.shape}, numpy {want.shape}")
        elif not numpy.allclose(got, want, rtol=2e-4, atol=2e-4 * max(1.0, float(numpy.max(numpy.abs(want))))):
            bad.append(f"{name}: max difference {numpy.max(numpy.abs(got - want))}")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None,
                        help="an accelerator spec (default: DOTCOMPUTE_DEFAULT_DEVICE, else auto)")
    args = parser.parse_args(argv)
    import dotcompute as dc

    if args.device is None:
        ours = run_program("dotcompute")
    else:
        with dc.default_device(args.device):
            ours = run_program("dotcompute")
    reference = run_program("numpy")
    bad = compare(ours, reference)
    device = args.device or str(dc.__array_namespace_info__().default_device())
    print(f"device: {device}")
    print(f"heat: total {float(ours['heat_total']):.2f}, peak {float(ours['heat_peak']):.3f}")
    print(f"k-means: centroids {numpy.round(ours['centroids'], 3).tolist()}, inertia {float(ours['inertia']):.3f}")
    print(f"low-pass: max error against the clean tone {float(ours['filter_error']):.2e}")
    print("matches numpy" if not bad else "DIFFERS from numpy:\n  " + "\n  ".join(bad))
    if not math.isfinite(float(ours["heat_total"])):
        return 1
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
