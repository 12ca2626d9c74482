"""dc.RawKernel on the CPU: hand-written C++ against cpu_kernel_abi.h, launched through dc.launch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

KERNELS = Path(__file__).parent / "kernels"
# Written by the CPU backend's tests; shared so both suites run the same kernel.
TILED_MATMUL = Path(__file__).parents[2] / "cpp" / "cpu" / "kernels" / "tiled_matmul.cpp"


def _source(name: str) -> str:
    return (KERNELS / name).read_text()


@pytest.fixture(scope="module")
def vadd() -> dc.RawKernel:
    return dc.RawKernel(_source("vadd.cpp"), "vadd_scaled", backend="cpu")


def test_buffers_and_a_scalar(cpu, vadd):
    n = 1000
    a = cpu.asarray(np.arange(n, dtype=np.float32))
    b = cpu.asarray(np.ones(n, np.float32))
    out = cpu.empty((n,), np.float32)
    dc.launch(vadd, n, a, b, out, 2.0, accelerator=cpu)
    cpu.synchronize()
    np.testing.assert_allclose(out.numpy(), np.arange(n) * 2.0 + 1.0)


def test_numpy_arrays_are_results_when_launch_returns(cpu, vadd):
    n = 777  # not a multiple of any group size: the last group is partial
    a = np.linspace(0, 1, n, dtype=np.float32)
    b = np.full(n, 3.0, np.float32)
    out = np.zeros(n, np.float32)
    dc.launch(vadd, n, a, b, out, 0.5, accelerator=cpu, local_size=64)
    np.testing.assert_allclose(out, a * 0.5 + 3.0, rtol=1e-6)


def test_non_contiguous_numpy_output_gets_its_results(cpu, vadd):
    n = 64
    a = np.arange(n, dtype=np.float32)
    b = np.zeros(n, np.float32)
    backing = np.zeros(2 * n, np.float32)
    out = backing[::2]
    dc.launch(vadd, n, a, b, out, 1.0, accelerator=cpu)
    np.testing.assert_array_equal(out, a)
    assert (backing[1::2] == 0).all()


def test_scalars_are_passed_by_their_types(cpu):
    k = dc.RawKernel(_source("scalars.cpp"), "echo_scalars")
    ints = np.zeros(5, np.int64)
    floats = np.zeros(2, np.float64)
    dc.launch(k, 1, ints, floats, 2**40 + 3, 0.1, True, np.float32(1.5), np.int32(-7), np.uint8(200),
              accelerator=cpu)
    assert ints.tolist() == [2**40 + 3, 1, -7, 200, 8]
    assert floats[0] == 0.1 and floats[1] == 1.5


def test_tiled_matmul_with_local_size_and_shared_memory(cpu):
    """The CPU backend's hand-written 16x16 tiled matmul (two barriers per tile), through RawKernel."""
    k = dc.RawKernel(TILED_MATMUL.read_text(), "tiled_matmul", backend="cpu")
    rng = np.random.default_rng(0)
    M, N, K = 40, 56, 36  # none a multiple of the tile: edges are padded
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    C = cpu.zeros((M, N), np.float32)

    def up(n: int) -> int:
        return (n + 15) // 16 * 16

    dc.launch(k, (up(N), up(M)), cpu.asarray(A), cpu.asarray(B), C, M, N, K, local_size=(16, 16), accelerator=cpu)
    np.testing.assert_allclose(C.numpy(), A @ B, rtol=1e-4, atol=1e-4)


def test_launch_on_a_stream(cpu, vadd):
    s = cpu.stream()
    n = 4096
    a = cpu.asarray(np.ones(n, np.float32))
    out = cpu.empty((n,), np.float32)
    start = s.record()
    dc.launch(vadd, n, a, a, out, 3.0, accelerator=cpu, stream=s)
    end = s.record()
    end.synchronize()
    assert start.elapsed(end) >= 0.0
    np.testing.assert_array_equal(out.numpy(), 4.0)


def test_compiled_once_per_accelerator(cpu, vadd):
    assert vadd.compile(cpu) is vadd.compile("cpu:0")


def test_compile_errors_carry_log_and_source(cpu):
    bad = dc.RawKernel('extern "C" void broken(const void*) { this is not C++ }', "broken")
    with pytest.raises(dc.CompilationError) as info:
        bad.compile(cpu)
    assert info.value.log and "broken" in info.value.source


def test_missing_entry_is_a_compilation_error(cpu):
    k = dc.RawKernel(_source("vadd.cpp"), "no_such_kernel")
    with pytest.raises(dc.CompilationError, match="no_such_kernel"):
        k.compile(cpu)


def test_argument_errors(cpu, vadd):
    with pytest.raises(TypeError, match="argument 2"):
        dc.launch(vadd, 4, np.zeros(4, np.float32), np.zeros(4, np.float32), {"no": 1}, 1.0, accelerator=cpu)


def test_wrong_backend(cpu):
    k = dc.RawKernel("__kernel void f() {}", "f", backend="opencl")
    with pytest.raises(dc.LaunchError, match="opencl"):
        k.compile(cpu)
    assert k.source("opencl").startswith("__kernel")
    with pytest.raises(ValueError):
        k.source("cpu")


def test_constructor_validation():
    with pytest.raises(ValueError, match="backend"):
        dc.RawKernel("x", "f", backend="vulkan")
    with pytest.raises(ValueError, match="name"):
        dc.RawKernel("x", "not an identifier")
    with pytest.raises(ValueError, match="empty"):
        dc.RawKernel("   ", "f")


def test_accelerator_launch_method(cpu, vadd):
    a = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    cpu.launch(vadd, 8, a, a, out, 1.0)
    np.testing.assert_array_equal(out, 2 * a)


def test_numpy_scalars_of_wide_types_pass_untyped(cpu):
    k = dc.RawKernel(_source("scalars.cpp"), "echo_scalars")
    ints = np.zeros(5, np.int64)
    floats = np.zeros(2, np.float64)
    # np.int64/np.float64/np.bool_ already have the widths Python scalars get; the float32 and int32 slots
    # still need numpy scalars of those types.
    dc.launch(k, 1, ints, floats, np.int64(-5), np.float64(2.5), np.bool_(False), np.float32(-0.25),
              np.int32(9), np.uint8(1), accelerator=cpu)
    assert ints.tolist() == [-5, 0, 9, 1, 8]
    assert floats.tolist() == [2.5, -0.25]


def test_concurrent_launches_from_threads(cpu, vadd):
    """Launch paths release the GIL and share plans safely: every thread gets its own right answer."""
    from concurrent.futures import ThreadPoolExecutor

    n = 10_000

    def work(t: int) -> bool:
        a = cpu.asarray(np.full(n, t, np.float32))
        out = cpu.empty((n,), np.float32)
        s = cpu.stream()
        for _ in range(20):
            dc.launch(vadd, n, a, a, out, 1.0, accelerator=cpu, stream=s)
        s.synchronize()
        return bool((out.numpy() == 2 * t).all())

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))


OPENCL_VADD = """
__kernel void vadd_scaled(__global const float* a, __global const float* b, __global float* out, double s,
                          long n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = (float)(a[i] * s) + b[i];
}
"""


def test_opencl_raw_kernel_stages_numpy_arrays():
    devices = [d for d in dc.devices() if d.backend == "opencl"]
    if not devices:
        pytest.skip("no OpenCL device here")
    acc = devices[0]
    k = dc.RawKernel(OPENCL_VADD, "vadd_scaled", backend="opencl")
    n = 300
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    dc.launch(k, n, a, b, out, 2.0, n, accelerator=acc)  # host arrays: staged, copied back, synchronous
    np.testing.assert_allclose(out, a * 2 + 1)
    da, dout = acc.asarray(a), acc.empty((n,), np.float32)
    dc.launch(k, n, da, acc.asarray(b), dout, 0.5, n, accelerator=acc)
    np.testing.assert_allclose(dout.numpy(), a * 0.5 + 1)
    assert (a == np.arange(n)).all()
