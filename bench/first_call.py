"""Time the first call of a new kernel in a fresh process, for one framework.

Run as ``python first_call.py FRAMEWORK CACHE_DIR``; prints the milliseconds from
just before the first call to just after it returns (imports excluded). Run it
twice with the same CACHE_DIR: the first run compiles cold, the second is a
disk-cache hit. A line before it gives the process CPU time of the same call ("cpu_ms X"), which
load from other processes on a shared machine changes much less than the wall time.
"""


import os
import sys
import time

import numpy as np

N = 1024
_cpu = [0.0]


def _cpu_start() -> None:
    _cpu[0] = time.process_time()


def dotcompute_first_call(cache: str) -> float:
    os.environ["DOTCOMPUTE_CACHE_DIR"] = cache
    import dotcompute as dc

    @dc.kernel
    def first_call_axpb(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = a[i] * 1.75 + 0.25

    acc = dc.accelerator("cpu")
    a, out = acc.asarray(np.ones(N, np.float32)), acc.empty((N,), np.float32)
    t0 = time.perf_counter()
    _cpu_start()
    dc.launch(first_call_axpb, N, a, out, accelerator=acc)
    acc.synchronize()
    return time.perf_counter() - t0


NUMBA_SRC = '''
import numba, numpy as np
@numba.njit(cache=True)
def first_call_axpb(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * np.float32(1.75) + np.float32(0.25)
'''


def numba_first_call(cache: str) -> float:
    os.environ["NUMBA_CACHE_DIR"] = cache
    sys.path.insert(0, cache)
    path = os.path.join(cache, "numba_first_call_mod.py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(NUMBA_SRC)
    import numba_first_call_mod as mod

    a, out = np.ones(N, np.float32), np.empty(N, np.float32)
    t0 = time.perf_counter()
    _cpu_start()
    mod.first_call_axpb(a, out)
    return time.perf_counter() - t0


def warp_first_call(cache: str) -> float:
    import warp as wp

    wp.config.kernel_cache_dir = cache
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def first_call_axpb(a: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        out[i] = a[i] * 1.75 + 0.25

    a = wp.array(np.ones(N, np.float32), device="cpu")
    out = wp.empty(N, dtype=wp.float32, device="cpu")
    t0 = time.perf_counter()
    _cpu_start()
    wp.launch(first_call_axpb, dim=N, inputs=[a, out], device="cpu")
    wp.synchronize()
    return time.perf_counter() - t0


def taichi_first_call(cache: str) -> float:
    import taichi as ti

    ti.init(arch=ti.cpu, offline_cache=True, offline_cache_file_path=cache, log_level=ti.ERROR)

    @ti.kernel
    def first_call_axpb(a: ti.types.ndarray(), out: ti.types.ndarray()):
        for i in range(out.shape[0]):
            out[i] = a[i] * 1.75 + 0.25

    a, out = np.ones(N, np.float32), np.empty(N, np.float32)
    t0 = time.perf_counter()
    _cpu_start()
    first_call_axpb(a, out)
    ti.sync()
    return time.perf_counter() - t0


FRAMEWORKS = {"dotcompute": dotcompute_first_call, "numba": numba_first_call,
              "warp": warp_first_call, "taichi": taichi_first_call}

if __name__ == "__main__":
    seconds = FRAMEWORKS[sys.argv[1]](sys.argv[2])
    print(f"cpu_ms {(time.process_time() - _cpu[0]) * 1e3:.3f}")
    print(f"{seconds * 1e3:.3f}")
