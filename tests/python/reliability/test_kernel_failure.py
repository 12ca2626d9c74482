"""The CPU kernel ABI's error channel (dc_cpu_launch::fail): a kernel that cannot go on makes its launch
raise instead of writing through a NULL pointer -- the generated code's per-work-item storage (values
live across ``barrier()``) is heap memory whose allocation can fail."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dotcompute as dc

RAW_FAIL = r"""
#include <stdint.h>
#include "dotcompute/cpu_kernel_abi.h"

// Fails when the scalar says so (from any group), else writes out[i] = i.
extern "C" void maybe_fail(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  float* out = *(float* const*)launch->args[0];
  const int32_t reason = *(const int32_t*)launch->args[1];
  const uint64_t n = launch->global_size[0], local = launch->local_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g) {
    if (reason != 0) {
      DC_CPU_FAIL(launch, reason, "maybe_fail was asked to fail");
      return;
    }
    for (uint64_t i = g * local; i < n && i < (g + 1) * local; ++i) out[i] = (float)i;
  }
}
"""


@pytest.fixture(scope="module")
def maybe_fail() -> dc.RawKernel:
    return dc.RawKernel(RAW_FAIL, "maybe_fail", backend="cpu")


@pytest.mark.parametrize("n", [64, 1 << 20], ids=["inline", "queued"])
@pytest.mark.parametrize("reason, error", [(1, dc.OutOfMemoryError), (2, dc.LaunchError)],
                         ids=["out-of-memory", "launch"])
def test_a_kernel_reports_failure_through_the_launch(maybe_fail, cpu, n, reason, error):
    out = cpu.zeros((n,), np.float32)
    with pytest.raises(error, match="maybe_fail was asked to fail"):
        cpu.launch(maybe_fail, n, out, np.int32(reason))
        cpu.synchronize()  # a queued launch reports at the next synchronisation
    # the failure is reported once; the stream and the kernel work afterwards
    cpu.synchronize()
    cpu.launch(maybe_fail, n, out, np.int32(0))
    np.testing.assert_array_equal(out.numpy(), np.arange(n, dtype=np.float32))


def _live_across_barrier() -> dc.Kernel:
    @dc.kernel
    def rotate(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
        i = dc.global_id(0)
        v = x[i] * 2.0                      # lives across the barrier: per-work-item storage
        dc.barrier()
        out[i] = v + 1.0

    return rotate


def test_generated_code_checks_its_per_item_storage():
    src = _live_across_barrier().source("cpu")
    assert "dc_items<double> dc_pi_v(dc_nitems);" in src
    assert "if (!dc_pi_v.p) {" in src and "DC_CPU_FAIL(dc_L, DC_CPU_FAIL_OUT_OF_MEMORY" in src


def test_per_item_storage_that_cannot_be_allocated_raises_out_of_memory(tmp_path):
    # A real allocation failure: the address space is capped just above what the process already maps,
    # so the 8 MiB per-item array of a 1M-item work-group cannot be allocated (the warm-up launch's
    # groups are small, so malloc has no freed 8 MiB block to hand back). Before the error channel,
    # the generated code wrote through the NULL pointer (a segfault).
    script = tmp_path / "oom.py"
    script.write_text(textwrap.dedent("""
        import resource
        import numpy as np
        import dotcompute as dc

        @dc.kernel
        def rotate(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
            i = dc.global_id(0)
            v = x[i] * 2.0
            dc.barrier()
            out[i] = v + 1.0

        acc = dc.accelerator("cpu")
        n = 1 << 20
        x = acc.asarray(np.arange(n, dtype=np.float64))
        out = acc.zeros((n,), np.float64)
        acc.launch(rotate, WARMUP, x, out, local_size=1024)
        acc.synchronize()
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (used + (2 << 20), hard))
        try:
            acc.launch(rotate, n, x, out, local_size=n)
            acc.synchronize()
            print("no error")
        except dc.OutOfMemoryError as e:
            print("OOM:", e)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        out.copy_from(np.zeros(n))
        acc.launch(rotate, n, x, out, local_size=n)
        assert (out.numpy() == np.arange(n) * 2.0 + 1.0).all()
        print("usable")
    """))
    # The warm-up (it compiles) is a queued launch of many groups: it starts the stream's worker and
    # the pool's threads before the cap, while per-item storage stays small (no large block freed).
    r = _run_capped(script, warmup="n")
    assert "OOM:" in r.stdout and "per-work-item storage" in r.stdout and "rotate" in r.stdout, r.stdout
    assert "usable" in r.stdout
    # A small warm-up runs on the calling thread: the capped launch then needs the stream's worker
    # thread first, whose stack does not fit either -- also an OutOfMemoryError, saying so.
    r = _run_capped(script, warmup="1024")
    assert "OOM:" in r.stdout and "no thread could be started" in r.stdout, r.stdout
    assert "usable" in r.stdout


def _run_capped(script, warmup: str) -> subprocess.CompletedProcess:
    text = script.read_text().replace("WARMUP", warmup)
    capped = script.with_name(f"oom_{warmup}.py")
    capped.write_text(text)
    # One malloc arena: a thread's own arena reserves 64 MiB up front and could grow inside it.
    env = {**os.environ, "MALLOC_ARENA_MAX": "1"}
    r = subprocess.run([sys.executable, str(capped)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    return r
