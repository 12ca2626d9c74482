"""Every kernel of the idiom suites prints for all four backends, and the CUDA source compiles
with the real NVRTC (no GPU needed). Metal may refuse only float64 (it has no double)."""

import importlib

import pytest

import dotcompute as dc

_MODULES = ["test_idioms_runtime", "test_idioms_more", "test_idioms_assign", "test_idioms_names"]
_REFUSED = {"float_into_int", "int_into_bool"}  # deliberately outside the language


def _kernels():
    out = []
    for m in _MODULES:
        mod = importlib.import_module(m)
        for name, obj in sorted(vars(mod).items()):
            if isinstance(obj, dc.Kernel) and name not in _REFUSED:
                out.append(pytest.param(obj, id=f"{m}.{name}"))
    return out


KERNELS = _kernels()


@pytest.mark.parametrize("k", KERNELS)
def test_every_backend_prints_and_cuda_compiles(k):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realworld"))
    from realworld_helpers import nvrtc_compile

    assert k.source("cpu") and k.source("opencl")
    try:
        assert k.source("metal")
    except dc.KernelTypeError as e:
        assert "float64" in str(e)
    ok, log = nvrtc_compile(k.source("cuda"))
    assert ok, log
