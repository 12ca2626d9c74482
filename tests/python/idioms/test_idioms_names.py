"""Kernel and parameter names that collide with C, C++, OpenCL C, CUDA and MSL keywords,
builtins or the emitters' own generated names: every backend's source must compile and run."""

import shutil

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def register(i: dc.Buffer[dc.float32], dc_L: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], half: dc.float32,
             global_: dc.int32, local: dc.int32, constant: dc.int32, signed: dc.int32, new: dc.int32,
             delete: dc.int32, template: dc.int32, device: dc.int32, thread: dc.int32):
    k = dc.global_id(0)
    # the int32 sum is converted once: int32 + float32 would be float64 (NEP 50), which Metal lacks
    out[k] = i[k] + dc_L[k] + half + dc.float32(global_ + local + constant + signed + new + delete + template
                                                + device + thread)


@dc.kernel
def kernel(kernel: dc.Buffer[dc.float32], restrict: dc.int32, volatile: dc.int32, static: dc.int32,
           struct: dc.int32, union: dc.int32, auto: dc.int32, char: dc.int32, short: dc.int32, long: dc.int32,
           double: dc.int32, unsigned: dc.int32, sizeof: dc.int32, typedef: dc.int32, goto: dc.int32,
           switch: dc.int32, case: dc.int32, default: dc.int32, extern: dc.int32, inline: dc.int32,
           private: dc.int32, uint: dc.int32, size_t: dc.int32, true: dc.int32, this: dc.int32,
           namespace: dc.int32, __global: dc.int32, threadgroup: dc.int32, metal: dc.int32, sampler: dc.int32,
           float4: dc.int32, printf: dc.int32, exp: dc.int32, sqrt: dc.int32, get_global_id: dc.int32,
           threadIdx: dc.int32, blockDim: dc.int32, main: dc.int32, NULL: dc.int32, INFINITY: dc.int32):
    k = dc.global_id(0)
    kernel[k] = (restrict + volatile + static + struct + union + auto + char + short + long + double + unsigned
                 + sizeof + typedef + goto + switch + case + default + extern + inline + private + uint + size_t
                 + true + this + namespace + __global + threadgroup + metal + sampler + float4 + printf + exp
                 + sqrt + get_global_id + threadIdx + blockDim + main + NULL + INFINITY)


def _keyword_named_kernels():
    @dc.kernel
    def float(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = a[i] + 1.0

    @dc.kernel
    def int(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = a[i] + 2.0

    return {"float": float, "int": int}


KW = _keyword_named_kernels()


@dc.func
def static(int, float, char):
    return int + float * char


@dc.kernel
def locals_named_like_keywords(out: dc.Buffer[dc.float32]):
    k = dc.global_id(0)
    double = dc.float32(k)
    new = double * 2.0
    signed = dc.int16(3)  # 16-bit ints with float32 stay float32 (NEP 50)
    unsigned = dc.uint16(1)
    half = new + signed + unsigned
    out[k] = static(half, double, new)


@dc.kernel
def unicode_collisions(données: dc.Buffer[dc.float32], donnes: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    λ = dc.float32(2)
    v = dc.float32(3)
    v_v = dc.float32(5)
    μ = dc.float32(7)
    données[i] = λ * 100 + v * 10 + v_v + μ * 1000
    donnes[i] = 1.0


def test_unicode_names_do_not_collide_with_their_ascii_spellings(accelerator):
    a = np.zeros(2, np.float32)
    b = np.zeros(2, np.float32)
    dc.launch(unicode_collisions, 2, a, b, accelerator=accelerator)
    assert a.tolist() == [7235.0] * 2
    assert b.tolist() == [1.0] * 2


ALL = [register, kernel, KW["float"], KW["int"], locals_named_like_keywords, unicode_collisions]


def test_colliding_parameter_names_run(accelerator):
    ones = np.ones(4, np.float32)
    out = np.zeros(4, np.float32)
    dc.launch(register, 4, ones, ones * 2, out, 0.5, *range(1, 10), accelerator=accelerator)
    assert out.tolist() == [3.5 + 45] * 4
    buf = np.zeros(3, np.float32)
    dc.launch(kernel, 3, buf, *range(39), accelerator=accelerator)
    assert buf.tolist() == [sum(range(39))] * 3


def test_keyword_named_kernels_and_locals_run(accelerator):
    a = np.zeros(3, np.float32)
    dc.launch(KW["float"], 3, a, accelerator=accelerator)
    dc.launch(KW["int"], 3, a, accelerator=accelerator)
    assert a.tolist() == [3.0] * 3
    out = np.zeros(4, np.float32)
    dc.launch(locals_named_like_keywords, 4, out, accelerator=accelerator)
    expect = []
    for k in range(4):
        half = k * 2.0 + 3 + 1
        expect.append(half + k * (k * 2.0))
    assert out.tolist() == expect


@pytest.mark.parametrize("k", ALL, ids=lambda k: k.__name__ if hasattr(k, "__name__") else str(k))
@pytest.mark.parametrize("backend", ["cpu", "cuda", "opencl", "metal"])
def test_sources_emit_for_every_backend(k, backend):
    text = k.source(backend)
    assert text.strip()


@pytest.mark.parametrize("k", ALL, ids=lambda k: k.__name__ if hasattr(k, "__name__") else str(k))
def test_cuda_sources_compile_with_nvrtc(k):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realworld"))
    from realworld_helpers import nvrtc_compile
    ok, log = nvrtc_compile(k.source("cuda"))
    assert ok, log


def test_metal_sources_run_through_the_shim():
    runner = pytest.importorskip("runner")
    if not (shutil.which("clang++") or shutil.which("g++")):
        pytest.skip("the Metal shim needs clang++ or g++")
    ones = np.ones(4, np.float32)
    out = np.zeros(4, np.float32)
    args = [ones, ones * 2, out, np.float32(0.5), *[np.int32(v) for v in range(1, 10)]]
    runner.run_msl(register.source("metal"), args, 4, None)
    assert out.tolist() == [3.5 + 45] * 4
    buf = np.zeros(3, np.float32)
    runner.run_msl(kernel.source("metal"), [buf, *[np.int32(v) for v in range(39)]], 3, None)
    assert buf.tolist() == [sum(range(39))] * 3
