"""The launch index: a new process's first launch of a kernel whose binary is in the disk cache,
without parsing, lowering or emitting it again.

The kernel cache (C++) is keyed by the generated source: finding a binary there needs the kernel
parsed, lowered and emitted first, ~2 ms of a ~4 ms first launch (issue 24: Warp's disk-cache hit
was faster). This index is keyed by what the generated source is a function of, known before any
of that: the kernel's source text (the lines the frontend parses), its file and line, the argument
signature, the kernel's flags and compile options, the device, dotcompute's version and its
compiler's own files, and a fingerprint of every free name the kernel's code reads (closure cells,
globals: constants by value, numpy arrays by content, modules by name). A record holds the
generated source and entry point — the binary's content key, which the C++ cache looks up with
its own safe-read rules — and what the launch entry needs besides (parameter specs, the flags of
lang/launching.py's plain entries, the bounds facts). A hit compiles nothing and parses nothing:
compile_source finds the binary on disk.

Only entries that lang/launching.py makes plain (or plain once the bounds proof holds) are indexed:
no captured constants or device functions (their launches re-check the captures each time), no
argument expansion, no barrier or shared memory, no chosen work-groups, not debug. A free name
whose value has no fingerprint (a user module, an arbitrary object) makes a kernel unindexed.

Records are files under ``<cache dir>/launch-index/`` read with the kernel cache's rules: no
symbolic links followed, regular files owned by this user and writable by no one else, at most
1 MiB, in a folder with the same ownership; written to a private temporary file and renamed.
``dotcompute cache clear`` removes them with the binaries (runtime/cache.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
import types as _types
from typing import Any

import numpy as np

from .compile_options import compile_options
from .frontend.source import _function_lines

VERSION = 1
MAX_RECORD = 1 << 20
MAX_ARRAY_BYTES = 16 << 20  # a larger global table is hashed by no one: the kernel is not indexed
_STABLE_MODULES = ("dotcompute", "numpy", "math", "cmath", "builtins")


class Unindexable(Exception):
    """The kernel's launch cannot be keyed from its source (why in the message)."""


# ------------------------------------------------------------------------------------- the key

_compiler_identity: str | None = None


def compiler_identity() -> str:
    """dotcompute's version and the sizes and times of the kernel-language compiler's files
    (lang/): an edited checkout (an editable install keeps its version) is a new compiler.
    Computed once per process (~60 stat calls)."""
    global _compiler_identity
    if _compiler_identity is None:
        import dotcompute

        h = hashlib.sha256(f"{getattr(dotcompute, '__version__', '?')}|{VERSION}".encode())
        stack = [os.path.dirname(os.path.abspath(__file__))]
        while stack:
            with os.scandir(stack.pop()) as it:
                for e in sorted(it, key=lambda e: e.name):
                    if e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                        stack.append(e.path)
                    elif e.name.endswith(".py"):
                        st = e.stat()
                        h.update(f"{e.path}:{st.st_size}:{st.st_mtime_ns}".encode())
        _compiler_identity = h.hexdigest()
    return _compiler_identity


def fingerprint(value: Any) -> str:
    """A text that changes whenever ``value`` would change the generated kernel; raises
    :class:`Unindexable` for a value that has none."""
    t = type(value)
    if value is None or t in (bool, int, float, complex, str, bytes):
        return f"{t.__name__}:{value!r}"
    if isinstance(value, np.generic):
        return f"np:{value.dtype.str}:{value.tobytes().hex()}"
    if isinstance(value, np.dtype):
        return f"dtype:{value.str}"
    if isinstance(value, np.ndarray):
        if value.nbytes > MAX_ARRAY_BYTES:
            raise Unindexable(f"a {value.nbytes}-byte global array")
        data = np.ascontiguousarray(value)
        return f"nd:{value.dtype.str}:{value.shape}:{hashlib.sha256(data.view(np.uint8)).hexdigest()}"
    if isinstance(value, _types.ModuleType):
        if value.__name__.split(".")[0] in _STABLE_MODULES:  # attributes fixed by the version
            return f"module:{value.__name__}"
        raise Unindexable(f"module {value.__name__} (its attributes may change)")
    if t in (tuple, list):
        return f"{t.__name__}:[{','.join(fingerprint(v) for v in value)}]"
    module = getattr(t, "__module__", "") or ""
    if isinstance(value, type) or callable(value):
        owner = getattr(value, "__module__", "") or ""
        if owner.split(".")[0] in _STABLE_MODULES:
            return f"obj:{owner}.{getattr(value, '__qualname__', repr(value))}"
    elif module.split(".")[0] == "dotcompute":
        text = repr(value)  # dotcompute's own values (dtypes, annotations): fixed by the version
        if " at 0x" not in text:
            return f"dc:{module}.{t.__qualname__}:{text}"
    raise Unindexable(f"{t.__qualname__} value")


def _code_names(code: _types.CodeType, out: set[str]) -> None:
    out.update(code.co_names)
    out.update(code.co_freevars)
    for c in code.co_consts:
        if isinstance(c, _types.CodeType):
            _code_names(c, out)


def _free_values(pyfunc: Any) -> list[str]:
    closure = {}
    cells = pyfunc.__closure__ or ()
    for name, cell in zip(pyfunc.__code__.co_freevars, cells, strict=False):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # an empty cell
            closure[name] = None
    names: set[str] = set()
    _code_names(pyfunc.__code__, names)
    glob = pyfunc.__globals__
    parts = []
    for name in sorted(names):
        if name in closure:
            parts.append(f"c:{name}={fingerprint(closure[name])}")
        elif name in glob:
            parts.append(f"g:{name}={fingerprint(glob[name])}")
        # (attribute names and builtins: fixed by the source text and Python)
    return parts


def _annotation_parts(pyfunc: Any) -> list[str]:
    """The parameters' annotations; a string one (``from __future__ import annotations``) with the
    values of the global names in it, which the frontend resolves (an alias may change)."""
    glob = pyfunc.__globals__
    parts = []
    for name, ann in sorted(getattr(pyfunc, "__annotations__", {}).items()):
        parts.append(f"a:{name}={fingerprint(ann)}")
        if isinstance(ann, str):
            for ident in sorted(set(re.findall(r"[A-Za-z_]\w*", ann))):
                if ident in glob:
                    parts.append(f"a:{name}:{ident}={fingerprint(glob[ident])}")
    return parts


def _arg_signature(a: Any) -> str:
    dt = getattr(a, "dtype", None)
    if dt is not None and hasattr(a, "shape"):
        return f"{type(a).__module__}.{type(a).__qualname__}:{np.dtype(dt).str}:{len(a.shape)}"
    if type(a) is int:
        return "int" if -(1 << 63) <= a < (1 << 63) else "bigint"
    return f"{type(a).__module__}.{type(a).__qualname__}"


def source_key(kernel: Any, acc: Any, args: tuple[Any, ...]) -> str:
    """The index key of launching ``kernel`` on ``acc`` with ``args`` (non-debug); raises
    :class:`Unindexable`."""
    pyfunc = kernel.pyfunc
    code = pyfunc.__code__
    found = _function_lines(code, pyfunc.__name__)
    if found is None:
        raise Unindexable("no source lines")
    lines, start = found
    parts = [
        compiler_identity(), acc.id, acc.backend, str(acc.info.get("name", "")),
        code.co_filename, str(start), kernel.name, pyfunc.__qualname__,
        f"fastmath={bool(kernel.fastmath)} contract={bool(getattr(kernel, 'contract', False))}",
        compile_options(kernel, acc.backend),
        fingerprint(pyfunc.__defaults__), fingerprint(tuple(sorted((pyfunc.__kwdefaults__ or {}).items()))),
        *_annotation_parts(pyfunc),
        "|".join(_arg_signature(a) for a in args),
        *_free_values(pyfunc),
        "".join(lines),
    ]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


# ------------------------------------------------------------------------------------- the files

def _index_dir(create: bool) -> str | None:
    from ..runtime.native import native

    folder = native().cache_dir()  # the folder the kernel cache really uses (runtime/cache.py)
    if not folder:
        return None
    path = os.path.join(folder, "launch-index")
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return None  # a link, someone else's folder, or one others can write: not trusted
    return path


def read_record(key: str) -> dict | None:
    """The record filed under ``key``, or None (absent, unsafe, unreadable or not this key's)."""
    folder = _index_dir(create=False)
    if folder is None:
        return None
    try:
        fd = os.open(os.path.join(folder, f"{key}.json"), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022
                or st.st_size > MAX_RECORD):
            return None
        data = os.read(fd, MAX_RECORD + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        record = json.loads(data)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("key") != key or record.get("version") != VERSION:
        return None
    return record


def write_record(key: str, record: dict) -> None:
    """Files ``record`` under ``key`` (best effort: a full disk or a refused folder only loses the
    index, never the launch)."""
    folder = _index_dir(create=True)
    if folder is None:
        return
    data = json.dumps(dict(record, key=key, version=VERSION), separators=(",", ":")).encode()
    if len(data) > MAX_RECORD:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(folder, f"{key}.json"))
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


__all__ = ["Unindexable", "compiler_identity", "fingerprint", "read_record", "source_key", "write_record"]
