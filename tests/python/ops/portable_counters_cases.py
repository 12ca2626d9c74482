"""dc.cumsum of 65,536 int32 and dc.fft.fft of 4,096 complex64, forced portable, on the simulated
cuda:0 with GPU-model counters (test_portable_issue24.py starts this file with DOTCOMPUTE_CUDA_SIM=1
and DOTCOMPUTE_CUDA_SIM_COUNTERS=1). Prints each operation's kernel counters as one JSON object."""

from __future__ import annotations

import json

import numpy as np

import dotcompute as dc

acc = dc.accelerator("cuda:0")
rng = np.random.default_rng(0)
x = rng.integers(0, 1000, 1 << 16).astype(np.int32)
z = (rng.standard_normal(1 << 12) + 1j * rng.standard_normal(1 << 12)).astype(np.complex64)
found = {}
for name, fn, arg, want in (("cumsum", dc.cumsum, x, np.cumsum(x)), ("fft", dc.fft.fft, z, np.fft.fft(z))):
    b = acc.asarray(arg)
    with dc.ops.prefer("portable"):
        fn(b)  # compiles outside the profile
        acc.synchronize()
        with dc.profile() as prof:
            got = fn(b)
            acc.synchronize()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-3)
    found[name] = [c.as_dict() for c in prof.gpu_counters]
print(json.dumps(found))
