"""The cases of test_int_wrap_devices.py, importable by the test and by the fresh interpreter it starts
for the simulated CUDA device: integer arithmetic that wraps (as numpy's does) on a device backend.

The CUDA, OpenCL and Metal emitters write wrapping ``+ - *`` and negation through unsigned casts
(lang/emit/helpers.py); the CPU backend's pattern is guarded by test_int_reduction_differential.py
under two compilers. Here a representative subset runs on the other backends: one elementwise kernel
whose every operation overflows, and reductions whose sums and products wrap, at sizes around the
work-group and vector widths.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dotcompute as dc

#: dtypes the reductions run on (8-bit, accumulated in int64 as numpy does; 32-bit unsigned)
REDUCTION_DTYPES = ("int8", "uint32")
#: the elementwise kernel's dtypes
ELEMENTWISE_DTYPES = ("int32", "int64", "uint32")
SIZES = (1, 33, 4097)


@dc.kernel
def wrap_ops(x: dc.Buffer, y: dc.Buffer, add: dc.Buffer, sub: dc.Buffer, mul: dc.Buffer, neg: dc.Buffer,
             mad: dc.Buffer):
    i = dc.global_id(0)
    if i < x.shape[0]:
        add[i] = x[i] + y[i]
        sub[i] = x[i] - y[i]
        mul[i] = x[i] * y[i]
        neg[i] = -x[i]
        mad[i] = x[i] * y[i] + x[i]


def _extremes(dt: str, n: int, rng: np.random.Generator) -> np.ndarray:
    info = np.iinfo(dt)
    edge = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1, -1 if info.min < 0 else 2], dt)
    wide = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    return np.concatenate([edge, wide])


def mismatches(acc: Any) -> list[list[str]]:
    """Every case on ``acc`` that differs from numpy, as [what, dtype, size, got, want] rows."""
    rng = np.random.default_rng(22)
    bad: list[list[str]] = []

    def check(what: str, dt: str, n: int, got: Any, want: Any) -> None:
        got, want = np.asarray(got), np.asarray(want)
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            bad.append([what, dt, str(n), f"{got.ravel()[:4]} {got.dtype}", f"{want.ravel()[:4]} {want.dtype}"])

    with np.errstate(over="ignore"):
        for dt in ELEMENTWISE_DTYPES:
            x, y = _extremes(dt, 500, rng), _extremes(dt, 500, rng)[::-1].copy()
            outs = [np.zeros_like(x) for _ in range(5)]
            dc.launch(wrap_ops, x.size, x, y, *outs, accelerator=acc)
            for name, got, want in zip(("add", "sub", "mul", "neg", "mad"), outs,
                                       (x + y, x - y, x * y, -x, x * y + x), strict=True):
                check(name, dt, x.size, got, want)
        for dt in REDUCTION_DTYPES:
            info = np.iinfo(dt)
            for n in SIZES:
                for label, x in (("ones", np.ones(n, dt)),
                                 ("wide", rng.integers(info.min, info.max, n, dtype=dt, endpoint=True))):
                    b = acc.asarray(x)
                    check(f"sum/{label}", dt, n, dc.sum(b), np.sum(x))
                    check(f"sum(b*1)/{label}", dt, n, dc.sum(b * 1), np.sum(x * 1))
                    check(f"prod/{label}", dt, n, dc.prod(b), np.prod(x))
                    check(f"cumsum/{label}", dt, n, dc.cumsum(b), np.cumsum(x))
    return bad
