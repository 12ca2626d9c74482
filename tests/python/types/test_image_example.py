"""examples/image.py (uint8 RGB → separable Gaussian blur with a float16 intermediate) at a small
size on every accelerator, its kernels through NVRTC and the Metal shim, against numpy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[3] / "examples" / "image.py"


def _example():
    spec = importlib.util.spec_from_file_location("dc_example_image", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_image_blur_matches_numpy(accelerator):
    _example().test_image(40, 56, 1.5, accelerator.id)


def test_image_kernels_compile_with_nvrtc_and_run_on_the_metal_shim():
    ex = _example()
    img = np.random.default_rng(1).integers(0, 256, (12, 16, 3), dtype=np.uint8)
    w = ex.gaussian_weights(1.0)
    tmp = np.zeros(img.shape, np.float16)
    out = np.zeros(img.shape, np.uint8)
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is not None:
        for k, args in ((ex.blur_rows, (img, w, tmp)), (ex.blur_cols, (tmp, w, out))):
            ok, log = harness.nvrtc_compile(k.source("cuda", *args), k.name)
            assert ok, log
    run_msl = pytest.importorskip("runner").run_msl
    run_msl(ex.blur_rows.source("metal", img, w, tmp), [img, w, tmp], global_size=(12, 16), local_size=(4, 4))
    run_msl(ex.blur_cols.source("metal", tmp, w, out), [tmp, w, out], global_size=(12, 16), local_size=(4, 4))
    diff = np.abs(out.astype(np.int16) - ex.blur_numpy(img, 1.0).astype(np.int16))
    assert diff.max() <= 1
