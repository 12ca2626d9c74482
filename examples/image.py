"""A separable Gaussian blur of a uint8 RGB image, with a float16 intermediate image.

The horizontal pass reads uint8 pixels and writes float16 (half the memory traffic of float32
for the intermediate); the vertical pass reads float16 and writes rounded, clamped uint8. Both
passes accumulate in float32. Borders clamp to the edge pixel, as ``mode="nearest"`` in scipy.

The result is compared with two references: the same computation in numpy (float32 sums, the
float16 intermediate; a pixel may differ by 1 where a device contracts a multiply-add into an FMA)
and, when scipy is installed, ``scipy.ndimage.gaussian_filter`` in float64 with the same radius
(the cost of the float16 intermediate and of the uint8 rounding).

    python examples/image.py [--size 1080x1920] [--accelerator cpu:0] [--sigma 2.0]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import dotcompute as dc


@dc.kernel
def blur_rows(img: dc.Buffer[dc.uint8, 3], w: dc.Buffer[dc.float32], tmp: dc.Buffer[dc.float16, 3]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    h, width = img.shape[0], img.shape[1]
    r = w.shape[0] // 2
    if y < h and x < width:
        for c in range(3):
            acc: dc.float32 = 0.0
            for k in range(w.shape[0]):
                xx = min(max(x + k - r, 0), width - 1)
                acc += w[k] * img[y, xx, c]  # uint8 * float32 is float32 (NEP 50)
            tmp[y, x, c] = acc  # rounded to float16 on store


@dc.kernel
def blur_cols(tmp: dc.Buffer[dc.float16, 3], w: dc.Buffer[dc.float32], out: dc.Buffer[dc.uint8, 3]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    h, width = tmp.shape[0], tmp.shape[1]
    r = w.shape[0] // 2
    if y < h and x < width:
        for c in range(3):
            acc: dc.float32 = 0.0
            for k in range(w.shape[0]):
                yy = min(max(y + k - r, 0), h - 1)
                acc += w[k] * tmp[yy, x, c]  # float16 * float32 is float32
            out[y, x, c] = dc.uint8(min(max(acc + 0.5, 0.0), 255.0))


def gaussian_weights(sigma: float) -> np.ndarray:
    r = max(1, int(math.ceil(3 * sigma)))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    return (k / k.sum()).astype(np.float32)


def blur(acc: dc.Accelerator, img: np.ndarray, sigma: float) -> np.ndarray:
    w = gaussian_weights(sigma)
    h, width, _ = img.shape
    dimg, dw = acc.asarray(img), acc.asarray(w)
    tmp = acc.empty(img.shape, np.float16)
    out = acc.empty(img.shape, np.uint8)
    acc.launch(blur_rows, (h, width), dimg, dw, tmp)
    acc.launch(blur_cols, (h, width), tmp, dw, out)
    return out.numpy()


def blur_numpy(img: np.ndarray, sigma: float) -> np.ndarray:
    """The same computation in numpy (float32 sums, a float16 intermediate, round half up)."""
    w = gaussian_weights(sigma)
    r = len(w) // 2
    h, width, _ = img.shape
    padded = np.pad(img.astype(np.float32), ((0, 0), (r, r), (0, 0)), mode="edge")
    rows = sum(w[k] * padded[:, k:k + width] for k in range(len(w))).astype(np.float16)
    padded = np.pad(rows.astype(np.float32), ((r, r), (0, 0), (0, 0)), mode="edge")
    cols = sum(w[k] * padded[k:k + h] for k in range(len(w)))
    return np.clip(cols + np.float32(0.5), 0, 255).astype(np.uint8)


def test_image(h: int = 96, width: int = 128, sigma: float = 2.0, device: str = "auto") -> None:
    rng = np.random.default_rng(7)
    # a smooth gradient with noise and a hard edge, so the blur has something to do
    yy, xx = np.mgrid[0:h, 0:width]
    img = np.stack([xx * 255 // max(1, width - 1), yy * 255 // max(1, h - 1), (xx > width // 2) * 200], axis=-1)
    img = np.clip(img + rng.integers(-20, 21, img.shape), 0, 255).astype(np.uint8)
    acc = dc.accelerator(device)
    got = blur(acc, img, sigma)
    want = blur_numpy(img, sigma)
    # float32 sums may be contracted into FMAs on a device: a pixel may round the other way
    diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
    assert diff.max() <= 1 and (diff > 0).mean() < 0.01, (diff.max(), (diff > 0).mean())


def blur_scipy(img: np.ndarray, sigma: float) -> np.ndarray | None:
    """scipy.ndimage's float64 Gaussian blur with the same radius and borders, rounded to uint8;
    None without scipy."""
    try:
        from scipy import ndimage
    except ImportError:
        return None
    r = len(gaussian_weights(sigma)) // 2
    # gaussian_filter's radius is int(truncate * sigma + 0.5): pick truncate so that it is r
    out = ndimage.gaussian_filter(img.astype(np.float64), sigma=(sigma, sigma, 0), mode="nearest",
                                  truncate=(r - 0.25) / sigma)
    return np.clip(np.floor(out + 0.5), 0, 255).astype(np.uint8)


def parse_size(text: str) -> tuple[int, int]:
    """ "1080x1920" (height x width) or "512" (square)."""
    try:
        parts = [int(p) for p in text.lower().split("x")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"--size takes HEIGHTxWIDTH or N, not {text!r}")
    return parts[0], parts[1]


def max_error(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=parse_size, default=(1080, 1920), metavar="HxW",
                        help="image height x width (default 1080x1920)")
    parser.add_argument("--accelerator", "--device", default="auto", help="device id, e.g. cpu:0 (default auto)")
    parser.add_argument("--sigma", type=float, default=2.0)
    args = parser.parse_args(argv)
    h, width = args.size
    acc = dc.accelerator(args.accelerator)
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:h, 0:width]
    # gradients, a hard edge and noise: something for the blur to smooth
    img = np.stack([xx * 255 // max(1, width - 1), yy * 255 // max(1, h - 1), (xx > width // 2) * 200], axis=-1)
    img = np.clip(img + rng.integers(-30, 31, img.shape), 0, 255).astype(np.uint8)

    got = blur(acc, img, args.sigma)  # compiles on the first call
    t = time.perf_counter()
    got = blur(acc, img, args.sigma)
    t_dc = time.perf_counter() - t
    t = time.perf_counter()
    want = blur_numpy(img, args.sigma)
    t_np = time.perf_counter() - t
    print(f"blur (sigma {args.sigma}) of a {h}x{width} RGB uint8 image on {acc.id}: {t_dc * 1e3:.1f} ms "
          f"(numpy {t_np * 1e3:.1f} ms)")
    err_np = max_error(got, want)
    print(f"max error vs numpy (float32 sums, float16 intermediate): {err_np}")
    ref = blur_scipy(img, args.sigma)
    if ref is not None:
        print(f"max error vs scipy.ndimage.gaussian_filter (float64): {max_error(got, ref)}")
    # the same arithmetic, up to an FMA contraction: a pixel may round the other way, by 1 at most
    return 0 if err_np <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
