"""Kernels the profiling tests launch (in a file: kernels need their source)."""

from __future__ import annotations

import dotcompute as dc


@dc.kernel
def saxpy(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    y[i] = a * x[i] + y[i]


@dc.kernel
def fill(x: dc.Buffer[dc.float32], v: dc.float32) -> None:
    x[dc.global_id(0)] = v
