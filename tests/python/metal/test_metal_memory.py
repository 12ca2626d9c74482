"""Metal memory through the public API: shared-storage buffers are host-visible (views without
copies, DC_FEATURE_HOST_VISIBLE_MEMORY) and stay ordered with the streams that use them; on a
discrete GPU large buffers are private storage, reached only through blits.

The double counts the blit copies it executes and knows which addresses are the ``contents`` of
live buffers, so "zero-copy" is checked, not assumed."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

# A kernel slow enough (tens of milliseconds on the double) that a host access which forgot to
# wait for it would see the old contents: each item spins before it writes.
SLOW = """
#include <metal_stdlib>
using namespace metal;
kernel void slow_copy(device const float* src [[buffer(0)]], device float* dst [[buffer(1)]],
                      constant int& spin [[buffer(2)]], constant long& n [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  float acc = 1.0f;
  for (int k = 0; k < spin; ++k) acc = acc * 0.999f + 1.0f;
  dst[i] = src[i] + (acc < 0.0f ? 1.0f : 0.0f);  // acc is never negative: dst = src, after the spin
}
"""
SPIN = 4000
N = 4096

SCALE = """
#include <metal_stdlib>
using namespace metal;
kernel void twice(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  constant long& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = 2.0f * x[i];
}
"""


@pytest.fixture(scope="module")
def slow_copy() -> dc.RawKernel:
    return dc.RawKernel(SLOW, "slow_copy", backend="metal")


@pytest.fixture(scope="module")
def twice() -> dc.RawKernel:
    return dc.RawKernel(SCALE, "twice", backend="metal")


def test_the_device_claims_host_visible_not_unified_memory(metal):
    features = metal.info["features"]
    assert "host_visible_memory" in features
    # numpy arrays are still staged: Metal binds only memory it allocated
    assert "unified_memory" not in features
    assert metal.host_visible_memory and not metal.unified_memory


def test_the_host_view_is_the_buffers_contents(metal, metal_double):
    buf = metal.asarray(np.arange(64, dtype=np.float32))
    assert buf.host_visible
    with buf.host() as h:
        address = h.ctypes.data
        # the double's own record: this address is the `contents` of a live shared buffer
        assert metal_double.storage_at(address) == 0
        assert address == buf._native.device_ptr()  # the plugin's handle is that address too
        h[:] = 7.0
    view = np.asarray(buf, copy=False)  # no ValueError: numpy sees the device memory itself
    assert view.ctypes.data == address
    assert (view == 7.0).all()
    assert (buf.numpy() == 7.0).all()


def test_writes_through_the_view_reach_a_kernel_without_an_upload(metal, metal_double, twice):
    n = 1000
    x = metal.zeros((n,), np.float32)
    out = metal.empty((n,), np.float32)
    x.numpy()  # the zeroing (a blit fill, not a copy) is done
    blits = metal_double.count("blit_copies")
    with x.host() as h:
        h[:] = np.arange(n, dtype=np.float32)
    assert x._native.state == "synchronized"  # nothing left to upload
    dc.launch(twice, n, x, out, n, accelerator=metal)
    result = out.numpy()
    np.testing.assert_array_equal(result, 2.0 * np.arange(n, dtype=np.float32))
    # no staging either way: not for the host write, not for the kernel, not for reading back
    assert metal_double.count("blit_copies") == blits
    # copies to and from numpy are plain memcpy on host-visible memory too
    x.copy_from(np.ones(n, np.float32))
    back = np.empty(n, np.float32)
    x.copy_to(back)
    assert (back == 1.0).all()
    assert metal_double.count("blit_copies") == blits


def test_the_host_view_waits_for_a_kernel_writing_the_buffer(metal, slow_copy):
    s = metal.stream()
    src = metal.asarray(np.full(N, 5.0, np.float32))
    dst = metal.zeros((N,), np.float32)
    dc.launch(slow_copy, N, src, dst, SPIN, N, accelerator=metal, stream=s)
    with dst.host() as h:  # read after write: must see the kernel's result, not the zeros
        assert (h == 5.0).all()
    assert (np.asarray(dst) == 5.0).all()


def test_host_writes_wait_for_a_kernel_still_reading_the_buffer(metal, slow_copy):
    s = metal.stream()
    src = metal.asarray(np.full(N, 3.0, np.float32))
    dst = metal.zeros((N,), np.float32)
    dc.launch(slow_copy, N, src, dst, SPIN, N, accelerator=metal, stream=s)
    with src.host() as h:  # write after read: the kernel must have read the 3s first
        h[:] = -1.0
    assert (dst.numpy() == 3.0).all()

    dc.launch(slow_copy, N, src, dst, SPIN, N, accelerator=metal, stream=s)
    src.copy_from(np.full(N, 9.0, np.float32))  # the same through copy_from
    assert (dst.numpy() == -1.0).all()
    assert (src.numpy() == 9.0).all()


def test_a_view_written_before_a_launch_on_another_stream(metal, twice):
    s = metal.stream()
    x = metal.empty((N,), np.float32)
    out = metal.empty((N,), np.float32)
    for value in (1.0, 2.0, 3.0):  # host write, kernel on s, read back: in order each round
        with x.host() as h:
            h[:] = value
        dc.launch(twice, N, x, out, N, accelerator=metal, stream=s)
        assert (out.numpy() == 2.0 * value).all()


def test_private_storage_on_a_discrete_gpu(metal, metal_env, run_python):
    if not metal.info.get("test_double"):
        pytest.skip("a discrete GPU is chosen through the test double's DC_METAL_DOUBLE_UNIFIED")
    code = f"""
import sys
import numpy as np, dotcompute as dc
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
from conftest import MetalDouble, double_library_of_loaded_plugin
dbl = MetalDouble(double_library_of_loaded_plugin())
acc = dc.accelerator("metal")
info = acc.info
assert info["unified_memory"] is False and info["private_storage_min_bytes"] == 1 << 20, info
twice = dc.RawKernel({SCALE!r}, "twice", backend="metal")
n = 1 << 18                                            # 1 MiB of float32: private
data = np.arange(n, dtype=np.float32) % 1000
big = acc.asarray(data)
small = acc.asarray(data[:16])                         # small: still shared
assert not big.host_visible and small.host_visible
assert dbl.count("private_buffers") == 1, dbl.count("private_buffers")
out = acc.empty((n,), np.float32)
assert dbl.count("private_buffers") == 2
blits = dbl.count("blit_copies")
dc.launch(twice, n, big, out, n, accelerator=acc)
np.testing.assert_array_equal(out.numpy(), 2 * data)
assert dbl.count("blit_copies") > blits                # the read-back went through a staging blit
with big.host() as h:                                  # a host mirror, not device memory
    assert dbl.storage_at(h.ctypes.data) == -1
    h[:] = 1.0
assert big._native.state == "host_dirty"               # uploaded (a blit) before the next use
dc.launch(twice, n, big, out, n, accelerator=acc)
assert (out.numpy() == 2.0).all()
try:
    np.asarray(big, copy=False)
except ValueError as e:
    assert "without a copy" in str(e), e
else:
    raise AssertionError("a private buffer was viewed without a copy")
z = acc.zeros((n,), np.float32)                        # a blit fill of private storage
assert (z.numpy() == 0).all()
out.copy_from(data)
back = np.empty(n, np.float32)
out.copy_to(back)
np.testing.assert_array_equal(back, data)
print("private ok")
"""
    proc = run_python(code, env={**metal_env, "DC_METAL_DOUBLE_UNIFIED": "0"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "private ok" in proc.stdout
