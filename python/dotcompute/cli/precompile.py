"""``dotcompute precompile module.py``: compile a module's kernels ahead of time, so that a
deployment starts with a warm kernel cache; ``dotcompute precompile --ops sum,argmax`` does the same
for the array operations a program uses (cli/precompile_ops.py)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any


def load_module(target: str) -> ModuleType:
    """A ``.py`` file (imported under its stem, its folder first on sys.path) or a dotted module name."""
    path = Path(target)
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise FileNotFoundError(f"dotcompute precompile: no such file: {target}")
        sys.path.insert(0, str(path.resolve().parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"dotcompute precompile: cannot import {target}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(target)


def kernels_of(module: ModuleType) -> list[tuple[str, Any]]:
    """Every ``@dc.kernel`` and ``dc.RawKernel`` defined at the module's top level."""
    from ..lang import Kernel
    from ..runtime import RawKernel

    return [(name, obj) for name, obj in vars(module).items() if isinstance(obj, (Kernel, RawKernel))]


def run_ops(args: argparse.Namespace) -> int:
    """``--ops`` / ``--ops-file``: warms the operations' kernels; 1 if any failed, 2 on a bad list."""
    from . import precompile_ops

    specs = list(args.ops or [])
    try:
        for path in args.ops_file or []:
            specs.extend(precompile_ops.read_ops_file(path))
        ops = precompile_ops.parse_ops(specs)
        dtypes = tuple(d for item in args.dtype or [] for d in item.split(",") if d.strip()) or None
        for d in dtypes or ():
            precompile_ops.parse_ops([f"sum:{d}"])  # the same dtype check as inside --ops
    except (OSError, ValueError) as e:
        print(f"dotcompute precompile: {e}", file=sys.stderr)
        return 2
    if not ops:
        print("dotcompute precompile: --ops names no operation", file=sys.stderr)
        return 2
    failed = 0
    for name, dtype, acc, seconds, error in precompile_ops.warm(ops, args.accelerator, dtypes):
        if error:
            failed += 1
            print(f"{name} {dtype} on {acc}: FAILED: {error}", file=sys.stderr)
        else:
            print(f"{name} {dtype}: warmed on {acc} in {seconds * 1e3:.0f} ms")
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    from ..orchestrate import precompile

    if args.module is None:
        if not (args.ops or args.ops_file):
            print("dotcompute precompile: give a module, --ops or --ops-file", file=sys.stderr)
            return 2
        return run_ops(args)
    if args.ops or args.ops_file:
        status = run_ops(args)
        if status == 2:
            return status
    else:
        status = 0
    try:
        module = load_module(args.module)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    except BaseException as e:  # noqa: BLE001 -- the user's module: its failure is one line, not a traceback
        if isinstance(e, KeyboardInterrupt):
            raise
        print(f"dotcompute precompile: cannot import {args.module}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    found = kernels_of(module)
    if not found:
        print(f"dotcompute precompile: no kernels found in {args.module}", file=sys.stderr)
        return 1
    if args.kernel:
        names = [n for n, _ in found]
        missing = [k for k in args.kernel if k not in names]
        if missing:
            print(f"dotcompute precompile: no kernel named {', '.join(map(repr, missing))} in {args.module} "
                  f"(kernels: {', '.join(names)})", file=sys.stderr)
            return 2
        found = [(n, k) for n, k in found if n in args.kernel]
    failed = 0
    for name, kernel in found:
        t0 = time.perf_counter()
        try:
            done = precompile(kernel, accelerators=args.accelerator or None)
        except Exception as e:  # report every kernel, then fail
            failed += 1
            print(f"{name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        where = ", ".join(acc for acc, _ in done)
        print(f"{name}: compiled for {where} in {(time.perf_counter() - t0) * 1e3:.0f} ms")
    return 1 if failed or status else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("precompile", help="compile a module's kernels or array operations ahead of time "
                                                "(warm the cache)")
    p.add_argument("module", nargs="?", default=None,
                   help="a .py file or a dotted module name; its top-level kernels are compiled")
    p.add_argument("--ops", action="append",
                   help="array operations to warm, comma-separated, each optionally op:dtype (op:int32+float64); "
                        "'all' for every one (repeatable)")
    p.add_argument("--ops-file", action="append", help="a file of operations, one op[:dtype] per line (# comments)")
    p.add_argument("--dtype", action="append",
                   help="dtypes for the operations that name none (comma-separated; default float32)")
    p.add_argument("--accelerator", "-a", action="append",
                   help="an accelerator spec (repeatable; default: every device)")
    p.add_argument("--kernel", "-k", action="append", help="only this kernel (repeatable)")
    p.set_defaults(func=run)


__all__ = ["kernels_of", "load_module", "register"]
