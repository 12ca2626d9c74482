"""The barrier-free blocked matmul (the portable kernel on CPU-type OpenCL devices, issue 24) and the
packing of B it reads, against numpy on the devices that run it (on the others, where the same
products run the tiled kernel, with --full). Small integers in floats: every product and partial
sum is exact, so any element a block drops, reads from the padding or stores twice shows as a wrong
integer."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import dispatch
from dotcompute.ops import matmul_kernels as mk

RNG = np.random.default_rng(2024)
SPAN = mk.BLOCK_COLS * mk.BLOCK_LOCAL  # columns of C per work-group of the blocked kernel
ROWS = mk.BLOCK * mk.BLOCK_LOCAL  # rows of C per work-group


def _ints(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return RNG.integers(-8, 8, shape).astype(dtype)


@pytest.fixture
def blocked_device(accelerator: dc.Accelerator, tests_full: bool) -> dc.Accelerator:
    """A device whose portable matmul is the blocked kernel (CPU-type OpenCL); elsewhere the same
    products run the tiled kernel, which test_matmul_direct.py checks on every operand layout: they
    run here too with --full only (seconds of compile per layout and dtype)."""
    if not (accelerator.backend == "opencl" and accelerator.type == "cpu") and not tests_full:
        pytest.skip("slow: the tiled kernel again (test_matmul_direct.py); on this device with --full")
    return accelerator


@pytest.mark.parametrize(("m", "k", "n"), [(2 * ROWS + 3, 37, 2 * SPAN + 5),  # edge blocks on both axes
                                           (ROWS, 16, SPAN),  # whole work-groups
                                           (1, 9, 3), (5, 1, SPAN + 1)])
def test_blocked_matmul_exact(blocked_device, m, k, n):
    accelerator = blocked_device
    a, b = _ints((m, k), np.float32), _ints((k, n), np.float32)
    with dispatch.prefer("portable"):
        got = dc.ops.matmul(accelerator.asarray(a), accelerator.asarray(b)).numpy()
    np.testing.assert_array_equal(got, a @ b)


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_blocked_matmul_batches_and_vectors(blocked_device, dtype):
    accelerator = blocked_device
    a2, b3 = _ints((ROWS + 1, 20), dtype), _ints((2, 20, SPAN + 3), dtype)  # A shared by the batch
    a3, b2 = _ints((3, 9, 20), dtype), _ints((20, 17), dtype)  # B shared by the batch
    v = _ints((20,), dtype)
    cases = [(a2, b3), (a3, b2), (v, b2), (a3, v), (v, v)]
    with dispatch.prefer("portable"):
        for x, y in cases:
            got = dc.ops.matmul(accelerator.asarray(x), accelerator.asarray(y))
            np.testing.assert_array_equal(np.asarray(got.numpy()), x @ y)


@pytest.mark.parametrize("nd_b", [2, 3])
def test_pack_b_pads_with_zeros(accelerator, nd_b):
    k, n = 5, 19
    b = _ints((2, k, n) if nd_b == 3 else (k, n), np.float32)
    width = mk.packed_width(n)
    assert width % SPAN == mk.BLOCK_PAD and width >= n + mk.BLOCK_PAD
    batch = 2 if nd_b == 3 else 1
    bp = accelerator.empty((batch * k, width), np.float32)
    accelerator.launch(mk.pack_kernel(np.float32, nd_b), (width, k, batch), accelerator.asarray(b), bp, n, k)
    want = np.zeros((batch * k, width), np.float32)
    want[:, :n] = b.reshape(batch * k, n)
    np.testing.assert_array_equal(bp.numpy(), want)
