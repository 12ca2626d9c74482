"""Emitter structure per target: barriers (CPU loop fission), shared memory, atomics, debug
bounds checks, NVRTC compiles, OpenCL extensions, the MSL convention, line mapping."""

from __future__ import annotations

import subprocess

import harness
import irkit
import numpy as np
import pytest

from dotcompute.errors import KernelTypeError
from dotcompute.lang import ir
from dotcompute.lang.emit import emit
from dotcompute.lang.types import BOOL, FLOAT32, FLOAT64, INT32, INT64, UINT32

RUNNERS = ["cpu", "opencl"]


def run(backend, e, gs, ls, args):
    if backend == "cpu":
        harness.run_cpu(e, gs, ls, args)
    else:
        cl = harness.opencl()
        if cl is None:
            pytest.skip("no OpenCL platform (install pocl-opencl-icd)")
        cl.run(e, gs, ls, args)


def nvrtc_ok(module, arch="sm_80", debug=False):
    if harness.nvrtc_lib() is None:
        pytest.skip("NVRTC not installed (pip install nvidia-cuda-nvrtc-cu12)")
    e = emit(module, "cuda", debug=debug)
    ok, log = harness.nvrtc_compile(e.text, e.entry, arch)
    assert ok and "warning" not in log, f"{log}\n{e.text}"


def test_vadd_vectorises_on_cpu():
    e = emit(irkit.vadd(), "cpu")
    src = harness._BUILD / "vec_check.cpp"
    harness._BUILD.mkdir(exist_ok=True)
    src.write_text(e.text)
    r = subprocess.run([harness.cxx(), *harness.CPU_FLAGS, "-fopt-info-vec-optimized", f"-I{harness.INCLUDE}",
                        str(src), "-o", str(src.with_suffix(".so"))], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "loop vectorized" in r.stderr


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("dtype", [FLOAT32, FLOAT64, INT32], ids=str)
def test_vadd_partial_last_group(backend, dtype):
    n = 1000  # not a multiple of the local size: the last group is partial
    dt = np.dtype(dtype.name)
    a, b = np.arange(n).astype(dt), np.full(n, 3).astype(dt)
    out = np.zeros(n + 7, dt)  # longer than the launch: items past 1000 must not run
    run(backend, emit(irkit.vadd(dtype, f"vadd_{dtype}"), backend), (n,), (64,), [a, b, out])
    np.testing.assert_array_equal(out[:n], a + b)
    assert not out[n:].any()


@pytest.mark.parametrize("backend", RUNNERS)
def test_tiled_matmul_two_barriers_in_a_loop(backend):
    n = 16
    rng = np.random.default_rng(1)
    A, B = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    C = np.zeros((n, n), np.float32)
    run(backend, emit(irkit.matmul_tiled(4), backend), (n, n), (4, 4), [A, B, C])
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


@pytest.mark.parametrize("backend", RUNNERS)
def test_tree_reduction_barrier_in_while(backend):
    x = np.random.default_rng(2).random(256, np.float32)
    out = np.zeros(4, np.float32)
    run(backend, emit(irkit.reduce_sum(64), backend), (256,), (64,), [x, out])
    np.testing.assert_allclose(out, x.reshape(4, 64).sum(1), rtol=1e-5)


def test_fission_keeps_only_cross_barrier_values_per_item():
    text = emit(irkit.matmul_tiled(4), "cpu").text
    assert "dc_items<float> dc_pi_acc(" in text     # lives across both barriers
    assert "float acc = dc_pi_acc.p[dc_li];" in text  # held in a register within a region
    assert "dc_pi_k" not in text and "int64_t k_c = 0LL;" in text  # recomputed inside one region
    assert "dc_pi_li" not in text and "int64_t li = dc_l1;" in text  # ids are recomputed, not stored
    assert "__syncthreads" not in text and "barrier(" not in text


@pytest.mark.parametrize("backend", RUNNERS)
def test_early_return_before_barrier(backend):
    # items with lid >= 4 return before the barrier; the others still meet it and read sh
    x = irkit.buf("x", FLOAT32, 1, 0)
    out = irkit.buf("out", FLOAT32, 1, 1, read=False, written=True)
    sh = ir.SharedDecl(name="sh", py_name="sh", dtype=FLOAT32, shape=(8,))
    r = irkit.shared_ref(sh)
    lid = irkit.v("lid")
    body = [
        irkit.assign("lid", irkit.bid("local_id"), 3),
        irkit.store(r, [lid], irkit.load(x, irkit.gid()), 4),
        ir.Barrier(loc=irkit.L(5)),
        ir.If(cond=irkit.cmp("GtE", lid, irkit.c(4)), then=[ir.Return(loc=irkit.L(6))], loc=irkit.L(6)),
        irkit.store(out, [irkit.gid()], irkit.load(r, irkit.binop("Add", lid, irkit.c(4))), 7),
    ]
    m = irkit.kernel("early_ret", [x, out], body, [irkit.local("lid")], shared=[sh])
    xs = np.arange(16, dtype=np.float32)
    res = np.full(16, -1, np.float32)
    run(backend, emit(m, backend), (16,), (8,), [xs, res])
    assert res.tolist() == [4, 5, 6, 7, -1, -1, -1, -1, 12, 13, 14, 15, -1, -1, -1, -1]


ATOMIC_TYPES = [INT32, UINT32, INT64, FLOAT32, FLOAT64]


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("t", ATOMIC_TYPES, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "min", "max", "exchange", "cas"])
def test_atomics(backend, t, op):
    n = 64
    dt = np.dtype(t.name)
    idx = (np.arange(n) % 4).astype(np.int32)
    val = (np.arange(n) % 13 + 1).astype(dt)
    acc = np.full(4, 50, dt)
    old = np.zeros(n, dt)
    args = [idx, val, acc, old]
    if op == "cas":
        args.append(np.full(n, 50, dt))
    run(backend, emit(irkit.atomics(t, op), backend), (n,), (16,), args)
    groups = [val[idx == k] for k in range(4)]
    if op == "add":
        expect = [50 + g.sum() for g in groups]
    elif op == "sub":
        expect = [np.array(50, dt) - g.sum(dtype=dt) for g in groups]
    elif op == "min":
        expect = [min(50, g.min()) for g in groups]
    elif op == "max":
        expect = [max(50, g.max()) for g in groups]
    elif op == "exchange":
        # the last writer wins; every old value is 50 or one of the values written
        assert all(a in set(g.tolist()) for a, g in zip(acc.tolist(), groups, strict=False))
        assert sorted(old.tolist() + acc.tolist()) == sorted([50] * 4 + val.tolist())
        return
    else:  # exactly one item per slot saw 50 and swapped
        assert (old == 50).sum() == 4
        assert all(a in set(g.tolist()) for a, g in zip(acc.tolist(), groups, strict=False))
        return
    np.testing.assert_array_equal(acc, np.array(expect, dt))


@pytest.mark.parametrize("t", ATOMIC_TYPES, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "min", "max", "exchange", "cas"])
def test_atomics_compile_with_nvrtc(t, op):
    nvrtc_ok(irkit.atomics(t, op))


def test_opencl_extensions_only_when_used():
    f32 = emit(irkit.vadd(), "opencl")
    assert "EXTENSION" not in f32.text and f32.features == frozenset()
    assert "#pragma OPENCL FP_CONTRACT OFF" in f32.text  # numpy's roundings: no a*b+c fused by default
    f64 = emit(irkit.vadd(FLOAT64, "v64"), "opencl")
    assert "cl_khr_fp64 : enable" in f64.text and "fp64" in f64.features
    a64 = emit(irkit.atomics(INT64, "max"), "opencl")
    assert "cl_khr_int64_base_atomics : enable" in a64.text
    assert "cl_khr_int64_extended_atomics : enable" in a64.text
    assert {"int64_atomics", "int64_extended_atomics"} <= a64.features


def _oob_store_module():
    a = irkit.buf("a", FLOAT32, 2, 0, read=False, written=True)
    s = irkit.scalar("s", FLOAT32, 1)
    i, j = irkit.v("i"), irkit.v("j")
    body = [irkit.assign("i", irkit.gid(0), 3), irkit.assign("j", irkit.gid(1), 4),
            irkit.store(a, [i, irkit.binop("Add", j, irkit.c(1))], irkit.v("s", FLOAT32), 5)]
    return irkit.kernel("oob", [a, s], body, [irkit.local("i"), irkit.local("j")], debug=True)


@pytest.mark.parametrize("backend", RUNNERS)
def test_debug_bounds_check_reports_and_skips(backend):
    m = _oob_store_module()
    e = emit(m, backend)
    assert e.debug and e.params[-1 if backend == "cpu" else -4].kind == "debug"
    a = np.zeros((3, 4), np.float32)
    pad = np.zeros(8, np.float32)
    buf = np.concatenate([a.ravel(), pad]).reshape(-1)[:12].reshape(3, 4)  # a view with nothing past it
    report = np.zeros(4, np.int64)
    run(backend, e, (3, 4), (3, 4), [buf, 2.5, report])
    assert report[0] == 1 and report[1] == 0 and report[3] == 5
    i, j1 = divmod(int(report[2]), 4)
    assert j1 == 0 and 1 <= i <= 3  # some (i, 3 + 1) access, reported as its flat index i * 4 + 4
    expect = np.full((3, 4), 2.5, np.float32)
    expect[:, 0] = 0  # column 0 is never written; column 4 would be out of bounds and is skipped
    np.testing.assert_array_equal(buf, expect)


def test_every_module_compiles_with_nvrtc_for_sm80_and_sm90():
    mods = [irkit.vadd(), irkit.vadd(FLOAT64, "v64"), irkit.matmul_tiled(), irkit.reduce_sum(),
            irkit.elementwise("FloorDiv", INT64), irkit.elementwise("Mod", FLOAT32),
            irkit.elementwise("Pow", INT32), irkit.elementwise("cvt", FLOAT64, UINT32),
            irkit.elementwise("isnan", FLOAT32, BOOL), irkit.elementwise("round", FLOAT64),
            irkit.elementwise("RShift", INT32), irkit.elementwise("min", FLOAT32)]
    for m in mods:
        for arch in ("sm_80", "sm_90"):
            nvrtc_ok(m, arch)
    nvrtc_ok(_oob_store_module(), debug=True)
    nvrtc_ok(_uniform_if_module())


def test_cuda_guard_and_global_size_params():
    e = emit(irkit.vadd(), "cuda")
    assert e.global_size_params and [p.name for p in e.params[-3:]] == [
        "dc_global_size0", "dc_global_size1", "dc_global_size2"]
    assert "if (dc_gid0 >= dc_global_size0" in e.text and "#include" not in e.text
    assert e.global_size_args((10, 2)) == (10, 2, 1)
    mm = emit(irkit.matmul_tiled(), "cuda")
    assert "return;" not in mm.text and "__syncthreads();" in mm.text and "__shared__ float As[16];" in mm.text
    assert mm.static_shared_bytes == 128 and mm.uses_barrier


def test_metal_convention():
    e = emit(irkit.vadd(), "metal")
    t = e.text
    assert "const device float* a [[buffer(0)]]" in t
    assert "constant long& dc_a_n0 [[buffer(1)]]" in t
    assert "device float* out [[buffer(4)]]" in t
    for b in ("dc_gid [[thread_position_in_grid]]", "dc_lid [[thread_position_in_threadgroup]]",
              "dc_grp [[threadgroup_position_in_grid]]", "dc_gsz [[threads_per_grid]]",
              "dc_lsz [[threads_per_threadgroup]]"):
        assert f"uint3 {b}" in t
    assert not e.global_size_params
    mm = emit(irkit.matmul_tiled(), "metal").text
    assert "threadgroup float As[16];" in mm and "threadgroup_barrier(" in mm


def test_metal_refuses_float64_and_64bit_atomics():
    with pytest.raises(KernelTypeError, match="float64"):
        emit(irkit.vadd(FLOAT64, "v64"), "metal")
    with pytest.raises(KernelTypeError, match="int64"):
        emit(irkit.atomics(INT64, "add"), "metal")


def test_line_mapping_and_entry_name():
    for backend in ("cpu", "cuda", "opencl", "metal"):
        e = emit(irkit.vadd(), backend)
        assert e.entry == "vadd_f32"
        assert '#line 5 "/tmp/kernels.py"' in e.text


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend"):
        emit(irkit.vadd(), "vulkan")


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("debug", [False, True])
def test_device_function_with_buffer_argument(backend, debug):
    m = irkit.with_device_function(debug)
    a = np.arange(50, dtype=np.float32)
    out = np.zeros(50, np.float32)
    args = [a, out] + ([np.zeros(4, np.int64)] if debug else [])
    run(backend, emit(m, backend), (50,), (16,), args)
    np.testing.assert_array_equal(out, a * 2)
    nvrtc_ok(m, debug=debug)
    assert "scale_at_f32(device const float* x" in emit(m, "metal").text.replace("  ", " ")


def _uniform_if_module():
    # ls = local_size(0); lid = local_id(0); sh[lid] = x[gid]
    # if ls > 4: barrier(); out[gid] = sh[ls - 1 - lid]   else: out[gid] = -1
    x = irkit.buf("x", FLOAT32, 1, 0)
    out = irkit.buf("out", FLOAT32, 1, 1, read=False, written=True)
    sh = ir.SharedDecl(name="sh", py_name="sh", dtype=FLOAT32, shape=(16,))
    r = irkit.shared_ref(sh)
    ls, lid = irkit.v("ls"), irkit.v("lid")
    rev = irkit.binop("Sub", irkit.binop("Sub", ls, irkit.c(1)), lid)
    body = [
        irkit.assign("ls", irkit.bid("local_size"), 3),
        irkit.assign("lid", irkit.bid("local_id"), 4),
        irkit.store(r, [lid], irkit.load(x, irkit.gid()), 5),
        ir.If(cond=irkit.cmp("Gt", ls, irkit.c(4)), loc=irkit.L(6),
              then=[ir.Barrier(loc=irkit.L(7)), irkit.store(out, [irkit.gid()], irkit.load(r, rev), 8)],
              orelse=[irkit.store(out, [irkit.gid()], irkit.c(-1.0, FLOAT32), 10)]),
    ]
    return irkit.kernel("uniform_if", [x, out], body, [irkit.local("ls"), irkit.local("lid")], shared=[sh])


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("local", [4, 8])
def test_barrier_inside_uniform_if(backend, local):
    xs = np.arange(16, dtype=np.float32)
    res = np.zeros(16, np.float32)
    run(backend, emit(_uniform_if_module(), backend), (16,), (local,), [xs, res])
    if local == 4:
        assert (res == -1).all()
    else:
        assert res.tolist() == list(range(7, -1, -1)) + list(range(15, 7, -1))


def test_cpu_sources_compile_with_clang():
    import shutil
    clang = shutil.which("clang++")
    if clang is None:
        pytest.skip("clang++ not installed")
    mods = [irkit.vadd(), irkit.matmul_tiled(), irkit.reduce_sum(), _oob_store_module(),
            irkit.atomics(FLOAT32, "min"), irkit.with_device_function(True), _uniform_if_module()]
    for m in mods:
        src = harness._BUILD / f"clang_{m.kernel.name}.cpp"
        harness._BUILD.mkdir(exist_ok=True)
        src.write_text(emit(m, "cpu").text)
        flags = [f for f in harness.CPU_FLAGS if f != "-fno-trapping-math"]
        r = subprocess.run([clang, *flags, f"-I{harness.INCLUDE}", str(src), "-o", str(src.with_suffix(".so"))],
                           capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr.strip(), r.stderr
