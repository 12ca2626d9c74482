"""Helpers of the CUDA simulator suite: is cuda:0 simulated in this session, is NVRTC there."""

from __future__ import annotations

import dotcompute as dc


def simulated_cuda0() -> bool:
    try:
        return any(d.id == "cuda:0" and d.info.get("simulated") is True for d in dc.devices())
    except ImportError:
        return False


def nvrtc_missing() -> bool:
    """The simulator still compiles every kernel with NVRTC first (compile errors stay real)."""
    import dotcompute.cuda as dcuda

    return dcuda.nvrtc_library_path() is None
