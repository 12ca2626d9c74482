"""Image processing as people write it: clamped-border blur, Sobel, grayscale, 2-D convolution."""

import numpy as np

import dotcompute as dc


@dc.kernel
def box_blur3(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    h = src.shape[0]
    w = src.shape[1]
    if y >= h or x >= w:
        return
    total: dc.float32 = 0.0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            yy = min(max(y + dy, 0), h - 1)
            xx = min(max(x + dx, 0), w - 1)
            total += src[yy, xx]
    dst[y, x] = total / 9.0


def _blur_ref(img):
    p = np.pad(img, 1, mode="edge")
    h, w = img.shape
    out = np.zeros_like(img)
    for dy in range(3):
        for dx in range(3):
            out += p[dy:dy + h, dx:dx + w]
    return out / np.float32(9.0)


def test_box_blur_clamped_borders(accelerator):
    rng = np.random.default_rng(1)
    img = rng.random((37, 53), dtype=np.float32)
    out = np.zeros_like(img)
    dc.launch(box_blur3, img.shape, img, out, accelerator=accelerator)
    np.testing.assert_allclose(out, _blur_ref(img), rtol=1e-5, atol=1e-6)


@dc.kernel
def sobel(src: dc.Buffer[dc.float32, 2], mag: dc.Buffer[dc.float32, 2]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    h = src.shape[0]
    w = src.shape[1]
    if y < 1 or x < 1 or y >= h - 1 or x >= w - 1:
        if y < h and x < w:
            mag[y, x] = 0.0
        return
    gx = (src[y - 1, x + 1] + 2.0 * src[y, x + 1] + src[y + 1, x + 1]
          - src[y - 1, x - 1] - 2.0 * src[y, x - 1] - src[y + 1, x - 1])
    gy = (src[y + 1, x - 1] + 2.0 * src[y + 1, x] + src[y + 1, x + 1]
          - src[y - 1, x - 1] - 2.0 * src[y - 1, x] - src[y - 1, x + 1])
    mag[y, x] = math_sqrt(gx * gx + gy * gy)


@dc.func
def math_sqrt(v: dc.float32) -> dc.float32:
    return dc.sqrt(v)


def test_sobel_magnitude(accelerator):
    rng = np.random.default_rng(2)
    img = rng.random((30, 41), dtype=np.float32)
    out = np.full_like(img, -1.0)
    dc.launch(sobel, img.shape, img, out, accelerator=accelerator)
    s = img.astype(np.float64)
    gx = (s[:-2, 2:] + 2 * s[1:-1, 2:] + s[2:, 2:]) - (s[:-2, :-2] + 2 * s[1:-1, :-2] + s[2:, :-2])
    gy = (s[2:, :-2] + 2 * s[2:, 1:-1] + s[2:, 2:]) - (s[:-2, :-2] + 2 * s[:-2, 1:-1] + s[:-2, 2:])
    ref = np.zeros_like(s)
    ref[1:-1, 1:-1] = np.sqrt(gx * gx + gy * gy)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


@dc.kernel
def to_gray(rgb: dc.Buffer[dc.uint32, 3], gray: dc.Buffer[dc.float32, 2]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    if y < gray.shape[0] and x < gray.shape[1]:
        r = dc.float32(rgb[y, x, 0])
        g = dc.float32(rgb[y, x, 1])
        b = dc.float32(rgb[y, x, 2])
        gray[y, x] = (0.299 * r + 0.587 * g + 0.114 * b) / 255.0


def test_grayscale_hwc(accelerator):
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, size=(19, 23, 3)).astype(np.uint32)
    gray = np.zeros((19, 23), np.float32)
    dc.launch(to_gray, gray.shape, rgb, gray, accelerator=accelerator)
    f = rgb.astype(np.float64)
    ref = (0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]) / 255.0
    np.testing.assert_allclose(gray, ref, rtol=1e-5, atol=1e-6)


@dc.kernel
def conv2d_clamped(src: dc.Buffer[dc.float32, 2], filt: dc.Buffer[dc.float32, 2],
                   dst: dc.Buffer[dc.float32, 2]):
    y = dc.global_id(0)
    x = dc.global_id(1)
    h = src.shape[0]
    w = src.shape[1]
    ry = filt.shape[0] // 2
    rx = filt.shape[1] // 2
    if y < h and x < w:
        acc: dc.float32 = 0.0
        for fy in range(filt.shape[0]):
            sy = min(max(y + fy - ry, 0), h - 1)
            for fx in range(filt.shape[1]):
                sx = min(max(x + fx - rx, 0), w - 1)
                acc += filt[fy, fx] * src[sy, sx]
        dst[y, x] = acc


def test_conv2d_gaussian_5x5_on_buffers(accelerator):
    rng = np.random.default_rng(4)
    img = rng.random((24, 29), dtype=np.float32)
    g = np.exp(-0.5 * (np.arange(-2, 3) / 1.2) ** 2)
    filt = np.outer(g, g).astype(np.float32)
    filt /= filt.sum()
    src = accelerator.asarray(img)
    f = accelerator.asarray(filt)
    dst = accelerator.empty(img.shape, np.float32)
    accelerator.launch(conv2d_clamped, img.shape, src, f, dst)
    accelerator.synchronize()
    p = np.pad(img.astype(np.float64), 2, mode="edge")
    ref = np.zeros(img.shape)
    for fy in range(5):
        for fx in range(5):
            ref += filt[fy, fx] * p[fy:fy + 24, fx:fx + 29]
    np.testing.assert_allclose(dst.numpy(), ref, rtol=1e-5, atol=1e-6)
