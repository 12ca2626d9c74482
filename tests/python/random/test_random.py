"""dc.random: Philox4x32-10 against Random123's known answers, and the Generator on every device."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.random.philox import philox_blocks, philox_reference

# Random123's kat_vectors for philox4x32 with 10 rounds: (counter, key, expected output words)
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def test_reference_matches_known_answers() -> None:
    for ctr, key, want in KAT:
        assert philox_reference(ctr, key) == want


def test_kernel_matches_known_answers(accelerator: dc.Accelerator) -> None:
    ctr = np.array([c for c, _, _ in KAT], np.uint32)
    key = np.array([k for _, k, _ in KAT], np.uint32)
    got = philox_blocks(ctr, key, accelerator)
    np.testing.assert_array_equal(got, np.array([w for _, _, w in KAT], np.uint32))


def test_kernel_matches_reference_on_random_counters(accelerator: dc.Accelerator) -> None:
    rs = np.random.default_rng(0)
    ctr = rs.integers(0, 2**32, (64, 4), dtype=np.uint64).astype(np.uint32)
    key = rs.integers(0, 2**32, (64, 2), dtype=np.uint64).astype(np.uint32)
    got = philox_blocks(ctr, key, accelerator)
    want = np.array([philox_reference(tuple(c), tuple(k)) for c, k in zip(ctr, key, strict=True)], np.uint32)
    np.testing.assert_array_equal(got, want)


def _floats(acc: dc.Accelerator) -> list[type]:
    return [np.float32] if acc.backend == "metal" else [np.float32, np.float64]


def test_random_is_the_documented_function_of_the_stream(accelerator: dc.Accelerator) -> None:
    seed = 0x1234_5678_9ABC_DEF0
    g = dc.random.default_rng(seed)
    got = g.random(6, dtype=np.float32, device=accelerator).numpy()
    key = (seed & 0xFFFFFFFF, seed >> 32)
    want = [(philox_reference((k, 0, 0, 0), key)[0] >> 8) / 2**24 for k in range(6)]
    np.testing.assert_array_equal(got, np.array(want, np.float32))
    if np.float64 in _floats(accelerator):
        w = [philox_reference((k, 0, 0, 0), key) for k in range(6, 9)]
        want64 = [((a >> 5) * 2**26 + (b >> 6)) / 2**53 for a, b, _, _ in w]
        np.testing.assert_array_equal(g.random(3, device=accelerator).numpy(), want64)


def test_same_numbers_on_every_device_and_every_chunking(accelerator: dc.Accelerator) -> None:
    for t in _floats(accelerator):
        ref = dc.random.default_rng(7).uniform(-2, 3, 40, dtype=t, device="cpu").numpy()
        g = dc.random.default_rng(7)
        parts = [g.uniform(-2, 3, n, dtype=t, device=accelerator).numpy() for n in (1, 13, 0, 26)]
        np.testing.assert_array_equal(np.concatenate(parts), ref)
        np.testing.assert_array_equal(
            dc.random.default_rng(7).at(21).uniform(-2, 3, 19, dtype=t, device=accelerator).numpy(), ref[21:])
        ints = dc.random.default_rng(7).integers(-5, 5, (4, 5), device=accelerator).numpy()
        np.testing.assert_array_equal(ints, dc.random.default_rng(7).integers(-5, 5, (4, 5), device="cpu").numpy())


def test_distributions_and_shapes(accelerator: dc.Accelerator) -> None:
    g = dc.random.default_rng(3)
    for t in _floats(accelerator):
        u = g.random((100, 50), dtype=t, device=accelerator)
        assert u.shape == (100, 50) and u.dtype == t and u.accelerator is accelerator
        v = u.numpy()
        assert v.min() >= 0 and v.max() < 1 and abs(v.mean() - 0.5) < 0.02
        z = g.normal(1.0, 2.0, 20000, dtype=t, device=accelerator).numpy()
        assert np.isfinite(z).all() and abs(z.mean() - 1) < 0.1 and abs(z.std() - 2) < 0.1
    i = g.integers(3, 9, 5000, dtype=np.int8, device=accelerator).numpy()
    assert i.dtype == np.int8 and set(np.unique(i)) == set(range(3, 9))
    e = g.integers(250, 255, 500, dtype=np.uint8, endpoint=True, device=accelerator).numpy()
    assert set(np.unique(e)) == set(range(250, 256))
    big = g.integers(0, 2**64, 8, dtype=np.uint64, device=accelerator).numpy()
    assert big.dtype == np.uint64
    assert g.random(device=accelerator).shape == ()
    assert g.random((0, 3), device=accelerator, dtype=np.float32).shape == (0, 3)


def test_permutation_shuffle_choice(accelerator: dc.Accelerator) -> None:
    g = dc.random.default_rng(11)
    p = g.permutation(50, device=accelerator).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(50))
    assert not (p == np.arange(50)).all()
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    px = g.permutation(x, device=accelerator).numpy()
    np.testing.assert_array_equal(px[np.argsort(px[:, 0])], x)
    buf = accelerator.asarray(x)
    g.shuffle(buf)
    s = buf.numpy()
    np.testing.assert_array_equal(s[np.argsort(s[:, 0])], x)
    c = g.choice(10, 6, replace=False, device=accelerator).numpy()
    assert len(set(c)) == 6 and c.min() >= 0 and c.max() < 10
    w = g.choice(4, 4000, p=[0.1, 0.0, 0.6, 0.3], device=accelerator).numpy()
    counts = np.bincount(w, minlength=4) / 4000
    assert counts[1] == 0 and abs(counts[2] - 0.6) < 0.05
    rows = g.choice(x, (2, 2), device=accelerator).numpy()
    assert rows.shape == (2, 2, 3) and np.isin(rows[..., 0], x[:, 0]).all()


def test_errors() -> None:
    g = dc.random.default_rng(0)
    with pytest.raises(ValueError, match="seed"):
        dc.random.default_rng(-1)
    with pytest.raises(TypeError, match="seed"):
        dc.random.default_rng("abc")
    with pytest.raises(TypeError, match="dtype"):
        g.random(3, dtype=np.int32)
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
    with pytest.raises(ValueError, match="out of bounds"):
        g.integers(0, 300, dtype=np.uint8)
    with pytest.raises(ValueError, match="without replacement"):
        g.choice(3, 4, replace=False)
    with pytest.raises(ValueError, match="p must"):
        g.choice(3, 2, p=[0.5, 0.6, 0.1])
    with pytest.raises(ValueError, match="size"):
        g.random(-1)
    with pytest.raises(TypeError, match="shuffle"):
        g.shuffle(np.arange(3))


def test_philox_inside_a_user_kernel(accelerator: dc.Accelerator) -> None:
    @dc.kernel
    def fill(out: dc.Buffer[dc.uint32]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            w = dc.random.philox(dc.uint32(i), dc.uint32(0), dc.uint32(0), dc.uint32(0), dc.uint32(0), dc.uint32(0))
            out[i] = w[0]

    out = accelerator.empty((3,), np.uint32)
    accelerator.launch(fill, 3, out)
    np.testing.assert_array_equal(out.numpy(), [philox_reference((k, 0, 0, 0), (0, 0))[0] for k in range(3)])
