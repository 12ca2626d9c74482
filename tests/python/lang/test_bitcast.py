"""dc.bitcast(x, dtype): a value's bits read as another type of the same size (numpy's ``.view``),
on every accelerator, against numpy's views: NaN payloads, signed zeros, subnormals and infinities
keep their exact bits; plus the type rules (sizes, the types it takes) and each target's spelling."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

RNG = np.random.default_rng(11)


def _bits32() -> np.ndarray:
    special = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
                        0x00000001, 0x807FFFFF, 0x3F800000, 0xBF800000, 0x7F7FFFFF], np.uint32)
    return np.concatenate([special, RNG.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)])


@dc.kernel
def views32(x: dc.Buffer[dc.float32], u: dc.Buffer[dc.uint32], i: dc.Buffer[dc.int32], back: dc.Buffer[dc.float32],
            from_int: dc.Buffer[dc.float32]):
    g = dc.global_id(0)
    if g < x.shape[0]:
        b = dc.bitcast(x[g], dc.uint32)
        u[g] = b
        i[g] = dc.bitcast(x[g], dc.int32)
        # integer operations on the bits, then back: the sign flip of an order-preserving sort key
        back[g] = dc.bitcast(b ^ dc.uint32(0x80000000), dc.float32)
        from_int[g] = dc.bitcast(dc.bitcast(b, dc.int32), dc.float32)


def test_bitcast_32_bit_views_match_numpy(accelerator):
    bits = _bits32()
    x = bits.view(np.float32)  # NaN payloads and signalling NaNs must survive: compared as bits
    n = x.size
    u, i, back, from_int = (accelerator.zeros(n, dtype=t) for t in (np.uint32, np.int32, np.float32, np.float32))
    dc.launch(views32, n, accelerator.asarray(x), u, i, back, from_int, accelerator=accelerator)
    np.testing.assert_array_equal(u.numpy(), bits)
    np.testing.assert_array_equal(i.numpy(), bits.view(np.int32))
    np.testing.assert_array_equal(back.numpy().view(np.uint32), bits ^ np.uint32(0x80000000))
    np.testing.assert_array_equal(from_int.numpy().view(np.uint32), bits)


@dc.kernel
def views64(x: dc.Buffer[dc.float64], u: dc.Buffer[dc.uint64], i: dc.Buffer[dc.int64], back: dc.Buffer[dc.float64]):
    g = dc.global_id(0)
    if g < x.shape[0]:
        u[g] = dc.bitcast(x[g], dc.uint64)
        i[g] = dc.bitcast(x[g], dc.int64)
        back[g] = dc.bitcast(dc.bitcast(x[g], dc.int64) + 1, dc.float64)


def test_bitcast_64_bit_views_match_numpy(accelerator):
    special = np.array([0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000001, 1,
                        0x3FF0000000000000], np.uint64)
    bits = np.concatenate([special, RNG.integers(0, 2**63, 2000, dtype=np.uint64) * np.uint64(2)])
    x = bits.view(np.float64)
    n = x.size
    u, i, back = (accelerator.zeros(n, dtype=t) for t in (np.uint64, np.int64, np.float64))
    dc.launch(views64, n, accelerator.asarray(x), u, i, back, accelerator=accelerator)
    np.testing.assert_array_equal(u.numpy(), bits)
    np.testing.assert_array_equal(i.numpy(), bits.view(np.int64))
    np.testing.assert_array_equal(back.numpy().view(np.uint64), bits + np.uint64(1))


@dc.kernel
def literal_bits(out: dc.Buffer[dc.uint32]):
    if dc.global_id(0) == 0:
        out[0] = dc.bitcast(1.0, dc.uint32)  # a Python float takes dtype's size: float32 1.0
        out[1] = dc.bitcast(-1, dc.uint32)  # a Python int likewise: int32 -1


def test_bitcast_of_python_numbers_takes_the_target_size(accelerator):
    out = accelerator.zeros(2, dtype=np.uint32)
    dc.launch(literal_bits, 1, out, accelerator=accelerator)
    np.testing.assert_array_equal(out.numpy(), [0x3F800000, 0xFFFFFFFF])


def test_bitcast_on_the_host_is_numpys_view():
    assert dc.bitcast(np.float32(1.0), np.uint32) == 0x3F800000
    assert dc.bitcast(np.uint32(0xBF800000), dc.float32) == np.float32(-1.0)
    with pytest.raises(ValueError, match="one size"):
        dc.bitcast(np.float64(1.0), np.uint32)


def _wrong_size(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.uint64]):
    out[0] = dc.bitcast(x[0], dc.uint64)


def _of_bool(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.uint64]):
    out[0] = dc.bitcast(x[0] > 0, dc.uint32)


def _to_half(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.uint64]):
    out[0] = dc.bitcast(x[0], dc.float16)


def _no_dtype(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.uint64]):
    out[0] = dc.bitcast(x[0])


@pytest.mark.parametrize(("fn", "message"), [
    (_wrong_size, "sizes differ"), (_of_bool, "not bool"), (_to_half, "dtype of dc.bitcast"),
    (_no_dtype, "takes 2 arguments"),
])
def test_bitcast_type_errors(fn, message):
    with pytest.raises(dc.KernelTypeError, match=message):
        dc.kernel(fn).source("cpu", np.zeros(1, np.float32), np.zeros(1, np.uint64))


@pytest.mark.parametrize(("backend", "spelling"), [
    ("cuda", "__float_as_int("), ("opencl", "as_uint("), ("metal", "as_type<uint>("), ("cpu", "__builtin_memcpy"),
])
def test_each_target_reinterprets_with_its_own_intrinsic(backend, spelling):
    x = np.zeros(1, np.float32)
    src = views32.source(backend, x, np.zeros(1, np.uint32), np.zeros(1, np.int32), x, x)
    assert spelling in src
