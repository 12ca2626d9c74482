"""Clear errors for bad input and failing kernels; pin_devices; blocks spread over several devices."""

from __future__ import annotations

import subprocess
import sys

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
from dask_kernels import accumulate, axpb, laplace, out_of_bounds

import dotcompute as dc
import dotcompute.dask as dcd


def test_kernel_without_written_only_buffer():
    x = da.ones(10, chunks=5, dtype=np.float32)
    with pytest.raises(ValueError, match="outputs="):
        dcd.map_blocks(accumulate, x)


def test_wrong_argument_count_names_the_parameters():
    x = da.ones(10, chunks=5, dtype=np.float32)
    with pytest.raises(TypeError, match="map_blocks expects 3 argument"):
        dcd.map_blocks(axpb, x, 1.0)


def test_bad_outputs_name():
    with pytest.raises(ValueError, match="not a parameter"):
        dcd.map_blocks(axpb, da.ones(4, chunks=2), 1.0, 1.0, outputs=["nope"])


@pytest.mark.parametrize("depth", [-1, 1.5, (1,), "1", {5: 1}])
def test_bad_depth(depth):
    u = da.ones((8, 8), chunks=4, dtype=np.float32)
    with pytest.raises(ValueError, match="depth"):
        dcd.map_overlap(laplace, u, depth=depth)


def test_bad_boundary():
    # (a depth larger than a chunk merges the chunks, as Dask does: test_audit_overlap.py)
    u = da.ones((8, 8), chunks=(2, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="boundary"):
        dcd.map_overlap(laplace, u, depth=1, boundary="wrap-around")


def test_local_size_that_cannot_tile_the_chunks():
    x = da.ones(100, chunks=(64, 36), dtype=np.float32)
    with pytest.raises(ValueError, match=r"\(36,\)"):
        dcd.map_blocks(axpb, x, 1.0, 1.0, local_size=16)


def test_non_kernel_and_bad_scalar():
    x = da.ones(4, chunks=2)
    with pytest.raises(TypeError, match="kernel"):
        dcd.map_blocks(np.sin, x)
    with pytest.raises(TypeError, match="argument 1"):
        dcd.map_blocks(axpb, x, "two", 1.0)


def test_bad_accelerator_argument():
    x = da.ones(4, chunks=2, dtype=np.float32)
    with pytest.raises(TypeError, match="accelerator"):
        dcd.map_blocks(axpb, x, 1.0, 1.0, accelerator=3)
    with pytest.raises(TypeError, match="accelerator"):
        dcd.sum(x, accelerator=[])
    y = dcd.map_blocks(axpb, x, 1.0, 1.0, accelerator=dc.accelerator("cpu:0"))  # sent as its id
    np.testing.assert_allclose(y.compute(scheduler="sync"), 2.0)


def test_kernel_index_error_reaches_the_client(client):
    x = da.from_array(np.ones(100, np.float32), chunks=50)
    y = dcd.map_blocks(out_of_bounds, x, accelerator="cpu")
    with pytest.raises(dc.KernelIndexError):
        client.compute(y).result()


def test_missing_backend_names_the_worker(client):
    if any(d.backend == "metal" for d in dc.devices()):
        pytest.skip("metal is available here")
    y = dcd.map_blocks(axpb, da.ones(10, chunks=5, dtype=np.float32), 1.0, 1.0, accelerator="metal")
    with pytest.raises(dc.BackendUnavailableError, match="worker tcp://"):
        client.compute(y).result()


def test_tasks_land_on_both_workers(client):
    x = np.arange(4000, dtype=np.float32)
    y = dcd.map_blocks(axpb, da.from_array(x, chunks=250), 1.0, -1.0)
    with distributed.get_task_stream(client) as ts:
        got = client.compute(y).result()
    np.testing.assert_allclose(got, x - 1)
    workers = {t["worker"] for t in ts.data if str(t["key"]).find("dc-axpb") >= 0}
    assert len(workers) == 2, workers
    # 16 tasks carried the kernel; each worker process rebuilt it once and specialised it at most
    # once (none when the launch index of the disk cache served the launch: docs/orchestration.md)
    rebuilt = client.run(_rebuilt_kernels, "axpb")
    assert all(len(v) == 1 and v[0] <= 1 for v in rebuilt.values()), rebuilt


def _rebuilt_kernels(name: str) -> list[int]:
    from dotcompute.lang import pickling

    return [len(k._specs) for k in list(pickling._rebuilt.values()) if getattr(k, "name", None) == name]


def test_pin_devices_on_a_cluster(client):
    try:
        pins = dcd.pin_devices(client)
        assert set(pins) == set(client.scheduler_info()["workers"])
        # the non-CPU-type devices here (GPUs), else cpu:0: never PoCL's CPU-type OpenCL device
        gpus = {d.id for d in dc.devices() if d.type != "cpu"}
        assert set(pins.values()) <= (gpus or {"cpu:0"})
        assert client.run(dcd.pinned_device) == pins
        y = dcd.map_blocks(axpb, da.from_array(np.ones(100, np.float32), chunks=10), 2.0, 0.0)
        np.testing.assert_allclose(client.compute(y).result(), 2.0)
        workers = sorted(pins)
        explicit = dcd.pin_devices(client, devices={workers[0]: "cpu:0", workers[1]: "cpu"})
        assert explicit == {workers[0]: "cpu:0", workers[1]: "cpu:0"}
    finally:
        client.run(dcd.placement.pin, None)  # later tests spread again
    assert set(client.run(dcd.pinned_device).values()) == {None}


def test_threaded_scheduler_spreads_over_cpu_and_opencl():
    ids = [d.id for d in dc.devices()]
    if not any(i.startswith("opencl") for i in ids):
        pytest.skip("no OpenCL device here: nothing to spread over")

    @dc.kernel
    def spread_me(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = x[i] * 0.5 + 7.0

    x = np.random.default_rng(5).random(40_000, dtype=np.float32)
    y = dcd.map_blocks(spread_me, da.from_array(x, chunks=2_000), accelerator=["cpu:0", "opencl:0"])
    with dask.config.set(scheduler="threads", num_workers=2):
        got = y.compute()
    np.testing.assert_array_equal(got, x * np.float32(0.5) + np.float32(7.0))
    stats = dcd.spread_stats(spread_me)
    assert stats["cpu:0"]["chunks"] >= 1 and stats["opencl:0"]["chunks"] >= 1, stats
    assert stats["cpu:0"]["chunks"] + stats["opencl:0"]["chunks"] == 20


def test_import_without_dask_says_how_to_install():
    code = ("import sys; sys.modules['dask'] = None\n"
            "try:\n    import dotcompute.dask\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert 'pip install "dotcompute[dask]"' in out.stdout, out.stderr


def test_spreading_is_proportional_to_throughput():
    from dotcompute.dask.placement import Spreader

    accs = [dc.accelerator("cpu:0")]
    accs += [d for d in dc.devices() if d.id != "cpu:0"][:1]
    if len(accs) < 2:
        pytest.skip("one device here: nothing to spread over")
    fast, slow = accs
    s = Spreader()
    seeds = {fast.id: 3e6, slow.id: 1e6}  # elements per second, as the history would give them
    picks = [s.choose("k", accs, 1000, seeds) for _ in range(8)]  # 8 blocks in flight at once
    counts = {a.id: sum(1 for acc, _ in picks if acc is a) for a in accs}
    assert counts == {fast.id: 6, slow.id: 2}, counts
    for acc, expected in picks:
        s.done("k", acc.id, 1000, expected, 1000 / seeds[acc.id])
    # one block at a time always goes to the faster device
    acc, expected = s.choose("k", accs, 1000, seeds)
    assert acc is fast


def test_kernel_errors_surface_when_the_graph_is_built():
    @dc.kernel
    def uses_a_list(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        out[i] = [x[i]][0]

    with pytest.raises(dc.KernelSyntaxError, match="list"):
        dcd.map_blocks(uses_a_list, da.ones(8, chunks=4, dtype=np.float32))
    with pytest.raises(dc.KernelTypeError, match="float32"):
        dcd.map_blocks(out_of_bounds, da.ones(8, chunks=4, dtype=np.int32))
