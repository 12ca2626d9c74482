"""dotcompute.cuda.compile: NVRTC to CUBIN or PTX with no GPU and no driver."""

from __future__ import annotations

import pytest

import dotcompute as dc

VADD = """
extern "C" __global__ void vadd(const float* a, const float* b, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"""


def test_cubin_is_an_elf_image_for_the_requested_arch(nvrtc):
    sm90 = nvrtc.compile(VADD, arch="sm_90")
    assert isinstance(sm90, bytes) and sm90[:4] == b"\x7fELF"
    sm80 = nvrtc.compile(VADD, arch=80)
    assert sm80[:4] == b"\x7fELF"
    assert sm80 != sm90  # machine code for different SMs
    assert b"vadd" in sm90  # the entry point's symbol


def test_ptx_output_is_text_for_the_virtual_arch(nvrtc):
    ptx = nvrtc.compile(VADD, arch="sm_80", output="ptx").decode()
    assert ".target sm_80" in ptx
    assert ".entry vadd" in ptx
    assert not ptx.endswith("\0")


def test_compile_error_carries_nvrtc_log_with_the_line(nvrtc):
    bad = 'extern "C" __global__ void k(float* o) {\n    o[0] = 1.0f;\n    o[1] = not_declared;\n}\n'
    with pytest.raises(dc.CompilationError) as info:
        nvrtc.compile(bad, arch="sm_90", name="mine.cu")
    err = info.value
    assert "mine.cu(3)" in err.log and "not_declared" in err.log
    assert err.source == bad
    assert "mine.cu(3)" in str(err) and "sm_90" in str(err)


def test_options_reach_nvrtc(nvrtc):
    src = 'extern "C" __global__ void k(int* o) { o[0] = SCALE; }'
    with pytest.raises(dc.CompilationError):
        nvrtc.compile(src)
    assert nvrtc.compile(src, options=["-DSCALE=3"])[:4] == b"\x7fELF"


def test_bad_arguments_are_refused_before_compiling(nvrtc):
    with pytest.raises(ValueError, match="sm_90"):
        nvrtc.compile(VADD, arch="ampere")
    with pytest.raises(ValueError, match="real architecture"):
        nvrtc.compile(VADD, arch="compute_90", output="cubin")
    with pytest.raises(ValueError, match="output"):
        nvrtc.compile(VADD, output="sass")
    with pytest.raises(TypeError, match="CUDA C\\+\\+ source text or a dc.kernel"):
        nvrtc.compile(42)


def test_missing_nvrtc_says_how_to_install_it(monkeypatch):
    import dotcompute.cuda as dcuda

    monkeypatch.setenv("DOTCOMPUTE_NVRTC", "/nonexistent/libnvrtc.so.12")
    with pytest.raises(dc.BackendUnavailableError) as info:
        dcuda.compile(VADD)
    assert "pip install dotcompute[cuda]" in str(info.value)
    assert "/nonexistent/libnvrtc.so.12" in info.value.reason
    assert dcuda.nvrtc_library_path() is None


def test_export_sets_the_variable_for_the_native_plugin(nvrtc, monkeypatch):
    monkeypatch.delenv("DOTCOMPUTE_NVRTC", raising=False)
    path = nvrtc.export_nvrtc_path()
    import os

    assert path and os.path.exists(path)
    assert os.environ["DOTCOMPUTE_NVRTC"] == path
    # An explicit setting is never overridden.
    monkeypatch.setenv("DOTCOMPUTE_NVRTC", "/opt/mine/libnvrtc.so")
    assert nvrtc.export_nvrtc_path() == "/opt/mine/libnvrtc.so"


def test_compiles_a_kernel_language_kernel(nvrtc):
    if not hasattr(dc, "kernel") or not hasattr(dc, "Buffer"):
        pytest.skip("the kernel language is not available in this checkout")

    @dc.kernel
    def vadd(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = a[i] + b[i]

    cubin = nvrtc.compile(vadd, arch="sm_90")
    assert cubin[:4] == b"\x7fELF"
    ptx = nvrtc.compile(vadd, arch="sm_80", output="ptx").decode()
    assert ".entry vadd" in ptx  # entry names start with the kernel's name
