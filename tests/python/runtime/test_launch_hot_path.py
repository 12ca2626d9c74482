"""The launch hot path (``dc.launch(k, n, buf, accelerator=acc)``, ``acc.launch``) skips what is unused
-- the array-expression hook until an expression exists, the orchestration layer without its
options -- and still sees what changes between launches: DOTCOMPUTE_DEBUG, lazy arguments."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def _past_the_end(x: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    x[i + 1] = 1.0


@dc.kernel
def _twice(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]) -> None:
    i = dc.global_id(0)
    out[i] = 2.0 * x[i]


def test_expression_hook_runs_only_once_an_expression_exists(run_python, tmp_path):
    code = textwrap.dedent("""
        import numpy as np
        import dotcompute as dc
        from dotcompute.runtime import array_hooks

        calls = []
        real = array_hooks.HOOKS["before_launch"]
        array_hooks.HOOKS["before_launch"] = lambda k, a: (calls.append(k.name), real(k, a))

        @dc.kernel
        def twice(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
            i = dc.global_id(0)
            out[i] = 2.0 * x[i]

        acc = dc.accelerator("cpu")
        x, out = acc.asarray(np.arange(4, dtype=np.float32)), acc.zeros(4, np.float32)
        for _ in range(3):
            dc.launch(twice, 4, x, out, accelerator=acc)
            acc.launch(twice, 4, x, out)
        assert calls == [] and not array_hooks.lazy_made, calls
        y = x + 1                       # the first expression (pending)
        assert array_hooks.lazy_made
        acc.launch(twice, 4, y, out)    # a lazy argument: computed before the launch
        assert calls == ["twice"], calls
        assert out.numpy().tolist() == [2.0, 4.0, 6.0, 8.0]
        print("ok")
    """)
    script = tmp_path / "hot_path.py"  # a file: the kernel's source must be readable
    script.write_text(code)
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_debug_mode_switched_on_between_launches(monkeypatch):
    acc = dc.accelerator("cpu")
    x = acc.zeros(4, np.float32)
    monkeypatch.delenv("DOTCOMPUTE_DEBUG", raising=False)
    dc.launch(_twice, 4, x, x, accelerator=acc)  # the plain entry is cached
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "1")
    with pytest.raises(dc.KernelIndexError):
        dc.launch(_past_the_end, 4, x, accelerator=acc)
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "0")
    acc.synchronize()


def test_every_spelling_of_the_device_launches_the_same(accelerator):
    x = np.arange(64, dtype=np.float32)
    for spec in (accelerator, accelerator.id, None):
        out = accelerator.zeros(64, np.float32)
        dx = accelerator.asarray(x)
        dc.launch(_twice, 64, dx, out, accelerator=spec)
        np.testing.assert_array_equal(out.numpy(), 2 * x)
    out = np.zeros(64, np.float32)  # numpy arguments: staged where the device needs it
    accelerator.launch(_twice, 64, x, out)
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(dc.KernelTypeError, match="_twice"):  # the user's kernel name, on the hot path too
        accelerator.launch(_twice, 64, accelerator.zeros(64, np.int32), accelerator.zeros(64, np.float32))
