"""DOTCOMPUTE_LOG=DEBUG prints plugin loading, compiles (with the cache outcome), device choices
and fallbacks through Python's logging."""

from __future__ import annotations

import textwrap


def test_debug_log_shows_compiles_choices_and_fallbacks(run_python, tmp_path):
    script = tmp_path / "logged.py"
    script.write_text(textwrap.dedent('''
        import warnings
        import numpy as np
        import dotcompute as dc

        @dc.kernel
        def triple(x: dc.Buffer[dc.float32]) -> None:
            i = dc.global_id(0)
            x[i] = x[i] * 3.0

        x = np.ones(64, np.float32)
        dc.launch(triple, 64, x, accelerator="best")
        warnings.simplefilter("ignore")
        dc.launch(triple, 64, x, accelerator="cuda", fallback="cpu")
    '''))
    done = run_python(f"import runpy; runpy.run_path({str(script)!r})",
                      env={"DOTCOMPUTE_LOG": "DEBUG", "DOTCOMPUTE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "dotcompute.runtime: backend cpu" in err
    assert "dotcompute.compile: compiled triple_" in err and "(cache: miss)" in err
    assert "best chose " in err and "exploring" in err
    assert "falling back to cpu:0" in err
    assert "dotcompute.launch: launch plan for triple on cpu:0" in err
