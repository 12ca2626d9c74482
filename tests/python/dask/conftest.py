"""A real ``distributed.LocalCluster`` (2 process workers, 1 thread each), started once for the whole
dask suite, and skipping with a reason where Dask is not installed."""

from __future__ import annotations

import pytest

pytest.importorskip("dask.array", reason="Dask is not installed: pip install 'dotcompute[dask]'")
distributed = pytest.importorskip("distributed", reason="distributed is not installed: pip install 'dotcompute[dask]'")


@pytest.fixture(scope="session")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       worker_dashboard_address=":0")
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
