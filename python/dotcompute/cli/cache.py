"""``dotcompute cache clear`` / ``dotcompute cache info``."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from ..errors import DotComputeWarning


def _quietly(fn: Any) -> Any:
    # the refused-folder warning is printed once, as a line of the command's own output (below)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DotComputeWarning)
        return fn()


def run_clear(args: argparse.Namespace) -> int:
    from ..runtime import cache_clear

    before = _quietly(cache_clear)
    if before.get("warning"):
        print(f"warning: {before['warning']}", file=sys.stderr)
    print(f"removed {before['entries']} cached kernels ({before['bytes']} bytes) from {before['dir'] or 'memory'}")
    return 0


def run_info(args: argparse.Namespace) -> int:
    from ..runtime import cache_info

    info = _quietly(cache_info)
    if info.get("warning"):
        print(f"warning: {info['warning']}", file=sys.stderr)
    print(f"dir: {info['dir'] or '(memory only)'}")
    print(f"entries: {info['entries']}")
    print(f"bytes: {info['bytes']}")
    print(f"max_bytes: {info['max_bytes']}")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("cache", help="the kernel cache")
    sub = p.add_subparsers(dest="cache_command", metavar="{clear,info}")
    sub.required = True
    sub.add_parser("clear", help="remove every cached kernel").set_defaults(func=run_clear)
    sub.add_parser("info", help="where the cache is and how big").set_defaults(func=run_info)


__all__ = ["register"]
