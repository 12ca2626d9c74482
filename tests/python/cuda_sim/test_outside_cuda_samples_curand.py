"""NVIDIA's MonteCarloMultiGPU sample (cuRAND's device API: curand_init, curand_normal), read from the
cuda-samples checkout at test time like test_outside_cuda_samples.py, run unmodified on the simulated
cuda:0 (issue 23). The expected sums use the same normals from NVIDIA's own libcurand (its host
generator, the layout test_curand_device.py establishes), so the check is exact up to float sums.
"""

from __future__ import annotations

import numpy as np
from test_curand_device import XORWOW, host, needs_curand
from test_outside_cuda_samples import device_part, pytestmark  # noqa: F401 (the same skips and slow mark)

import dotcompute as dc

SAMPLE = "Samples/5_Domain_Specific/MonteCarloMultiGPU/MonteCarlo_kernel.cu"


@needs_curand
def test_monte_carlo_one_block_per_option(sim):
    src = device_part(SAMPLE, 'extern "C" void initMonteCarloGPU')
    threads, options, path_n = 256, 3, 2048  # THREAD_N; one block per option; 8 paths per thread
    state_bytes = 48  # sizeof(curandState)
    states = sim.zeros((options * threads * state_bytes,), np.uint8)
    # rngSetupStates: block b seeds with b (device 0), thread t takes subsequence t
    sim.launch(dc.RawKernel(src, "rngSetupStates", backend="cuda"), options * threads, states, np.int32(0),
               local_size=threads)
    s, x, t, r, v = (np.array(a, np.float32) for a in ([30, 25, 40], [32, 20, 35], [1, 2, 0.5],
                                                      [0.06, 0.05, 0.04], [0.10, 0.3, 0.2]))
    mu_t = ((r - 0.5 * v.astype(np.float64) ** 2) * t).astype(np.float32)  # MonteCarloGPU's host part
    v_sqrt_t = (v * np.sqrt(t.astype(np.float64))).astype(np.float32)
    data = np.stack([s, x, mu_t, v_sqrt_t], axis=1)  # __TOptionData {S, X, MuByT, VBySqrtT}
    values = sim.zeros((options, 2), np.float32)  # __TOptionValue {Expected, Confidence}
    sim.launch(dc.RawKernel(src, "MonteCarloOneBlockPerOption", backend="cuda"), options * threads, states,
               sim.asarray(data), values, np.int32(path_n), np.int32(options), local_size=threads)
    per_thread = path_n // threads
    for b in range(options):
        # thread t's k-th curand_normal: Box-Muller pair k // 2 of subsequence t (seed b)
        normals = host(XORWOW, "normal", per_thread // 2 * 4096 * 2, seed=b)
        z = normals.reshape(per_thread // 2, 4096, 2)[:, :threads].transpose(1, 0, 2).reshape(-1)
        call = np.maximum(s[b] * np.exp(mu_t[b] + v_sqrt_t[b] * z.astype(np.float64)) - x[b], 0.0)
        np.testing.assert_allclose(values.numpy()[b], [call.sum(), (call ** 2).sum()], rtol=1e-4)
