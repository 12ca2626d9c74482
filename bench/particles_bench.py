"""examples/particles.py (struct buffer of vec3s, uniform grid built with atomics, collisions, a box)
beside numpy.

    python bench/particles_bench.py                          # 1000, 4000 and 20000 particles, every device
    python bench/particles_bench.py --quick --devices cpu:0 --sizes 2000

Columns, per particle count, in milliseconds per time step (best of N):

* "numpy brute force": the example's numpy reference step (every pair; O(n²), so only up to
  ``--brute-max`` particles);
* "numpy + scipy cKDTree": the same step with the contacts found by ``cKDTree.query_pairs`` and
  the pushes summed with ``np.add.at`` (what a numpy user would write; skipped without scipy);
* "warp <device>": the same four-kernel step written with NVIDIA Warp (bench/warp_particles.py:
  positions and velocities as two ``wp.vec3`` arrays, ``wp.utils.array_scan``), on Warp's CPU
  and, where there is one, CUDA device; skipped where Warp is not installed;
* per device, "dc <device>": ``Simulation.step()`` with everything resident on the device (four
  launches and a ``dc.cumsum``), ending with a synchronize.

Before timing, each dotcompute column runs 3 steps of a 1000-particle packing with contacts and
checks them against the numpy step (the max position difference is noted). Writes
bench/results/particles.{json,md}. Measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Report, Result, best_time  # noqa: E402

import dotcompute as dc  # noqa: E402


def _example():
    spec = importlib.util.spec_from_file_location("dc_example_particles", HERE.parent / "examples" / "particles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kdtree_step(ps: np.ndarray, sim) -> np.ndarray | None:
    """The example's step with scipy's k-d tree finding the contacts (None without scipy)."""
    try:
        from scipy.spatial import cKDTree
    except ImportError:
        return None
    pos, vel = ps["pos"].copy(), ps["vel"].copy()
    r, dt = sim.radius, sim.dt
    pairs = cKDTree(pos).query_pairs(2 * float(r), output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    d = pos[i] - pos[j]
    dist = np.sqrt((d * d).sum(1))
    keep = (dist < 2 * r) & (dist > np.float32(1e-7))
    i, j, d, dist = i[keep], j[keep], d[keep], dist[keep]
    n = d / dist[:, None]
    closing = ((vel[i] - vel[j]) * n).sum(1)
    push = sim.stiffness * (2 * r - dist) - sim.damping * np.minimum(closing, 0)
    f = (push * dt)[:, None] * n
    dv = np.zeros_like(vel)
    np.add.at(dv, i, f)
    np.add.at(dv, j, -f)
    vel = vel + dv + sim.gravity * dt
    pos = pos + vel * dt
    for a in range(3):
        low, high = pos[:, a] < r, pos[:, a] > sim.box[a] - r
        pos[low, a], pos[high, a] = r, sim.box[a] - r
        vel[low | high, a] *= -sim.restitution
    out = ps.copy()
    out["pos"], out["vel"] = pos, vel
    return out


def _bench(report: Report, ex, n: int, accs: list, repeat: int, brute_max: int) -> None:
    label = f"particles n={n} (ms/step)"
    cpu_sim = ex.Simulation(n, dc.accelerator("cpu"))
    host = cpu_sim.host
    if n <= brute_max:
        report.add(Result(label, "numpy brute force", best_time(lambda: ex.step_numpy(host, cpu_sim), repeat) * 1e3,
                          "ms", False))
    else:
        report.add(Result(label, "numpy brute force", None, "ms", False, f"skipped: n > {brute_max} (O(n^2))"))
    if kdtree_step(host, cpu_sim) is None:
        report.add(Result(label, "numpy + scipy cKDTree", None, "ms", False, "skipped: no scipy"))
    else:
        report.add(Result(label, "numpy + scipy cKDTree", best_time(lambda: kdtree_step(host, cpu_sim), repeat) * 1e3,
                          "ms", False))
    _bench_warp(report, ex, label, n, repeat)
    for acc in accs:
        err, touching = ex.check(1000, 3, acc.id)
        sim = ex.Simulation(n, acc)
        sim.step()
        acc.synchronize()
        report.add(Result(label, f"dc {acc.id}", best_time(sim.step, repeat, sync=acc.synchronize) * 1e3, "ms",
                          False, f"max err {err:.1e} ({touching} contacts)"))


def _bench_warp(report: Report, ex, label: str, n: int, repeat: int) -> None:
    try:
        import warp as wp
        import warp_particles as wpp
    except ImportError:
        report.add(Result(label, "warp", None, "ms", False, "skipped: warp (warp-lang) is not installed"))
        return
    wp.init()
    devices = ["cpu"] + (["cuda:0"] if wp.get_cuda_device_count() > 0 else [])
    for device in devices:
        # the same contact-rich check as the dotcompute columns
        check_sim = ex.Simulation(1000, dc.accelerator("cpu"), 1, spacing=1.95)
        ref = check_sim.host.copy()
        w = wpp.WarpSimulation(check_sim, device)
        for _ in range(3):
            w.step()
            ref = ex.step_numpy(ref, check_sim)
        w.synchronize()
        err = float(np.abs(w.positions() - ref["pos"]).max())
        sim = wpp.WarpSimulation(ex.Simulation(n, dc.accelerator("cpu")), device)
        report.add(Result(label, f"warp {device}", best_time(sim.step, repeat, sync=sim.synchronize) * 1e3, "ms",
                          False, f"max err {err:.1e}"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--sizes", default="1000,4000,20000", help="comma list of particle counts")
    ap.add_argument("--brute-max", type=int, default=2000, help="largest n for the O(n^2) numpy column")
    ap.add_argument("--devices", default=None, help="comma list of device ids (default: every device)")
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for particles.{json,md}")
    args = ap.parse_args()
    repeat = 3 if args.quick else 10
    accs = [dc.accelerator(d) for d in args.devices.split(",")] if args.devices else dc.devices()
    ex = _example()
    report = Report()
    for n in args.sizes.split(","):
        _bench(report, ex, int(n), accs, repeat, args.brute_max)
    report.write_named(Path(args.out), "particles", {"devices": [a.id for a in accs]},
                       f"examples/particles.py, one time step, best of {repeat}; {{cpus}} CPU cores, {{time}} "
                       "(a shared machine: compare columns of one run, not runs).")

if __name__ == "__main__":
    main()
