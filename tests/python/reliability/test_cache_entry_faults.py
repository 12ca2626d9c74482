"""Hostile files in place of kernel-cache entries (issue 22), end to end: a FIFO used to block the next
process forever (``open`` before the regular-file check), and a 50 GiB sparse file made it fail with
``MemoryError: std::bad_alloc``. Both are now a miss: the kernel is compiled again and its entry
replaces the file. Each run is a fresh interpreter on the test's private cache folder.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

RUN = """
import numpy as np, dotcompute as dc

@dc.kernel
def triple(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < y.shape[0]:
        y[i] = 3 * x[i]

x = np.arange(100, dtype=np.float32)
y = np.zeros_like(x)
dc.launch(triple, x.size, x, y, accelerator="cpu:0")
assert (y == 3 * x).all()
print("OK")
"""


def _entries(folder: Path) -> set[Path]:
    return set(folder.rglob("*.dck"))


@pytest.mark.parametrize("make", ["fifo", "huge"])
def test_a_hostile_file_in_place_of_an_entry_is_rebuilt(run_python, tmp_cache: Path, tmp_path: Path,
                                                        make: str) -> None:
    script = tmp_path / "triple.py"  # a file: the kernel's source must be readable
    script.write_text(RUN)
    run = f"import runpy; runpy.run_path({str(script)!r})"
    first = run_python(run)
    assert first.returncode == 0 and "OK" in first.stdout, first.stderr
    entries = _entries(tmp_cache)
    assert entries, "the first run wrote no cache entry"
    for path in entries:
        path.unlink()
        if make == "fifo":
            os.mkfifo(path, 0o600)
        else:
            with open(path, "wb") as f:  # sparse: no disk used
                f.truncate(50 << 30)
    # a blocked open ends in the timeout (a test failure), not a hang of the suite
    second = run_python(run, timeout=120)
    assert second.returncode == 0 and "OK" in second.stdout, second.stderr
    assert "bad_alloc" not in second.stderr
    for path in entries:
        st = path.lstat()
        assert stat.S_ISREG(st.st_mode) and st.st_size < 1 << 30, f"{path} was not replaced by the rebuilt entry"
