"""First use of array operations on an OpenCL CPU device (PoCL), cold and warm (issue 24).

    python bench/cold_compile.py                          # opencl:0, sum/argmax/min/x**2 at 1,000 and 16M
    python bench/cold_compile.py --before /tmp/old        # also an older dotcompute, in the same run

Each figure is one fresh Python process timing its first call of one operation (the input is made
before the clock starts; the result is read back). Scenarios, per operation and size:

* ``cold``: an empty DOTCOMPUTE_CACHE_DIR and an empty PoCL cache;
* ``warm``: a second process with the same folders;
* ``shipped``: the kernel-cache folder copied elsewhere (a deployment that ships or mounts it) and
  PoCL's default cache empty: what a new machine or container sees;
* ``precompiled``: a fresh cache warmed by ``dotcompute precompile --ops OP`` first (its time is
  given too).

Beside the wall time: the seconds inside the kernel compiles (PoCL's clBuildProgram, through
``compile_source``), the programs built (kernel-cache misses) and the work-group functions PoCL built
(``.so`` files in its cache). ``--before DIR``: DIR holds an older ``dotcompute`` package folder
(e.g. ``git archive <commit> python/dotcompute | tar -x``, then ``dotcompute`` moved to DIR's top) with
the installed native files linked in (``_native*.so``, ``libdotcompute.so``, ``plugins``); the child
processes then import it instead of the editable install. Writes bench/results/cold_compile.{json,md}.
Measurements, never pass/fail: on a shared 2-core machine the load is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# the child: imports dotcompute (from --before's folder when given), times one first call
CHILD = r"""
import json, os, sys, time
t_start = time.perf_counter()
before = os.environ.get("COLD_BENCH_PACKAGE")
if before:  # the editable install's finder would win over sys.path: drop it
    sys.meta_path = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, before)
import numpy as np
import dotcompute as dc
import dotcompute.runtime as rt
from dotcompute.runtime import cache_info
import_s = time.perf_counter() - t_start
spent = [0.0]
sources = []
orig = rt.compile_source
def timed(*a, **k):
    t = time.perf_counter()
    try:
        return orig(*a, **k)
    finally:
        spent[0] += time.perf_counter() - t
        sources.append((a[2] if len(a) > 2 else k.get("entry"), a[1] if len(a) > 1 else k.get("source")))
rt.compile_source = timed
op, n = sys.argv[1], int(sys.argv[2])
acc = dc.accelerator(sys.argv[3])
x = acc.asarray(np.random.default_rng(0).random(n).astype(np.float32))
acc.synchronize()
calls = {"sum": lambda: dc.sum(x), "argmax": lambda: dc.argmax(x), "min": lambda: dc.min(x),
         "x**2": lambda: x ** 2}
t0 = time.perf_counter()
np.asarray(calls[op]())
first = time.perf_counter() - t0
dump = os.environ.get("COLD_BENCH_SOURCES")
if dump:  # the generated OpenCL C of the first program compiled, for --pure-opencl
    with open(dump, "w") as f:
        json.dump(sources, f)
print(json.dumps({"first_s": first, "compile_s": spent[0], "programs": cache_info()["misses"],
                  "import_s": import_s, "package": dc.__file__}))
"""

OPS = ("sum", "argmax", "min", "x**2")
PRECOMPILE_NAME = {"sum": "sum", "argmax": "argmax", "min": "min", "x**2": "power"}


def _child(op: str, n: int, device: str, cache: Path, pocl: Path | None, package: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("POCL_CACHE_DIR", "DOTCOMPUTE_SET_POCL_CACHE_DIR")}
    env["DOTCOMPUTE_CACHE_DIR"] = str(cache)
    if pocl is not None:
        env["POCL_CACHE_DIR"] = str(pocl)
    if package:
        env["COLD_BENCH_PACKAGE"] = package
    out = subprocess.run([sys.executable, "-c", CHILD, op, str(n), device], env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    pocl_dir = pocl if pocl is not None else cache / "pocl"
    rec["pocl_wg_functions"] = len(list(pocl_dir.rglob("*.so"))) if pocl_dir.is_dir() else 0
    return rec


def _scenarios(op: str, n: int, device: str, package: str | None, root: Path) -> dict[str, dict]:
    """cold, warm and shipped for one version (``package`` None: the installed one, whose PoCL cache
    lives in the kernel cache; an older one gets a PoCL cache folder of its own, as PoCL's default)."""
    tag = "before" if package else "after"
    cache = root / f"{tag}-cache"
    pocl = root / f"{tag}-pocl" if package else None
    res = {"cold": _child(op, n, device, cache, pocl, package)}
    res["warm"] = _child(op, n, device, cache, pocl, package)
    shipped = root / f"{tag}-shipped"
    shutil.copytree(cache, shipped, symlinks=True)
    res["shipped"] = _child(op, n, device, shipped, (root / f"{tag}-pocl-new") if package else None, package)
    return res


def _precompiled(op: str, n: int, device: str, root: Path) -> dict:
    cache = root / "pre-cache"
    env = {k: v for k, v in os.environ.items() if k not in ("POCL_CACHE_DIR", "DOTCOMPUTE_SET_POCL_CACHE_DIR")}
    env["DOTCOMPUTE_CACHE_DIR"] = str(cache)
    t0 = time.perf_counter()
    pre = subprocess.run([sys.executable, "-m", "dotcompute.cli.main", "precompile", "--ops", PRECOMPILE_NAME[op],
                          "-a", device], env=env, capture_output=True, text=True, timeout=600, check=False)
    took = time.perf_counter() - t0
    rec = _child(op, n, device, cache, None, None)
    rec["precompile_s"] = took if pre.returncode == 0 else None
    return rec


def _cell(rec: dict) -> str:
    if "error" in rec:
        return f"error: {rec['error']}"
    return (f"{rec['first_s']:.2f} s ({rec['compile_s']:.2f} s compiling, {rec['programs']} programs, "
            f"{rec['pocl_wg_functions']} PoCL .so)")


def _pure_opencl(device: str, runs: int, root: Path) -> dict | None:
    """PoCL's own first-build cost in plain OpenCL (bench/pocl_first_build.c, built with ``cc``) beside
    dotcompute's cold ``dc.sum`` of 1,000 float32, alternating, ``runs`` fresh processes each with
    empty caches; the C program also builds the kernel dotcompute generated for that ``dc.sum``."""
    exe = root / "pocl_first_build"
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    built = subprocess.run([cc, "-O2", "-o", str(exe), str(HERE / "pocl_first_build.c"), "-ldl"],
                           capture_output=True, text=True, check=False)
    if built.returncode != 0:
        return {"error": built.stderr.strip()[-300:]}
    dumped = root / "sources.json"
    env = {k: v for k, v in os.environ.items() if k not in ("POCL_CACHE_DIR", "DOTCOMPUTE_SET_POCL_CACHE_DIR")}
    env["DOTCOMPUTE_CACHE_DIR"] = str(root / "dump-cache")
    env["COLD_BENCH_SOURCES"] = str(dumped)
    subprocess.run([sys.executable, "-c", CHILD, "sum", "1000", device], env=env, capture_output=True,
                   text=True, timeout=600, check=False)
    kernel_args: list[str] = []
    if dumped.is_file() and json.loads(dumped.read_text()):
        name, source = json.loads(dumped.read_text())[0]
        (root / "sum.cl").write_text(source)
        kernel_args = [str(root / "sum.cl"), name]
    c_runs, dc_runs, dc_spec = [], [], []
    for i in range(runs):
        pocl = root / f"pure-pocl-{i}"
        pocl.mkdir()
        out = subprocess.run([str(exe), *kernel_args], env={**env, "POCL_CACHE_DIR": str(pocl)},
                             capture_output=True, text=True, timeout=600, check=False)
        if out.returncode == 0:
            c_runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        dc_runs.append(_child("sum", 1000, device, root / f"pure-dc-{i}", None, None))
        # the same with PoCL's per-launch work-group specialisation on, as a user may set it (the
        # OpenCL plugin turns it off otherwise: the generic function in the binary serves)
        os.environ["POCL_WORK_GROUP_SPECIALIZATION"] = "1"
        try:
            dc_spec.append(_child("sum", 1000, device, root / f"pure-dc-spec-{i}", None, None))
        finally:
            del os.environ["POCL_WORK_GROUP_SPECIALIZATION"]
    return {"c": c_runs, "dotcompute_sum": dc_runs, "dotcompute_sum_wg_specialization": dc_spec,
            "kernel": kernel_args[1] if kernel_args else None}


def _median(values: list[float]) -> float:
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def _pure_lines(pure: dict) -> list[str]:
    if "error" in pure:
        return [f"pure OpenCL: could not build bench/pocl_first_build.c: {pure['error']}"]
    keys = [("platform_s", "platform + device query"), ("context_s", "context + queue"),
            ("first_build_s", "first clBuildProgram (one-line kernel)"),
            ("first_launch_s", "its first launch (work-group function)"),
            ("second_build_s", "second clBuildProgram, same context (one-line kernel)"),
            ("second_launch_s", "its first launch"),
            ("kernel_build_s", "build of dc.sum's generated kernel (after the two above)"),
            ("kernel_binary_read_s", "CL_PROGRAM_BINARIES read of it (PoCL builds the generic WG function)"),
            ("kernel_first_launch_s", "its first launch on one work-item (specialised WG function)")]
    runs = pure["c"]
    lines = [f"| step (plain OpenCL, bench/pocl_first_build.c, fresh process, empty POCL_CACHE_DIR) | "
             f"median of {len(runs)} | runs |", "|---|---|---|"]
    for key, label in keys:
        vals = [r[key] for r in runs if key in r]
        if vals:
            lines.append(f"| {label} | {_median(vals):.3f} s | {', '.join(f'{v:.3f}' for v in vals)} |")
    for tag, label in (("dotcompute_sum", "dotcompute: first dc.sum of 1,000 float32, empty caches"),
                       ("dotcompute_sum_wg_specialization", "the same, POCL_WORK_GROUP_SPECIALIZATION=1")):
        ok = [r for r in pure.get(tag, []) if "error" not in r]
        if ok:
            firsts = [r["first_s"] for r in ok]
            compiling = _median([r["compile_s"] for r in ok])
            lines.append(f"| {label} | {_median(firsts):.3f} s (compiling {compiling:.3f} s;"
                         f" import before it {_median([r['import_s'] for r in ok]):.3f} s) | "
                         f"{', '.join(f'{v:.3f}' for v in firsts)} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="opencl:0")
    ap.add_argument("--sizes", default="1000,16777216", help="comma list of element counts (float32)")
    ap.add_argument("--ops", default=",".join(OPS), help="comma list of: " + ", ".join(OPS))
    ap.add_argument("--before", default=None, help="a folder holding an older dotcompute package (see above)")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--pure-opencl", type=int, default=3, metavar="RUNS",
                    help="fresh processes timing PoCL's first build in plain OpenCL beside dotcompute's cold "
                         "dc.sum (bench/pocl_first_build.c; 0: skip)")
    args = ap.parse_args()
    pure = None
    if args.pure_opencl > 0:
        with tempfile.TemporaryDirectory(prefix="dc-cold-pure-") as tmp:
            pure = _pure_opencl(args.device, args.pure_opencl, Path(tmp))
        if pure is not None:
            print("\n".join(_pure_lines(pure)), flush=True)
    rows = []
    for n in (int(s) for s in args.sizes.split(",") if s):
        for op in (o for o in args.ops.split(",") if o):
            with tempfile.TemporaryDirectory(prefix="dc-cold-") as tmp:
                root = Path(tmp)
                row: dict = {"op": op, "n": n, "device": args.device,
                             "after": _scenarios(op, n, args.device, None, root)}
                if args.before:
                    row["before"] = _scenarios(op, n, args.device, str(Path(args.before).resolve()), root)
                row["after"]["precompiled"] = _precompiled(op, n, args.device, root)
            rows.append(row)
            print(json.dumps(row), flush=True)
    meta = {"time": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": os.cpu_count(),
            "load_average": [round(v, 2) for v in os.getloadavg()], "before": args.before,
            "pure_opencl": pure}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cold_compile.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    lines = ["| op | n | version | cold | warm | shipped cache | after precompile --ops |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        for tag in ("before", "after"):
            if tag not in r:
                continue
            s = r[tag]
            pre = s.get("precompiled")
            pre_cell = "" if pre is None else (_cell(pre) + (f"; precompile took {pre['precompile_s']:.1f} s"
                                                             if pre.get("precompile_s") else ""))
            lines.append(f"| {r['op']} | {r['n']:,} | {tag} | {_cell(s['cold'])} | {_cell(s['warm'])} | "
                         f"{_cell(s['shipped'])} | {pre_cell} |")
    note = (f"First use of one operation on {args.device} in a fresh process (bench/cold_compile.py, "
            f"{meta['time']}, {meta['cpus']} CPUs, load average at the end "
            f"{', '.join(str(v) for v in meta['load_average'])}). 'compiling': seconds inside the kernel "
            "compiles (PoCL's clBuildProgram; the generic work-group function it builds for the program's "
            "binary serves every launch); the rest of a cold first use is dotcompute's own work. "
            "'programs': kernel-cache misses.")
    text = note + "\n\n" + "\n".join(lines) + "\n"
    if pure is not None:
        text += ("\nWhere a cold first use goes, and PoCL's fixed cost measured without dotcompute (same run; "
                 "the analysis is in cold_compile_notes.md):\n\n"
                 + "\n".join(_pure_lines(pure)) + "\n")
    (out / "cold_compile.md").write_text(text)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
