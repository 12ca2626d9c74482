"""fastmath=True on the CPU backend lets GCC approximate vector division and square roots, and
split a loop's float accumulators (a ``#pragma GCC optimize`` in the generated source, not a
command-line flag: issue 24's n-body)."""

from __future__ import annotations

import numpy as np

import dotcompute as dc

PRAGMA = '#pragma GCC optimize("unsafe-math-optimizations", "unroll-loops", "variable-expansion-in-unroller")'


def _inv_cube(fastmath: bool):
    @dc.kernel(fastmath=fastmath)
    def inv_cube(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < x.shape[0]:
            out[i] = 1.0 / (x[i] * dc.sqrt(x[i]))

    return inv_cube


def test_only_a_fast_math_kernel_asks_for_approximations():
    fast = _inv_cube(True).source("cpu")
    assert PRAGMA in fast
    # before the ABI header, so its inline helpers are compiled with the same options
    assert fast.index(PRAGMA) < fast.index("#include <dotcompute/cpu_kernel_abi.h>")
    assert PRAGMA not in _inv_cube(False).source("cpu")


def test_the_approximations_stay_within_a_few_ulps():
    # odd length: the vector loop and its scalar remainder both run
    x = np.random.default_rng(4).uniform(1e-3, 1e3, 4099).astype(np.float32)
    want = 1.0 / (x.astype(np.float64) * np.sqrt(x.astype(np.float64)))
    acc = dc.accelerator("cpu:0")
    for fastmath in (False, True):
        out = acc.empty((x.size,), np.float32)
        dc.launch(_inv_cube(fastmath), x.size, acc.asarray(x), out, accelerator=acc)
        # the estimate + Newton step of rsqrt/rcp: a few float32 ulps, not the estimate's 12 bits
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5 if fastmath else 2e-7)


@dc.kernel(fastmath=True)
def _row_sums(x: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        s = dc.float32(0.0)
        for j in range(x.shape[1]):
            s += x[i, j]
        out[i] = s


def test_a_loop_reduction_split_over_accumulators_keeps_every_element():
    # the unrolled loop adds into two accumulators and ends in a remainder loop: every row length
    # from 0 past two unrolled bodies of 8-lane vectors, so each exit path runs
    acc = dc.accelerator("cpu:0")
    rng = np.random.default_rng(7)
    for cols in list(range(0, 40)) + [127, 128, 129, 1001]:
        x = rng.uniform(-1, 1, (5, cols)).astype(np.float32)
        out = acc.empty((5,), np.float32)
        dc.launch(_row_sums, 5, acc.asarray(x), out, accelerator=acc)
        want = x.astype(np.float64).sum(axis=1)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5 * max(cols, 1), err_msg=f"{cols} columns")
