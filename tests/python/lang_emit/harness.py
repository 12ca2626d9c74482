"""Compile and run emitted sources with the real tools, independent of the runtime.

* CPU: g++ (or $CXX) with the CPU backend's flags, loaded with ctypes and called
  through the ABI of cpu_kernel_abi.h (a serial stand-in for the thread pool).
* CUDA: NVRTC from the nvidia-cuda-nvrtc wheel, through ctypes.
* OpenCL: the ICD loader (PoCL here), through ctypes; builds and runs.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
INCLUDE = ROOT / "cpp" / "include"
CPU_FLAGS = ["-O3", "-std=c++17", "-fPIC", "-shared", "-march=native", "-fno-math-errno",
             "-fno-trapping-math", "-fopenmp-simd", "-Wall", "-Wextra", "-Werror"]
_BUILD = Path(tempfile.gettempdir()) / f"dc_emit_tests_{os.getuid()}"


def cxx() -> str | None:
    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")


def compile_cpu(text: str, extra: list[str] | None = None) -> Path:
    """Build a shared object; raise with the compiler's output on any error or warning."""
    _BUILD.mkdir(exist_ok=True)
    flags = CPU_FLAGS + (extra or [])
    key = hashlib.sha256((text + " ".join(flags)).encode()).hexdigest()[:20]
    so = _BUILD / f"k_{key}.so"
    if so.exists():
        return so
    src = _BUILD / f"k_{key}.cpp"
    src.write_text(text)
    r = subprocess.run([cxx(), *flags, f"-I{INCLUDE}", str(src), "-o", str(so)], capture_output=True,
                       text=True)
    if r.returncode != 0 or r.stderr.strip():
        raise AssertionError(f"C++ compile failed:\n{r.stderr}\n--- source ---\n{text}")
    return so


class _Launch(ctypes.Structure):
    _fields_ = [("dims", ctypes.c_uint32), ("global_size", ctypes.c_uint64 * 3),
                ("local_size", ctypes.c_uint64 * 3), ("num_groups", ctypes.c_uint64 * 3),
                ("args", ctypes.POINTER(ctypes.c_void_p)), ("nargs", ctypes.c_uint32)]


def _expand(emitted, args: list) -> list:
    """Values of the expanded parameters for ``args`` (numpy arrays and numpy scalars)."""
    vals: list = []
    it = iter(args)
    current = None
    for p in emitted.params:
        if p.kind == "buffer":
            current = next(it)
            vals.append(current)
        elif p.kind == "extent":
            vals.append(np.int64(current.shape[p.dim]))
        elif p.kind == "scalar":
            vals.append(np.dtype(p.dtype.name).type(next(it)))
        elif p.kind == "debug":
            vals.append(next(it))
    return vals


def run_cpu(emitted, global_size, local_size, args: list) -> None:
    """Run every group in one call, as the thread pool would in one chunk."""
    lib = ctypes.CDLL(str(compile_cpu(emitted.text)))
    fn = getattr(lib, emitted.entry)
    fn.argtypes = [ctypes.POINTER(_Launch), ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p]
    g = tuple(global_size) + (1,) * (3 - len(global_size))
    loc = tuple(local_size) + (1,) * (3 - len(local_size))
    ng = [-(-g[d] // loc[d]) for d in range(3)]
    keep = []
    ptrs = (ctypes.c_void_p * max(1, len(emitted.params)))()
    for i, v in enumerate(_expand(emitted, args)):
        if isinstance(v, np.ndarray):
            holder = ctypes.c_void_p(v.ctypes.data)
        else:
            holder = ctypes.create_string_buffer(v.tobytes(), len(v.tobytes()))
        keep.append(holder)
        ptrs[i] = ctypes.cast(ctypes.byref(holder), ctypes.c_void_p)
    launch = _Launch(len(global_size), (ctypes.c_uint64 * 3)(*g), (ctypes.c_uint64 * 3)(*loc),
                     (ctypes.c_uint64 * 3)(*ng), ctypes.cast(ptrs, ctypes.POINTER(ctypes.c_void_p)),
                     len(emitted.params))
    fn(ctypes.byref(launch), 0, ng[0] * ng[1] * ng[2], None)


# ---------------------------------------------------------------------------------------------- NVRTC

def nvrtc_lib() -> ctypes.CDLL | None:
    try:
        import nvidia.cuda_nvrtc as m
    except ImportError:
        return None
    for base in m.__path__:
        for so in sorted(glob.glob(os.path.join(base, "lib", "libnvrtc.so*"))):
            if "builtins" in so or ".alt." in so:
                continue
            return ctypes.CDLL(so)
    return None


def nvrtc_compile(text: str, name: str, arch: str = "sm_80") -> tuple[bool, str]:
    lib = nvrtc_lib()
    assert lib is not None
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), f"{name}.cu".encode(), 0, None, None)
    assert rc == 0, rc
    opts = [f"--gpu-architecture={arch}".encode(), b"--std=c++17"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value + 1)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc == 0, log.value.decode(errors="replace")


# ---------------------------------------------------------------------------------------------- OpenCL

class OpenCL:
    """Just enough OpenCL through ctypes to build and run one kernel on the first device."""

    def __init__(self) -> None:
        self.cl = ctypes.CDLL("libOpenCL.so.1")
        cl = self.cl
        cl.clCreateContext.restype = ctypes.c_void_p
        cl.clCreateCommandQueue.restype = ctypes.c_void_p
        cl.clCreateProgramWithSource.restype = ctypes.c_void_p
        cl.clCreateKernel.restype = ctypes.c_void_p
        cl.clCreateBuffer.restype = ctypes.c_void_p
        cl.clCreateCommandQueue.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                            ctypes.POINTER(ctypes.c_int)]
        cl.clCreateBuffer.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p,
                                      ctypes.POINTER(ctypes.c_int)]
        cl.clCreateKernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        cl.clSetKernelArg.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p]
        cl.clBuildProgram.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_char_p,
                                      ctypes.c_void_p, ctypes.c_void_p]
        cl.clGetProgramBuildInfo.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t,
                                             ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        cl.clEnqueueNDRangeKernel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                                              ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                                              ctypes.c_void_p]
        cl.clEnqueueReadBuffer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t,
                                           ctypes.c_size_t, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                                           ctypes.c_void_p]
        cl.clCreateProgramWithSource.argtypes = [ctypes.c_void_p, ctypes.c_uint,
                                                 ctypes.POINTER(ctypes.c_char_p),
                                                 ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
        cl.clFinish.argtypes = [ctypes.c_void_p]
        plat = ctypes.c_void_p()
        n = ctypes.c_uint()
        if cl.clGetPlatformIDs(1, ctypes.byref(plat), ctypes.byref(n)) != 0 or n.value == 0:
            raise OSError("no OpenCL platform")
        self.dev = ctypes.c_void_p()
        if cl.clGetDeviceIDs(plat, ctypes.c_uint64(0xFFFFFFFF), 1, ctypes.byref(self.dev), ctypes.byref(n)):
            raise OSError("no OpenCL device")
        err = ctypes.c_int()
        self.ctx = cl.clCreateContext(None, 1, ctypes.byref(self.dev), None, None, ctypes.byref(err))
        assert err.value == 0, err.value
        self.queue = cl.clCreateCommandQueue(self.ctx, self.dev, 0, ctypes.byref(err))
        assert err.value == 0, err.value

    def build(self, text: str) -> tuple[int | None, str]:
        cl = self.cl
        err = ctypes.c_int()
        src = ctypes.c_char_p(text.encode())
        prog = cl.clCreateProgramWithSource(self.ctx, 1, ctypes.byref(src), None, ctypes.byref(err))
        rc = cl.clBuildProgram(prog, 1, ctypes.byref(self.dev), b"-cl-std=CL1.2 -Werror", None, None)
        size = ctypes.c_size_t()
        cl.clGetProgramBuildInfo(prog, self.dev, 0x1183, 0, None, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value + 1)
        cl.clGetProgramBuildInfo(prog, self.dev, 0x1183, size.value, log, None)
        return (prog if rc == 0 else None), log.value.decode(errors="replace")

    def run(self, emitted, global_size, local_size, args: list) -> None:
        cl = self.cl
        prog, log = self.build(emitted.text)
        assert prog is not None, log
        err = ctypes.c_int()
        kern = cl.clCreateKernel(prog, emitted.entry.encode(), ctypes.byref(err))
        assert err.value == 0, err.value
        vals = _expand(emitted, args)
        g = list(global_size) + [1] * (3 - len(global_size))
        vals += [np.int64(x) for x in g] if emitted.global_size_params else []
        # the entry reads its ids in hardware order (contiguous dimension first)
        hw_g, hw_l = emitted.hardware_sizes(tuple(global_size), tuple(local_size))
        g = list(hw_g) + [1] * (3 - len(hw_g))
        loc = list(hw_l) + [1] * (3 - len(hw_l))
        bufs = []
        for i, v in enumerate(vals):
            if isinstance(v, np.ndarray):
                mem = cl.clCreateBuffer(self.ctx, 1 | 32, max(v.nbytes, 1), v.ctypes.data, ctypes.byref(err))
                assert err.value == 0, err.value
                bufs.append((mem, v))
                h = ctypes.c_void_p(mem)
                assert cl.clSetKernelArg(kern, i, ctypes.sizeof(h), ctypes.byref(h)) == 0
            else:
                if v.dtype == np.bool_:
                    v = np.uint8(v)
                data = ctypes.create_string_buffer(v.tobytes(), v.nbytes)
                assert cl.clSetKernelArg(kern, i, v.nbytes, data) == 0, i
        rounded = [-(-g[d] // loc[d]) * loc[d] for d in range(3)]
        gs = (ctypes.c_size_t * 3)(*rounded)
        ls = (ctypes.c_size_t * 3)(*loc)
        rc = cl.clEnqueueNDRangeKernel(self.queue, kern, 3, None, gs, ls, 0, None, None)
        assert rc == 0, rc
        for mem, v in bufs:
            assert cl.clEnqueueReadBuffer(self.queue, mem, 1, 0, v.nbytes, v.ctypes.data, 0, None, None) == 0
        cl.clFinish(self.queue)


_OPENCL: list = []


def opencl() -> OpenCL | None:
    if not _OPENCL:
        try:
            _OPENCL.append(OpenCL())
        except OSError:
            _OPENCL.append(None)
    return _OPENCL[0]
