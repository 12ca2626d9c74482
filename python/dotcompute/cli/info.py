"""``dotcompute info``: what this installation can do, and why not when it cannot."""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from typing import Any

from .. import config
from ..cuda import cuda_include_dirs
from ..errors import DotComputeWarning
from . import compilers


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def collect() -> dict[str, Any]:
    """Everything ``info`` shows, as plain data (also what ``info --json`` prints)."""
    import numpy as np

    import dotcompute

    from .. import runtime

    report: dict[str, Any] = {
        "version": dotcompute.__version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "platform": platform.platform(),
        "package_dir": str(runtime.package_dir()),
        "cmake_dir": str(runtime.cmake_dir()),
        "errors": [],
    }
    try:
        report["native_version"] = runtime.native.native().version()
    except (ImportError, ValueError) as e:
        # ValueError: a DOTCOMPUTE_* variable with a bad value (say DOTCOMPUTE_LOG=bogus) stops the runtime
        # from starting; `dotcompute info` is where a user looks for that, so it reports it, no traceback.
        report["errors"].append(str(e))
        report["native_version"] = None
    if report["native_version"] is not None:
        report["backends"] = [
            {"name": b.name, "version": b.version, "available": b.available, "reason": b.reason,
             "library": b.library, "manifest": b.manifest, "devices": b.device_count, "simulated": b.simulated}
            for b in runtime.backends()
        ]
        report["devices"] = [{"id": d.id, **d.info} for d in runtime.devices()]
        try:
            report["cache"] = runtime.cache_info()
        except Exception as e:  # the cache folder may be unreadable; report, do not fail
            report["errors"].append(f"kernel cache: {e}")
    report["compilers"] = [c.__dict__ for c in compilers.find()]
    report["cuda_headers"] = list(cuda_include_dirs())
    # bad settings that have a fallback (DOTCOMPUTE_CPU_THREADS=abc, DOTCOMPUTE_LOG=chatty, a typo in
    # DOTCOMPUTE_BACKENDS): the program runs, but info says what is ignored and exits 1
    found = [b["name"] for b in report.get("backends", [])]
    report["warnings"] = config.problems(found)
    report["environment"] = config.in_effect()
    report["unknown_variables"] = config.unknown()
    from ..orchestrate.resilience import published

    # what running dotcompute processes report; an unusable state file is named, not a traceback
    report["circuit_breakers"] = published(report["warnings"])
    return report


def render(report: dict[str, Any]) -> str:
    out: list[str] = []
    add = out.append
    add(f"dotcompute {report['version']} (native {report.get('native_version') or 'not loaded'})")
    add(f"  python {report['python']}, numpy {report['numpy']}, {report['platform']}")
    add(f"  package: {report['package_dir']}")
    add(f"  cmake:   {report['cmake_dir']}")
    for err in report["errors"]:
        add(f"  error: {err}")
    for warning in report.get("warnings", []):
        add(f"  warning: {warning}")

    if "backends" in report:
        add("")
        add("backends:")
        if not report["backends"]:
            add("  (no plugins found)")
        for b in report["backends"]:
            state = f"available, {b['devices']} device(s)" if b["available"] else f"unavailable: {b['reason']}"
            if b.get("simulated"):
                state += (", SIMULATED on the CPU (DOTCOMPUTE_CUDA_SIM)" if b["name"] == "cuda"
                          else ", a TEST DOUBLE running on the CPU")
            add(f"  {b['name']:<8} {b['version'] or '?':<8} {state}")
            if b["library"]:
                add(f"           {b['library']}")
            if b["name"] == "cuda" and not b["available"] and "libcuda" in (b["reason"] or ""):
                # no driver here: the simulator runs the same CUDA path on the CPU
                add("           no GPU driver: DOTCOMPUTE_CUDA_SIM=1 runs CUDA kernels on the CUDA simulator")
            if b["name"] == "cuda":
                headers = report.get("cuda_headers") or []
                add("           CUDA headers for raw kernels (cuda_fp16.h, cooperative_groups.h, cub/): "
                    + (", ".join(headers) if headers else "none (pip install dotcompute[cuda])"))
        add("")
        add("devices:")
        for d in report["devices"]:
            add(f"  {d['id']:<10} {d['name']} ({d['type']}, {d['vendor']})")
            add(f"             memory {_size(d['memory'])}, local memory {_size(d['local_memory'])}, "
                f"{d['compute_units']} compute units, simd width {d['simd_width']}")
            add(f"             max work-group {d['max_work_group_size']} {tuple(d['max_work_item_sizes'])}, "
                f"arch {d['arch']}")
            add(f"             features: {', '.join(d['features']) or 'none'}")
            if d["id"].startswith("cpu:") and d.get("threads"):
                # the thread count in use: DOTCOMPUTE_CPU_THREADS when valid, else the number of cores
                source = "DOTCOMPUTE_CPU_THREADS" if config.cpu_threads() is not None else "default: the cores"
                add(f"             threads: {d['threads']} ({source})")
            if d.get("compiler"):
                add(f"             compiler: {d['compiler']}")

    add("")
    add("host C++ compilers (in the order the CPU backend tries them):")
    for c in report["compilers"]:
        where = c["path"] or "not found"
        add(f"  {c['command']:<10} [{c['source']}] {where}" + (f": {c['version']}" if c["path"] else ""))

    cache = report.get("cache")
    if cache is not None:
        add("")
        add(f"kernel cache: {cache['dir'] or '(memory only)'}")
        if cache.get("warning"):
            add(f"  warning: {cache['warning']}")
        add(f"  {cache['entries']} entries, {_size(cache['bytes'])} of at most {_size(cache['max_bytes'])}; "
            f"this process: {cache['memory_hits']} memory hits, {cache['disk_hits']} disk hits, "
            f"{cache['misses']} misses")

    breakers = [(doc, acc, b) for doc in report.get("circuit_breakers", []) for acc, b in doc["breakers"].items()]
    if breakers:
        add("")
        add("circuit breakers of running processes:")
        for doc, acc, b in breakers:
            until = ""
            if b.get("open_until"):
                until = f", cool-down ends in {max(0.0, b['open_until'] - time.time()):.1f} s"
            add(f"  pid {doc['pid']:<8} {acc:<10} {b['state']} ({b['failures']} failures, "
                f"opened {b['opened']}x{until})")

    add("")
    add("environment:")
    if not report["environment"]:
        add("  (no DOTCOMPUTE_* variables set)")
    for name, value in report["environment"].items():
        note = "  <- unknown to dotcompute" if name in report["unknown_variables"] else ""
        add(f"  {name}={value}{note}")
    # DESIGN.md: every configuration variable is "listed by `dotcompute info`", also those not set,
    # so a newcomer sees what can be configured (DOTCOMPUTE_CACHE_DIR, _BACKENDS, _PROFILE, ...).
    unset = [name for name in config.VARIABLES if name not in report["environment"]]
    if unset:
        add("  not set: " + ", ".join(unset))
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    # the report lists every ignored setting itself ("warning: ..."); the same DotComputeWarnings on
    # stderr would only say it twice
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DotComputeWarning)
        report = collect()
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(render(report))
    return 1 if report["errors"] or report["warnings"] else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("info", help="version, backends, devices, compilers, cache and settings")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


__all__ = ["collect", "register", "render", "run"]
