"""Audit: processes forked after dotcompute started its devices (multiprocessing's default start method on
Linux) get a clear error instead of hanging; spawned processes, and forks made before any device was used,
work."""

from __future__ import annotations

import textwrap

SCRIPT = textwrap.dedent('''
    import multiprocessing as mp
    import sys

    import numpy as np

    import dotcompute as dc


    @dc.kernel
    def bump(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < a.shape[0]:
            a[i] = a[i] + 1.0


    def work(spec):
        a = np.zeros(1 << 18, np.float32)  # large enough for the CPU backend's worker pool
        dc.launch(bump, a.size, a, accelerator=spec)
        return float(a.sum())


    if __name__ == "__main__":
        spec, order = sys.argv[1], sys.argv[2]
        if order == "fork-before-use":
            with mp.get_context("fork").Pool(1) as p:
                print("child", p.map(work, [spec]))
        print("parent", work(spec))
        if order == "fork-after-use":
            with mp.get_context("fork").Pool(1) as p:
                try:
                    p.map(work, [spec])
                    print("child ran")
                except dc.BackendUnavailableError as e:
                    print("refused:", "spawn" in str(e))
        if order == "spawn":
            with mp.get_context("spawn").Pool(1) as p:
                print("child", p.map(work, [spec]))
''')


def test_fork_after_use_is_refused_not_hung(accelerator, run_python, tmp_path):
    script = tmp_path / "forking.py"
    script.write_text(SCRIPT)
    code = f"import runpy, sys; sys.argv = ['forking.py', {accelerator.id!r}, 'fork-after-use']; " \
           f"runpy.run_path({str(script)!r}, run_name='__main__')"
    r = run_python(code, timeout=240, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "parent 262144.0" in r.stdout
    assert "refused: True" in r.stdout


def test_spawn_and_fork_before_use_work(run_python, tmp_path):
    script = tmp_path / "forking.py"
    script.write_text(SCRIPT)
    for order in ("fork-before-use", "spawn"):
        r = run_python(f"import subprocess, sys; sys.exit(subprocess.call([sys.executable, {str(script)!r}, "
                       f"'cpu', {order!r}]))", timeout=240, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert "child [262144.0]" in r.stdout and "parent 262144.0" in r.stdout
