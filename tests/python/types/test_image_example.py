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


def test_image_command_line_reports_the_max_error(accelerator, capsys):
    ex = _example()
    assert ex.main(["--size", "24x40", "--accelerator", accelerator.id, "--sigma", "1.2"]) == 0
    out = capsys.readouterr().out
    assert f"24x40 RGB uint8 image on {accelerator.id}" in out
    errors = {line.split(" vs ")[1].split(" ")[0]: int(line.rsplit(":", 1)[1])
              for line in out.splitlines() if line.startswith("max error vs ")}
    assert errors["numpy"] <= 1
    if importlib.util.find_spec("scipy") is not None:
        # float64 reference: the float16 intermediate and two roundings cost at most 1 level here
        assert errors["scipy.ndimage.gaussian_filter"] <= 1


def test_image_size_option():
    ex = _example()
    assert ex.parse_size("1080x1920") == (1080, 1920) and ex.parse_size("64") == (64, 64)
    for bad in ("0x4", "4x", "axb", "1x2x3"):
        with pytest.raises(Exception, match="--size takes"):
            ex.parse_size(bad)
