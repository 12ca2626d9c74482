"""kernel.precompile: the first launch afterwards finds its binary in the kernel cache."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from orchestrate_kernels import bump, scale

import dotcompute as dc


def test_precompile_then_launch_compiles_nothing(accelerator):
    done = bump.precompile(accelerators=[accelerator])
    assert [acc for acc, _ in done] == [accelerator.id]
    x = np.zeros(16, np.float32)
    with dc.profile() as prof:
        dc.launch(bump, 16, x, accelerator=accelerator)
    assert [c.cache for c in prof.compiles] in ([], ["memory"])
    assert (x == 1).all()


def test_precompile_signatures_in_the_background(accelerator):
    sigs = [[dc.Buffer[dc.float32], dc.Buffer[dc.float32], dc.float32],
            [dc.Buffer[dc.float64], dc.Buffer[dc.float64], dc.float32]]
    future = scale.precompile(accelerators=accelerator.id, signatures=sigs, wait=False)
    entries = future.result(timeout=300)
    assert len(entries) == 2 and len({e for _, e in entries}) == 2
    x = np.ones(8, np.float64)
    y = np.zeros(8, np.float64)
    with dc.profile() as prof:
        dc.launch(scale, 8, x, y, np.float32(2.0), accelerator=accelerator)
    assert all(c.cache == "memory" for c in prof.compiles)
    assert (y == 2).all()


def test_precompile_rejects_non_kernels():
    with pytest.raises(TypeError, match="precompile"):
        dc.orchestrate.precompile(lambda: None)


def test_the_precompile_command_warms_a_new_process(run_python, tmp_path):
    module = tmp_path / "deployed.py"
    module.write_text(textwrap.dedent('''
        import dotcompute as dc

        @dc.kernel
        def halve(x: dc.Buffer[dc.float32]) -> None:
            i = dc.global_id(0)
            x[i] = x[i] * 0.5
    '''))
    env = {"DOTCOMPUTE_CACHE_DIR": str(tmp_path / "cache")}
    done = run_python(f"from dotcompute.cli.main import main; raise SystemExit(main(['precompile', "
                      f"{str(module)!r}, '-a', 'cpu']))", env=env)
    assert done.returncode == 0, done.stderr
    assert "halve: compiled for cpu:0" in done.stdout
    check = textwrap.dedent(f'''
        import sys, numpy as np, dotcompute as dc
        sys.path.insert(0, {str(tmp_path)!r})
        from deployed import halve
        x = np.ones(8, np.float32)
        with dc.profile() as prof:
            dc.launch(halve, 8, x, accelerator="cpu")
        assert (x == 0.5).all()
        print([c.cache for c in prof.compiles])
    ''')
    done = run_python(check, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['disk']"
    missing = run_python("from dotcompute.cli.main import main; raise SystemExit(main(['precompile', 'nope.py']))")
    assert missing.returncode != 0 and "no such file" in missing.stderr
