"""`dotcompute check FILE...` (dotcompute.cli.check)."""

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dotcompute.cli import check

BROKEN = textwrap.dedent('''\
    import math
    import dotcompute as dc

    N = 8


    @dc.kernel
    def good(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < N:
            a[i] = math.sqrt(a[i])


    @dc.kernel
    def bad_list(a: dc.Buffer[dc.float32]):
        xs = [1, 2]
        a[0] = xs[0]


    @dc.func
    def helper(x: dc.float32) -> dc.float32:
        return x.size


    @dc.kernel(debug=True)
    def bad_return(a: dc.Buffer[dc.float32]):
        return a[0]


    def factory():
        @dc.kernel
        def nested(a: dc.Buffer[dc.int32]):
            a[0] = 1.5 % "x"
        return nested
    ''')

CLEAN = textwrap.dedent('''\
    import dotcompute as dc
    from dotcompute import kernel, func


    @func
    def sq(x):
        return x * x


    @kernel
    def k(a: dc.Buffer[dc.float64, 2]):
        i = dc.global_id(0)
        j = dc.global_id(1)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = sq(a[i, j])
    ''')


def run_check(tmp_path: Path, name: str, text: str, capsys, *flags: str) -> tuple[int, str]:
    path = tmp_path / name
    path.write_text(text)
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    check.register(sub)
    args = parser.parse_args(["check", *flags, str(path)])
    code = args.func(args)
    return code, capsys.readouterr().out


def test_every_broken_function_is_reported_with_its_line(tmp_path, capsys):
    code, out = run_check(tmp_path, "broken.py", BROKEN, capsys)
    assert code == 1
    path = str(tmp_path / "broken.py")
    assert f"{path}:16:10: lists are not supported" in out
    assert f"{path}:22:12:" in out and "size" in out  # (x.real of a float is x since complex arrived)
    assert f"{path}:27:5: kernels cannot return a value" in out
    assert f"{path}:33:" in out  # the kernel defined inside a function is checked too
    assert out.count(f"{path}:") == 4


def test_clean_file_exits_zero(tmp_path, capsys):
    code, out = run_check(tmp_path, "clean.py", CLEAN, capsys)
    assert code == 0 and out == ""


def test_file_that_cannot_be_imported_is_checked_statically(tmp_path, capsys):
    text = BROKEN.replace("N = 8", "N = 8\nraise RuntimeError('no import')")
    code, out = run_check(tmp_path, "noimport.py", text, capsys, "--import")
    assert code == 1
    assert out.count("lists are not supported") == 1
    assert "kernels cannot return a value" in out


def test_default_does_not_run_the_file(tmp_path, capsys):
    marker = tmp_path / "ran"
    text = BROKEN + f"\nopen({str(marker)!r}, 'w').close()\n"
    for flags in ((), ("--no-import",)):  # --no-import is the default, still accepted
        code, out = run_check(tmp_path, "noimport2.py", text, capsys, *flags)
        assert code == 1 and not marker.exists()
        assert out.count("lists are not supported") == 1 and "kernels cannot return a value" in out
    code, out = run_check(tmp_path, "clean2.py", CLEAN, capsys)
    assert code == 0


def test_import_runs_the_top_level_but_not_main(tmp_path, capsys):
    marker, main_marker = tmp_path / "ran", tmp_path / "main"
    text = (CLEAN + f"\nopen({str(marker)!r}, 'w').close()\n"
            f"if __name__ == '__main__':\n    open({str(main_marker)!r}, 'w').close()\n")
    code, out = run_check(tmp_path, "imported.py", text, capsys, "--import")
    assert code == 0 and marker.exists() and not main_marker.exists()


COMPUTED = textwrap.dedent('''\
    import dotcompute as dc

    SCALE = float(len("abc"))       # computed by a call: only known by running the file
    OFFSET: float = 0.5             # an annotated constant is evaluated statically


    @dc.kernel
    def k(a: dc.Buffer[dc.float64]):
        a[0] = a[0] * SCALE + OFFSET
    ''')


def test_values_computed_at_top_level_need_import(tmp_path, capsys):
    code, out = run_check(tmp_path, "computed.py", COMPUTED, capsys)
    path = str(tmp_path / "computed.py")
    assert code == 1
    assert f"{path}:9:" in out and "'SCALE'" in out and "--import" in out
    assert "'OFFSET'" not in out
    code, out = run_check(tmp_path, "computed.py", COMPUTED, capsys, "--import")
    assert code == 0 and out == ""


TYPES = textwrap.dedent('''\
    from __future__ import annotations

    import numpy as np
    import dotcompute as dc

    IVEC3 = dc.vector(3, dc.int32)      # a type constructor: evaluated statically
    HALF = np.float32(0.5)
    opened = open(__file__)             # not pure: never run by the static check


    @dc.struct
    class Particle:
        """A field-only struct class is defined statically."""
        pos: dc.vec3
        cell: IVEC3


    @dc.kernel
    def k(ps: dc.Buffer[Particle], out: dc.Buffer[dc.int32]):
        i = dc.global_id(0)
        out[i] = ps[i].cell[0] + dc.int32(ps[i].pos[1] * HALF)


    @dc.kernel
    def uses_file(out: dc.Buffer[dc.int32]):
        out[0] = opened
    ''')


def test_types_and_structs_resolve_without_import(tmp_path, capsys):
    code, out = run_check(tmp_path, "types.py", TYPES, capsys)
    path = str(tmp_path / "types.py")
    assert code == 1
    assert out.count(path + ":") == 1 and "'opened'" in out and "--import" in out


def test_import_and_no_import_are_exclusive(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run_check(tmp_path, "clean.py", CLEAN, capsys, "--import", "--no-import")


FACTORIES = textwrap.dedent('''\
    import dotcompute as dc


    def typed(k: int, bias: float):
        @dc.kernel
        def scaled(x: dc.Buffer[dc.float32]):
            x[0] = x[0] * k + bias
        return scaled


    def typed_broken(k: int):
        @dc.kernel
        def bad(x: dc.Buffer[dc.float32]):
            x[0] = k << 1.5
        return bad


    def untyped(k):
        @dc.kernel
        def opaque(x: dc.Buffer[dc.float32]):
            x[0] = x[0] * k
        return opaque
    ''')


def test_kernels_in_factories_use_annotated_closure_variables(tmp_path, capsys):
    code, out = run_check(tmp_path, "factories.py", FACTORIES, capsys)
    path = str(tmp_path / "factories.py")
    assert code == 1
    # only the broken one; `opaque` depends on an unannotated closure variable and is skipped with a note
    assert out.count(path + ":") == 1 and f"{path}:14:16:" in out and "<<" in out


def test_syntax_error_in_the_file(tmp_path, capsys):
    code, out = run_check(tmp_path, "syntax.py", "def f(:\n", capsys)
    assert code == 2 and "invalid Python" in out


def test_command_line_entry(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text(BROKEN)
    root = Path(check.__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-m", "dotcompute.cli.check", str(path)], capture_output=True,
                            text=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert result.returncode == 1
    assert result.stdout.count(str(path) + ":") == 4


def test_default_imports_nothing_from_the_files_folder(tmp_path, capsys):
    # issue 22: the static namespace ran the file's imports with its folder first on sys.path, so a
    # module beside the file executed under the default (no-import) check
    marker = tmp_path / "sibling_ran"
    sibling = f"sibling_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{sibling}.py").write_text(f"open({str(marker)!r}, 'w').close()\nSCALE = 2.0\n")
    text = textwrap.dedent(f'''\
        import math
        import dotcompute as dc
        from {sibling} import SCALE
        import {sibling} as sib


        @dc.kernel
        def k(a: dc.Buffer[dc.float64]):
            a[0] = a[0] * SCALE + math.pi
        ''')
    try:
        code, out = run_check(tmp_path, "uses_sibling.py", text, capsys)
        assert not marker.exists(), "the default check imported the sibling module"
        assert code == 1 and "'SCALE'" in out and "--import" in out  # unknown, with the hint
        # the real command from the file's folder (python -m puts the current folder on sys.path)
        root = Path(check.__file__).resolve().parents[2]
        result = subprocess.run([sys.executable, "-m", "dotcompute.cli.check", "uses_sibling.py"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=120,
                                env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
        assert not marker.exists(), result.stdout + result.stderr
        assert result.returncode == 1 and "'SCALE'" in result.stdout
        # --import keeps the old behaviour: the sibling runs and SCALE resolves
        code, out = run_check(tmp_path, "uses_sibling.py", text, capsys, "--import")
        assert marker.exists() and code == 0, out
    finally:
        sys.modules.pop(sibling, None)
