"""Host C++ compilers the CPU backend could use, in the order it tries them."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass

from .. import config

CANDIDATES = ("c++", "g++", "clang++")


@dataclass(frozen=True)
class Compiler:
    source: str  # where the name came from: DOTCOMPUTE_CXX, CXX or PATH
    command: str
    path: str | None
    version: str  # first line of `--version`, or why there is none


def _probe(source: str, command: str) -> Compiler:
    argv = shlex.split(command)
    path = shutil.which(argv[0]) if argv else None
    if path is None:
        return Compiler(source, command, None, "not found")
    try:
        done = subprocess.run([path, *argv[1:], "--version"], capture_output=True, text=True, timeout=10)
        lines = (done.stdout or done.stderr).strip().splitlines()
        version = lines[0] if lines else f"exit status {done.returncode}"
    except (OSError, subprocess.SubprocessError) as e:
        version = f"could not run: {e}"
    return Compiler(source, command, path, version)


def find() -> list[Compiler]:
    """Every candidate, found or not: DOTCOMPUTE_CXX, CXX, then c++, g++, clang++ on PATH."""
    found: list[Compiler] = []
    explicit = config.cxx()
    if explicit:
        found.append(_probe("DOTCOMPUTE_CXX", explicit))
    cxx = os.environ.get("CXX", "").strip()
    if cxx:
        found.append(_probe("CXX", cxx))
    found.extend(_probe("PATH", name) for name in CANDIDATES)
    return found


__all__ = ["CANDIDATES", "Compiler", "find"]
