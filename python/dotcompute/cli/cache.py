"""``dotcompute cache clear`` / ``dotcompute cache info``."""

from __future__ import annotations

import argparse
from typing import Any


def run_clear(args: argparse.Namespace) -> int:
    from ..runtime import cache_clear

    before = cache_clear()
    print(f"removed {before['entries']} cached kernels ({before['bytes']} bytes) from {before['dir'] or 'memory'}")
    return 0


def run_info(args: argparse.Namespace) -> int:
    from ..runtime import cache_info

    info = cache_info()
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
