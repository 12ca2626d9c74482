"""Kernels pickle by value: round trips, closures and device functions, and a kernel defined in a
script's ``__main__`` running on process workers."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from dask_kernels import affine2d, square

import dotcompute as dc


def make_kernel(scale: float, shift: int):
    @dc.kernel
    def scaled(x: dc.Buffer[dc.float64], out: dc.Buffer[dc.float64]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = square(x[i]) * scale + shift + math.sqrt(4.0)
    return scaled


def test_round_trip_launches_and_matches():
    k = make_kernel(1.5, 3)
    k2 = pickle.loads(pickle.dumps(k))
    assert k2 is not k and k2.name == k.name
    x = np.linspace(0, 1, 50)
    a, b = np.zeros_like(x), np.zeros_like(x)
    dc.launch(k, 50, x, a, accelerator="cpu")
    dc.launch(k2, 50, x, b, accelerator="cpu")
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(b, x * x * 1.5 + 3 + 2)


def test_closure_constants_travel_by_value():
    k1, k2 = make_kernel(1.0, 0), make_kernel(2.0, 1)
    x = np.ones(4)
    outs = []
    for k in (k1, k2):
        out = np.zeros(4)
        dc.launch(pickle.loads(pickle.dumps(k)), 4, x, out, accelerator="cpu")
        outs.append(out)
    np.testing.assert_allclose(outs[0], 3.0)
    np.testing.assert_allclose(outs[1], 5.0)


def test_same_payload_rebuilds_once_per_process():
    data = pickle.dumps(affine2d)
    assert pickle.loads(data) is pickle.loads(data)
    assert pickle.loads(pickle.dumps(square))(3) == 9  # device functions too, callable on the host


def test_options_survive():
    k = dc.kernel(debug=True, name="renamed")(make_kernel(1.0, 0).pyfunc)
    k2 = pickle.loads(pickle.dumps(k))
    assert k2.debug is True and k2.name == "renamed"


def test_unpicklable_free_name_is_named():
    import threading

    lock = threading.Lock()

    @dc.kernel
    def uses_lock(out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if lock:
            out[i] = 1.0

    with pytest.raises(pickle.PicklingError, match="'lock'"):
        pickle.dumps(uses_lock)


SCRIPT = textwrap.dedent('''
    import os
    import sys
    import numpy as np
    import dask.array as da
    import distributed
    import dotcompute as dc
    import dotcompute.dask as dcd

    GAIN = 3.0

    @dc.func
    def cube(v):
        return v * v * v

    @dc.kernel
    def main_kernel(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < out.shape[0]:
            out[i] = cube(x[i]) * GAIN

    if __name__ == "__main__":
        # read the source here, then delete the file: the workers must get the kernel by value, as a
        # worker on another machine would
        main_kernel.decls()
        os.remove(__file__)
        client = distributed.Client(sys.argv[1])
        x = np.linspace(0, 2, 5000, dtype=np.float32)
        y = dcd.map_blocks(main_kernel, da.from_array(x, chunks=1000))
        got = client.compute(y).result()
        np.testing.assert_allclose(got, x ** 3 * 3.0, rtol=1e-5)
        ran = client.run(lambda: len(dcd.spread_stats()) > 0 or dcd.pinned_device() is not None)
        print("OK", sorted(ran.values()))
        client.close()
''')


def test_kernel_defined_in_main_runs_on_process_workers(client, tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    addr = client.scheduler.address
    proc = subprocess.run([sys.executable, str(script), addr], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "OK" in proc.stdout


def test_multiprocessing_scheduler_runs_a_closure_kernel():
    import dask
    import dask.array as da

    import dotcompute.dask as dcd

    k = make_kernel(0.5, 1)  # a closure: no module attribute names it, only by-value pickling reaches it
    x = np.linspace(0, 1, 600)
    y = dcd.map_blocks(k, da.from_array(x, chunks=200), accelerator="cpu")
    with dask.config.set(scheduler="processes", num_workers=2):
        got = y.compute()
    np.testing.assert_allclose(got, x * x * 0.5 + 1 + 2)
