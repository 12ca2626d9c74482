"""Every ```python block of README.md and docs/*.md runs as written.

Each block runs in a fresh interpreter whose working folder is a temporary directory, so
files a snippet writes (``out.npy``, ``trace.json``, ...) land there, never in the
repository. The block is written to a file before it runs: ``@dc.kernel`` reads its
function's source, which needs a real file.

A block that is not self-contained has an entry in ``SPECIAL`` below, keyed by the doc file
and a phrase that occurs in exactly one of its blocks:

- ``after``: a fragment continuing earlier blocks of the same file (named by their phrases);
  those run first, in the same script.
- ``prelude``: a deliberately partial reference block (an API summary with placeholder names
  such as ``x`` or ``kernel``); the prelude defines those names so every call in the block
  really runs.
- ``replace``: (old, new) text substitutions that shrink problem sizes so the test stays fast.
- ``skip``: the block needs something this machine lacks (a GPU, a cluster, matplotlib) or is
  not runnable on purpose; the reason is reported by pytest ``-rs``.
- ``expect``: text the block's output must contain (what the doc says it prints).
- ``fails_with``: the block demonstrates an error; it must fail with that text in stderr.
- ``optional``: a line that needs an optional dependency, replaced when it is not installed.
- ``doc_bug``: (old, new) patches for a known doc bug in a file this test's author may not edit.
- ``xfail``: a known doc bug in a file this test's author may not edit (reported to its owner).

Every block of ``DEFAULT_AFTER``'s files (a reference whose first block holds the imports)
runs after that file's first block unless its entry says otherwise.

Blocks without an entry must run alone. An entry whose phrase matches no block, or more
than one, fails the test, so the list cannot go stale silently.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOC_FILES = ["README.md"] + sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Special:
    reason: str
    after: tuple[str, ...] = ()
    prelude: str = ""
    replace: tuple[tuple[str, str], ...] = ()  # applied to the whole script (earlier blocks included)
    skip: bool = False
    needs: tuple[str, ...] = ()  # importable modules; skipped (with the reason) when one is missing
    optional: tuple[tuple[str, str, str], ...] = ()  # (module, old, new): replaced only when module is missing
    expect: tuple[str, ...] = ()
    fails_with: str = ""  # the block shows an error on purpose: it must exit non-zero with this in stderr
    xfail: bool = False  # a known doc bug in a file another engineer owns (reported); runs, may pass
    # (old, new): a known doc bug in a file another engineer owns (reported), patched while the text is
    # still there so the rest of the block is checked; a no-op once the doc is fixed
    doc_bug: tuple[tuple[str, str], ...] = ()


_KL = "docs/kernel-language.md"
_BODY = "statements of a kernel body shown on their own (not a program); the constructs are tested in tests/python/lang"

SPECIAL: dict[tuple[str, str], Special] = {
    # README.md
    ("README.md", "acc = dc.accelerator(\"auto\")"): Special(
        "the first example prints saxpy's first results", expect=("[1. 3. 5. 7.]", "__global__")),
    ("README.md", 'accelerator="best"'): Special(
        "continues the kernel example (saxpy, x, y, out)", after=("def saxpy",), replace=(("1_000_000", "10_000"),),
        expect=("OK", "saxpy")),
    # docs/design.md
    ("docs/design.md", "dc.__version__"): Special(
        "an API summary with placeholders (shape, dtype, ...), not a program", skip=True),
    ("docs/design.md", "compile_source(acc, source, entry"): Special(
        "internal runtime calls with placeholders: the source must follow a backend's generated-kernel ABI",
        skip=True),
    # docs/dask.md
    ("docs/dask.md", 'dcd.map_blocks(kernel, x, 2.0, 1.0)'): Special(
        "an API summary: the prelude defines its placeholders kernel, stencil and x", needs=("dask", "distributed"),
        prelude=(
            "import dask.array as da, numpy as np\n"
            "import dotcompute as dc\n"
            "@dc.kernel\n"
            "def kernel(x, a: dc.float32, b: dc.float32, out):\n"
            "    i = dc.global_id(0); j = dc.global_id(1)\n"
            "    out[i, j] = a * x[i, j] + b\n"
            "@dc.kernel\n"
            "def stencil(u: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):\n"
            "    i = dc.global_id(0); j = dc.global_id(1)\n"
            "    if 0 < i < u.shape[0] - 1:\n"
            "        out[i, j] = 0.5 * u[i, j] + 0.25 * (u[i - 1, j] + u[i + 1, j])\n"
            "x = da.random.default_rng(0).random((64, 48), chunks=32, dtype=np.float32)\n")),
    ("docs/dask.md", "def split(x, lo, sq)"): Special("needs Dask", needs=("dask", "distributed"),
                                                     expect=("float32", "0.5")),
    ("docs/dask.md", "def heat("): Special(
        "a smaller grid keeps the test fast", needs=("dask", "distributed"),
        replace=(("(8192, 8192), chunks=2048", "(256, 256), chunks=128"),), expect=("cpu:0",)),
    ("docs/dask.md", "LocalCluster("): Special(
        "needs a machine with CUDA GPUs (one process worker per GPU) and the laptop example's u", skip=True),
    # docs/pipelines.md
    ("docs/pipelines.md", "p = dc.Pipeline("): Special(
        "runs from the repository root in the docs; here from a temporary folder, at 256x256",
        replace=(('sys.path.insert(0, "bench")', f"sys.path.insert(0, {str(ROOT / 'bench')!r})"),
                 ("n = 4096", "n = 256")),
        expect=("blur_h", "total")),
    # docs/profiling.md
    ("docs/profiling.md", 'prof.plot("profile.png")'): Special(
        "prof.plot needs matplotlib, an optional dependency", expect=("scale", "compiles"),
        optional=(("matplotlib", 'prof.plot("profile.png")', "pass"),)),
    ("docs/profiling.md", "DOTCOMPUTE_CUDA_SIM_COUNTERS=1 python this.py"): Special(
        "the GPU-model counters on the CUDA simulator: the prelude turns both on (as the comment's "
        "command line does) and defines the placeholders acc, kernel, n, a and b",
        prelude=(
            "import os\n"
            "os.environ['DOTCOMPUTE_CUDA_SIM'] = '1'\n"
            "os.environ['DOTCOMPUTE_CUDA_SIM_COUNTERS'] = '1'\n"
            "import numpy as np\n"
            "import dotcompute as dc\n"
            "acc = dc.accelerator('cuda:0')\n"
            "kernel = dc.RawKernel('extern \"C\" __global__ void copy(const float* a, float* b, int n) "
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }', 'copy', backend='cuda')\n"
            "n = 256\n"
            "a = acc.asarray(np.arange(n, dtype=np.float32))\n"
            "b = acc.zeros(n, np.float32)\n"
        ),
        replace=(("acc.launch(kernel, n, a, b)", "acc.launch(kernel, n, a, b, np.int32(n), local_size=128)"),),
        needs=("numpy",), expect=("copy",)),
    # docs/kernel-safety.md
    ("docs/kernel-safety.md", 'backend="metal"'): Special(
        "needs metal:0, the Metal test double (the Metal phase of tests/run.sh); the same unbarriered "
        "threadgroup read is a seeded bug of tests/python/check/msl_corpus.py, which that phase runs",
        skip=True),
    # docs/expressions.md
    ("docs/expressions.md", "z = 2.5 * x + y * y - 3.0"): Special(
        "smaller arrays keep the test fast", replace=(("16_000_000", "16_000"),)),
    ("docs/expressions.md", "@dc.fuse"): Special(
        "continues the first example (its imports)", after=("z = 2.5 * x + y * y - 3.0",),
        replace=(("16_000_000", "16_000"),)),
    # docs/operations.md
    ("docs/operations.md", "s = dc.sum(x)"): Special(
        "an API summary: the prelude defines its placeholders x, a, b and op",
        prelude=(
            "import numpy as np\n"
            "import dotcompute as dc\n"
            "x = dc.accelerator('cpu').asarray(np.random.default_rng(0).random((6, 5), dtype=np.float32))\n"
            "a = dc.accelerator('cpu').asarray(np.ones((4, 3), np.float32))\n"
            "b = dc.accelerator('cpu').asarray(np.ones((3, 2), np.float32))\n"
            "keys = dc.accelerator('cpu').asarray(np.array([3, 1, 2], np.int32))\n"
            "values = dc.accelerator('cpu').asarray(np.array([30.0, 10.0, 20.0], np.float32))\n"
            "@dc.func\n"
            "def op(u, v):\n"
            "    return max(u, v)\n")),
    # docs/kernel-language.md: fragments follow the first block (its imports, saxpy, x, y, out)
    (_KL, "dc.launch(kernel, global_size, *args"): Special("call signatures, not a program", skip=True),
    (_KL, "i = dc.global_id(0)   # int64"): Special(_BODY, skip=True),
    (_KL, "z = a[i]"): Special(_BODY, skip=True),
    (_KL, "x = a[i] * 2.0"): Special(_BODY, skip=True),
    (_KL, "q = a / b"): Special(_BODY, skip=True),
    (_KL, "y = x[i] + 1"): Special(_BODY, skip=True),
    (_KL, "if x[i] > 0:"): Special(_BODY, skip=True),
    (_KL, "for k in range(n):"): Special(_BODY, skip=True),
    (_KL, "while j < n and x[j] != 0:"): Special(_BODY, skip=True),
    (_KL, "if i >= out.shape[0]:\n    return"): Special(_BODY, skip=True),
    (_KL, "# this work-item's index in the grid"): Special(_BODY, skip=True),
    (_KL, "old = dc.atomic_add(counts, k, 1)"): Special(_BODY, skip=True),
    (_KL, "def oops("): Special("shows the debug-mode error on purpose", fails_with="KernelIndexError"),
}

#: Reference pages whose later blocks use the first block's imports and names.
DEFAULT_AFTER: dict[str, str] = {_KL: "# out == 2 * x + 1"}


@dataclass(frozen=True)
class Block:
    doc: str
    index: int
    line: int
    code: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def _blocks(doc: str) -> list[Block]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return [Block(doc, i, text.count("\n", 0, m.start()) + 2, m.group(1))
            for i, m in enumerate(_FENCE.finditer(text))]


ALL_BLOCKS = [b for doc in DOC_FILES for b in _blocks(doc)]


def _special(block: Block) -> Special | None:
    hits = [s for (doc, phrase), s in SPECIAL.items() if doc == block.doc and phrase in block.code]
    assert len(hits) <= 1, f"{block.id}: several SPECIAL entries match this block"
    return hits[0] if hits else None


def _find(doc: str, phrase: str) -> Block:
    found = [b for b in ALL_BLOCKS if b.doc == doc and phrase in b.code]
    assert len(found) == 1, f"{doc}: phrase {phrase!r} matches {len(found)} blocks, not exactly one"
    return found[0]


def test_special_entries_each_match_exactly_one_block() -> None:
    for (doc, phrase), spec in SPECIAL.items():
        _find(doc, phrase)
        for earlier in spec.after:
            assert _find(doc, earlier).index < _find(doc, phrase).index, (doc, earlier, phrase)


def test_the_readme_has_snippets() -> None:
    # The extraction itself must keep working: README.md shows code.
    assert any(b.doc == "README.md" for b in ALL_BLOCKS)


def _script(block: Block, spec: Special | None) -> str:
    parts: list[str] = []
    after = spec.after if spec is not None else ()
    default = DEFAULT_AFTER.get(block.doc)
    if not after and default is not None and default not in block.code:
        after = (default,)
    if spec is not None and spec.prelude:
        parts.append(f"# --- prelude (test_doc_snippets.py) ---\n{spec.prelude}")
    for earlier in after:
        parts.append(f"# --- earlier block of {block.doc} ---\n{_find(block.doc, earlier).code}")
    parts.append(f"# --- {block.id} ---\n{block.code}")
    script = "\n".join(parts)
    if spec is not None:
        for old, new in spec.replace:
            assert old in script, f"{block.id}: replacement {old!r} not found"
            script = script.replace(old, new)
        for old, new in spec.doc_bug:
            script = script.replace(old, new)
        for module, old, new in spec.optional:
            assert old in script, f"{block.id}: optional line {old!r} not found"
            if importlib.util.find_spec(module) is None:
                script = script.replace(old, new)
    return script


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b.id for b in ALL_BLOCKS])
def test_doc_block_runs(block: Block, tmp_path: Path) -> None:
    spec = _special(block)
    if spec is not None and spec.skip:
        pytest.skip(spec.reason)
    for module in spec.needs if spec is not None else ():
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{spec.reason} ({module} is not installed)")
    script = tmp_path / f"snippet_{block.index}.py"
    script.write_text(_script(block, spec), encoding="utf-8")
    env = dict(os.environ)
    env.pop("DOTCOMPUTE_PROFILE", None)  # a whole-program trace would land in the tmp dir anyway
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    report = (f"{block.id} (exit {proc.returncode}):\n--- script ---\n{script.read_text()}\n"
              f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")
    # Nothing a snippet writes may land in the repository: it ran in tmp_path.
    assert not (ROOT / "out.npy").exists() and not (ROOT / "trace.json").exists()
    if spec is not None and spec.fails_with:
        assert proc.returncode != 0 and spec.fails_with in proc.stderr, f"expected {spec.fails_with}: {report}"
        return
    if spec is not None and spec.xfail and proc.returncode != 0:
        pytest.xfail(spec.reason)
    assert proc.returncode == 0, f"failed: {report}"
    for text in spec.expect if spec is not None else ():
        assert text in proc.stdout, f"expected {text!r} in the output: {report}"


#: Variables the docs name that only the test harness reads (not settings of the product).
_TEST_HARNESS_VARIABLES = {"DOTCOMPUTE_FUZZ_EXAMPLES", "DOTCOMPUTE_FUZZ_SAVE", "DOTCOMPUTE_METAL_DOUBLE_DIR",
                           "DOTCOMPUTE_SHIM_CACHE", "DOTCOMPUTE_SHIM_CXX", "DOTCOMPUTE_TEST_CUDA_BUILD"}


def test_every_variable_the_docs_name_is_known_to_dotcompute_info() -> None:
    # `dotcompute info` marks a DOTCOMPUTE_* variable missing from config.VARIABLES as
    # "unknown to dotcompute" (a likely typo): a documented setting must not be called that.
    from dotcompute import config

    named = {name for doc in DOC_FILES
             for name in re.findall(r"DOTCOMPUTE_[A-Z0-9_]*[A-Z0-9]", (ROOT / doc).read_text(encoding="utf-8"))}
    missing = sorted(named - set(config.VARIABLES) - _TEST_HARNESS_VARIABLES)
    assert not missing, f"documented but unknown to config.VARIABLES (dotcompute info calls them typos): {missing}"
    assert "DOTCOMPUTE_OPS_DISABLE" in named  # the docs do name it (docs/operations.md, README.md)


def test_relative_links_point_to_existing_files() -> None:
    # A newcomer follows README.md's links to docs/ and examples/: none may be dead.
    dead = []
    for doc in DOC_FILES:
        for target in re.findall(r"\]\(([^)\s]+)\)", (ROOT / doc).read_text(encoding="utf-8")):
            path = target.partition("#")[0]
            if path and not target.startswith(("http://", "https://", "mailto:")) \
                    and not ((ROOT / doc).parent / path).exists():
                dead.append(f"{doc}: {target}")
    assert not dead, dead


def test_readme_lead_command_after_install(tmp_path: Path) -> None:
    # README's first command, after `pip install .`: `dotcompute info && python examples/vector_add.py`
    # (run from another folder: the example must not depend on the working directory).
    info = subprocess.run([sys.executable, "-m", "dotcompute.cli.main", "info"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert info.returncode == 0, info.stderr
    assert "cpu:0" in info.stdout
    example = subprocess.run([sys.executable, str(ROOT / "examples" / "vector_add.py")], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
    assert example.returncode == 0, example.stderr
    assert example.stdout.rstrip().endswith(": ok"), example.stdout
