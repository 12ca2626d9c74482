"""Fixtures of the array-operation tests. ``path`` runs a test with the default dispatch and with
the portable kernels forced (so they are exercised on the CPU too, not only numpy); ``nvrtc`` is
the CUDA compiler, or a skip."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dotcompute.ops import dispatch


@pytest.fixture(params=["auto", "portable"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    with dispatch.prefer(request.param):
        yield request.param


@pytest.fixture(params=["merge", "radix"])
def sort_algorithm(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The portable sort's two algorithms on every device (by default radix on every device for one
    long row): "merge" turns radix off on CPU-type devices and GPUs alike, so that the merge sort's
    kernels run everywhere and the two parameters never run the same kernels twice."""
    import importlib

    sort_mod = importlib.import_module("dotcompute.ops.sort")
    monkeypatch.setattr(sort_mod, "RADIX_ON_CPU", request.param == "radix")
    monkeypatch.setattr(sort_mod, "RADIX_ON_GPU", request.param == "radix")
    return request.param


@pytest.fixture(scope="session")
def nvrtc():
    """The dotcompute.cuda module, or a skip when NVRTC is not installed."""
    import dotcompute.cuda as dcuda

    if dcuda.nvrtc_library_path() is None:
        pytest.skip(f"NVRTC not installed ({dcuda.INSTALL_HINT})")
    return dcuda
