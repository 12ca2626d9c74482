"""Every kernel of the kernel-language conformance registry compiles with the real NVRTC to
CUBIN for sm_80 and sm_90 (no GPU needed): the generated CUDA C++ is valid for the targets
the product ships for."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REGISTRY = Path(__file__).resolve().parents[1] / "lang" / "conformance_kernels.py"
ARCHS = ("sm_80", "sm_90")


def _registry():
    module = sys.modules.get("conformance_kernels")
    if module is None:
        spec = importlib.util.spec_from_file_location("conformance_kernels", REGISTRY)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["conformance_kernels"] = module
        spec.loader.exec_module(module)
    return module


registry = _registry()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", registry.CASES, ids=lambda c: c.id)
def test_case_compiles_to_cubin(nvrtc, case, arch):
    source = registry.emit_source(case, "cuda")
    cubin = nvrtc.compile(source, arch=arch, name=f"{case.id}.cu")
    assert cubin[:4] == nvrtc.ELF_MAGIC
    entry = case.kernel.name if hasattr(case.kernel, "name") else case.id
    assert entry.encode() in cubin, f"{case.id}: the entry point {entry!r} is not in the CUBIN"


def test_registry_is_not_empty():
    assert len(registry.CASES) > 10
