"""Dask arrays whose chunks are dc.Buffers (issue 21): da.from_array(buf) and map_blocks(dc.asarray)
keep every chunk a Buffer on its device, with a Buffer as Dask's _meta, and da.sum, elementwise
math and @ run through Buffer.__array_function__/__array_ufunc__ on a real LocalCluster (the
suite's `client` fixture: 2 process workers). On opencl:0 a step without a device path would raise
instead of copying through the host, so these results show the work stayed on the device."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

da = pytest.importorskip("dask.array")

DEVICES = [d.id for d in dc.devices() if d.backend in ("cpu", "opencl")]
X = np.arange(24, dtype=np.float32).reshape(6, 4) / 8


def _on(device: str):
    def check(block):
        # runs on a worker: the chunk arrives as a Buffer on the device, and leaves as one
        assert isinstance(block, dc.Buffer) and block.device.id == device, (type(block), device)
        return block * 3.0

    return check


@pytest.mark.parametrize("device", DEVICES)
def test_from_array_of_a_buffer_computes_on_the_device(client, device: str) -> None:
    buf = dc.asarray(X, device=device)
    d = da.from_array(buf, chunks=(3, 2))
    assert isinstance(d._meta, dc.Buffer) and d._meta.shape == (0, 0) and d._meta.dtype == np.float32

    total = da.sum(d).compute()
    assert isinstance(total, dc.Buffer) and total.device.id == device
    assert float(total) == pytest.approx(float(X.sum()), rel=1e-6)

    columns = d.sum(axis=0).compute()
    np.testing.assert_allclose(columns.numpy(), X.sum(axis=0), rtol=1e-6)

    wave = (da.sin(d) * 2 + 1).compute()
    assert isinstance(wave, dc.Buffer) and wave.device.id == device
    np.testing.assert_allclose(wave.numpy(), np.sin(X) * 2 + 1, rtol=1e-5, atol=1e-6)

    gram = (d @ d.T).compute()
    assert isinstance(gram, dc.Buffer) and gram.device.id == device
    np.testing.assert_allclose(gram.numpy(), X @ X.T, rtol=1e-5)

    tripled = d.map_blocks(_on(device)).compute()
    np.testing.assert_allclose(tripled.numpy(), X * 3, rtol=1e-6)


def test_map_blocks_asarray_makes_buffer_chunks(client) -> None:
    # the spelling: Dask finds the meta itself by calling dc.asarray on a zero-size block;
    # the workers' dc.asarray puts chunks on their default device (the same environment as here)
    default = dc.asarray(np.zeros(1)).device.id
    d = da.from_array(X, chunks=(2, 4)).map_blocks(dc.asarray)
    assert isinstance(d._meta, dc.Buffer)
    blocks = client.compute(list(d.to_delayed().ravel()), sync=True)
    assert all(isinstance(b, dc.Buffer) and b.device.id == default for b in blocks)
    mean = d.mean().compute()
    assert isinstance(mean, dc.Buffer) and float(mean) == pytest.approx(float(X.mean()), rel=1e-6)
    centred = (d - d.mean(axis=0)).compute()
    np.testing.assert_allclose(centred.numpy(), X - X.mean(axis=0), rtol=1e-5, atol=1e-6)
