"""Faults from the outside abuse run of issue 22: each ends in a clear exception or a documented
recovery (docs/reliability.md)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dotcompute as dc

_CTRL_C_SCRIPT = """
import os, signal, threading
import dotcompute as dc

box = [0]
started = threading.Event()
release = threading.Event()

def add_hundred():
    started.set()
    value = box[0]  # read-modify-write: two overlapping steps lose an update
    release.wait(30)
    box[0] = value + 100

def interrupt_once_started():
    started.wait(30)
    os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, which any thread of the process may take

# An interactive Python has this handler; a process started in the background by a shell without
# job control (CI: `cmd &`) inherits SIGINT ignored, and Python then leaves it ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
p = dc.Pipeline(max_workers=4)
p.add_host(add_hundred)
threading.Thread(target=interrupt_once_started, daemon=True).start()
try:
    p.run()
    raise SystemExit("p.run() returned: the Ctrl-C did not interrupt it")
except KeyboardInterrupt:
    pass
assert not release.is_set()  # the interrupted step is still running
started.clear()
# released only after the second run has had the chance to start its own step
timer = threading.Timer(0.2, release.set)
timer.start()
p.run()
timer.join()
assert box[0] == 200, box
p.close()
print("ok")
"""


def test_ctrl_c_during_run_does_not_let_the_next_run_overlap_the_interrupted_step() -> None:
    # In a fresh interpreter, as a user's Ctrl-C meets it (with Python's SIGINT handler in place:
    # see the script).
    proc = subprocess.run([sys.executable, "-c", _CTRL_C_SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr


# ------------------------------------------------------------------ state files in the cache folder

@pytest.fixture
def private_history(tmp_path: Path):
    yield tmp_path
    dc.orchestrate.history.reset()
    dc.orchestrate.breakers.reset()


def _double_kernel():
    @dc.kernel
    def double(x, y):
        i = dc.global_id(0)
        y[i] = 2 * x[i]

    return double


@pytest.mark.parametrize("make", ["fifo", "deep", "huge", "symlink"])
def test_a_hostile_history_file_is_treated_as_a_corrupt_one(private_history: Path, make: str) -> None:
    path = private_history / "history-v1.json"
    if make == "fifo":
        os.mkfifo(path)  # open() without O_NONBLOCK waited forever for a writer
    elif make == "deep":
        path.write_text('{"version": 1, "entries": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif make == "huge":
        with open(path, "wb") as f:  # sparse: no disk used, but reading it whole would take 50 GiB
            f.truncate(50 << 30)
    else:
        (private_history / "elsewhere.json").write_text('{"version": 1, "entries": {}}')
        path.symlink_to(private_history / "elsewhere.json")
    assert dc.orchestrate.history_module.read(path) == {}
    dc.orchestrate.history.reset(path)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    double = _double_kernel()
    for _ in range(3):  # the first use (compile) is not measured: the later ones are saved
        dc.launch(double, 64, x, y, accelerator="best")  # was a RecursionError for "deep"
    np.testing.assert_array_equal(y, 2 * x)
    dc.orchestrate.history.save()  # the documented recovery: replaced by a valid file
    assert path.is_file() and not path.is_symlink()
    assert json.loads(path.read_text())["version"] == 1


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, -math.inf])
def test_breaker_cooldown_must_be_a_finite_number_of_seconds(value: float) -> None:
    with pytest.raises(ValueError, match="cooldown_s"):
        dc.orchestrate.breakers.configure(cooldown_s=value)
    with pytest.raises(ValueError, match="cooldown_s"):
        dc.orchestrate.CircuitBreakers(cooldown_s=value)
    assert math.isfinite(dc.orchestrate.breakers.cooldown_s)


def test_info_reports_a_malformed_breaker_file_and_goes_on(run_python, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    folder = cache / "orchestrate" / "breakers"
    folder.mkdir(parents=True)
    cache.chmod(0o700)
    pid = os.getpid()  # alive: a well-formed file of it would be shown
    (folder / "1.json").write_text('{"pid": ' + str(pid) + ', "breakers": {"cpu:0": "open"}}')
    (folder / "2.json").write_text("[1, 2")
    (folder / "3.json").write_text(json.dumps({"pid": pid, "breakers": {"cpu:0": {
        "state": "open", "failures": 3, "opened": 1, "open_until": None}}}))
    os.mkfifo(folder / "4.json")
    done = run_python("from dotcompute.cli.main import main; raise SystemExit(main(['info']))",
                      env={"DOTCOMPUTE_CACHE_DIR": str(cache)}, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    out = done.stdout + done.stderr
    for bad in ("1.json", "2.json", "4.json"):
        assert f"{bad} is not usable" in out, out
    assert f"pid {pid}" in out  # the good file is still shown
    assert done.returncode == 1  # info's rule: a problem it reports makes the exit status 1
