"""Add two vectors on the best accelerator this machine has (the CPU when there is no GPU)."""

import numpy as np

import dotcompute as dc


@dc.kernel
def vector_add(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


def main() -> None:
    n = 10_000_000
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.random.default_rng(1).random(n, dtype=np.float32)
    acc = dc.accelerator("auto")
    da, db, dout = acc.asarray(a), acc.asarray(b), acc.empty((n,), np.float32)
    acc.launch(vector_add, n, da, db, dout)
    result = dout.numpy()
    np.testing.assert_allclose(result, a + b, rtol=1e-6)
    print(f"vector_add of {n:,} float32 on {acc.name} ({acc.backend}:{acc.index}): ok")


if __name__ == "__main__":
    main()
