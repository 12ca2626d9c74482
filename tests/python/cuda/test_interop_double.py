"""CUDA interop (``__cuda_array_interface__``, DLPack, graphs, device-to-device copies) against the
driver test double, each case in a fresh interpreter whose runtime loads the double; and DLPack on
cpu:0 in process (numpy shares the buffer's memory)."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from cuda_helpers import built_file
from test_cuda_availability import _plugin_folder

import dotcompute as dc

# Runs in the child: the double is opened first (the same file the plugin then opens through
# DOTCOMPUTE_CUDA_DRIVER, so both share its state) and told how many devices to report.
PRELUDE = textwrap.dedent("""
    import ctypes, json, os, numpy as np
    lib = ctypes.CDLL(os.environ["DOTCOMPUTE_CUDA_DRIVER"])
    lib.double_set_device_count(int(os.environ["TEST_DEVICES"]))
    lib.double_op_log.restype = ctypes.c_char_p
    lib.double_stream_id.restype = ctypes.c_uint64
    lib.double_stream_id.argtypes = [ctypes.c_void_p]
    lib.double_launch_log.restype = ctypes.c_void_p
    def ops():
        return lib.double_op_log().decode().splitlines()
    def launches():
        n = ctypes.c_int(0)
        lib.double_launch_log(ctypes.byref(n))
        return n.value
    import dotcompute as dc, dotcompute.cuda
    has_nvrtc = dotcompute.cuda.export_nvrtc_path() is not None
    acc = dc.accelerator("cuda:0")
""")


def _run(run_python, tmp_path, body: str, devices: int = 1) -> dict:
    double = built_file("libcuda_double.so", "tests/cuda_driver_double")
    if double is None:
        pytest.skip("the driver double is not built (build the CMake target cuda_double: tests/cuda_driver_double)")
    env = {"DOTCOMPUTE_PLUGIN_DIR": str(_plugin_folder(tmp_path, [])), "DOTCOMPUTE_CUDA_DRIVER": str(double),
           "TEST_DEVICES": str(devices)}
    done = run_python(PRELUDE + textwrap.dedent(body), env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cuda_array_interface_describes_the_device_memory(run_python, tmp_path):
    out = _run(run_python, tmp_path, """
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        buf = acc.asarray(x)
        cai = buf.__cuda_array_interface__
        ptr, read_only = cai["data"]
        # The double's device memory is host memory: read the 12 floats at the reported address.
        seen = np.ctypeslib.as_array((ctypes.c_float * 12).from_address(ptr)).reshape(3, 4)
        cpu = dc.accelerator("cpu").zeros(3)
        print(json.dumps({"devices": [d.id for d in dc.devices()], "shape": list(cai["shape"]),
                          "typestr": cai["typestr"], "version": cai["version"], "strides": cai["strides"],
                          "read_only": read_only, "same": bool((seen == x).all()),
                          "stream_id": lib.double_stream_id(cai["stream"]) if cai["stream"] != 1 else 0,
                          "cpu_has_cai": hasattr(cpu, "__cuda_array_interface__"),
                          "i32": acc.zeros(5, np.int32).__cuda_array_interface__["typestr"]}))
    """)
    assert "cuda:0" in out["devices"]
    assert out["shape"] == [3, 4] and out["typestr"] == "<f4" and out["i32"] == "<i4"
    assert out["version"] == 3 and out["strides"] is None and out["read_only"] is False
    assert out["same"]  # the pointer is the buffer's device memory, holding its data
    assert out["stream_id"] > 0  # the buffer's own (non-default) stream, as a CUstream the driver knows
    assert out["cpu_has_cai"] is False


def test_dlpack_on_cuda_waits_on_the_consumer_stream(run_python, tmp_path):
    out = _run(run_python, tmp_path, """
        buf = acc.asarray(np.arange(8, dtype=np.int32))
        producer = lib.double_stream_id(buf.__cuda_array_interface__["stream"])
        before = len(ops())
        cap = buf.__dlpack__()            # None: the consumer uses the legacy default stream
        after_default = ops()[before:]
        n = len(ops())
        buf.__dlpack__(stream=-1)          # -1: the consumer wants no synchronisation
        after_none = ops()[n:]
        api = ctypes.pythonapi
        api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        p = api.PyCapsule_GetPointer(cap, b"dltensor")
        data = ctypes.c_void_p.from_address(p).value
        dev_type, dev_id = (ctypes.c_int32 * 2).from_address(p + 8)
        try:
            buf.__dlpack__(stream=0)
            zero = "accepted"
        except BufferError as e:
            zero = str(e)
        print(json.dumps({"device": list(buf.__dlpack_device__()), "producer": producer,
                          "after_default": after_default, "after_none": after_none,
                          "valid": api.PyCapsule_IsValid(cap, b"dltensor"), "data_ok": data == buf._native.device_ptr(),
                          "dl_device": [dev_type, dev_id], "zero": zero}))
    """)
    assert out["device"] == [2, 0]
    assert out["valid"] == 1 and out["data_ok"] and out["dl_device"] == [2, 0]
    records = [line for line in out["after_default"] if line.startswith("record event=")]
    assert len(records) == 1 and f"stream={out['producer']}" in records[0]
    event = records[0].split()[1].split("=")[1]
    assert f"wait stream=0 event={event}" in out["after_default"]  # on the device: no host sync
    assert not any(line.startswith(("record", "wait", "sync")) for line in out["after_none"])
    assert "ambiguous" in out["zero"]


def test_graph_capture_records_launches_and_replays_them(run_python, tmp_path):
    out = _run(run_python, tmp_path, """
        k = dc.RawKernel('extern "C" __global__ void scale(float* o, long long n) '
                         '{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) o[i] *= 2; }',
                         "scale", backend="cuda")
        res = {"has_nvrtc": has_nvrtc}
        if has_nvrtc:
            buf = acc.zeros(1000, np.float32)
            acc.launch(k, 1000, buf, np.int64(1000))   # compiles and loads outside the capture
            acc.synchronize()
            base = launches()
            with acc.graph() as g:
                for _ in range(3):
                    acc.launch(k, 1000, buf, np.int64(1000))
                dc.launch(k, 1000, buf, np.int64(1000))   # the free function follows the capture too
            res["during"] = launches() - base
            from dotcompute.runtime.cuda_interop import cuda_extension
            capture = lib.double_stream_id(cuda_extension().stream_native(g.stream))
            res["end"] = [line for line in ops() if line.startswith(f"end capture stream={capture}")]
            g.launch()
            res["one"] = launches() - base
            g.launch(acc.default_stream)
            res["two"] = launches() - base
            res["replays"] = [line for line in ops() if line.startswith("graph launch")]
            res["capture"] = capture
            buf.numpy()                              # the buffer is ordered on the capture stream
        try:
            dc.accelerator("cpu").graph()
            res["cpu"] = "no error"
        except dc.BackendUnavailableError as e:
            res["cpu"] = str(e)
        print(json.dumps(res))
    """)
    assert "cpu" in out["cpu"] and "CUDA" in out["cpu"]
    if not out["has_nvrtc"]:
        pytest.skip("NVRTC not installed: no kernel to capture")
    assert out["during"] == 0  # captured, not run
    assert out["end"] == [f"end capture stream={out['capture']} ops=4"]
    assert out["one"] == 4 and out["two"] == 8
    assert out["replays"][0] == f"graph launch stream={out['capture']} ops=4"
    assert out["replays"][1].endswith("ops=4") and out["replays"][1] != out["replays"][0]


def test_copy_between_cuda_devices_peer_and_staged(run_python, tmp_path):
    out = _run(run_python, tmp_path, """
        a1, a2 = dc.accelerator("cuda:1"), dc.accelerator("cuda:2")
        x = np.arange(256, dtype=np.float64)
        src = acc.asarray(x)
        n = len(ops())
        peer = src.copy_to_device(a1)     # devices 0 and 1 are peers in the double
        peer_ops = ops()[n:]
        n = len(ops())
        staged = src.copy_to_device(a2)   # device 2 is not: through pinned host memory
        staged_ops = ops()[n:]
        print(json.dumps({"devices": [d.id for d in dc.devices()], "dl1": list(peer.__dlpack_device__()),
                          "peer": bool((peer.numpy() == x).all()), "staged": bool((staged.numpy() == x).all()),
                          "peer_ops": peer_ops, "staged_ops": staged_ops}))
    """, devices=3)
    assert {"cuda:0", "cuda:1", "cuda:2"} <= set(out["devices"])
    assert out["dl1"] == [2, 1]
    assert out["peer"] and out["staged"]
    assert any(line.startswith("peer enable 1->0") or line.startswith("peer enable 0->1") for line in out["peer_ops"])
    assert any(line.startswith("peer 0->1") and "bytes=2048" in line for line in out["peer_ops"])
    assert not any(line.startswith("peer ") and "->" in line for line in out["staged_ops"])
    assert any(line.startswith("dtoh") and "bytes=2048" in line for line in out["staged_ops"])
    assert any(line.startswith("htod") and "bytes=2048" in line for line in out["staged_ops"])


def test_module_globals_through_the_plugin(run_python, tmp_path):
    # RawKernel.globals on the real CUDA plugin (cuda_ext.h module_global -> cuModuleGetGlobal_v2):
    # the double gives each variable of the CUBIN its own device memory, sized from the ELF symbol
    out = _run(run_python, tmp_path, """
        src = ('__constant__ float c_taps[17];\\n__device__ int d_count;\\n'
               'extern "C" __global__ void k(float* o) { o[threadIdx.x] = c_taps[threadIdx.x] + d_count; }')
        res = {"has_nvrtc": has_nvrtc}
        if has_nvrtc:
            k = dc.RawKernel(src, "k", backend="cuda")
            taps = k.globals["c_taps"]
            res["taps"] = [str(taps.dtype), list(taps.shape)]
            taps.copy_from(np.arange(17, dtype=np.float32))
            res["back"] = taps.numpy().tolist()
            count = k.globals.get("d_count", dtype=np.int32, shape=(1,), accelerator=acc)
            res["count0"] = count.numpy().tolist()  # module memory starts zeroed
            count.copy_from(np.array([7], np.int32))
            res["count"] = k.globals["d_count"].numpy().tolist()  # the same memory, looked up again
            for name, kwargs in (("nope", {}), ("c_taps", {"dtype": np.float32, "shape": (18,)})):
                try:
                    k.globals.get(name, **kwargs)
                except (KeyError, ValueError) as e:
                    res[name] = [type(e).__name__, str(e)]
        print(json.dumps(res))
    """)
    if not out["has_nvrtc"]:
        pytest.skip("NVRTC not installed: no kernel to load")
    assert out["taps"] == ["float32", [17]]
    assert out["back"] == list(range(17))
    assert out["count0"] == [0] and out["count"] == [7]
    assert out["nope"][0] == "KeyError" and "nope" in out["nope"][1]
    assert out["c_taps"][0] == "ValueError" and "68 bytes" in out["c_taps"][1]


def test_numpy_from_dlpack_shares_a_cpu_buffer():
    acc = dc.accelerator("cpu")
    buf = acc.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert buf.__dlpack_device__() == (1, 0)
    view = np.from_dlpack(buf)
    assert view.shape == (2, 3) and view.dtype == np.float32
    view[0, 0] = 42.0  # written through numpy, read through the buffer
    assert buf.numpy()[0, 0] == 42.0
    with buf.host() as h:  # written through the buffer, read through numpy
        h[1, 2] = -1.0
    assert view[1, 2] == -1.0
    assert not hasattr(buf, "__cuda_array_interface__")
    with pytest.raises(BufferError, match="takes no stream"):
        buf.__dlpack__(stream=5)


def test_dlpack_capsules_release_their_buffer():
    import sys

    buf = dc.accelerator("cpu").zeros(4, np.int64)
    before = sys.getrefcount(buf)
    capsule = buf.__dlpack__()  # the capsule holds the buffer; never consumed: its destructor lets go
    assert sys.getrefcount(buf) == before + 1
    del capsule
    assert sys.getrefcount(buf) == before
    view = np.from_dlpack(buf)  # consumed: numpy calls the deleter when the array goes
    assert sys.getrefcount(buf) == before + 1
    del view
    assert sys.getrefcount(buf) == before
