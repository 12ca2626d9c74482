"""Kernels written the way real code bases look: postponed annotations (this module has
``from __future__ import annotations``), numpy/builtin annotations, multi-line decorators and
signatures, docstrings and comments, kernels as static methods, notebook-style cells."""

from __future__ import annotations

import linecache
import math

import numpy as np

import dotcompute as dc


@dc.kernel(
    debug=False,
)
def rms_norm(
    x: dc.Buffer[dc.float32, 2],   # (rows, features)
    w: dc.Buffer[dc.float32],
    y: dc.Buffer[dc.float32, 2],
    eps: float,
):
    """Root-mean-square normalisation, one work-item per row."""
    r = dc.global_id(0)
    if r >= x.shape[0]:
        return
    # accumulate in float32, like the reference implementations do
    ss: dc.float32 = 0.0
    for c in range(x.shape[1]):
        ss += x[r, c] * x[r, c]
    inv = 1.0 / math.sqrt(ss / x.shape[1] + eps)
    for c in range(x.shape[1]):
        y[r, c] = x[r, c] * inv * w[c]


def test_postponed_annotations_and_multiline_signature(accelerator):
    rng = np.random.default_rng(110)
    x = rng.standard_normal((5, 48)).astype(np.float32)
    w = rng.random(48, dtype=np.float32)
    y = np.zeros_like(x)
    dc.launch(rms_norm, 5, x, w, y, 1e-6, accelerator=accelerator)
    f = x.astype(np.float64)
    ref = f / np.sqrt((f * f).mean(1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


@dc.kernel
def relu_count(x: dc.Buffer[np.float64], out: dc.Buffer[np.float64], count: dc.Buffer[np.int64],
               limit: int, scale: np.float64, enabled: bool):
    i = dc.global_id(0)
    if i < x.shape[0] and i < limit and enabled:
        v = x[i] * scale
        out[i] = v if v > 0 else 0.0
        if v > 0:
            dc.atomic_add(count, 0, 1)


def test_numpy_and_builtin_annotations(accelerator):
    from realworld_helpers import need_fp64
    need_fp64(accelerator)
    x = np.linspace(-1, 1, 21)
    out = np.full_like(x, -9.0)
    count = np.zeros(1, np.int64)
    dc.launch(relu_count, 21, x, out, count, 15, 2.0, True, accelerator=accelerator)
    ref = np.full_like(x, -9.0)
    ref[:15] = np.maximum(x[:15] * 2.0, 0)
    np.testing.assert_array_equal(out, ref)
    assert count[0] == int((x[:15] > 0).sum())


class Filters:
    """Kernels grouped in a class, as static methods."""

    @staticmethod
    @dc.kernel
    def invert(img: dc.Buffer[dc.uint32, 2]):
        y = dc.global_id(0)
        x = dc.global_id(1)
        if y < img.shape[0] and x < img.shape[1]:
            img[y, x] = 255 - img[y, x]


def test_kernel_as_static_method(accelerator):
    img = np.arange(12, dtype=np.uint32).reshape(3, 4) * 20
    dc.launch(Filters.invert, img.shape, img, accelerator=accelerator)
    np.testing.assert_array_equal(img, 255 - np.arange(12).reshape(3, 4) * 20)


CELL = '''
import dotcompute as dc

@dc.kernel
def cell_kernel(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] * 2.0 + 1.0
'''


def test_notebook_cell_kernel(accelerator):
    # IPython keeps each cell's source in linecache under a synthetic file name
    fname = "<ipython-input-7-realworld>"
    linecache.cache[fname] = (len(CELL), None, CELL.splitlines(True), fname)
    try:
        ns: dict = {}
        exec(compile(CELL, fname, "exec"), ns)
        a = np.arange(6, dtype=np.float32)
        dc.launch(ns["cell_kernel"], 6, a, accelerator=accelerator)
        np.testing.assert_array_equal(a, np.arange(6) * 2 + 1)
    finally:
        linecache.cache.pop(fname, None)
