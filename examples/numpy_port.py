"""A numpy program that runs on dotcompute by changing its import line.

Three small numerical jobs written the way a numpy user writes them — explicit heat diffusion on a
grid until it settles (with boolean-mask statistics of the hot region), k-means clustering from
hashed pseudo-random points (ranked with argsort, each cluster's spread from eigvalsh of its
covariance), and a low-pass FFT filter with a least-squares trend (linalg.solve of the normal
equations) — using only names that numpy 2 and the Array API share. The program below
starts with ``import dotcompute as np``; ``python examples/numpy_port.py`` runs it on the
default device (``DOTCOMPUTE_DEFAULT_DEVICE`` or ``--device`` picks another), then runs the very
same text with ``import numpy as np`` and compares the two.

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


def uniform(seed, n):
    """Reproducible numbers in [0, 1): an integer hash of (seed, index), wrapping uint32 arithmetic
    (the same bits under numpy and dotcompute, unlike two different generators' streams)."""
    h = np.arange(n, dtype=np.uint32) * 2654435761 + seed
    h = (h ^ (h >> 16)) * 73244475
    h = (h ^ (h >> 16)) * 73244475
    h = h ^ (h >> 16)
    return np.astype(h >> 8, np.float32) / 16777216.0


def heat_diffusion(n=48, max_steps=400, alpha=0.2, tol=0.1):
    """Explicit 5-point stencil until the largest change per step falls below tol (checked every
    20 steps); the border is held at zero, a hot square starts in the middle."""
    u = np.zeros((n, n), dtype=np.float32)
    lo, hi = n // 2 - n // 8, n // 2 + n // 8
    u[lo:hi, lo:hi] = 100.0
    steps = 0
    for steps in range(1, max_steps + 1):
        centre = u[1:-1, 1:-1]
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * centre
        change = alpha * lap
        u[1:-1, 1:-1] = centre + change
        if steps % 20 == 0 and float(np.max(np.abs(change))) < tol:
            break
    return u, np.sum(u), np.max(u), steps


def periodic_diffusion(n=32, steps=50, alpha=0.2):
    """The same stencil on a torus, written with np.roll: heat leaving one edge enters the other,
    so the total stays what it was (the drift is the check a numpy user would print)."""
    x = np.linspace(0.0, 1.0, n, dtype=np.float32)
    v = np.reshape(np.tile(np.sin(2.0 * np.pi * x), (n,)), (n, n)) + np.reshape(np.repeat(x, n), (n, n))
    start = np.sum(v)
    for _ in range(steps):
        lap = (np.roll(v, 1, axis=0) + np.roll(v, -1, axis=0) + np.roll(v, 1, axis=1)
               + np.roll(v, -1, axis=1) - 4.0 * v)
        v = v + alpha * lap
    return v, np.abs(np.sum(v) - start) / np.abs(start)


def hot_region(u, threshold=1.0):
    """Statistics of the cells above a threshold, through a boolean mask."""
    mask = u > threshold
    hot = u[mask]
    rows, cols = np.nonzero(mask)
    centre = np.stack([np.mean(np.astype(rows, np.float32)), np.mean(np.astype(cols, np.float32))])
    clipped = np.clip(u, 0.0, 10.0)
    return {"hot_mean": np.mean(hot), "hot_std": np.std(hot), "hot_cells": np.count_nonzero(mask),
            "hot_centre": centre, "outside_heat": np.sum(np.where(mask, 0.0, u)),
            "clipped_total": np.sum(clipped)}


def make_points(per_cluster=400, seed=7):
    """Three noisy rings of points around known centres; the noise comes from uniform(seed)."""
    t = np.linspace(0.0, 2.0 * np.pi, per_cluster, dtype=np.float32)
    r = 0.5 + 0.25 * np.sin(7.0 * t)
    centres = [(0.0, 0.0), (4.0, 1.0), (1.5, 5.0)]
    blocks = []
    for cx, cy in centres:
        xs = cx + r * np.cos(t)
        ys = cy + r * np.sin(t)
        blocks.append(np.stack([xs, ys], axis=1))
    points = np.concat(blocks, axis=0)
    noise = np.reshape(uniform(seed, 2 * points.shape[0]), points.shape)
    return points + 0.2 * (noise - 0.5)


def kmeans(points, k=3, iterations=10, seed=11):
    """Lloyd's algorithm from k distinct points picked by uniform(seed): assign each point to its
    nearest centroid, move the centroids to the means, stop when no centroid moves."""
    n = points.shape[0]
    picks = np.astype(uniform(seed, k) * (n // k), np.int64) + np.arange(k, dtype=np.int64) * (n // k)
    centroids = np.take(points, picks, axis=0)
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
        new = np.stack(moved, axis=0)
        shift = float(np.max(np.abs(new - centroids)))
        centroids = new
        if shift < 1e-4:
            break
    inertia = np.sum(np.min(dist2, axis=1))
    return centroids, labels, inertia


def separation(points, centroids):
    """Distances between the centroids, each one's nearest neighbour, and the correlation matrix
    of the standardised points (a matmul of the transposed data with itself)."""
    gap = centroids[:, None, :] - centroids[None, :, :]
    dist = np.sqrt(np.sum(gap * gap, axis=-1))
    k = centroids.shape[0]
    nearest = np.min(dist + 1e6 * np.eye(k, dtype=dist.dtype), axis=1)
    z = (points - np.mean(points, axis=0)) / np.std(points, axis=0)
    corr = (z.mT @ z) / z.shape[0]
    return {"centroid_distances": dist, "nearest_centroid": nearest, "correlation": corr}


def rank_clusters(points, labels, centroids):
    """Clusters ranked by their distance from the centre of mass (argsort of an argsort), with
    their sizes from unique_counts and each cluster's spread along its principal axes."""
    centre = np.mean(points, axis=0)
    distance = np.sqrt(np.sum((centroids - centre) ** 2, axis=1))
    order = np.argsort(distance)
    ranks = np.argsort(order)
    values, counts = np.unique_counts(labels)
    spreads = []
    for j in range(centroids.shape[0]):
        member = points[labels == j]
        centred = member - np.mean(member, axis=0)
        cov = (centred.mT @ centred) / (member.shape[0] - 1)
        spreads.append(np.linalg.eigvalsh(cov))
    return {"order": order, "ranks": ranks, "label_values": values, "label_counts": np.take(counts, order),
            "spreads": np.take(np.stack(spreads), order, axis=0)}


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
    power = np.abs(spectrum) ** 2
    energy = np.sum(power) / n
    loud = freqs[power > 0.05 * np.max(power)]  # the frequencies carrying the signal's power
    return filtered, error, energy, loud


def moving_average(signal, width=32):
    """A running mean as the difference of two shifted cumulative sums."""
    c = np.cumulative_sum(signal, include_initial=True)
    return (c[width:] - c[:-width]) / width


def fit_trend(y, degree=2):
    """Least-squares polynomial through y: the normal equations (design^T design) c = design^T y,
    solved with linalg.solve; returns the coefficients and the residual's RMS."""
    x = np.linspace(-1.0, 1.0, y.shape[0], dtype=np.float32)
    design = np.stack([x ** p for p in range(degree + 1)], axis=1)
    gram = design.mT @ design
    rhs = design.mT @ y[:, None]
    coef = np.linalg.solve(gram, rhs)
    residual = y - (design @ coef)[:, 0]
    return coef[:, 0], np.sqrt(np.mean(residual * residual))


def statistics(u, points):
    """A few reductions a report would print."""
    row_means = np.mean(u, axis=1)
    spread = np.std(points, axis=0)
    hottest = np.argmax(row_means)
    above = np.count_nonzero(u > 1.0)
    cumulative = np.cumulative_sum(row_means)
    return row_means, spread, hottest, above, cumulative


def main():
    u, total, peak, steps = heat_diffusion()
    torus, drift = periodic_diffusion()
    points = make_points()
    centroids, labels, inertia = kmeans(points)
    ranking = rank_clusters(points, labels, centroids)
    centroids = np.take(centroids, ranking["order"], axis=0)
    filtered, error, energy, loudest = lowpass()
    smooth = moving_average(filtered)
    coef, rms = fit_trend(filtered)
    row_means, spread, hottest, above, cumulative = statistics(u, points)
    return {
        "heat": u, "heat_total": total, "heat_peak": peak, "heat_steps": steps, **hot_region(u),
        "torus": torus, "torus_drift": drift,
        "centroids": centroids, "inertia": inertia, **ranking, **separation(points, centroids),
        "filtered": filtered, "filter_error": error, "energy": energy, "loudest_hz": loudest, "smooth": smooth,
        "trend": coef, "trend_rms": rms,
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
    print(f"heat: total {float(ours['heat_total']):.2f}, peak {float(ours['heat_peak']):.3f} after "
          f"{int(ours['heat_steps'])} steps, {int(ours['hot_cells'])} cells above 1")
    print(f"k-means: centroids {numpy.round(ours['centroids'], 3).tolist()}, inertia {float(ours['inertia']):.3f}")
    print(f"k-means: cluster sizes {ours['label_counts'].tolist()} (nearest the centre of mass first)")
    print(f"low-pass: max error against the clean tone {float(ours['filter_error']):.2e}, loudest bins "
          f"{ours['loudest_hz'].tolist()} Hz, quadratic trend {numpy.round(ours['trend'], 4).tolist()}")
    print("matches numpy" if not bad else "DIFFERS from numpy:\n  " + "\n  ".join(bad))
    if not math.isfinite(float(ours["heat_total"])):
        return 1
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
