"""What every vendor library binding (cublas.py, cufft.py, clblast.py, clfft.py) shares: opening
the library once per process, declaring its functions once, naming the file it came from (the
self-check's verdicts are kept per library file), and keeping its plans.

A library is opened on first use, never at import: none of them is needed to install or import
dotcompute, and most processes never call one. The ``DOTCOMPUTE_OPS_DISABLE`` switch is checked on
every use, so it works after the library was opened too.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import DotComputeError
from . import native

_log = logging.getLogger("dotcompute.ops")


class VendorLibrary:
    """One vendor library, opened with ctypes at most once per process.

    ``switch``: its name in ``DOTCOMPUTE_OPS_DISABLE``; ``candidates``: the files and sonames to try,
    in order (asked at the first use: they may depend on installed wheels;
    ``DOTCOMPUTE_<SWITCH>_LIBRARY``, e.g. ``DOTCOMPUTE_CLBLAST_LIBRARY=/opt/lib/libclblast.so``,
    replaces them with that one path); ``declare``: given the opened library, its functions with
    their C signatures as ``{key: function}`` — or None when the library cannot be used after all
    (a setup call failed), which counts as not installed.
    """

    def __init__(self, switch: str, candidates: Callable[[], list[str]],
                 declare: Callable[[ctypes.CDLL], dict[str, Any] | None]) -> None:
        self.switch = switch
        self._candidates = candidates
        self._declare = declare
        self._lock = threading.Lock()
        self._tried = False
        self._lib: ctypes.CDLL | None = None
        self._functions: dict[str, Any] = {}
        self._identity = ""

    def load(self) -> ctypes.CDLL | None:
        """The opened library, or None (not installed, unusable, or switched off)."""
        if native.disabled(self.switch):
            return None
        with self._lock:
            if not self._tried:
                self._tried = True
                override = native.library_override(self.switch)
                # a path the user named is the only one tried: falling back to another file would
                # hide that theirs did not load
                lib = native.load_library([override] if override else self._candidates())
                functions = self._declare(lib) if lib is not None else None
                if functions is not None:
                    self._lib, self._functions = lib, functions
                    self._identity = _file_identity(lib, functions)
            return self._lib

    def identity(self) -> str:
        """The opened library's file as ``path|size|mtime_ns`` ("" before it is loaded): another
        build or version of the library is another file."""
        return self._identity

    def __getitem__(self, key: str) -> Any:
        """A declared function (the library must have loaded)."""
        return self._functions[key]

    def close(self) -> None:
        """Forgets the library after it was torn down; it is not opened again in this process."""
        with self._lock:
            self._tried = True
            self._lib = None


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def _file_identity(lib: ctypes.CDLL, functions: dict[str, Any]) -> str:
    """Where ``lib`` was really loaded from (a soname resolves to a file only the loader knows:
    dladdr of one of its functions says), with the file's size and modification time."""
    path = str(lib._name)  # noqa: SLF001 -- what was asked for, when dladdr cannot say
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        info = _DlInfo()
        func = next(f for f in functions.values() if isinstance(f, ctypes._CFuncPtr))  # noqa: SLF001
        if dladdr(ctypes.cast(func, ctypes.c_void_p), ctypes.byref(info)) and info.dli_fname:
            path = os.path.realpath(info.dli_fname.decode())
    except (AttributeError, OSError, StopIteration, UnicodeDecodeError):
        pass
    try:
        st = os.stat(path)
        return f"{path}|{st.st_size}|{st.st_mtime_ns}"
    except OSError:
        return path


class _Lease:
    """A cached plan with the number of callers holding it and the stream its last work went to."""

    __slots__ = ("plan", "holders", "stream", "retired")

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self.holders = 0
        self.stream: Any = None  # an object with synchronize(): the stream that last used the plan
        self.retired = False  # evicted or released while held: destroyed when the last holder lets go


class PlanCache:
    """A vendor library's plans, made once per key and kept, the least recently used destroyed
    beyond ``limit`` (plans hold device memory and compiled kernels).

    Plans are leased (``with cache.lease(key, make, stream) as plan:``): a plan evicted or released
    while another thread holds it is destroyed when the last holder lets go, and never before the
    stream its work was enqueued on has finished (the stream is synchronised first), so a plan is
    not freed under a launch that is still queued or running.
    """

    def __init__(self, limit: int, destroy: Callable[[Any], object]) -> None:
        self.limit = limit
        self._destroy = destroy
        self._lock = threading.Lock()
        self._plans: OrderedDict[Hashable, _Lease] = OrderedDict()

    def __len__(self) -> int:
        return len(self._plans)

    def _acquire(self, key: Hashable, make: Callable[[], Any]) -> _Lease:
        with self._lock:
            entry = self._plans.get(key)
            if entry is not None:
                self._plans.move_to_end(key)
                entry.holders += 1
                return entry
        plan = make()  # outside the lock: planning can take long
        retired: list[_Lease] = []
        with self._lock:
            entry = self._plans.get(key)
            if entry is not None:  # another thread made the same plan meanwhile: keep one
                self._plans.move_to_end(key)
                retired.append(_Lease(plan))
            else:
                entry = self._plans[key] = _Lease(plan)
                while len(self._plans) > self.limit:
                    retired.append(self._plans.popitem(last=False)[1])
            entry.holders += 1
            doomed = self._retire(retired)
        self._finish(doomed)
        return entry

    def _retire(self, entries: list[_Lease]) -> list[_Lease]:
        """Marks ``entries`` retired (lock held); those nobody holds are returned, to be destroyed."""
        for e in entries:
            e.retired = True
        return [e for e in entries if e.holders == 0]

    def _finish(self, doomed: list[_Lease]) -> None:
        """Destroys the plans of ``doomed`` (lock not held) once their streams are done with them."""
        for e in doomed:
            if e.stream is not None:
                try:
                    e.stream.synchronize()
                except DotComputeError as exc:  # a failed launch's error: its own wait reports it
                    _log.debug("destroying a vendor plan after a failed wait: %s", exc)
            self._destroy(e.plan)

    def _let_go(self, entry: _Lease, stream: Any) -> None:
        with self._lock:
            if stream is not None:
                entry.stream = stream
            entry.holders -= 1
            doomed = [entry] if entry.retired and entry.holders == 0 else []
        self._finish(doomed)

    @contextmanager
    def lease(self, key: Hashable, make: Callable[[], Any], stream: Any = None) -> Iterator[Any]:
        """The plan for ``key`` (made by ``make()`` if new), held for the block. ``stream``: the
        stream (an object with ``synchronize()``) the block enqueues the plan's work on."""
        entry = self._acquire(key, make)
        try:
            yield entry.plan
        finally:
            self._let_go(entry, stream)

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The plan for ``key``, not held: only for work that is finished before the next plan is
        made (tests); enqueue through ``lease`` instead."""
        with self.lease(key, make) as plan:
            return plan

    def holders(self, key: Hashable) -> int:
        """How many callers hold the plan for ``key`` now (0 when it is not cached)."""
        with self._lock:
            entry = self._plans.get(key)
            return 0 if entry is None else entry.holders

    def release(self) -> None:
        """Destroys every plan (those held now when their holders let go)."""
        with self._lock:
            entries = list(self._plans.values())
            self._plans.clear()
            doomed = self._retire(entries)
        self._finish(doomed)


__all__ = ["PlanCache", "VendorLibrary"]
