"""pytest plugin for running the shared suites on ``metal:0``: ``-p tests.python.metal.metal_limits``
(or ``-p metal_limits`` with this folder on sys.path).

Metal has no float64 and no 64-bit atomics, and the emitter refuses both with a
KernelTypeError ("... is not available on Metal ..."); the array-expression layer refuses
float64 arithmetic on a Metal device with a TypeError
("... has no float64 arithmetic").
A suite written for every device runs such kernels too; on ``metal:*`` that refusal is the
correct outcome, so the test is reported as skipped with the emitter's own message as the reason.
Nothing else is skipped, and the
refusal must be the emitter's (a KernelTypeError saying so), never any other failure.
"""

from __future__ import annotations

import pytest

import dotcompute as dc

_MARKERS = ("not available on Metal", "MSL has no double")
_EXPR_MARKER = "(metal backend) has no float64 arithmetic"


def _on_metal(item: pytest.Item) -> bool:
    spec = getattr(item, "callspec", None)
    if spec is None:
        return False
    return any(isinstance(v, str) and v.startswith("metal") for v in spec.params.values())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or call.excinfo is None or not _on_metal(item):
        return
    err = call.excinfo.value
    refused = isinstance(err, dc.KernelTypeError) and any(m in str(err) for m in _MARKERS)
    # the array-expression layer refuses float64 before any kernel exists, as a TypeError
    refused = refused or (type(err) is TypeError and _EXPR_MARKER in str(err))
    if refused:
        first = str(err).splitlines()[0]
        path, line, _ = item.location
        report.outcome = "skipped"
        report.longrepr = (str(path), (line or 0) + 1, f"Metal cannot run this kernel: {first}")
