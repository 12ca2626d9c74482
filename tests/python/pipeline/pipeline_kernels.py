"""Kernels the pipeline tests share (kernels need a source file; test modules import this one)."""

from __future__ import annotations

import dotcompute as dc


@dc.kernel
def scale(a: dc.float32, x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i]


@dc.kernel
def add(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] + y[i]


@dc.kernel
def add_into(x: dc.Buffer[dc.float32], acc: dc.Buffer[dc.float32]):
    """Reads and writes ``acc``: acc += x."""
    i = dc.global_id(0)
    if i < acc.shape[0]:
        acc[i] = acc[i] + x[i]


@dc.kernel
def fill(value: dc.float32, out: dc.Buffer[dc.float32]):
    """Writes ``out`` without reading it."""
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = value


@dc.kernel
def needs_groups(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    """Has a barrier, so its launch fails unless local_size divides global_size."""
    i = dc.global_id(0)
    v = x[i] * 2.0
    dc.barrier()
    out[i] = v


# A hand-written CPU kernel that waits (up to ~10 s) for flag[0] to become non-zero, then stores
# 1 in flag[1] (or -1 when it gave up). Only work-group 0 waits; global sizes above the CPU backend's
# inline limit (16384 items) make the launch asynchronous.
WAIT_FOR_FLAG = r"""
#include <stdint.h>
#include <time.h>
#include "dotcompute/cpu_kernel_abi.h"

extern "C" void wait_for_flag(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t, void*) {
  if (group_begin != 0) return;
  int32_t* flag = *(int32_t* const*)launch->args[0];
  struct timespec ts = {0, 1000000L};
  for (int i = 0; i < 10000 && __atomic_load_n(&flag[0], __ATOMIC_ACQUIRE) == 0; ++i) nanosleep(&ts, nullptr);
  __atomic_store_n(&flag[1], __atomic_load_n(&flag[0], __ATOMIC_ACQUIRE) ? 1 : -1, __ATOMIC_RELEASE);
}
"""


@dc.kernel(debug=True)
def off_by_one(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    """Writes one element past the end: a debug-mode bounds check fails after the launch."""
    i = dc.global_id(0)
    out[i + 1] = x[i]
