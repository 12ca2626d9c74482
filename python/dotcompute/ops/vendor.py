"""What every vendor library binding (cublas.py, cufft.py, clblast.py, clfft.py) shares: opening
the library once per process, declaring its functions once, and keeping its plans.

A library is opened on first use, never at import: none of them is needed to install or import
dotcompute, and most processes never call one. The ``DOTCOMPUTE_OPS_DISABLE`` switch is checked on
every use, so it works after the library was opened too.
"""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from . import native


class VendorLibrary:
    """One vendor library, opened with ctypes at most once per process.

    ``switch``: its name in ``DOTCOMPUTE_OPS_DISABLE``; ``candidates``: the files and sonames to try,
    in order (asked at the first use: they may depend on installed wheels); ``declare``: given the
    opened library, its functions with their C signatures as ``{key: function}`` — or None when the
    library cannot be used after all (a setup call failed), which counts as not installed.
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

    def load(self) -> ctypes.CDLL | None:
        """The opened library, or None (not installed, unusable, or switched off)."""
        if native.disabled(self.switch):
            return None
        with self._lock:
            if not self._tried:
                self._tried = True
                lib = native.load_library(self._candidates())
                functions = self._declare(lib) if lib is not None else None
                if functions is not None:
                    self._lib, self._functions = lib, functions
            return self._lib

    def __getitem__(self, key: str) -> Any:
        """A declared function (the library must have loaded)."""
        return self._functions[key]

    def close(self) -> None:
        """Forgets the library after it was torn down; it is not opened again in this process."""
        with self._lock:
            self._tried = True
            self._lib = None


class PlanCache:
    """A vendor library's plans, made once per key and kept, the least recently used destroyed
    beyond ``limit`` (plans hold device memory and compiled kernels)."""

    def __init__(self, limit: int, destroy: Callable[[Any], object]) -> None:
        self.limit = limit
        self._destroy = destroy
        self._lock = threading.Lock()
        self._plans: OrderedDict[Hashable, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._plans)

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The plan for ``key``, made by ``make()`` (outside the lock: planning can take long) if new."""
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                return plan
        plan = make()
        with self._lock:
            old = self._plans.get(key)
            if old is not None:  # another thread made the same plan meanwhile: keep one
                self._plans.move_to_end(key)
                evicted = [plan]
                plan = old
            else:
                self._plans[key] = plan
                evicted = []
                while len(self._plans) > self.limit:
                    evicted.append(self._plans.popitem(last=False)[1])
        for p in evicted:
            self._destroy(p)
        return plan

    def release(self) -> None:
        """Destroys every plan."""
        with self._lock:
            plans = list(self._plans.values())
            self._plans.clear()
        for p in plans:
            self._destroy(p)


__all__ = ["PlanCache", "VendorLibrary"]
