"""The frontend parses kernels from several threads at once.

CPython 3.11 shares the recursion counter of its syntax-tree conversion between threads; a garbage
collection that runs a finalizer in the middle of one thread's ``ast.parse`` lets another thread's
conversion change it, and the first then fails with ``SystemError: AST constructor recursion depth
mismatch``. Four threads building kernels at once (the first ``dc.sum`` from a thread pool) hit it in
CI. The frontend serialises its conversions (lang/frontend/python_ast.py).
"""

from __future__ import annotations

import gc
import sys
import threading

from dotcompute.lang.frontend import parse_function


def _kernel_body(a, b, out, n):  # parsed, never compiled: a tree of some depth
    i = 0
    while i < n:
        out[i] = ((a[i] + b[i]) * (a[i] - b[i]) / (a[i] + 1.0)) if a[i] > b[i] else (a[i] * b[i] - (a[i] + b[i]))
        out[i] = out[i] + ((a[i] * 2.0 + b[i] * 3.0) * (a[i] - 4.0) + (b[i] - 5.0) * (a[i] + 6.0))
        i += 1


class _Finalized:
    """Cyclic garbage whose finalizer runs Python code: the collector runs it wherever it triggers,
    which is where the interpreter may switch threads."""

    def __del__(self) -> None:
        total = 0
        for k in range(40):
            total += k
        self.total = total


def test_four_threads_parse_kernels_at_once() -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(150):
                junk = [_Finalized() for _ in range(10)]
                for j in junk:
                    j.me = j
                del junk
                assert parse_function(_kernel_body).name == "_kernel_body"
        except BaseException as exc:  # noqa: BLE001 -- reported by the main thread
            errors.append(exc)

    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(40)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)
    assert not errors, errors[0]
