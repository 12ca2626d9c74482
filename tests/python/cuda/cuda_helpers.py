"""Helpers of the CUDA suites: is there a real CUDA device, where are the built plugin and driver double."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def real_cuda_device_count() -> int:
    """CUDA devices the real driver reports, asked directly (0 without a driver)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    if lib.cuInit(0) != 0:
        return 0
    count = ctypes.c_int(0)
    return count.value if lib.cuDeviceGetCount(ctypes.byref(count)) == 0 else 0


def built_file(name: str, *subdirs: str) -> Path | None:
    """A file this checkout's CMake build produced (DOTCOMPUTE_TEST_CUDA_BUILD, else build*/)."""
    roots = [Path(os.environ["DOTCOMPUTE_TEST_CUDA_BUILD"])] if os.environ.get("DOTCOMPUTE_TEST_CUDA_BUILD") else []
    roots += sorted(REPO.glob("build*"))
    for root in roots:
        for sub in subdirs:
            candidate = root / sub / name
            if candidate.exists():
                return candidate
    return None
