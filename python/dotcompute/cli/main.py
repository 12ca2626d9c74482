"""``dotcompute``: the command line entry point."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence

from . import cache, info, precompile


def _version() -> str:
    import dotcompute

    return dotcompute.__version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dotcompute", description="dotcompute: compute kernels in Python, "
                                     "run on the CPU, CUDA, OpenCL or Metal.")
    parser.add_argument("--version", action="version", version=f"dotcompute {_version()}")
    parser.add_argument("--cmake-dir", action="store_true",
                        help="print the folder holding dotcompute's CMake package config (for find_package)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    info.register(subparsers)
    cache.register(subparsers)
    precompile.register(subparsers)
    # `check` belongs to the kernel language; it is wired in when it is installed.
    if importlib.util.find_spec("dotcompute.cli.check") is not None:
        from . import check

        check.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmake_dir:
        from ..runtime import cmake_dir

        print(cmake_dir())
        return 0
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:  # Ctrl-C during a long precompile or check: a line, not a traceback
        print(f"dotcompute {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`dotcompute info | head`): stop quietly, as other Unix tools do; stdout
        # is pointed at /dev/null so that the interpreter's own flush at exit does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141  # 128 + SIGPIPE, what a shell reports for a process killed by it


if __name__ == "__main__":
    sys.exit(main())
