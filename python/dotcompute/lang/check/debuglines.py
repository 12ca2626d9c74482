"""Source lines of code addresses in an instrumented kernel object, through addr2line's inlined frames.

The raw-kernel checkers (raw_cuda.py, raw_metal.py) get return addresses from their instrumentation
hooks and name the kernel source's line in reports; both objects carry DWARF lines, so one reader serves.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

# "file:line", "file:line:column", optionally " (discriminator N)" as GNU-style output appends
_FRAME = re.compile(r"^(.*):(\d+)(?::\d+)?(?: \(discriminator \d+\))?$")


def addr2line_tool() -> str | None:
    """LLVM's addr2line (which reads clang's DWARF 5 reliably), else binutils'; None when neither is installed."""
    return shutil.which("llvm-addr2line") or shutil.which("llvm-addr2line-14") or shutil.which("addr2line")


def source_frames(tool: str, path: str, pcs: list[int], source_name: str) -> dict[int, tuple[int, ...]]:
    """Per return address in ``pcs``: the lines of its inlined frames in ``source_name``, innermost first.

    Addresses addr2line cannot resolve (or a failing tool) are simply absent: reports then name line 0.
    """
    # a return address points after the call: the access is the instruction before it
    cmd = [tool, "-i", "-a", "-e", path] + [hex(pc - 1) for pc in pcs]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    frames: dict[int, tuple[int, ...]] = {}
    current = None
    for ln in out.splitlines():
        ln = ln.strip()
        if ln.startswith("0x"):
            current = int(ln, 16) + 1
            continue
        m = _FRAME.match(ln)
        if current is not None and m and os.path.basename(m.group(1)) == source_name:
            frames[current] = frames.get(current, ()) + (int(m.group(2)),)
    return frames


def first_line(chain: tuple[int, ...]) -> int:
    """The innermost frame with a line (compiler-made code may sit at line 0); 0 when none has one."""
    return next((line for line in chain if line), 0)


__all__ = ["addr2line_tool", "first_line", "source_frames"]
