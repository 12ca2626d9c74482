"""The conformance registry (conformance_kernels.py) on every available accelerator.

Each case runs twice: with numpy arrays (copied in, and back when written) and with
``dc.Buffer`` s made by the accelerator. Results are compared with the case's reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_kernels import CASES, build_args, copy_args, make_scaled_add, uses_float64, verify

import dotcompute as dc


def _skip_unsupported(accelerator, case) -> None:
    if accelerator.backend == "metal" and uses_float64(case):
        pytest.skip(f"{case.id} needs float64, which Metal lacks")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_numpy_arguments(accelerator, case):
    _skip_unsupported(accelerator, case)
    args = build_args(case, seed=7)
    inputs = copy_args(args)
    dc.launch(case.kernel, case.global_size, *args, local_size=case.local_size, accelerator=accelerator)
    verify(case, inputs, args)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_device_buffers(accelerator, case):
    _skip_unsupported(accelerator, case)
    args = build_args(case, seed=11)
    inputs = copy_args(args)
    dev = [accelerator.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    accelerator.launch(case.kernel, case.global_size, *dev, local_size=case.local_size)
    accelerator.synchronize()
    results = [d.numpy() if isinstance(a, np.ndarray) else a for a, d in zip(args, dev, strict=True)]
    verify(case, inputs, results)


def test_closures_with_different_constants_are_different_kernels(accelerator):
    # same name, same source text, same signature: only the closure's constants differ
    k3 = make_scaled_add(3, 0.0, 0)
    k7 = make_scaled_add(7, 0.0, 0)
    x = np.arange(16, dtype=np.float32)
    o3, o7 = np.zeros_like(x), np.zeros_like(x)
    dc.launch(k3, 16, x, o3, accelerator=accelerator)
    dc.launch(k7, 16, x, o7, accelerator=accelerator)
    np.testing.assert_array_equal(o3, x * 3)
    np.testing.assert_array_equal(o7, x * 7)
    assert k3.source(accelerator.backend) != k7.source(accelerator.backend)


def test_registry_is_broad():
    assert len(CASES) >= 45
    kernels = {id(c.kernel) for c in CASES}
    assert len(kernels) >= 45
    tags = set().union(*(c.tags for c in CASES))
    assert {"barrier", "atomic", "debug"} <= tags


@pytest.mark.parametrize("backend", ["cpu", "cuda", "opencl", "metal"])
def test_every_case_has_source_for_every_backend(backend):
    # kernel.source() works with no device of that kind present; Metal refuses fp64 by design
    from conformance_kernels import emit_source, runs_on_metal
    for case in CASES:
        if backend == "metal" and not runs_on_metal(case):
            continue
        src = emit_source(case, backend)
        assert isinstance(src, str) and case.kernel.__name__ in src, f"{case.id}: no {backend} entry point"
