"""Kernels whose source ``inspect`` cannot find: ``python -c``, stdin, exec, REPLs, IPython cells,
and ``dc.kernel(source=...)`` / ``dc.func(source=...)``."""

from __future__ import annotations

import linecache
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dotcompute as dc

DEF_F = textwrap.dedent('''\
    import dotcompute as dc
    @dc.kernel
    def f(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = a[i] + 1.0
    f.check()
    ''')


def _run(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=120)


def _assert_explains(out: str, origin: str) -> None:
    assert "the source of 'f' is not available" in out, out
    assert origin in out, out
    assert "dc.kernel(source=" in out and "write the function in a file" in out, out


def test_python_dash_c_says_why_and_how_to_fix():
    r = _run(["-c", DEF_F])
    assert r.returncode == 1
    _assert_explains(r.stderr, "`python -c`")
    assert 'File "<string>", line 2' in r.stderr  # the def's location (its first decorator)


def test_code_piped_on_stdin_says_why_and_how_to_fix():
    r = _run([], stdin=DEF_F)
    assert r.returncode == 1
    _assert_explains(r.stderr, "interactive prompt or in code piped on stdin")


def _exec_def(filename: str, text: str, register: bool) -> dict:
    if register:  # as IPython registers a cell, and the 3.13 REPL an input (`linecache._register_code`)
        lines = text.splitlines(keepends=True)
        linecache.cache[filename] = (len(text), None, lines, "<stdin>" if "python-input" in filename else filename)
    ns: dict = {"dc": dc}
    exec(compile(text, filename, "exec"), ns)  # noqa: S102 -- the kernel definition under test
    return ns


ADD = textwrap.dedent('''\
    x = 1  # a line before the kernel: error positions must count it
    @dc.kernel
    def f(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = a[i] + 2.0
    ''')


def test_exec_without_registered_source_names_the_fix():
    ns = _exec_def("<generated>", ADD, register=False)
    with pytest.raises(dc.KernelSyntaxError) as e:
        ns["f"].check()
    assert e.value.filename == "<generated>" and e.value.lineno == 2
    assert "linecache.cache['<generated>']" in str(e.value)
    _assert_explains(str(e.value), "compiled under the name <generated>")


@pytest.mark.parametrize("filename", ["<ipython-input-7-0123456789ab>", "<python-input-3>",
                                      "/tmp/ipykernel_4242/1234567.py"])
def test_source_registered_in_linecache_works(filename):
    ns = _exec_def(filename, ADD, register=True)
    try:
        a = np.arange(6, dtype=np.float32)
        dc.launch(ns["f"], a.size, a, accelerator="cpu")
        np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32) + 2)
        # errors point into the registered text
        bad = _exec_def(filename + "x", ADD.replace("a[i] + 2.0", "[2.0]"), register=True)["f"]
        with pytest.raises(dc.KernelSyntaxError) as e:
            bad.check()
        assert (e.value.filename, e.value.lineno, e.value.offset) == (filename + "x", 5, 12)
        assert e.value.text.strip() == "a[i] = [2.0]"
    finally:
        linecache.cache.pop(filename, None)
        linecache.cache.pop(filename + "x", None)


SCALE = 3.0


def test_kernel_from_source_text_resolves_names_in_the_calling_module():
    k = dc.kernel(source='''
        @dc.kernel          # decorators in the text are ignored
        def scaled(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
            i = dc.global_id(0)
            if i < out.size:
                out[i] = twice(a[i]) * SCALE
        ''', debug=False)
    assert isinstance(k, dc.Kernel) and k.name == "scaled"
    a = np.arange(10, dtype=np.float32)
    out = np.zeros_like(a)
    dc.launch(k, a.size, a, out, accelerator="cpu")
    np.testing.assert_array_equal(out, a * 2 * SCALE)
    assert "scaled" in k.source("cuda")
    again = pickle.loads(pickle.dumps(k))
    out2 = np.zeros_like(a)
    dc.launch(again, a.size, a, out2, accelerator="cpu")
    np.testing.assert_array_equal(out2, out)


twice = dc.func(source="def twice(x):\n    return x + x\n")


def test_func_from_source_text_is_a_device_function_and_runs_on_the_host():
    assert isinstance(twice, dc.DeviceFunction) and twice(4) == 8


def test_explicit_namespace():
    k = dc.kernel(source="def fill(a: dc.Buffer[dc.int32]):\n    a[dc.global_id(0)] = VALUE\n",
                  namespace={"dc": dc, "VALUE": 7})
    a = np.zeros(4, np.int32)
    dc.launch(k, 4, a, accelerator="cpu")
    assert (a == 7).all()


def test_errors_in_source_text_point_into_the_text():
    k = dc.kernel(source="def bad(a: dc.Buffer[dc.float32]):\n    a[0] = [1.0]\n")
    with pytest.raises(dc.KernelSyntaxError) as e:
        k.check()
    assert e.value.filename.startswith("<source of bad ") and (e.value.lineno, e.value.offset) == (2, 12)
    assert "lists are not supported" in str(e.value) and "a[0] = [1.0]" in str(e.value)


@pytest.mark.parametrize("text, message, line", [
    ("def f(a):\n    a[0] = 1\ndef g(a):\n    pass\n", "functions found: f, g", 3),
    ("N = 3\ndef f(a):\n    a[0] = N\n", "functions found: f", 1),
    ("x = 1\n", "functions found: none", 1),
    ("def f(a:\n", "invalid Python in dc.kernel(source=...)", 1),
])
def test_source_text_that_is_not_one_function(text, message, line):
    with pytest.raises(dc.KernelSyntaxError) as e:
        dc.kernel(source=text)
    assert message in str(e.value) and e.value.lineno == line


def test_source_and_function_together_or_not_a_string():
    def f(a):
        pass
    with pytest.raises(TypeError, match="not both"):
        dc.kernel(f, source="def f(a):\n    pass\n")
    with pytest.raises(TypeError, match="as a str"):
        dc.func(source=b"def f(a):\n    pass\n")


def test_real_ipython_session():
    pytest.importorskip("IPython")
    script = textwrap.dedent('''\
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        cells = [
            "import numpy as np\\nimport dotcompute as dc\\nK = 4",
            "@dc.kernel\\ndef f(a: dc.Buffer[dc.int64]):\\n    i = dc.global_id(0)\\n    a[i] = i * K",
            "a = np.zeros(5, np.int64)\\ndc.launch(f, 5, a, accelerator='cpu')\\nprint('result', a.tolist())",
            "@dc.kernel\\ndef g(a: dc.Buffer[dc.int64]):\\n    a[0] = [1]",
            "try:\\n    g.check()\\nexcept dc.KernelSyntaxError as e:\\n    print('error', e.filename, e.lineno)",
        ]
        for cell in cells:
            shell.run_cell(cell, store_history=True).raise_error()
        ''')
    r = _run(["-c", script])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "result [0, 4, 8, 12, 16]" in r.stdout
    assert "error <ipython-input-4-" in r.stdout or "error /" in r.stdout, r.stdout
    assert r.stdout.rstrip().endswith(" 3")
