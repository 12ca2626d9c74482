"""The launch-time bounds proof (lang/bounds.py): proven out of range -> LaunchError before the launch;
guarded kernels and what cannot be proven run as before, without warnings."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def copy(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = x[i]  # LINE-COPY


@dc.kernel
def shifted(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    j = 2 * i + 1
    out[i] = x[j]  # LINE-SHIFT


@dc.kernel
def grid(m: dc.Buffer[dc.float32, 2]):
    r = dc.global_id(0)
    c = dc.global_id(1)
    m[r, c] = 1.0  # LINE-GRID


@dc.kernel
def guarded(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i]


@dc.kernel
def early_return(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i >= out.shape[0]:
        return
    out[i] = x[i]


@dc.kernel
def indirect(idx: dc.Buffer[dc.int32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[idx[i]] = 1.0


@dc.kernel
def ternary(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    n = x.shape[0]
    out[i % 8] = x[i] if i < n else 1.0


def line_of(marker: str) -> int:
    src = inspect.getsource(inspect.getmodule(line_of)).splitlines()
    return 1 + next(n for n, t in enumerate(src) if marker in t and "line_of" not in t)


def test_unguarded_copy_past_the_end_is_refused_before_running(cpu):
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(dc.LaunchError) as ei:
        dc.launch(copy, 100_000, x, out, accelerator=cpu)
    msg = str(ei.value)
    assert "copy" in msg and "out[i]" in msg and f":{line_of('# LINE-COPY')}:" in msg and "99999" in msg
    assert ei.value.lineno == line_of("# LINE-COPY") and ei.value.buffer == "out"
    assert not out.any()  # nothing ran
    dc.launch(copy, 8, x, out, accelerator=cpu)  # the right size runs
    assert out.all()


def test_affine_index_is_followed(cpu):
    x = np.ones(16, np.float32)
    out = np.zeros(8, np.float32)
    dc.launch(shifted, 8, x, out, accelerator=cpu)  # x[2*7+1] = x[15]: fits
    with pytest.raises(dc.LaunchError, match=r"x\[j\] reaches index 17"):
        dc.launch(shifted, 9, x, np.zeros(9, np.float32), accelerator=cpu)


def test_each_dimension(cpu):
    dc.launch(grid, (4, 5), np.zeros((4, 5), np.float32), accelerator=cpu)
    with pytest.raises(dc.LaunchError, match="dimension 1"):
        dc.launch(grid, (4, 6), np.zeros((4, 5), np.float32), accelerator=cpu)
    with pytest.raises(dc.LaunchError, match="dimension 0"):
        dc.launch(grid, (5, 5), np.zeros((4, 5), np.float32), accelerator=cpu)


def test_other_devices_refuse_too(accelerator):
    with pytest.raises(dc.LaunchError, match="out of bounds"):
        dc.launch(copy, 9, np.ones(8, np.float32), np.zeros(8, np.float32), accelerator=accelerator)


@pytest.mark.parametrize("k", [guarded, early_return, indirect, ternary], ids=lambda k: k.name)
def test_unprovable_or_guarded_runs_silently(k, cpu):
    if k is indirect:
        args = (np.zeros(64, np.int32), np.zeros(8, np.float32))
    else:
        args = (np.ones(8, np.float32), np.zeros(8, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dc.launch(k, 64, *args, accelerator=cpu)
    assert args[1].any()


def test_facts_of_a_kernel():
    from dotcompute.lang.bounds import facts

    found = facts(shifted.ir().kernel)
    assert {(f.buffer, f.scale, f.offset) for f in found} == {("out", 1, 0), ("x", 2, 1)}
    assert facts(guarded.ir().kernel) == () and facts(early_return.ir().kernel) == ()


def test_remembered_proof_follows_new_buffers_and_sizes(cpu):
    x, out = cpu.asarray(np.ones(8, np.float32)), cpu.zeros((8,), np.float32)
    dc.launch(copy, 8, x, out)
    dc.launch(copy, 8, x, out)  # the same buffers and size: remembered
    with pytest.raises(dc.LaunchError):
        dc.launch(copy, 9, x, out)  # a new size
    small = cpu.zeros((4,), np.float32)
    with pytest.raises(dc.LaunchError, match="'out' has shape \\(4,\\)"):
        dc.launch(copy, 8, x, small)  # a new buffer
    a = np.zeros(8, np.float32)
    dc.launch(copy, 8, np.ones(8, np.float32), a, accelerator=cpu)
    a.shape = (2, 4)  # numpy shapes can change: looked at every launch
    with pytest.raises((dc.LaunchError, dc.KernelTypeError)):
        dc.launch(copy, 8, np.ones(8, np.float32), a, accelerator=cpu)


@dc.kernel
def count_hits(hits: dc.Buffer[dc.int32, 2], total: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    dc.atomic_add(hits, (i, j), 1)
    dc.atomic_add(total, 0, 1)


def test_atomics_are_facts_too(cpu):
    hits = np.zeros((5, 4), np.int32)
    total = np.zeros(1, np.int64)
    dc.launch(count_hits, (5, 4), hits, total, accelerator=cpu)
    assert (hits == 1).all() and total[0] == 20
    with pytest.raises(dc.LaunchError, match="hits"):
        dc.launch(count_hits, (5, 5), hits, total, accelerator=cpu)
