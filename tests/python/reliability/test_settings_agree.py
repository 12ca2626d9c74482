"""The Python package and the C++ runtime read the same settings alike (issue 22).

``DOTCOMPUTE_CACHE_MAX_BYTES=" 60000"`` was accepted by Python (which strips every setting) and
silently ignored by the runtime (digits only), so ``dotcompute info`` showed a bound the cache did
not use. Both now strip surrounding whitespace and then take digits only. Each value runs in a fresh
interpreter: the runtime reads its environment once, when it starts.
"""

from __future__ import annotations

import json

import pytest

DEFAULT_MAX_BYTES = 512 << 20

READ = """
import json, warnings
warnings.simplefilter("ignore")
from dotcompute import config
from dotcompute.runtime.native import native
nat = native()
print(json.dumps({"python": config.cache_max_bytes(), "native": nat.cache_max_bytes(),
                  "python_dir": str(config.cache_dir()), "native_dir": nat.cache_dir()}))
"""


# one fresh interpreter per value (a few seconds each): the value, other whitespace, and two
# spellings both sides refuse (Python int() would take "60_000"; neither side does)
@pytest.mark.parametrize("value, expected", [
    (" 60000", 60000), ("\t60000\n", 60000), ("60_000", None), ("60 000", None),
], ids=["leading-space", "tab-and-newline", "underscore", "inner-space"])
def test_cache_max_bytes_is_read_alike(run_python, tmp_path, value, expected):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    # the folder with whitespace around it: both sides drop it too
    result = run_python(READ, env={"DOTCOMPUTE_CACHE_MAX_BYTES": value, "DOTCOMPUTE_CACHE_DIR": f" {folder}\n"})
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["python"] == expected
    assert seen["native"] == (DEFAULT_MAX_BYTES if expected is None else expected)
    assert seen["python_dir"] == seen["native_dir"] == str(folder)
