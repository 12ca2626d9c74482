"""Every reduction over every integer dtype, at sizes around the vector widths, against numpy, under
both host compilers the CPU backend may use.

GCC 12's -O3 loop vectoriser miscompiled the wrapping int64 adds the CPU emitter used to write through
uint64 casts: ``int(dc.sum(b * 1))`` of 4,096 int8 ones was 2,048 on cpu:0. The generated code no
longer uses that pattern (lang/emit/helpers.py); this guards it with each compiler, in a fresh process
per compiler (the CPU backend reads DOTCOMPUTE_CXX once, when it starts). Each (operation, dtype) is
one kernel; the sizes are only arguments.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import dotcompute as dc

INT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
SIZES = (1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 4095, 4096, 4097, 100000)

# Runs in the child: compares each reduction with numpy and prints the mismatches as JSON.
_CHILD = r"""
import json, numpy as np, dotcompute as dc
acc = dc.accelerator("cpu")
dtypes, sizes = json.loads(%r)
rng = np.random.default_rng(20261128)
bad = []

def check(what, dt, n, got, want):
    got, want = np.asarray(got), np.asarray(want)
    ok = got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    if not ok:
        bad.append([what, dt, n, str(got.ravel()[:4]), str(got.dtype), str(want.ravel()[:4]), str(want.dtype)])

for dt in dtypes:
    info = np.iinfo(dt)
    for n in sizes:
        ones = np.ones(n, dt)
        # small values (sums exact), the full range (sums and products wrap, as numpy's do),
        # and a short tail of the extremes where min/max/argmin/argmax must pick the first
        small = rng.integers(0 if info.min == 0 else -3, 4, n).astype(dt)
        wide = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        for label, x in (("ones", ones), ("small", small), ("wide", wide)):
            b = acc.asarray(x)
            check(f"sum/{label}", dt, n, dc.sum(b), np.sum(x))
            check(f"sum(b*1)/{label}", dt, n, dc.sum(b * 1), np.sum(x * 1))
            check(f"prod/{label}", dt, n, dc.prod(b), np.prod(x))
            check(f"min/{label}", dt, n, dc.min(b), np.min(x))
            check(f"max/{label}", dt, n, dc.max(b), np.max(x))
            check(f"argmin/{label}", dt, n, dc.argmin(b), np.argmin(x))
            check(f"argmax/{label}", dt, n, dc.argmax(b), np.argmax(x))
            check(f"cumsum/{label}", dt, n, dc.cumsum(b), np.cumsum(x))
            if label != "wide":  # the mean of a wrapped sum is no one's mean; numpy's is float64 too
                check(f"mean/{label}", dt, n, dc.mean(b), np.mean(x))
                check(f"mean(b*1)/{label}", dt, n, dc.mean(b * 1), np.mean(x * 1))
print("RESULT " + json.dumps(bad))
"""


def _compilers() -> list:
    out = []
    for cxx in ("g++", "clang++"):
        marks = [] if shutil.which(cxx) else [pytest.mark.skip(reason=f"{cxx} is not installed")]
        out.append(pytest.param(cxx, marks=marks, id=cxx))
    return out


@pytest.mark.parametrize("dtypes", [INT_DTYPES[:4], INT_DTYPES[4:]], ids=["8-16bit", "32-64bit"])
@pytest.mark.parametrize("cxx", _compilers())
def test_integer_reductions_match_numpy(cxx: str, dtypes: tuple[str, ...], run_python, tmp_cache) -> None:
    code = _CHILD % json.dumps([list(dtypes), list(SIZES)])
    r = run_python(code, env={"DOTCOMPUTE_CXX": cxx}, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, r.stdout[-2000:] + r.stderr[-2000:]
    bad = json.loads(line[-1][len("RESULT "):])
    assert bad == [], f"{len(bad)} mismatches with {cxx}, first: {bad[:5]}"


def test_the_reported_case_in_process(cpu) -> None:
    """The issue's reproducer, with whatever compiler this process uses."""
    for dt in (np.int8, np.int16, np.int32):
        b = cpu.asarray(np.ones(4096, dt))
        assert int(np.asarray(dc.sum(b * 1))) == 4096
        assert int(np.asarray(dc.sum(cpu.asarray(np.ones(100000, dt)) * 1))) == 100000
