"""Small helpers shared by the real-world kernel suites (not a test module)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dotcompute as dc


def need_fp64(acc: dc.Accelerator) -> None:
    """Skip on devices without double precision (Metal)."""
    info = acc.info or {}
    features = info.get("features", []) if isinstance(info, dict) else []
    if "fp64" not in features:
        pytest.skip(f"{acc.id} has no fp64")


def line_of(path: str, marker: str) -> int:
    """1-based line number of the unique line of ``path`` holding ``marker``."""
    lines = Path(path).read_text().splitlines()
    hits = [n for n, text in enumerate(lines, 1) if marker in text and "line_of(" not in text]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


def _find_nvrtc() -> str | None:
    import glob
    import os
    import site

    env = os.environ.get("DOTCOMPUTE_NVRTC")
    if env and os.path.exists(env):
        return env
    for root in site.getsitepackages() + [site.getusersitepackages()]:
        hits = sorted(glob.glob(os.path.join(root, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so*")))
        hits = [h for h in hits if ".alt." not in h]
        if hits:
            return hits[0]
    return None


def nvrtc_compile(source: str, arch: str = "sm_80") -> tuple[bool, str]:
    """Compile CUDA C++ to CUBIN with the real NVRTC (no GPU needed): (ok, log). Skips when absent."""
    import ctypes

    path = _find_nvrtc()
    if path is None:
        pytest.skip("libnvrtc not found (pip install nvidia-cuda-nvrtc-cu12)")
    lib = ctypes.CDLL(path)
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"k.cu", 0, None, None)
    assert rc == 0, f"nvrtcCreateProgram failed: {rc}"
    opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value + 1)
    lib.nvrtcGetProgramLog(prog, buf)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc == 0, buf.value.decode(errors="replace")
