"""A new process evaluating an expression seen before loads its kernel from the disk cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CODE = """
import json, numpy as np
import dotcompute as dc
from dotcompute.runtime.cache import cache_info
acc = dc.accelerator("cpu")
x = acc.asarray(np.arange(5, dtype=np.float32))
z = dc.sqrt(x * {c} + 1.0) - x
out = z.numpy().tolist()
s = float(dc.sum(x * x - {c}))
info = cache_info()
print(json.dumps({{"z": out, "s": s, "disk_hits": info["disk_hits"], "misses": info["misses"]}}))
"""


def test_second_process_hits_the_disk_cache(tmp_cache: Path, run_python) -> None:
    first = run_python(CODE.format(c=2.0))
    assert first.returncode == 0, first.stderr
    r1 = json.loads(first.stdout.strip().splitlines()[-1])
    assert r1["misses"] == 3 and r1["disk_hits"] == 0  # the expression, the reduction, its combine step
    second = run_python(CODE.format(c=5.0))  # other constants: the same kernels
    assert second.returncode == 0, second.stderr
    r2 = json.loads(second.stdout.strip().splitlines()[-1])
    assert r2["misses"] == 0 and r2["disk_hits"] == 3
    assert r2["z"][4] == pytest.approx((4 * 5.0 + 1) ** 0.5 - 4, rel=1e-6)
    assert r2["s"] == sum(i * i - 5.0 for i in range(5))
