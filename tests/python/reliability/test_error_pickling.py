"""Every dotcompute error survives pickling with its details (Dask workers send errors to clients)."""

from __future__ import annotations

import pickle

import pytest

import dotcompute as dc

CASES = [
    dc.KernelSyntaxError("while-else is not in the language", "k.py", 12, 5, "    while x:", hint="drop the else"),
    dc.KernelTypeError("x: expected float32, got int64", "k.py", 3, 9, "def k(x):", hint="cast it"),
    dc.CompilationError("nvrtc failed", log="error: identifier undefined", source="__global__ void k() {}"),
    dc.BackendUnavailableError("cuda is unavailable", reason="libcuda.so.1 not found"),
    dc.OutOfMemoryError("opencl:0: out of memory allocating 8 GiB"),
    dc.LaunchError("local size 2048 exceeds 1024"),
    dc.KernelIndexError("out[10] out of bounds (shape (10,)) at k.py:7"),
    dc.PluginError("plugin ABI 99 is newer than this core"),
    dc.PipelineError("stage 'blur' failed", stage="blur"),
]


@pytest.mark.parametrize("err", CASES, ids=lambda e: type(e).__name__)
def test_errors_round_trip_with_their_details(err: dc.DotComputeError) -> None:
    err.transient = True
    err.accelerator = "opencl:0"
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert str(back) == str(err)
    assert back.args == err.args
    assert back.transient is True and back.accelerator == "opencl:0"
    for name in ("filename", "lineno", "offset", "text", "hint", "log", "source", "reason", "stage"):
        assert getattr(back, name, None) == getattr(err, name, None), name
