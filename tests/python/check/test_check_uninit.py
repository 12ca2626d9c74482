"""initcheck of acc.empty memory (runtime/uninit.py): elements nothing wrote are found, whatever wrote the
others (an unchecked kernel, a copy, a host write, zeros); nothing is tracked while checks are unused."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel(check="initcheck")  # a kernel declared with check=: acc.empty memory is tracked from here on
def copy_all(src: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = src[i]


@dc.kernel
def fill_first(dst: dc.Buffer[dc.float32], n: dc.int32):
    i = dc.global_id(0)
    if i < n:
        dst[i] = 2.0


def test_unwritten_elements_are_found(accelerator):
    src = accelerator.empty(64, np.float32)
    dc.launch(fill_first, 64, src, np.int32(40), accelerator=accelerator)  # unchecked: writes 0..39
    out = np.zeros(64, np.float32)
    with pytest.raises(dc.KernelCheckError) as ei:
        dc.launch(copy_all, 64, src, out, accelerator=accelerator)
    f = ei.value.findings[0]
    assert f.kind == "initcheck" and f.buffer == "src" and f.count == 24
    assert f.threads == ((40,),) and f.index == (40,) and "acc.empty" in f.message
    assert not out.any()  # the launch did not run


@pytest.mark.parametrize("how", ["kernel", "copy_from", "host", "zeros", "asarray"])
def test_written_memory_is_clean(accelerator, how):
    n = 64
    if how == "zeros":
        src = accelerator.zeros(n, np.float32)
    elif how == "asarray":
        src = accelerator.asarray(np.ones(n, np.float32))
    else:
        src = accelerator.empty(n, np.float32)
        if how == "kernel":
            dc.launch(fill_first, n, src, np.int32(n), accelerator=accelerator)
        elif how == "copy_from":
            src.copy_from(np.full(n, 3.0, np.float32))
        else:
            with src.host() as h:
                h[:] = 4.0
    out = np.zeros(n, np.float32)
    dc.launch(copy_all, n, src, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, src.numpy())


def test_integer_and_complex_buffers(cpu):
    @dc.kernel(check="initcheck")
    def read_int(src: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
        i = dc.global_id(0)
        out[i] = src[i]

    src = cpu.empty(8, np.int32)
    with pytest.raises(dc.KernelCheckError):
        dc.launch(read_int, 8, src, np.zeros(8, np.int32), accelerator=cpu)
    src.copy_from(np.arange(8, dtype=np.int32))
    dc.launch(read_int, 8, src, np.zeros(8, np.int32), accelerator=cpu)


def test_nothing_is_tracked_while_checks_are_unused(run_python):
    code = ("import numpy as np, dotcompute as dc\n"
            "from dotcompute.runtime import uninit\n"
            "b = dc.accelerator('cpu').empty(16, np.float32)\n"
            "print(uninit.active, len(uninit.FRESH))\n")
    env = {"DOTCOMPUTE_CHECK": ""}
    proc = run_python(code, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "0"]
