"""Metal kernels of public projects, read from their own files at test time, run on metal:0.

Nothing of theirs is copied here: the kernels are read from a checkout named by an environment
variable, pinned to one commit each, and skipped (with the reason) when it is not there:

- ``DOTCOMPUTE_MLX_DIR``: ml-explore/mlx at ``MLX_COMMIT``
  (``git archive`` of ``mlx/backend/metal/kernels`` is enough);
- ``DOTCOMPUTE_GGML_DIR``: ggml-org/ggml at ``GGML_COMMIT`` (``src/ggml-metal``, ``src/ggml-common.h``).

A kernel file's quoted ``#include "..."`` lines are resolved against the same checkout (each
header once, as ``#pragma once`` does), since the double, like Metal's runtime compiler, sees
only one source string. Where a file's umbrella header cannot be compiled by the double
(MLX's ``utils.h``, see docs/metal.md), a test names the project's smaller headers the kernel
really uses instead; the kernel's own text and its instantiation lines stay as written. ggml's
``ggml-metal.metal`` is one library the double cannot compile whole, so its tests take one kernel's
text from the file (its ``template`` line, body and instance lines) with ``ggml-metal-impl.h`` and
the file's own ``#define`` lines. Kernels the double cannot run are strict xfails carrying the
reason, so the day they run the test says so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

MLX_COMMIT = "846d176227a0ac13d2667e58d2bb68b322109ab0"
GGML_COMMIT = "d99724f2b141fed9e1a9f402213506c081433465"
MLX_KERNELS = "mlx/backend/metal/kernels"

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$', re.M)


def _checkout(var: str, commit: str, project: str) -> Path:
    root = os.environ.get(var)
    if not root:
        pytest.skip(f"{var} is not set: point it at a checkout of {project} at commit {commit}")
    path = Path(root)
    if not path.is_dir():
        pytest.skip(f"{var}={root} is not a folder (want {project} at commit {commit})")
    return path


def _file(root: Path, rel: str, commit: str) -> str:
    path = root / rel
    if not path.is_file():
        pytest.skip(f"{rel} is not in {root} (the tests are pinned to commit {commit})")
    return path.read_text()


def _compose(root: Path, rel: str, commit: str, instead: dict[str, list[str]] | None = None,
             seen: set[str] | None = None, search: tuple[str, ...] = ("",)) -> str:
    """The file with its quoted includes inlined once each; ``instead`` maps an include to others."""
    seen = set() if seen is None else seen
    instead = instead or {}

    def include(m: re.Match[str]) -> str:
        name, parts = m.group(1), []
        for inc in instead.get(name, [name]):
            for base in search:
                cand = f"{base}/{inc}" if base else inc
                if (root / cand).is_file():
                    break
            else:
                pytest.skip(f"{inc} (included by {rel}) is not in {root} (pinned commit {commit})")
            if cand not in seen:
                seen.add(cand)
                parts.append(_compose(root, cand, commit, instead, seen, search))
        return "\n".join(parts)

    text = _file(root, rel, commit).replace("#pragma once", "")
    return _INCLUDE.sub(include, text)


def _launch(metal: dc.Accelerator, source: str, name: str, global_size, *args, local_size=None) -> None:
    kernel = dc.RawKernel(source, name, backend="metal")
    dc.launch(kernel, global_size, *args, accelerator=metal, local_size=local_size)


# ---------------------------------------------------------------------------------------------
# MLX
# ---------------------------------------------------------------------------------------------

# utils.h (WorkPerThread, Limits, elem_to_loc, the simd wrappers, complex_t) does not compile on the
# double; arange needs only bfloat16_t (bf16.h) and the instantiate_kernel macro (defines.h).
ARANGE_HEADERS = {f"{MLX_KERNELS}/utils.h": [f"{MLX_KERNELS}/bf16.h", f"{MLX_KERNELS}/defines.h"]}


def _bf16_to_float(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("tname, dtype", [
    ("uint8", np.uint8), ("uint16", np.uint16), ("uint32", np.uint32), ("uint64", np.uint64),
    ("int8", np.int8), ("int16", np.int16), ("int32", np.int32), ("int64", np.int64),
    ("float16", np.float16), ("float32", np.float32), ("bfloat16", None),
])
def test_mlx_arange(metal, tname, dtype):
    root = _checkout("DOTCOMPUTE_MLX_DIR", MLX_COMMIT, "ml-explore/mlx")
    src = _compose(root, f"{MLX_KERNELS}/arange.metal", MLX_COMMIT, ARANGE_HEADERS)
    n = 200
    if dtype is None:  # bfloat16: numpy has none; pass and read the raw 16 bits
        start, step = np.array([1.5, 0.25], np.float32).view(np.uint32) >> 16
        out = np.zeros(n, np.uint16)
        _launch(metal, src, f"arange{tname}", n, np.uint16(start), np.uint16(step), out)
        # MLX computes start + index * step in bfloat's arithmetic (float, rounded back to bfloat)
        want = np.float32(1.5) + np.arange(n, dtype=np.float32) * np.float32(0.25)
        np.testing.assert_allclose(_bf16_to_float(out), want, rtol=2 ** -8)
        return
    start, step = (dtype(3), dtype(2)) if np.issubdtype(dtype, np.integer) else (dtype(-2.5), dtype(0.125))
    out = np.zeros(n, dtype)
    _launch(metal, src, f"arange{tname}", n, start, step, out)
    if np.issubdtype(dtype, np.integer):
        # index (uint) * step in the kernel's arithmetic, wrapping like numpy's fixed-width integers
        want = (start + np.arange(n, dtype=np.uint64).astype(dtype) * step).astype(dtype)
        np.testing.assert_array_equal(out, want)
    else:
        want = (np.float32(start) + np.arange(n, dtype=np.float32) * np.float32(step)).astype(dtype)
        rtol = 1e-3 if dtype == np.float16 else 0
        np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), rtol=rtol)


def test_mlx_fence_update(metal):
    root = _checkout("DOTCOMPUTE_MLX_DIR", MLX_COMMIT, "ml-explore/mlx")
    src = _compose(root, f"{MLX_KERNELS}/fence.metal", MLX_COMMIT)
    stamp = np.zeros(1, np.uint32)
    _launch(metal, src, "fence_update", 1, stamp, np.uint32(41))
    assert stamp[0] == 41
    # input_coherent rewrites its first `size` elements in place and leaves the rest alone
    data = np.arange(100, dtype=np.uint32) * 7
    _launch(metal, src, "input_coherent", 128, data, np.uint32(60))
    np.testing.assert_array_equal(data, np.arange(100, dtype=np.uint32) * 7)


# Whole files the double cannot compile (docs/metal.md, "What the double still cannot run"). Strict
# xfails: the compile must fail, so the day the double runs one of them this test fails and the
# docs and this list are brought up to date.
MLX_REFUSED = [
    # utils.h -> bf16_math.h calls Metal's compiler-internal builtins (__metal_fma, ...,
    # __METAL_MAYBE_FAST_MATH__); complex.h overloads members on the address space of `this`
    (f"{MLX_KERNELS}/unary.metal", "v_Absfloat32float32"),
    (f"{MLX_KERNELS}/copy.metal", "s_copyfloat32float32"),
    (f"{MLX_KERNELS}/binary.metal", "vv_Addfloat32"),
    (f"{MLX_KERNELS}/arange.metal", "arangefloat32"),  # as written, through utils.h
]


@pytest.mark.xfail(strict=True, raises=dc.CompilationError,
                   reason="MLX's utils.h needs Metal's internal __metal_* builtins and address-space "
                          "overloads of member functions (docs/metal.md)")
@pytest.mark.parametrize("rel, name", MLX_REFUSED, ids=[n for _, n in MLX_REFUSED])
def test_mlx_files_through_utils_h(metal, rel, name):
    root = _checkout("DOTCOMPUTE_MLX_DIR", MLX_COMMIT, "ml-explore/mlx")
    src = _compose(root, rel, MLX_COMMIT)
    dc.RawKernel(src, name, backend="metal").compile(metal)


# ---------------------------------------------------------------------------------------------
# ggml
# ---------------------------------------------------------------------------------------------

GGML_SEARCH = ("src/ggml-metal", "src")


@pytest.mark.xfail(strict=True, raises=dc.CompilationError,
                   reason="ggml-metal.metal is one library of ~12,000 lines using half2, float4x4/half4x4 "
                          "and simdgroup_matrix, which the double's shim lacks (docs/metal.md)")
def test_ggml_metal_library(metal):
    root = _checkout("DOTCOMPUTE_GGML_DIR", GGML_COMMIT, "ggml-org/ggml")
    src = _compose(root, "src/ggml-metal/ggml-metal.metal", GGML_COMMIT, search=GGML_SEARCH)
    dc.RawKernel(src, "kernel_arange_f32", backend="metal").compile(metal)


def _ggml_kernel(text: str, name: str) -> str:
    """One kernel of ggml-metal.metal as written: its ``template<...>`` line if any, its body, and
    the ``typedef decltype(name<...>)`` / ``[[host_name]]`` instance lines that name it."""
    start = text.find(f"kernel void {name}(")
    if start < 0:
        pytest.skip(f"kernel {name} is not in ggml-metal.metal (pinned commit {GGML_COMMIT})")
    line = text.rfind("\n", 0, start - 1) + 1  # the line before the kernel's
    if text[line:start].lstrip().startswith("template"):
        start = line
    depth, i = 0, text.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    alias = re.compile(rf"^typedef decltype\({name}<.*?\)\s+(\w+);$", re.M)
    extra = []
    for m in alias.finditer(text):
        extra.append(m.group(0))
        extra += re.findall(rf"^template \[\[host_name\(.*\]\] kernel {m.group(1)} {name}<.*;$", text, re.M)
    return text[start:i] + "\n" + "\n".join(extra) + "\n"


def _ggml_source(name: str) -> str:
    root = _checkout("DOTCOMPUTE_GGML_DIR", GGML_COMMIT, "ggml-org/ggml")
    impl = _compose(root, "src/ggml-metal/ggml-metal-impl.h", GGML_COMMIT, search=GGML_SEARCH)
    text = _file(root, "src/ggml-metal/ggml-metal.metal", GGML_COMMIT)
    # the file's own macros before its first kernel (N_SIMDWIDTH, MAX, ...), which kernels use
    defines = re.findall(r"^#define .*$", text[:text.find("kernel void")], re.M)
    return ("#include <metal_stdlib>\nusing namespace metal;\n" + impl + "\n".join(defines) + "\n"
            + _ggml_kernel(text, name))


def test_ggml_arange_f32(metal):
    src = _ggml_source("kernel_arange_f32")
    args = np.array([(300, -3.0, 0.25)], np.dtype([("ne0", np.int64), ("start", np.float32),
                                                  ("step", np.float32)], align=True))
    dst = np.zeros(300, np.float32)
    _launch(metal, src, "kernel_arange_f32", 64, args.view(np.uint8), dst.view(np.uint8), local_size=64)
    np.testing.assert_array_equal(dst, np.float32(-3.0) + np.float32(0.25) * np.arange(300, dtype=np.float32))


def test_ggml_memset_i64(metal):
    src = _ggml_source("kernel_memset")
    dst = np.zeros(77, np.int64)
    _launch(metal, src, "kernel_memset_i64", dst.size, np.array([-(2 ** 40) - 3], np.int64).view(np.uint8), dst)
    np.testing.assert_array_equal(dst, np.full(77, -(2 ** 40) - 3, np.int64))


def test_ggml_silu_back_f32(metal):
    src = _ggml_source("kernel_silu_back_f32")
    rng = np.random.default_rng(5)
    n = 1000
    x = rng.standard_normal(n).astype(np.float32) * 4
    dy = rng.standard_normal(n).astype(np.float32)
    dx = np.full(n + 24, -7.0, np.float32)  # the kernel stops at args.ne: the rest stays
    _launch(metal, src, "kernel_silu_back_f32", n + 24, np.array([n], np.int64).view(np.uint8), dy, x, dx)
    s64 = 1 / (1 + np.exp(-x.astype(np.float64)))
    want = dy * s64 * (1 + x * (1 - s64))
    np.testing.assert_allclose(dx[:n], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(dx[n:], -7.0)
