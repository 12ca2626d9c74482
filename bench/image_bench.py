"""examples/image.py's separable Gaussian blur (uint8 RGB, float16 intermediate) beside numpy and scipy.

    python bench/image_bench.py                          # 512², 1080p and 4K, every device
    python bench/image_bench.py --quick --devices cpu:0 --sizes 512x512

Columns: numpy (the example's vectorised reference: float32 sums, a float16 intermediate),
scipy.ndimage (``correlate1d`` along each axis with the same weights and float16 intermediate: the
same arithmetic in compiled loops), scipy's float64 ``gaussian_filter`` (what one would usually
call), and per device two dotcompute columns: "resident" (the image already in a device buffer,
both passes and a synchronize) and "from host" (``blur()`` as the example calls it: upload, both
passes, download). Every timed call ends with its result complete. Times are best-of-N milliseconds;
the max error of each dotcompute result against numpy's is checked before timing and noted.
Writes bench/results/image.{json,md}. Measurements, never pass/fail.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Report, Result, best_time  # noqa: E402

import dotcompute as dc  # noqa: E402

SIGMA = 2.0


def _example():
    spec = importlib.util.spec_from_file_location("dc_example_image", HERE.parent / "examples" / "image.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _scipy_same(ex) -> Callable[[np.ndarray], np.ndarray] | None:
    try:
        from scipy import ndimage
    except ImportError:
        return None
    w = ex.gaussian_weights(SIGMA)

    def run(img: np.ndarray) -> np.ndarray:
        rows = ndimage.correlate1d(img.astype(np.float32), w, axis=1, mode="nearest").astype(np.float16)
        cols = ndimage.correlate1d(rows.astype(np.float32), w, axis=0, mode="nearest")
        return np.clip(cols + np.float32(0.5), 0, 255).astype(np.uint8)

    return run


def _bench_size(report: Report, ex, h: int, width: int, accs: list[dc.Accelerator], repeat: int) -> None:
    label = f"blur {h}x{width} RGB u8"
    img = np.random.default_rng(0).integers(0, 256, (h, width, 3), dtype=np.uint8)
    want = ex.blur_numpy(img, SIGMA)
    ms = 1e3
    report.add(Result(label, "numpy", best_time(lambda: ex.blur_numpy(img, SIGMA), repeat) * ms, "ms", False))
    same = _scipy_same(ex)
    if same is None:
        report.add(Result(label, "scipy.ndimage correlate1d", None, "ms", False, "skipped: no scipy"))
        report.add(Result(label, "scipy gaussian_filter f64", None, "ms", False, "skipped: no scipy"))
    else:
        err = int(np.abs(same(img).astype(np.int16) - want).max())
        report.add(Result(label, "scipy.ndimage correlate1d", best_time(lambda: same(img), repeat) * ms, "ms",
                          False, f"max err {err}"))
        report.add(Result(label, "scipy gaussian_filter f64",
                          best_time(lambda: ex.blur_scipy(img, SIGMA), repeat) * ms, "ms", False))
    w = ex.gaussian_weights(SIGMA)
    for acc in accs:
        dimg, dw = acc.asarray(img), acc.asarray(w)
        tmp = acc.empty(img.shape, np.float16)
        out = acc.empty(img.shape, np.uint8)

        def resident(acc=acc, dimg=dimg, dw=dw, tmp=tmp, out=out) -> None:
            acc.launch(ex.blur_rows, (h, width), dimg, dw, tmp)
            acc.launch(ex.blur_cols, (h, width), tmp, dw, out)

        resident()
        acc.synchronize()
        err = int(np.abs(out.numpy().astype(np.int16) - want).max())
        note = f"max err {err}"
        report.add(Result(label, f"dc {acc.id} resident", best_time(resident, repeat, sync=acc.synchronize) * ms,
                          "ms", False, note))
        report.add(Result(label, f"dc {acc.id} from host",
                          best_time(lambda acc=acc: ex.blur(acc, img, SIGMA), repeat) * ms, "ms", False, note))


def _size(text: str) -> tuple[int, int]:
    h, _, w = text.partition("x")
    return int(h), int(w or h)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--sizes", default="512x512,1080x1920,2160x3840", help="comma list of HEIGHTxWIDTH")
    ap.add_argument("--devices", default=None, help="comma list of device ids (default: every device)")
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for image.{json,md}")
    args = ap.parse_args()
    repeat = 2 if args.quick else 5
    accs = [dc.accelerator(d) for d in args.devices.split(",")] if args.devices else dc.devices()
    ex = _example()
    report = Report()
    for size in args.sizes.split(","):
        _bench_size(report, ex, *_size(size), accs, repeat)
    report.write_named(Path(args.out), "image", {"devices": [a.id for a in accs], "sigma": SIGMA},
                       f"Gaussian blur, sigma {SIGMA}, best of {repeat}; {{cpus}} CPU cores, {{time}} "
                       "(a shared machine: compare columns of one run, not runs).")

if __name__ == "__main__":
    main()
