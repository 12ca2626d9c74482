"""The launch index (lang/launch_index.py): a new process finds a kernel's launch entry from its source
key, without parsing it, and anything that could change the generated kernel is a miss. Each run is a
fresh interpreter on a private cache folder, as a program's next start would be."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

KERNEL = """{future}
import numpy as np
import dotcompute as dc
{extra}

@dc.kernel{deco}
def scale(x: dc.Buffer{elem}, out: dc.Buffer{elem}):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i] * {factor}

acc = dc.accelerator("cpu")
{pre}
x = acc.asarray(np.arange(4, dtype=np.{dtype}))
out = acc.zeros(4, np.{dtype})
dc.launch(scale, 4, x, out, accelerator=acc)
print(scale._indexed, scale._decls is None, out.numpy().tolist())
"""


def _run(run_python, folder: Path, cache: Path, *, factor: str = "2", dtype: str = "float32",
         elem: str = "[dc.float32]", deco: str = "", extra: str = "", pre: str = "",
         future: str = "") -> tuple[bool, bool, list]:
    script = folder / "prog.py"
    script.write_text(textwrap.dedent(KERNEL.format(factor=factor, dtype=dtype, elem=elem, deco=deco,
                                                    extra=extra, pre=pre, future=future)))
    proc = run_python(f"import runpy, sys; sys.path.insert(0, {str(folder)!r}); "
                      f"runpy.run_path({str(script)!r}, run_name='__main__')",
                      env={"DOTCOMPUTE_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    indexed, unparsed, values = proc.stdout.strip().splitlines()[-1].split(" ", 2)
    return indexed == "True", unparsed == "True", json.loads(values)


def _records(cache: Path) -> list[Path]:
    return sorted((cache / "launch-index").glob("*.json"))


def test_a_second_process_launches_from_the_index_without_parsing(run_python, tmp_path):
    cache = tmp_path / "cache"
    assert _run(run_python, tmp_path, cache) == (False, False, [0.0, 2.0, 4.0, 6.0])
    assert len(_records(cache)) == 1
    assert _run(run_python, tmp_path, cache) == (True, True, [0.0, 2.0, 4.0, 6.0])


@pytest.mark.slow  # seven fresh processes
def test_a_changed_source_dtype_or_option_is_a_miss(run_python, tmp_path):
    cache = tmp_path / "cache"
    _run(run_python, tmp_path, cache)
    # the body: the same file and line, another text
    assert _run(run_python, tmp_path, cache, factor="3") == (False, False, [0.0, 3.0, 6.0, 9.0])
    # the argument dtypes of a generic kernel
    assert _run(run_python, tmp_path, cache, elem="", dtype="float64")[0] is False
    assert _run(run_python, tmp_path, cache, elem="", dtype="int32") == (False, False, [0, 2, 4, 6])
    # the compile options
    assert _run(run_python, tmp_path, cache, deco="(fastmath=True)")[0] is False
    assert len(_records(cache)) == 5
    # and each is found again
    assert _run(run_python, tmp_path, cache, elem="", dtype="int32") == (True, True, [0, 2, 4, 6])


@pytest.mark.slow  # eight fresh processes
def test_the_globals_a_kernel_reads_are_part_of_the_key(run_python, tmp_path):
    cache = tmp_path / "cache"
    (tmp_path / "settings.py").write_text("FACTOR = 2\n")
    # a constant from a user module (read as an attribute: not a recorded capture): never indexed
    for value in (2, 5):
        (tmp_path / "settings.py").write_text(f"FACTOR = {value}\n")
        got = _run(run_python, tmp_path, cache, factor="settings.FACTOR", extra="import settings")
        assert got == (False, False, [0.0, value, 2.0 * value, 3.0 * value])
    # a module-level constant: re-checked on every launch, so never served from the index
    for value in (2, 7):
        got = _run(run_python, tmp_path, cache, factor="K", extra=f"K = {value}")
        assert got[2] == [0.0, value, 2.0 * value, 3.0 * value] and got[0] is False
    assert _records(cache) == []
    # an annotation through an alias, evaluated (the default) and as a string: float32 arguments
    # (the same signature) for a parameter now annotated float64 are refused, not served the
    # float32 kernel's record
    for future in ("", "from __future__ import annotations"):
        assert _run(run_python, tmp_path, cache, elem="[T]", extra="T = dc.float32", future=future)[2] == \
            [0.0, 2.0, 4.0, 6.0]
        with pytest.raises(AssertionError, match="float64"):
            _run(run_python, tmp_path, cache, elem="[T]", extra="T = dc.float64", future=future)


def test_another_dotcompute_version_is_a_miss(run_python, tmp_path):
    cache = tmp_path / "cache"
    _run(run_python, tmp_path, cache)
    assert _run(run_python, tmp_path, cache, pre="dc.__version__ = '0.0.0+other'")[:2] == (False, False)
    assert _run(run_python, tmp_path, cache)[:2] == (True, True)


@pytest.mark.parametrize("spoil", ["writable", "symlink", "other_key", "garbage", "large"])
def test_an_unsafe_or_foreign_record_is_ignored(tmp_path, spoil):
    from dotcompute.lang import launch_index
    from dotcompute.runtime.native import native

    key = os.urandom(32).hex()
    launch_index.write_record(key, {"text": "x"})
    record = Path(native().cache_dir()) / "launch-index" / f"{key}.json"
    assert launch_index.read_record(key)["text"] == "x"
    if spoil == "writable":
        record.chmod(0o666)
    elif spoil == "symlink":
        target = tmp_path / "elsewhere.json"
        target.write_bytes(record.read_bytes())
        record.unlink()
        os.symlink(target, record)
    elif spoil == "other_key":
        data = json.loads(record.read_text())
        data["key"] = "0" * 64
        record.write_text(json.dumps(data))
    elif spoil == "large":
        record.write_text(json.dumps({"key": key, "version": launch_index.VERSION, "pad": "x" * (1 << 20)}))
    else:
        record.write_text("{not json")
    try:
        assert launch_index.read_record(key) is None
    finally:
        record.unlink()
