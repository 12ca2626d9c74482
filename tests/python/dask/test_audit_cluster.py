"""Audit: dotcompute.dask on real process clusters -- a script's ``__main__`` kernels (module constants,
@dc.func helpers) on process workers, worker errors with the user's file and line, a worker dying
mid-computation, concurrent computations from several client threads, accelerator= specs checked on
the client, pin_devices with every form of ``devices=``; and the edge-halo refill of
``iterations=`` on every accelerator here."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import dask
import dask.array as da
import distributed
import numpy as np
import pytest

import dotcompute as dc
import dotcompute.dask as dcd

SCRIPT = '''
import numpy as np
import dask.array as da
from distributed import Client, LocalCluster
import dotcompute as dc
import dotcompute.dask as dcd

SCALE = 3.0
TABLE = (1.0, 2.0, 4.0)

@dc.func
def twice(v):
    return v * 2.0

@dc.kernel
def scaled(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = twice(x[i]) * SCALE + TABLE[2]

@dc.kernel(debug=True)
def past_the_end(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i + 1]

if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \\
            Client(cluster) as client:
        x = np.arange(100.0)
        got = client.compute(dcd.map_blocks(scaled, da.from_array(x, chunks=30))).result()
        print("SCALED", bool(np.allclose(got, x * 6.0 + 4.0)))
        try:
            dcd.map_blocks(scaled, da.from_array(x.astype(np.float32), chunks=30))
        except dc.KernelTypeError as e:
            print("TYPE", str(e).replace("\\n", " | "))
        y = dcd.map_blocks(past_the_end, da.from_array(np.ones(64, np.float32), chunks=16), accelerator="cpu")
        try:
            client.compute(y).result()
        except dc.KernelIndexError as e:
            print("INDEX", str(e).replace("\\n", " | "))
'''


def test_script_main_kernels_and_worker_errors(tmp_path):
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(SCRIPT))
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    lines = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in run.stdout.splitlines() if " " in ln}
    assert lines.get("SCALED") == "True", run.stdout + run.stderr[-3000:]
    assert "'x'" in lines.get("TYPE", ""), run.stdout  # the parameter, at graph construction
    index = lines.get("INDEX", "")
    assert f"{path}:" in index and "x[i + 1]" in index and "past_the_end" in index, run.stdout


@dc.kernel
def triple(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = 3.0 * x[i]


def test_many_concurrent_computations_from_client_threads(client):
    results: dict[int, bool] = {}

    def work(t: int) -> None:
        x = np.arange(300.0) + t
        y = client.compute(dcd.map_blocks(triple, da.from_array(x, chunks=37 + t))).result(timeout=120)
        s = client.compute(dcd.sum(da.from_array(x, chunks=50 + t))).result(timeout=120)
        results[t] = bool(np.allclose(y, 3 * x)) and bool(np.isclose(s, x.sum()))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=200)
    assert results == dict.fromkeys(range(8), True)


def _pass_or_die(block: np.ndarray, marker: str, always: bool) -> np.ndarray:
    import os

    if block.size and block.flat[0] == 40.0 and (always or not os.path.exists(marker)):
        open(marker, "w").close()
        os._exit(1)  # the worker process dies in the middle of the graph
    return block


def test_worker_dying_mid_computation_is_retried_or_raises(tmp_path):
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                     worker_dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        x = np.arange(100.0)
        marker = str(tmp_path / "died")
        once = da.from_array(x, chunks=20).map_blocks(_pass_or_die, marker, False)
        # the nanny restarts the worker; the retried block rebuilds the kernel in the new process
        np.testing.assert_allclose(c.compute(dcd.map_blocks(triple, once)).result(timeout=120), 3 * x)
        always = da.from_array(x, chunks=20).map_blocks(_pass_or_die, marker, True)
        with pytest.raises(distributed.KilledWorker):
            c.compute(dcd.map_blocks(triple, always)).result(timeout=120)
        np.testing.assert_allclose(c.compute(dcd.map_blocks(triple, da.from_array(x, chunks=20))).result(timeout=120),
                                   3 * x)


@pytest.mark.parametrize("spec", ["bogus", "", "cpu:x", "auto:0", ["cpu", "nope"]], ids=repr)
def test_malformed_accelerator_spec_raises_on_the_client(spec):
    # no process can resolve these: raised when the graph is built, not once per task on every worker
    x = da.ones(8, chunks=4)
    with pytest.raises(ValueError, match="accelerator spec"):
        dcd.map_blocks(triple, x, accelerator=spec)
    if isinstance(spec, str):
        with pytest.raises(ValueError, match="accelerator spec"):
            dcd.sum(x, accelerator=spec)
        with pytest.raises(ValueError, match="accelerator spec"):
            dcd.map_overlap(triple, x, depth=1, accelerator=spec)


def test_accelerator_list_and_missing_device_on_the_cluster(client):
    x = np.arange(100.0)
    ids = [d.id for d in dc.devices()]
    got = client.compute(dcd.map_blocks(triple, da.from_array(x, chunks=10), accelerator=ids)).result()
    np.testing.assert_allclose(got, 3 * x)
    # well formed but absent: resolved (and refused) on the worker, which is named
    with pytest.raises(dc.BackendUnavailableError, match="worker tcp://.*cpu:9"):
        client.compute(dcd.map_blocks(triple, da.from_array(x, chunks=50), accelerator="cpu:9")).result()


def test_pin_devices_every_form_of_devices(client):
    workers = sorted(client.scheduler_info()["workers"])
    try:
        # one spec for all (it used to be split into the letters 'c', 'p', 'u')
        assert dcd.pin_devices(client, devices="cpu") == dict.fromkeys(workers, "cpu:0")
        assert dcd.pin_devices(client, devices=[dc.accelerator("cpu:0")]) == dict.fromkeys(workers, "cpu:0")
        dcd.pin_devices(client, devices=None)
        before = client.run(dcd.pinned_device)
        with pytest.raises(ValueError, match="accelerator spec 'bogus'"):
            dcd.pin_devices(client, devices=["cpu", "bogus"])
        with pytest.raises(ValueError, match="no accelerator for worker"):
            dcd.pin_devices(client, devices={workers[0]: "cpu"})
        with pytest.raises(ValueError, match="empty"):
            dcd.pin_devices(client, devices=[])
        with pytest.raises(TypeError, match="devices="):
            dcd.pin_devices(client, devices=[3])
        assert client.run(dcd.pinned_device) == before  # nothing half-pinned by the failed calls
    finally:
        client.run(dcd.placement.pin, None)


@dc.kernel
def drift(u: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    n = u.shape[0]
    if i < n:
        out[i] = 0.5 * u[max(i - 1, 0)] + 0.3 * u[i] + 0.2 * u[min(i + 1, n - 1)]


@pytest.mark.parametrize("boundary", ["nearest", "reflect", 0.5])
def test_iterations_with_edge_refill_on_every_accelerator(accelerator, boundary):
    u = np.random.default_rng(3).random(40, dtype=np.float32)
    U = da.from_array(u, chunks=10)
    stepped = U
    for _ in range(4):
        stepped = dcd.map_overlap(drift, stepped, depth=1, boundary=boundary, accelerator=accelerator.id)
    blocked = dcd.map_overlap(drift, U, depth=4, boundary=boundary, iterations=4, accelerator=accelerator.id)
    with dask.config.set(scheduler="threads"):
        want, got = dask.compute(stepped, blocked)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _my_pid() -> int:
    import os

    return os.getpid()


def test_a_restarted_worker_is_pinned_again():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  worker_dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        pins = dcd.pin_devices(c, devices="cpu:0")
        assert set(pins.values()) == {"cpu:0"}
        victim = sorted(pins)[0]
        old_pid = c.run(_my_pid, workers=[victim])[victim]
        c.restart_workers([victim])  # a new process (as after a crash) under the same worker name
        after = c.run(_my_pid)
        assert old_pid not in after.values() and len(after) == 2
        assert set(c.run(dcd.pinned_device).values()) == {"cpu:0"}  # was None for the new process


@dc.kernel
def plus_seven(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] + 7.0


def _totals(per_worker: dict) -> tuple[int, int]:
    stats = [d for by_device in per_worker.values() for d in by_device.values()]
    return sum(d["chunks"] for d in stats), sum(d["elements"] for d in stats)


def test_spread_stats_count_blocks_on_single_threaded_workers(client):
    # one device per worker (single-threaded): no choice to make, but spread_stats still reports the
    # blocks that ran there (it was empty on such workers)
    before = _totals(client.run(dcd.spread_stats))
    x = np.arange(120.0)
    got = client.compute(dcd.map_blocks(plus_seven, da.from_array(x, chunks=10))).result()
    np.testing.assert_array_equal(got, x + 7)
    after = _totals(client.run(dcd.spread_stats))
    assert (after[0] - before[0], after[1] - before[1]) == (12, 120)
    # the kernel sent with client.run is a copy, not the object the tasks used: matched by name
    # (it gave {} on every worker)
    assert _totals(client.run(dcd.spread_stats, plus_seven)) == (12, 120)
    y = dcd.map_blocks(plus_seven, da.from_array(x, chunks=40), accelerator="cpu")
    np.testing.assert_array_equal(y.compute(scheduler="sync"), x + 7)
    assert dcd.spread_stats(plus_seven)["cpu:0"]["chunks"] == 3
