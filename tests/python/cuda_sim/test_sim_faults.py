"""Wrong kernels fail their launch on the simulated cuda:0 as on a GPU; none ends the interpreter.

Each case is followed by a correct launch on the same device: the context stays usable.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import dotcompute as dc

SHARED = r"""
extern "C" __global__ void dyn_write(float* y, int count) {
  extern __shared__ float s[];
  for (int i = threadIdx.x; i < count; i += blockDim.x) s[i] = 1.0f;
  __syncthreads();
  y[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void static_write(float* y, int count) {
  __shared__ float s[32];
  for (int i = threadIdx.x; i < count; i += blockDim.x) s[i] = 1.0f;
  __syncthreads();
  y[threadIdx.x] = s[threadIdx.x];
}
"""

BARRIERS = r"""
extern "C" __global__ void votes(int* out) {
  const int t = threadIdx.x;
  if (t >= 40) return;  // threads 40..63 have exited before the barrier
  const int count = __syncthreads_count(t % 2 == 0);
  const int all = __syncthreads_and(t < 40);
  const int any = __syncthreads_or(t == 39);
  const int none = __syncthreads_or(0);
  if (t == 0) { out[0] = count; out[1] = all; out[2] = any; out[3] = none; }
}
extern "C" __global__ void divergent(float* y) {
  if (threadIdx.x < 16) {
    y[threadIdx.x] = 1.0f;
    __syncthreads();
  } else {
    y[threadIdx.x] = 2.0f;
    __syncthreads();
  }
}
"""

TRAPS = r"""
extern "C" __global__ void divide(const int* x, int* y, int d) {
  y[threadIdx.x] = x[threadIdx.x] / d;
}
__device__ int deep(int n) {
  volatile char frame[512];
  frame[0] = static_cast<char>(n);
  return n == 0 ? 0 : deep(n - 1) + frame[0];
}
extern "C" __global__ void recurse(int* y, int n) { y[threadIdx.x] = deep(n); }
extern "C" __global__ void smash(int* y, int n) {
  volatile char buf[16];
  for (int i = 0; i < n; ++i) buf[i] = 1;  // past its end: up the stack
  y[threadIdx.x] = buf[0];
}
extern "C" __global__ void read_far(const float* x, float* y, long long stride) {
  y[threadIdx.x] = x[threadIdx.x * stride];
}
extern "C" __global__ void spin(const volatile int* flag, int* y) {
  while (flag[0] != 12345) {
  }
  y[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
"""


def _fails(sim, match, launch):
    with pytest.raises(dc.LaunchError, match=match):
        launch()
        sim.synchronize()


def test_dynamic_shared_memory_ends_at_shared_mem_bytes(sim):
    k = dc.RawKernel(SHARED, "dyn_write", backend="cuda", shared_mem=64 * 4)
    y = sim.zeros((64,), np.float32)
    sim.launch(k, 64, y, np.int32(64), local_size=64)
    np.testing.assert_array_equal(y.numpy(), np.ones(64, np.float32))
    _fails(sim, "ILLEGAL_ADDRESS|illegal memory access.*dynamic shared memory",
           lambda: sim.launch(k, 64, y, np.int32(64 + 2048), local_size=64))
    none = dc.RawKernel(SHARED, "dyn_write", backend="cuda")  # shared_mem=0: there is none to write
    _fails(sim, "dynamic shared memory", lambda: sim.launch(none, 64, y, np.int32(1), local_size=64))
    sim.launch(k, 64, y, np.int32(64), local_size=64)
    np.testing.assert_array_equal(y.numpy(), np.ones(64, np.float32))


def test_static_shared_memory_is_guarded(sim):
    k = dc.RawKernel(SHARED, "static_write", backend="cuda")
    y = sim.zeros((32,), np.float32)
    _fails(sim, r"static __shared__", lambda: sim.launch(k, 32, y, np.int32(33), local_size=32))
    sim.launch(k, 32, y, np.int32(32), local_size=32)
    np.testing.assert_array_equal(y.numpy(), np.ones(32, np.float32))


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:4", "lockstep"])
def test_syncthreads_votes_count_only_threads_that_have_not_exited(sim, monkeypatch, schedule):
    monkeypatch.setenv("DOTCOMPUTE_CUDA_SIM_SCHEDULE", schedule)
    k = dc.RawKernel(BARRIERS, "votes", backend="cuda")
    out = sim.zeros((4,), np.int32)
    sim.launch(k, 64, out, local_size=64)
    np.testing.assert_array_equal(out.numpy(), [20, 1, 1, 0])
    sim.launch(k, 1, out, local_size=1)  # a block of one thread runs without fibers: its own vote
    np.testing.assert_array_equal(out.numpy(), [1, 1, 0, 0])


def test_a_barrier_in_divergent_code_is_an_error_naming_the_block(sim):
    k = dc.RawKernel(BARRIERS, "divergent", backend="cuda")
    y = sim.zeros((64,), np.float32)
    _fails(sim, r"barrier divergence in block \(0, 0, 0\).*kernel.cu:\d+.*kernel.cu:\d+",
           lambda: sim.launch(k, 32, y, local_size=32))
    sim.launch(dc.RawKernel(BARRIERS, "votes", backend="cuda"), 64, sim.zeros((4,), np.int32), local_size=64)
    sim.synchronize()


def test_integer_division_by_zero_is_an_illegal_instruction(sim):
    k = dc.RawKernel(TRAPS, "divide", backend="cuda")
    x = sim.asarray(np.arange(32, dtype=np.int32))
    y = sim.zeros((32,), np.int32)
    _fails(sim, "division by zero", lambda: sim.launch(k, 32, x, y, np.int32(0), local_size=32))
    sim.launch(k, 32, x, y, np.int32(3), local_size=32)
    np.testing.assert_array_equal(y.numpy(), np.arange(32) // 3)


def test_stack_overflow_and_a_smashed_local_array_fail_the_launch(sim):
    y = sim.zeros((4,), np.int32)
    recurse = dc.RawKernel(TRAPS, "recurse", backend="cuda")
    _fails(sim, "stack", lambda: sim.launch(recurse, 4, y, np.int32(1_000_000), local_size=4))
    smash = dc.RawKernel(TRAPS, "smash", backend="cuda")
    _fails(sim, "stack|local array", lambda: sim.launch(smash, 4, y, np.int32(1_000_000), local_size=4))
    sim.launch(recurse, 4, y, np.int32(10), local_size=4)
    np.testing.assert_array_equal(y.numpy(), [55] * 4)


def test_the_watchdog_stops_a_kernel_that_never_ends(sim, monkeypatch):
    k = dc.RawKernel(TRAPS, "spin", backend="cuda")
    flag = sim.zeros((1,), np.int32)
    y = sim.zeros((64,), np.int32)
    monkeypatch.setenv("DOTCOMPUTE_CUDA_SIM_TIMEOUT_S", "0.3")
    _fails(sim, "LAUNCH_TIMEOUT|DOTCOMPUTE_CUDA_SIM_TIMEOUT_S",
           lambda: sim.launch(k, 64, flag, y, local_size=32))
    flag = sim.asarray(np.array([12345], np.int32))
    sim.launch(k, 64, flag, y, local_size=32)  # the same kernel, allowed to finish
    np.testing.assert_array_equal(y.numpy(), np.ones(64, np.int32))
    monkeypatch.setenv("DOTCOMPUTE_CUDA_SIM_TIMEOUT_S", "soon")
    _fails(sim, "DOTCOMPUTE_CUDA_SIM_TIMEOUT_S", lambda: sim.launch(k, 64, flag, y, local_size=32))


def test_the_cache_identity_names_the_shim_text(sim):
    compiler = sim.info["compiler"]
    assert "shim " in compiler, compiler
    digest = compiler.rsplit("shim ", 1)[1].split()[0]
    assert len(digest) == 16 and int(digest, 16) >= 0


def test_ctrl_c_in_synchronize_stops_the_kernel_and_the_device_stays_usable(sim, monkeypatch, request):
    monkeypatch.delenv("DOTCOMPUTE_CUDA_SIM_TIMEOUT_S", raising=False)  # no watchdog: only Ctrl-C ends it
    k = dc.RawKernel(TRAPS, "spin", backend="cuda")
    never = sim.zeros((1,), np.int32)
    y = sim.zeros((64,), np.int32)
    sim.synchronize()
    sim.launch(k, 64, never, y, local_size=32)
    waiting = threading.Event()

    def ctrl_c() -> None:  # a real Ctrl-C (any thread of the process may take it) once synchronize() waits
        waiting.wait(30)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)

    # Python's own handler, as in an interactive session: a process started in the background by a
    # shell without job control (CI's `cmd &`) inherits SIGINT ignored, and Python leaves it so.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    threading.Thread(target=ctrl_c, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        waiting.set()
        sim.synchronize()
        time.sleep(5)  # the interrupt is raised as soon as synchronize() returns, before this ends
    go = sim.asarray(np.array([12345], np.int32))
    sim.launch(k, 64, go, y, local_size=32)
    sim.synchronize()  # nothing left over from the interrupted launch: no error, no wait
    np.testing.assert_array_equal(y.numpy(), np.ones(64, np.int32))
    # a crash handler that a Ctrl-C made step aside (LLVM's puts the default SIGSEGV action back)
    # does not leave the next faulting kernel to kill the process
    far = dc.RawKernel(TRAPS, "read_far", backend="cuda")
    x = sim.zeros((32,), np.float32)
    _fails(sim, "illegal memory access", lambda: sim.launch(far, 32, x, sim.zeros((32,), np.float32),
                                                            np.int64(1 << 28), local_size=32))
