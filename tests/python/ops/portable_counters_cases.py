"""dc.cumsum of 65,536 int32, forced portable, on the simulated cuda:0 with GPU-model counters
(test_portable_issue24.py starts this file with DOTCOMPUTE_CUDA_SIM=1 and
DOTCOMPUTE_CUDA_SIM_COUNTERS=1). Prints the kernels' counters as one JSON list."""

from __future__ import annotations

import json

import numpy as np

import dotcompute as dc

acc = dc.accelerator("cuda:0")
x = acc.asarray(np.random.default_rng(0).integers(0, 1000, 1 << 16).astype(np.int32))
with dc.ops.prefer("portable"):
    dc.cumsum(x)  # compiles outside the profile
    acc.synchronize()
    with dc.profile() as prof:
        got = dc.cumsum(x)
        acc.synchronize()
assert np.array_equal(got.numpy(), np.cumsum(x.numpy()))
print(json.dumps([c.as_dict() for c in prof.gpu_counters]))
