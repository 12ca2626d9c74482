"""Timing and reporting shared by every benchmark: best-of-N timing, results, table/JSON/plot output."""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Result:
    workload: str
    framework: str
    value: float | None  # None: skipped
    unit: str  # "GB/s", "us/launch", "ms"
    higher_is_better: bool
    note: str = ""


@dataclass
class Report:
    results: list[Result] = field(default_factory=list)

    def add(self, result: Result) -> None:
        self.results.append(result)
        shown = "skipped" if result.value is None else f"{result.value:.2f} {result.unit}"
        print(f"  {result.workload:<28} {result.framework:<22} {shown}  {result.note}", flush=True)

    def table(self) -> str:
        workloads = list(dict.fromkeys(r.workload for r in self.results))
        frameworks = list(dict.fromkeys(r.framework for r in self.results))
        lines = ["| workload | " + " | ".join(frameworks) + " |",
                 "|---|" + "---|" * len(frameworks)]
        for w in workloads:
            cells = []
            for f in frameworks:
                r = next((r for r in self.results if r.workload == w and r.framework == f), None)
                if r is None:
                    cells.append("")
                elif r.value is None:
                    cells.append(r.note if r.note.startswith("skipped") else f"skipped ({r.note})" if r.note
                                 else "skipped")
                else:
                    cells.append(f"{r.value:.2f} {r.unit}")
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def write(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        meta = {"machine": platform.machine(), "processor": platform.processor(),
                "python": platform.python_version(), "time": time.strftime("%Y-%m-%d %H:%M:%S")}
        (out_dir / "results.json").write_text(
            json.dumps({"meta": meta, "results": [asdict(r) for r in self.results]}, indent=2))
        (out_dir / "results.md").write_text(self.table() + "\n")
        self._plot(out_dir / "results.png")

    def write_named(self, out_dir: Path, name: str, extra_meta: dict | None = None, note: str = "") -> dict:
        """An area's results: ``<name>.json`` (the machine, the time, the load, ``extra_meta`` and every
        result) and ``<name>.md`` (``note`` above the table, which is also printed); returns the meta.
        A ``{time}`` or ``{cpus}`` in ``note`` is filled in from the meta."""
        import os

        out_dir.mkdir(parents=True, exist_ok=True)
        meta = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                "time": time.strftime("%Y-%m-%d %H:%M:%S"),
                "load_average": [round(v, 2) for v in os.getloadavg()], **(extra_meta or {})}
        (out_dir / f"{name}.json").write_text(
            json.dumps({"meta": meta, "results": [asdict(r) for r in self.results]}, indent=2))
        table = self.table()
        text = note.format(**meta) if note else ""
        (out_dir / f"{name}.md").write_text((text + "\n\n" if text else "") + table + "\n")
        print()
        print(table)
        return meta

    def _plot(self, path: Path) -> None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return
        bandwidth = [r for r in self.results if r.unit == "GB/s" and r.value is not None]
        if not bandwidth:
            return
        workloads = list(dict.fromkeys(r.workload for r in bandwidth))
        frameworks = list(dict.fromkeys(r.framework for r in bandwidth))
        fig, ax = plt.subplots(figsize=(10, 4.5))
        width = 0.8 / len(frameworks)
        for i, f in enumerate(frameworks):
            xs, ys = [], []
            for j, w in enumerate(workloads):
                r = next((r for r in bandwidth if r.workload == w and r.framework == f), None)
                if r is not None:
                    xs.append(j + i * width)
                    ys.append(r.value)
            ax.bar(xs, ys, width, label=f)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(workloads))], workloads)
        ax.set_ylabel("GB/s (higher is better)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=110)


def best_time(fn: Callable[[], object], repeat: int = 7, number: int = 1,
              sync: Callable[[], object] | None = None) -> float:
    """Best wall time of ``number`` calls of ``fn`` over ``repeat`` rounds, in seconds per call."""
    fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9
