"""Kernels the orchestration tests launch (in a file: kernels need their source)."""

from __future__ import annotations

import dotcompute as dc


@dc.kernel
def double(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    y[i] = x[i] * 2.0


@dc.kernel
def planted(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]) -> None:
    # right everywhere except one element: validate must find exactly that one
    i = dc.global_id(0)
    if i == 7:
        y[i] = 0.0
    else:
        y[i] = x[i] * 2.0


@dc.kernel
def bump(x: dc.Buffer[dc.float32]) -> None:
    # in place: each validation run must start from a fresh copy
    i = dc.global_id(0)
    x[i] = x[i] + 1.0


@dc.kernel
def scale(x: dc.Buffer, y: dc.Buffer, a: dc.float32) -> None:
    i = dc.global_id(0)
    y[i] = x[i] * a
