"""Philox4x32-10 (Salmon et al., SC'11) in the kernel language: a counter-based generator.

``philox(c0, c1, c2, c3, k0, k1)`` maps a 128-bit counter and a 64-bit key to four 32-bit words
with ten rounds; it has no state, so every work-item computes its own words from its own counter
and the numbers do not depend on how work is split between items, launches or devices. It is a
``@dc.func``: kernels call it as ``w = philox(c0, c1, c2, c3, k0, k1)`` and read ``w[0]`` .. ``w[3]``.

The 32x32 -> 64-bit products are written with uint64 arithmetic (every backend has it), so the
same bits come out of every emitter; the words are checked against Random123's known answers.
"""

from __future__ import annotations

import numpy as np

from ..ops import klang as dc

# The round multipliers and the key schedule's Weyl increments of Philox4x32 (golden ratio, sqrt 3)
M0 = 0xD2511F53
M1 = 0xCD9E8D57
W0 = 0x9E3779B9
W1 = 0xBB67AE85
ROUNDS = 10

U32X4 = dc.vector(4, dc.uint32)


@dc.func
def philox(c0: dc.uint32, c1: dc.uint32, c2: dc.uint32, c3: dc.uint32, k0: dc.uint32,
           k1: dc.uint32) -> U32X4:
    x0 = c0
    x1 = c1
    x2 = c2
    x3 = c3
    a = k0
    b = k1
    for r in range(ROUNDS):
        p0 = dc.uint64(x0) * dc.uint64(M0)
        p1 = dc.uint64(x2) * dc.uint64(M1)
        hi0 = dc.uint32(p0 >> 32)
        lo0 = dc.uint32(p0 & 0xFFFFFFFF)
        hi1 = dc.uint32(p1 >> 32)
        lo1 = dc.uint32(p1 & 0xFFFFFFFF)
        x0 = hi1 ^ x1 ^ a
        x1 = lo1
        x2 = hi0 ^ x3 ^ b
        x3 = lo0
        if r < ROUNDS - 1:  # the key is bumped between rounds, nine times
            a = a + dc.uint32(W0)
            b = b + dc.uint32(W1)
    return U32X4(x0, x1, x2, x3)


@dc.kernel
def _philox_words(ctr: dc.Buffer[dc.uint32, 2], key: dc.Buffer[dc.uint32, 2], out: dc.Buffer[dc.uint32, 2]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        w = philox(ctr[i, 0], ctr[i, 1], ctr[i, 2], ctr[i, 3], key[i, 0], key[i, 1])
        out[i, 0] = w[0]
        out[i, 1] = w[1]
        out[i, 2] = w[2]
        out[i, 3] = w[3]


def philox_blocks(counters: np.ndarray, keys: np.ndarray, accelerator: object = "auto") -> np.ndarray:
    """The four output words for each row of ``counters`` (n, 4) under ``keys`` (n, 2), computed on
    ``accelerator`` by the kernel (for checks against published answers and host references)."""
    from ..runtime import accelerator as _acc

    c = np.ascontiguousarray(counters, np.uint32).reshape(-1, 4)
    k = np.ascontiguousarray(np.broadcast_to(np.asarray(keys, np.uint32).reshape(-1, 2), (len(c), 2)))
    acc = _acc(accelerator)
    out = acc.empty((len(c), 4), np.uint32)
    if len(c):
        acc.launch(_philox_words, len(c), acc.asarray(c), acc.asarray(k), out)
    return out.numpy()


def philox_reference(counter: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, int, int, int]:
    """The same function in plain Python integers (a second implementation, for tests)."""
    x = [int(v) & 0xFFFFFFFF for v in counter]
    k0, k1 = (int(v) & 0xFFFFFFFF for v in key)
    for r in range(ROUNDS):
        p0, p1 = M0 * x[0], M1 * x[2]
        x = [((p1 >> 32) ^ x[1] ^ k0) & 0xFFFFFFFF, p1 & 0xFFFFFFFF, ((p0 >> 32) ^ x[3] ^ k1) & 0xFFFFFFFF,
             p0 & 0xFFFFFFFF]
        if r < ROUNDS - 1:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return tuple(x)  # type: ignore[return-value]


__all__ = ["M0", "M1", "ROUNDS", "W0", "W1", "philox", "philox_blocks", "philox_reference"]
