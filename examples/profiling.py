"""Profile a small program on every device, validate it, and let dotcompute pick the best device.

    python examples/profiling.py [out_dir]

Writes profile.json, trace.json (open it in https://ui.perfetto.dev) and profile.png to out_dir
(default: the current folder) and prints the summary table and a validation report.
"""

import sys
from pathlib import Path

import numpy as np

import dotcompute as dc


@dc.kernel
def saxpy(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    y[i] = a * x[i] + y[i]


@dc.kernel
def blur(src: dc.Buffer[dc.float32, 2], dst: dc.Buffer[dc.float32, 2]):
    i, j = dc.global_id(0), dc.global_id(1)
    h, w = src.shape
    total = src[i, j]
    if i > 0 and i < h - 1 and j > 0 and j < w - 1:
        total = (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1] + 4.0 * src[i, j]) / 8.0
    dst[i, j] = total


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
    out.mkdir(parents=True, exist_ok=True)
    n = 1 << 20
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    image = rng.random((512, 512), dtype=np.float32)
    with dc.profile() as prof:
        for acc in dc.devices():
            dx, dy = acc.asarray(x), acc.zeros(n, np.float32)
            src, dst = acc.asarray(image), acc.empty((512, 512), np.float32)
            for _ in range(20):
                dc.launch(saxpy, n, np.float32(2.0), dx, dy)
                dc.launch(blur, (512, 512), src, dst)
            dy.numpy()
            dst.numpy()
        y = np.zeros(n, np.float32)
        for _ in range(12):  # numpy arguments: "best" measures every device, transfers included
            dc.launch(saxpy, n, np.float32(1.0), x, y, accelerator="best")
    print(prof.summary())
    prof.to_json(out / "profile.json")
    prof.to_chrome_trace(out / "trace.json")
    try:
        prof.plot(out / "profile.png")
    except ImportError as e:
        print(f"(no plot: {e})")
    print(dc.validate(blur, (512, 512), image, np.zeros_like(image), accelerator=dc.devices()[-1]))


if __name__ == "__main__":
    main()
