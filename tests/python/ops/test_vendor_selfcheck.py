"""Vendor libraries check themselves (ops/selfcheck.py): a broken CLBlast/clFFT (fake_vendor.c, built
here with the system compiler: success statuses, wrong numbers) is caught at its first use, switched
off with a DotComputeWarning naming library, routine, device and error, and the portable kernels give
the right answer; the verdict is reused by the next process; the real CLBlast/clFFT pass with no
warning. Also the leases of vendor plans (ops/vendor.py). Each scenario runs in a fresh interpreter:
the library file is chosen, and the verdicts made, once per process."""

from __future__ import annotations

import ctypes.util
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.ops import clblast, clfft, selfcheck, vendor

HERE = Path(__file__).parent


def _opencl() -> dc.Accelerator:
    accs = [a for a in dc.devices() if a.backend == "opencl"]
    if not accs:
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    return accs[0]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One kernel cache for the module's processes: the portable kernels compile once."""
    path = tmp_path_factory.mktemp("selfcheck-cache")
    path.chmod(0o700)
    return path


@pytest.fixture(scope="module")
def fake_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)
    if compiler is None:
        pytest.skip("no C compiler (cc, gcc or clang) to build the fake vendor library")
    out = tmp_path_factory.mktemp("fake-vendor") / "libfakevendor.so"
    built = subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(out), str(HERE / "fake_vendor.c"), "-ldl"],
                           capture_output=True, text=True, timeout=120)
    if built.returncode != 0:
        pytest.skip(f"the fake vendor library did not build with {compiler}: {built.stderr[-500:]}")
    return out


# Runs in a child: a float32 matmul and a complex64 FFT on opencl:0 with the vendor path preferred;
# prints what the parent checks as JSON (warnings, the paths in the profile, the errors against
# numpy, the fake's call count, whether a self-check ran: its DEBUG line).
CHILD = r"""
import ctypes, json, logging, os, sys, warnings
import numpy as np
import dotcompute as dc
from dotcompute.ops import dispatch

ran = []
class Seen(logging.Handler):
    def emit(self, record):
        if "self-check on" in record.getMessage():
            ran.append(record.getMessage())
log = logging.getLogger("dotcompute.ops")
log.setLevel(logging.DEBUG)
log.addHandler(Seen())
acc = [a for a in dc.devices() if a.backend == "opencl"][0]
rng = np.random.default_rng(5)
a = rng.standard_normal((9, 6)).astype(np.float32)
b = rng.standard_normal((6, 4)).astype(np.float32)
# (3, 12): the shape of the FFT check's own problem, so clFFT reuses that plan (no second compile)
x = (rng.standard_normal((3, 12)) + 1j * rng.standard_normal((3, 12))).astype(np.complex64)
with warnings.catch_warnings(record=True) as caught, dispatch.prefer("vendor"), dc.profile() as prof:
    warnings.simplefilter("always")
    got_mm = dc.matmul(acc.asarray(a), acc.asarray(b)).numpy()
    got_fft = dc.fft.fft(acc.asarray(x)).numpy()
fake = os.environ.get("DOTCOMPUTE_CLBLAST_LIBRARY")
print(json.dumps({
    "warnings": [f"{w.category.__name__}: {w.message}" for w in caught
                 if issubclass(w.category, dc.DotComputeWarning)],
    "paths": [[n.attrs["operation"], n.attrs["path"], n.attrs.get("library")] for n in prof.notes
              if n.kind == "operation"],
    "mm_error": float(np.max(np.abs(got_mm - a @ b))),
    "fft_error": float(np.max(np.abs(got_fft - np.fft.fft(x)))),
    "fake_calls": ctypes.c_int.in_dll(ctypes.CDLL(fake), "fake_calls").value if fake else None,
    "checks_run": ran,
}))
"""


def _child(run_python, env: dict[str, str]) -> dict:
    # PoCL's binary cache is this session's (dotcompute points it into the kernel cache it opened):
    # the fresh DOTCOMPUTE_CACHE_DIR is for the verdicts under test, and would otherwise make the
    # child rebuild CLBlast's and clFFT's kernels from source (a minute on 2 cores)
    if "POCL_CACHE_DIR" in os.environ:  # as the user's own setting (no marker): left alone
        env = {"POCL_CACHE_DIR": os.environ["POCL_CACHE_DIR"], "DOTCOMPUTE_SET_POCL_CACHE_DIR": "", **env}
    done = run_python(CHILD, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_broken_library_is_caught_switched_off_and_remembered(run_python, fake_library, cache_dir):
    _opencl()
    env = {"DOTCOMPUTE_CACHE_DIR": str(cache_dir), "DOTCOMPUTE_CLBLAST_LIBRARY": str(fake_library),
           "DOTCOMPUTE_CLFFT_LIBRARY": str(fake_library), "DOTCOMPUTE_VENDOR_SELFCHECK": "1"}
    first = _child(run_python, env)
    # the check called the fake (two GEMMs, a forward and an inverse FFT) and found it wrong
    assert first["fake_calls"] == 4 and len(first["checks_run"]) == 2
    assert all("FAILED" in line for line in first["checks_run"])
    assert len(first["warnings"]) == 2, first["warnings"]
    blas, fft = first["warnings"]
    for text, lib, routine in ((blas, "CLBlast", "gemm (float32)"), (fft, "clFFT", "c2c 1-D FFT (complex64)")):
        assert text.startswith("DotComputeWarning: ") and f"{lib} {routine} on opencl:0" in text
        assert "its self-check found a largest error of" in text and "the portable kernels run instead" in text
    # "how far off": C filled with 0.5 against a real product, an FFT that copied its input
    error = float(blas.split("largest error of ")[1].split()[0])
    assert error > 0.1
    # the answers are right: the portable kernels computed them
    assert first["mm_error"] < 1e-4 and first["fft_error"] < 1e-4
    assert ["matmul", "vendor", "clblast"] in first["paths"] and ["matmul", "portable", None] in first["paths"]
    assert ["fft.fft", "portable", None] in first["paths"]

    # a second process reads the cached verdict: the fake is never called, the same warning is given
    second = _child(run_python, env)
    assert second["fake_calls"] == 0 and second["checks_run"] == []
    assert len(second["warnings"]) == 2 and all("an earlier process found" in w for w in second["warnings"])
    assert "CLBlast gemm (float32) on opencl:0" in second["warnings"][0]
    assert second["mm_error"] < 1e-4 and second["fft_error"] < 1e-4

    # the documented switch skips the check (and the verdict): the broken library's numbers come out
    off = _child(run_python, {**env, "DOTCOMPUTE_VENDOR_SELFCHECK": "0"})
    assert off["warnings"] == [] and off["checks_run"] == [] and off["fake_calls"] == 2
    assert off["mm_error"] > 0.1


def test_the_real_libraries_pass_with_no_warning_and_the_verdict_is_reused(run_python, cache_dir):
    _opencl()
    if clblast.library() is None or clfft.library() is None:
        pytest.skip("CLBlast or clFFT is not installed (Debian: libclblast1, libclfft2)")
    env = {"DOTCOMPUTE_CACHE_DIR": str(cache_dir), "DOTCOMPUTE_VENDOR_SELFCHECK": "1"}
    first = _child(run_python, env)
    assert first["warnings"] == []
    assert len(first["checks_run"]) == 2 and all("passed" in line for line in first["checks_run"])
    assert [p[1:] for p in first["paths"]] == [["vendor", "clblast"], ["vendor", "clfft"]]
    assert first["mm_error"] < 1e-4 and first["fft_error"] < 1e-4
    verdicts = json.loads((cache_dir / "vendor" / "selfcheck.json").read_text())["verdicts"]
    assert any(k.startswith("clblast|gemm|<f4|") and v["ok"] for k, v in verdicts.items())
    assert any(k.startswith("clfft|c2c 1-D FFT|<c8|") and v["ok"] for k, v in verdicts.items())
    second = _child(run_python, env)
    assert second["checks_run"] == [] and second["warnings"] == []  # cached: no check
    assert [p[1:] for p in second["paths"]] == [["vendor", "clblast"], ["vendor", "clfft"]]


def test_verdict_files_others_can_write_are_not_trusted(tmp_path):
    path = tmp_path / "selfcheck.json"
    path.write_text(json.dumps({"version": selfcheck.VERSION, "verdicts": {"k": {"ok": True, "error": 0.0,
                                                                                   "tolerance": 1e-4}}}))
    path.chmod(0o600)
    assert selfcheck._load(path, "k") == selfcheck.Verdict(True, 0.0, 1e-4, cached=True)  # noqa: SLF001
    path.chmod(0o666)  # a planted "good" verdict would switch a broken library's check off
    assert selfcheck._load(path, "k") is None  # noqa: SLF001
    path.unlink()
    os.mkfifo(path)  # never blocks
    assert selfcheck._load(path, "k") is None  # noqa: SLF001


def test_compare_measures_the_error_relative_to_the_result():
    p = np.array([[2.0, -4.0], [1.0, 0.5]], np.float32)
    assert selfcheck.compare(p, p, np.dtype(np.float32)).ok
    v = p.copy()
    v[0, 1] = -3.0
    verdict = selfcheck.compare(v, p, np.dtype(np.float32))
    assert not verdict.ok and verdict.error == pytest.approx(0.25)
    assert not selfcheck.compare(np.full((2, 2), np.nan), p, np.dtype(np.float32)).ok
    assert not selfcheck.compare(p[:1], p, np.dtype(np.float32)).ok  # wrong shape


class _Stream:
    """Records when the cache waits for a plan's stream (the real streams' synchronize has no trace)."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def synchronize(self) -> None:
        self.log.append("synchronize")


def test_a_leased_plan_outlives_its_eviction_and_waits_for_its_stream():
    log: list[str] = []
    cache = vendor.PlanCache(1, lambda plan: log.append(f"destroy {plan}"))
    stream = _Stream(log)
    with cache.lease("a", lambda: "plan-a", stream) as plan:
        assert plan == "plan-a" and cache.holders("a") == 1
        # another thread makes a second plan: "a" is evicted while held, and not destroyed
        done = threading.Event()
        threading.Thread(target=lambda: (cache.get("b", lambda: "plan-b"), done.set())).start()
        assert done.wait(30)
        assert log == [] and len(cache) == 1
    # the last holder let go: its stream is waited for, then the plan destroyed
    assert log == ["synchronize", "destroy plan-a"]
    with cache.lease("b", lambda: "unused", stream):
        cache.release()
        assert log == ["synchronize", "destroy plan-a"]  # held: released later
    assert log[-2:] == ["synchronize", "destroy plan-b"]


def test_clfft_plans_are_leased_on_the_default_queue():
    acc = _opencl()
    if clfft.library() is None:
        pytest.skip("clFFT is not installed (Debian: libclfft2)")
    x = (np.arange(8) + 1j).astype(np.complex64)
    b = acc.asarray(x)
    out = clfft.transform(b, (8,), False, 1.0)  # the transform let go of its lease when enqueued
    key = next(k for k in clfft._plans._plans if k[2] == (8,))  # noqa: SLF001
    assert clfft._plans.holders(key) == 0  # noqa: SLF001
    assert clfft._plans._plans[key].stream is acc._native.default_stream  # noqa: SLF001
    np.testing.assert_allclose(out.numpy(), np.fft.fft(x), rtol=1e-4, atol=1e-4)


def test_a_named_library_file_is_the_only_one_tried(monkeypatch, fake_library):
    declare = lambda lib: {"gemm": lib.CLBlastSgemmStridedBatched}  # noqa: E731
    monkeypatch.setenv("DOTCOMPUTE_TESTLIB_LIBRARY", str(fake_library))
    lib = vendor.VendorLibrary("testlib", lambda: ["libdoes-not-exist.so.9"], declare)
    assert lib.load() is not None
    # the identity names the file the loader really opened, with its size and modification time
    st = fake_library.stat()
    assert lib.identity() == f"{os.path.realpath(fake_library)}|{st.st_size}|{st.st_mtime_ns}"
    # a named file that does not load is "not installed": the usual candidates are not tried behind it
    monkeypatch.setenv("DOTCOMPUTE_TESTLIB_LIBRARY", str(fake_library.parent / "missing.so"))
    libc = ctypes.util.find_library("c") or "libc.so.6"
    assert vendor.VendorLibrary("testlib", lambda: [libc], lambda lib: {}).load() is None
