"""``prof.plot(path)``: a picture of where the time went (needs matplotlib, optional)."""

from __future__ import annotations

import os
from typing import Any


def plot(kernels: list[Any], transfers: list[Any], path: str | os.PathLike[str]) -> None:
    """Two panels: total time per (kernel, accelerator), and bytes copied per direction."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never open a window from a library
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("prof.plot needs matplotlib: pip install matplotlib") from e
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 1]})
    labels = [f"{k.name} @ {k.accelerator}" for k in kernels]
    left.barh(labels, [k.total_ms for k in kernels], color="#4477aa")
    for y, k in enumerate(kernels):
        left.text(k.total_ms, y, f" {k.count}x, p50 {k.p50_ms:.3f} ms", va="center", fontsize=8)
    left.set_xlabel("total time (ms)")
    left.set_title("kernels")
    left.invert_yaxis()
    directions: dict[str, int] = {}
    for t in transfers:
        directions[t.direction] = directions.get(t.direction, 0) + t.bytes
    names = sorted(directions)
    right.bar(names, [directions[n] / 2**20 for n in names], color="#ee6677")
    right.set_ylabel("MiB copied")
    right.set_title("transfers")
    fig.tight_layout()
    fig.savefig(os.fspath(path), dpi=100)
    plt.close(fig)


__all__ = ["plot"]
